// @ts-check
// The eyes, stage: code editors (CodeMirror 5 and 6, Monaco, Ace) as one element each.
// One part of handrail's page script: core/eyes/script.py joins core/eyes/*.js (in the order
// of its EYES_PARTS) inside one closure, so these names are shared with the other parts and
// invisible to the page (the script runs in our isolated world).
//
// A code editor draws its text itself: lines of <div>/<pre> a person reads, a gutter of line
// numbers, and somewhere a field that takes the keys (a hidden <textarea> in a 3x0 px box, an
// EditContext <div>, or a contenteditable). None of these is what a person sees as "the
// editor", and the walk would list the lines as page text with nothing to type into. So the
// editor's box is the element: named by its field's label, its value the lines it shows.
// Nothing here calls the page's own objects (the editor instance): what is read is what is
// rendered, as a person reads it.

/**
 * @typedef {{ kind: string, root: string, input: string, lines: string, scroller: string | null }} EditorShape
 */

// Each editor: its root's class, the class of its rendered lines, the field that takes its
// keys, and the element that scrolls its lines.
/** @type {EditorShape[]} */
const EDITOR_SHAPES = [
  { kind: "codemirror", root: "CodeMirror", input: "textarea, .CodeMirror-code[contenteditable]", lines: ".CodeMirror-code pre.CodeMirror-line", scroller: ".CodeMirror-scroll" },
  { kind: "codemirror", root: "cm-editor", input: ".cm-content", lines: ".cm-content > .cm-line", scroller: ".cm-scroller" },
  { kind: "monaco", root: "monaco-editor", input: ".native-edit-context, textarea.inputarea", lines: ".view-lines > .view-line", scroller: null },
  { kind: "ace", root: "ace_editor", input: "textarea.ace_text-input", lines: ".ace_text-layer .ace_line", scroller: ".ace_scrollbar-v" },
];

/**
 * The code editor whose box `el` is, or null.
 * @param {Element} el
 * @returns {{ kind: string, root: Element, input: Element, shape: EditorShape } | null}
 */
function codeEditorAt(el) {
  if (isForm(el)) return null; // its classList may be a control named "classList"
  const classes = el.classList;
  if (!classes || typeof classes.contains !== "function") return null;
  for (const shape of EDITOR_SHAPES) {
    if (!classes.contains(shape.root)) continue;
    // A Monaco diff editor or an editor nested in another: the innermost box is the editor.
    const input = QUERY_ALL.call(el, shape.input)[0];
    if (!input || !QUERY_ALL.call(el, shape.lines).length) return null;
    return { kind: shape.kind, root: el, input, shape };
  }
  return null;
}

/**
 * The code editor a node is inside (its field, a line, the gutter), or null.
 * @param {Element} node
 */
function codeEditorAround(node) {
  for (let el = node; el; el = PARENT_ELEMENT.call(el)) {
    const found = codeEditorAt(el);
    if (found) return found;
  }
  return null;
}

/**
 * The field an editor was made from: CodeMirror's fromTextArea hides the <textarea> and puts
 * its box right after it; that textarea's <label> is the editor's label.
 * @param {Element} root
 * @returns {Element | null}
 */
function replacedField(root) {
  const prev = root.previousElementSibling;
  return prev && prev.tagName === "TEXTAREA" ? prev : null;
}

/**
 * The editor's name: its field's own label (aria-labelledby, aria-label), the label of the
 * textarea it replaced, or the box's own.
 * @param {{ root: Element, input: Element }} ed
 */
function codeEditorName(ed) {
  const own = (el) => idrefText(el, "aria-labelledby") || clean(el.getAttribute("aria-label") || "");
  let name = own(ed.input);
  const field = replacedField(ed.root);
  if (!name && field) name = accessibleName(field, "field");
  if (!name) name = own(ed.root) || clean(ed.root.getAttribute("title") || "");
  // Monaco's default: "Editor content;Press Alt+F1 for Accessibility Options."
  return cut(name.split(/;\s*Press Alt\+F1/)[0], 150);
}

/**
 * The lines the editor shows, in screen order, each with its number from the gutter where
 * there is one, and whether more lines lie above or below its box.
 * @param {{ root: Element, shape: EditorShape }} ed
 * @returns {{ lines: {n: number | null, text: string}[], first: number | null,
 *   last: number | null, above: boolean, below: boolean }}
 */
function codeEditorLines(ed) {
  const box = rectOf(ed.root);
  const numbers = gutterNumbers(ed.root);
  /** @type {{top: number, n: number | null, text: string}[]} */
  const shown = [];
  let above = false;
  let below = false;
  for (const line of QUERY_ALL.call(ed.root, ed.shape.lines)) {
    const r = rectOf(line);
    if (r.height < 1) continue;
    if (r.bottom <= box.top + 1) {
      above = true;
      continue;
    }
    if (r.top >= box.bottom - 1) {
      below = true;
      continue;
    }
    const text = (line.textContent || "").replace(/[\u200b\u200c]/g, "").replace(/\u00a0/g, " ");
    shown.push({ top: r.top, n: numberAt(numbers, r), text });
  }
  shown.sort((p, q) => p.top - q.top);
  const scroller = ed.shape.scroller ? QUERY_ALL.call(ed.root, ed.shape.scroller)[0] : null;
  if (scroller) {
    if (scroller.scrollTop > 1) above = true;
    if (scroller.scrollHeight - scroller.clientHeight - scroller.scrollTop > 1) below = true;
  }
  const first = shown.length ? shown[0].n : null;
  const last = shown.length ? shown[shown.length - 1].n : null;
  if (first !== null && first > 1) above = true;
  return { lines: shown.map(({ n, text }) => ({ n, text })), first, last, above, below };
}

/**
 * The gutter's line numbers and where each sits.
 * @param {Element} root
 * @returns {{top: number, bottom: number, n: number}[]}
 */
function gutterNumbers(root) {
  const out = [];
  const cells = QUERY_ALL.call(root, ".CodeMirror-linenumber, .cm-lineNumbers .cm-gutterElement, .line-numbers, .ace_gutter-cell");
  for (const cell of cells) {
    const n = parseInt((cell.textContent || "").trim(), 10);
    if (!Number.isFinite(n)) continue;
    const r = rectOf(cell);
    if (r.height >= 1) out.push({ top: r.top, bottom: r.bottom, n });
  }
  return out;
}

/**
 * @param {{top: number, bottom: number, n: number}[]} numbers
 * @param {DOMRect} r
 */
function numberAt(numbers, r) {
  for (const cell of numbers) if (Math.abs(cell.top - r.top) < 3 || (cell.top >= r.top - 1 && cell.bottom <= r.bottom + 1)) return cell.n;
  return null;
}

/**
 * The editor's text as a person reads it: its shown lines joined.
 * @param {Element} el the editor's box, or any node in it
 * @returns {string | null}
 */
function codeEditorValue(el) {
  const ed = codeEditorAround(el);
  return ed ? codeEditorLines(ed).lines.map((l) => l.text).join("\n") : null;
}

// The lines of an editor the digest shows at most (a person reads the box, not the file).
const MAX_CODE_LINES = 60;

/**
 * The editor's record: a text field (role textbox) of its kind, the numbers of the lines it
 * shows and whether more lie above or below, and the lines themselves after its line, each
 * as "  │text" (escaped as page text is).
 * @param {any} rec
 * @param {{ kind: string, root: Element, input: Element, shape: EditorShape }} ed
 */
function codeEditorFacts(rec, ed) {
  rec.role = "textbox";
  rec.attrs.role = "textbox";
  rec.attrs.editor = ed.kind;
  const shown = codeEditorLines(ed);
  const lines = shown.lines.slice(0, MAX_CODE_LINES);
  const range = [];
  if (shown.first !== null && shown.last !== null) range.push(shown.first === shown.last ? `${shown.first}` : `${shown.first}-${shown.last}`);
  if (shown.above) range.push("more above");
  if (shown.below || lines.length < shown.lines.length) range.push("more below");
  if (range.length) rec.attrs.lines = range.join(", ");
  if (!lines.length || (lines.length === 1 && !lines[0].text)) rec.attrs.empty = "";
  else rec.codeLines = lines.map((l) => "\n  │" + esc(cut(l.text, 200))).join("");
}
