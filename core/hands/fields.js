// @ts-check
// The hands' page script, stage: fields and toggles: which field typing fills, its state
// and sensitivity, caret and selection, setting values, native <select>, file inputs,
// and the state of checkboxes, switches and expandables.
//
// core/hands/ctx.py joins the stages in the order of its PAGE_PARTS inside one closure,
// with `judgeSensitive` (core/world/sensitive.js) in scope, and runs it in handrail's
// isolated world (core/world/), where the eyes' script (core/eyes/*.js) has defined
// globalThis.__handrail: the stages share their top-level names, and the page sees none
// of them.

function toggleOf(el) {
  const tag = el.tagName;
  const type = (el.getAttribute("type") || "").toLowerCase();
  if (tag === "INPUT" && (type === "checkbox" || type === "radio")) {
    return { kind: type, state: el.indeterminate ? "mixed" : el.checked ? "checked" : "unchecked" };
  }
  const role = (el.getAttribute("role") || "").toLowerCase();
  const checked = el.getAttribute("aria-checked");
  if (checked !== null) {
    const state = checked === "true" ? "checked" : checked === "mixed" ? "mixed" : "unchecked";
    return { kind: role || "toggle", state: role === "switch" ? (checked === "true" ? "on" : "off") : state };
  }
  const pressed = el.getAttribute("aria-pressed");
  if (pressed !== null) {
    return { kind: "toggle button", state: pressed === "true" ? "pressed" : pressed === "mixed" ? "mixed" : "not pressed" };
  }
  if (tag === "LABEL" && el.control && el.control !== el) return toggleOf(el.control);
  const expanded = el.getAttribute("aria-expanded");
  if (expanded !== null) return { kind: "expandable", state: expanded === "true" ? "expanded" : "collapsed" };
  if (tag === "SUMMARY" && el.parentElement && el.parentElement.tagName === "DETAILS") {
    return { kind: "expandable", state: el.parentElement.open ? "expanded" : "collapsed" };
  }
  return null;
}

const TEXT_INPUT_TYPES = new Set([
  "", "text", "search", "email", "url", "tel", "password", "number",
  "date", "datetime-local", "month", "week", "time", "color", "range",
]);

// The field that typing into [index] should fill: the element itself, the control of a
// label, or the single editable field inside a wrapper.
function editableOf(el) {
  // A code editor (core/eyes/editors.js): the field that takes its keys, wherever it sits.
  const code = registry().codeEditor(el);
  if (code) return code.input;
  if (isEditable(el)) return el;
  if (el.tagName === "LABEL" && el.control && isEditable(el.control)) return el.control;
  const inner = el.querySelectorAll("input, textarea, [contenteditable]");
  const candidates = Array.from(inner).filter(isEditable);
  return candidates.length === 1 ? candidates[0] : el;
}

function isEditable(el) {
  if (el.tagName === "TEXTAREA") return true;
  if (el.tagName === "INPUT") return TEXT_INPUT_TYPES.has((el.getAttribute("type") || "").toLowerCase());
  return el.isContentEditable === true || registry().codeEditor(el) !== null;
}

function fieldKind(el) {
  if (registry().codeEditor(el)) return "code";
  if (el.tagName === "TEXTAREA") return "textarea";
  if (el.tagName === "INPUT") return "input";
  if (el.isContentEditable) return "contenteditable";
  return "other";
}

// Password, one-time-code and card fields, judged by meaning (core/world/sensitive.js, whose
// words are core/world/sensitive.json): the function is passed in as `judgeSensitive`.
function sensitivityOf(el) {
  return judgeSensitive(el) || (editableOf(el) !== el ? judgeSensitive(editableOf(el)) : null);
}

function fieldValue(el) {
  // A code editor's field holds nothing a person sees (or only its selection): its text is
  // the lines the editor draws.
  const code = registry().codeEditorValue(el);
  if (code !== null) return code;
  if (el.tagName === "INPUT" || el.tagName === "TEXTAREA") return el.value;
  // innerText follows what the person sees (line breaks for blocks), without trailing ones.
  return (el.innerText || "").replace(/\u00a0/g, " ").replace(/\n+$/, "");
}

function fieldInfo(el) {
  const target = editableOf(el);
  const kind = fieldKind(target);
  const maxLength = target.tagName === "INPUT" || target.tagName === "TEXTAREA" ? target.maxLength : -1;
  return {
    kind,
    tag: target.tagName.toLowerCase(),
    type: (target.getAttribute("type") || "").toLowerCase(),
    editable: isEditable(target),
    readOnly: Boolean(target.readOnly) || target.getAttribute("aria-readonly") === "true",
    disabled: disabledProblem(target) !== null,
    maxLength: maxLength > 0 ? maxLength : null,
    sensitive: sensitivityOf(target) !== null,
    focused: isFocused(target),
    value: fieldValue(target),
    describe: describe(target),
    isSelf: target === el,
  };
}

function isFocused(el) {
  const active = deepActiveElement();
  if (!active) return false;
  if (active === el) return true;
  return el.isContentEditable === true && containsComposed(el, active);
}

function placeCaretAtEnd(target) {
  if (target.tagName === "INPUT" || target.tagName === "TEXTAREA") {
    try {
      const n = target.value.length;
      target.setSelectionRange(n, n);
    } catch (_) {
      // email and number inputs have no selection API; the caret is already at the end.
    }
    return;
  }
  const doc = target.ownerDocument;
  const sel = doc.getSelection();
  // A caret already past the last text stays: moving it would drop the format a toolbar
  // button just set for what is typed next (TinyMCE's bold at the caret).
  if (sel && sel.isCollapsed && sel.focusNode && target.contains(sel.focusNode)) {
    const after = doc.createRange();
    after.setStart(sel.focusNode, sel.focusOffset);
    after.setEnd(target, target.childNodes.length);
    if (!after.toString().trim()) return;
  }
  const range = doc.createRange();
  range.selectNodeContents(target);
  range.collapse(false);
  sel.removeAllRanges();
  sel.addRange(range);
}

function selectAllIn(target) {
  if (target.tagName === "INPUT" || target.tagName === "TEXTAREA") {
    target.select();
    return;
  }
  const doc = target.ownerDocument;
  const range = doc.createRange();
  range.selectNodeContents(target);
  const sel = doc.getSelection();
  sel.removeAllRanges();
  sel.addRange(range);
}

// Sets a value the way a framework's own listeners expect: through the prototype's
// setter (below any instance-level override a framework installs) and then the input and
// change events it listens to.
function setNativeValue(target, value) {
  const win = target.ownerDocument.defaultView;
  if (target.tagName === "INPUT" || target.tagName === "TEXTAREA") {
    const proto = target.tagName === "INPUT" ? win.HTMLInputElement.prototype : win.HTMLTextAreaElement.prototype;
    const setter = Object.getOwnPropertyDescriptor(proto, "value").set;
    setter.call(target, value);
  } else {
    target.textContent = value;
  }
  target.dispatchEvent(new win.Event("input", { bubbles: true, composed: true }));
  target.dispatchEvent(new win.Event("change", { bubbles: true }));
}

// A secret goes in without keys: proven focused here, then inserted into this document's
// own field in the same task (execCommand edits only the field's own document), so no
// handler the page runs on a key, a focus change or a timer can steer it into another
// frame. The input events a person's typing fires are fired (beforeinput, input).
/** @returns {{ok: boolean, focused: string}} */
function insertText(el, text, clear) {
  const target = editableOf(el);
  const where = () => describe(deepActiveElement() || document.body);
  if (!isFocused(target)) return { ok: false, focused: where() };
  if (clear) selectAllIn(target);
  else placeCaretAtEnd(target);
  const inserted = target.ownerDocument.execCommand("insertText", false, text);
  return { ok: inserted && isFocused(target), focused: where() };
}

// Text for a code editor goes in as a paste, to the field that has the focus: the editor's
// own paste handler takes it whole (typed as input, Monaco indents and closes brackets a
// second time). `handled`: the editor took it (it cancels the browser's own paste); an editor
// that leaves pasting to the browser (CodeMirror 5) is given the text as input instead.
/** @returns {{ok: boolean, handled: boolean, focused: string}} */
function pasteText(el, text) {
  const target = editableOf(el);
  const where = () => describe(deepActiveElement() || document.body);
  if (!isFocused(target)) return { ok: false, handled: false, focused: where() };
  const win = target.ownerDocument.defaultView;
  const data = new win.DataTransfer();
  data.setData("text/plain", text);
  const paste = new win.ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true, composed: true });
  target.dispatchEvent(paste);
  return { ok: true, handled: paste.defaultPrevented, focused: where() };
}

function focusedSensitivity() {
  const active = deepActiveElement();
  return active && active !== document.body ? judgeSensitive(active) : null;
}

function focusField(el) {
  const target = editableOf(el);
  if (!isFocused(target)) target.focus({ preventScroll: false });
  return isFocused(target);
}

function selectAll(el) {
  const target = editableOf(el);
  if (!isFocused(target)) target.focus();
  selectAllIn(target);
  return fieldValue(target);
}

function selectOption(el, wanted) {
  if (el.tagName !== "SELECT") {
    return {
      ok: false,
      code: "not_select",
      reason: `${describe(el)} is not a native <select>; click it to open its list, then click the option`,
    };
  }
  const problem = disabledProblem(el);
  if (problem) return { ok: false, code: "disabled", reason: "the list is disabled" };
  const norm = (s) => String(s).replace(/\s+/g, " ").trim().toLowerCase();
  const options = Array.from(el.options).filter((o) => !o.disabled);
  const listed = Array.from(el.options).map((o) => ({
    label: clip(o.label || o.text, 80),
    value: o.value,
    disabled: o.disabled,
  }));
  const want = norm(wanted);
  let found = options.filter((o) => o.value === String(wanted));
  if (!found.length) found = options.filter((o) => norm(o.label || o.text) === want);
  if (!found.length) found = options.filter((o) => norm(o.value) === want);
  if (!found.length && want) found = options.filter((o) => norm(o.label || o.text).includes(want));
  if (found.length !== 1) {
    const disabledMatch = Array.from(el.options).some(
      (o) => o.disabled && (o.value === String(wanted) || norm(o.label || o.text) === want),
    );
    return {
      ok: false,
      code: found.length ? "ambiguous" : disabledMatch ? "disabled_option" : "no_match",
      matches: found.map((o) => clip(o.label || o.text, 80)),
      options: listed,
    };
  }
  const option = found[0];
  const before = el.value;
  const win = el.ownerDocument.defaultView;
  if (el.multiple) {
    option.selected = true;
  } else {
    const setter = Object.getOwnPropertyDescriptor(win.HTMLSelectElement.prototype, "value").set;
    setter.call(el, option.value);
  }
  el.dispatchEvent(new win.Event("input", { bubbles: true, composed: true }));
  el.dispatchEvent(new win.Event("change", { bubbles: true }));
  const now = el.selectedOptions.length ? el.selectedOptions[0] : null;
  return {
    ok: true,
    changed: before !== el.value,
    label: now ? clip(now.label || now.text, 80) : "",
    value: now ? now.value : "",
    wanted: clip(option.label || option.text, 80),
  };
}

function fileInput(el) {
  const ok = el.tagName === "INPUT" && (el.getAttribute("type") || "").toLowerCase() === "file";
  return {
    ok,
    describe: describe(el),
    multiple: ok && el.multiple,
    accept: ok ? el.accept : "",
    disabled: disabledProblem(el) !== null,
  };
}

function fileNames(el) {
  return el.files ? Array.from(el.files, (f) => f.name) : [];
}
