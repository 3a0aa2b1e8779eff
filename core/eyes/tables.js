// @ts-check
// The eyes, stage: tables and grids read as a person reads them.
// One part of handrail's page script: core/eyes/script.py joins core/eyes/*.js (in the order
// of its EYES_PARTS) inside one closure, so these names are shared with the other parts and
// invisible to the page (the script runs in our isolated world).
//
// A person reads a table by rows, each value under its column's header. The walk would give
// one line per cell (each cell is a block), and a model would have to count lines to know
// which column a value is in. So a row (a <tr>, or role=row) is one line, its cells joined by
// " | " in their order; the header row is such a line too, once, above the rows. Elements in
// a cell keep their own [index]<…> form inside the row's line; the name of one that ends its
// cell runs to the " | " (no closing tag). An interactive grid's rows are
// read in the order they stand on screen (a grid that places rows with translateY keeps
// them in the DOM in the order they were made), and its cells are elements a person focuses,
// double-clicks and edits.

const CELL_ROLES = new Set(["cell", "gridcell", "columnheader", "rowheader"]);
const GRID_ROLES = new Set(["grid", "treegrid"]);

/** @param {Element} el */
function isRowEl(el) {
  return el.tagName === "TR" || el.getAttribute("role") === "row";
}

/** @param {Element} el */
function isCellEl(el) {
  const role = el.getAttribute("role");
  if (role) return CELL_ROLES.has(role);
  return el.tagName === "TD" || el.tagName === "TH";
}

/**
 * A cell of an interactive grid that holds no control of its own: a target (focus, double
 * click, edit). A cell that holds controls is read as text around them.
 * @param {Element} el
 */
function isGridCell(el) {
  const role = el.getAttribute("role");
  if (role !== "gridcell" && role !== "columnheader" && role !== "rowheader") return false;
  const grid = el.closest("[role=grid], [role=treegrid]");
  return !!grid && GRID_ROLES.has(grid.getAttribute("role") || "") && !holdsControls(el);
}

/**
 * The row `el` as one line: walked as usual, with each cell's start marked (visit() marks
 * it in cc.row), then its lines joined.
 * @param {WalkState} ws
 * @param {Element} el
 * @param {WalkContext} cc
 */
function rowLine(ws, el, cc) {
  flush(ws);
  const start = ws.lines.length;
  /** @type {{starts: number[]}} */
  const row = { starts: [] };
  cc.row = row;
  walkInto(ws, el, cc);
  flush(ws);
  joinRow(ws, start, row.starts);
}

/**
 * The lines from `start` on, one per cell part, become one line "cell | cell | …" (a row of
 * fewer than two cells, or one holding a frame or a note of ours, stays as it is).
 * @param {WalkState} ws
 * @param {number} start
 * @param {number[]} starts where each cell's lines begin
 */
function joinRow(ws, start, starts) {
  const entries = ws.lines.slice(start);
  if (starts.length < 2 || !entries.length) return;
  if (entries.some((l) => l.note || l.slot !== undefined || l.header)) return;
  const bounds = starts.map((s) => s - start);
  bounds[0] = 0; // what precedes the first cell is read with it
  /** @type {string[]} */
  const cells = [];
  const els = [];
  for (let k = 0; k < bounds.length; k++) {
    const part = entries.slice(bounds[k], k + 1 < bounds.length ? bounds[k + 1] : entries.length);
    let cell = part.map((l) => l.s).join(" ");
    // The " | " after a cell (or the line's end) ends the name of the element that ends it:
    // no closing tag there (`[25]<a href=flights/1>1 | Lisbon`), unless its name holds one.
    const last = part[part.length - 1];
    if (last && last.el && !last.el.name.includes(" | ")) cell = cell.replace(CLOSE_AT_END, "");
    cells.push(cell);
    for (const l of part) if (l.el) els.push(l.el);
  }
  while (cells.length > 1 && !cells[cells.length - 1]) cells.pop();
  let s = cells.join(" | ");
  // Only our lines start with "[": a row whose first cell is page text that does is escaped
  // as any text line is.
  if (!entries[0].el && /^[\s*~]*\[/.test(s)) s = s.replace("[", "&#91;");
  const first = entries[0];
  let dist = first.dist;
  for (const l of entries) dist = Math.min(dist, l.dist);
  ws.lines.length = start;
  ws.lines.push({ s, el: els[0] || null, els, dist, above: first.above });
}

/**
 * The children of `parent` in the order a person reads them: rows placed by a transform or
 * absolutely (a virtualised grid) by where they stand; anything else as in the DOM.
 * @param {Element} parent
 * @returns {Element[] | null} null: the DOM order holds
 */
function rowsOnScreen(parent) {
  const first = parent.firstElementChild;
  if (!first || GET_ATTRIBUTE.call(first, "role") !== "row" || parent.childElementCount < 2) return null;
  const kids = [...parent.children];
  const tops = new Map(kids.map((k) => [k, boxOf(k).top]));
  let sorted = true;
  for (let k = 1; k < kids.length; k++) if ((tops.get(kids[k]) || 0) < (tops.get(kids[k - 1]) || 0)) sorted = false;
  if (sorted) return null;
  return kids.sort((p, q) => (tops.get(p) || 0) - (tops.get(q) || 0));
}

/**
 * A grid's column header draws its filter and menu buttons as icons it hides from assistive
 * technology (AG Grid: aria-hidden, reached by keyboard shortcuts instead); a person sees and
 * clicks them. Such an icon, drawn and with a click handler of its own, is read as a control.
 * @param {Element} el
 * @param {CSSStyleDeclaration} st
 * @param {string} display
 */
function headerIcon(el, st, display) {
  if (display === "none" || st.opacity === "0" || el.hasAttribute("inert")) return false;
  if (el.getAttribute("aria-hidden") !== "true" || !handlers) return false;
  const header = el.closest("[role=columnheader]");
  if (!header || !header.closest("[role=grid], [role=treegrid]")) return false;
  if (handlerOf(el) !== "direct") return false;
  const r = rectOf(el);
  return r.width >= 4 && r.height >= 4 && !el.closest("[aria-hidden=true] [aria-hidden=true]");
}

/**
 * A grid's column header is one target (a click sorts), named by its text; the icon buttons
 * it draws (headerIcon) are listed after it, each a target of its own.
 * @param {WalkState} ws
 * @param {Element} header
 * @param {WalkContext} cc
 * @param {WalkContext} c
 */
function headerIcons(ws, header, cc, c) {
  if (!handlers) return;
  for (const icon of header.querySelectorAll("[aria-hidden=true]")) {
    // Listing, an icon without a handler of its own is no control: no style read for it
    // (AG Grid hides a dozen in each header). Asking, headerIcon asks about the drawn ones.
    if (!asking && handlers.get(icon) !== "direct") continue;
    const st = c.view.getComputedStyle(icon);
    if (st.visibility !== "visible" || !headerIcon(icon, st, st.display)) continue;
    const r = rectOf(icon);
    const rect = c.m ? mapBox(c.m, r.left, r.top, r.width, r.height) : [r.left + c.ox, r.top + c.oy, r.width, r.height];
    describe(ws, icon, icon.tagName, st, "strong", Object.assign({}, cc, { name: null, fold: false, suppress: false }), rect, c, null);
  }
}

/**
 * The children of a flex or grid container in the order it draws them, when CSS `order`
 * moves some (Tagify draws a tag's x after its text with `order: 5`); null when it moves none.
 * @param {Element} parent
 * @param {CSSStyleDeclaration | undefined} st the parent's style
 * @returns {Node[] | null}
 */
function flexOrder(parent, st) {
  // (A box of more than 50 children is read in the DOM's order: a style read per child each walk.)
  if (!st || !/(?:^|-)(?:flex|grid)$/.test(st.display) || parent.childElementCount < 2 || parent.childElementCount > 50) return null;
  const view = parent.ownerDocument.defaultView;
  if (!view) return null;
  /** @type {Map<Node, number>} */
  const order = new Map();
  let moved = false;
  for (const k of parent.children) {
    const n = parseInt(view.getComputedStyle(k).order, 10) || 0;
    order.set(k, n);
    if (n) moved = true;
  }
  if (!moved) return null;
  // Text directly inside is an item of its own, at order 0; the sort is stable (DOM order
  // within one order).
  const nodes = [...parent.childNodes];
  return nodes.sort((p, q) => (order.get(p) || 0) - (order.get(q) || 0));
}
