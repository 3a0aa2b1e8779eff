// @ts-check
// The eyes, stage: scroll containers (areas a person scrolls inside the page).
// One part of handrail's page script: core/eyes/script.py joins core/eyes/*.js (in the order
// of its EYES_PARTS) inside one closure, so these names are shared with the other parts and
// invisible to the page (the script runs in our isolated world).

// An area a person can scroll: its overflow on that axis is auto/scroll (not hidden, which
// clips without a scrollbar or wheel), and its content is larger than its scrollport. The
// document's own scroller is the page's "Scroll:" line, never one of these.
const SCROLLS = new Set(["auto", "scroll", "overlay"]);
function scrollAxes(el, st) {
  if (el.clientWidth < 1 || el.clientHeight < 1) return null;
  const y = SCROLLS.has(st.overflowY) && el.scrollHeight > el.clientHeight + 1;
  const x = SCROLLS.has(st.overflowX) && el.scrollWidth > el.clientWidth + 1;
  return x || y ? { x, y } : null;
}

function isScroller(el, st) {
  const doc = el.ownerDocument;
  if (el === doc.body || el === doc.documentElement || el === doc.scrollingElement) return false;
  const view = doc.defaultView;
  if (!view) return false;
  const style = st || view.getComputedStyle(el);
  if (style.display === "contents" || (style.overflowX === "visible" && style.overflowY === "visible")) return false;
  return scrollAxes(el, style) !== null;
}

// A scroll container's short name when it has no label of its own: a heading or caption
// inside it, else the heading or label just before it ("Flights" above the results). Never
// its content (that is listed line by line).
const HEADINGS = "h1, h2, h3, h4, h5, h6, [role=heading], caption, legend";
function scrollLabel(el) {
  const inner = (rootOf(el) || el).querySelector(HEADINGS);
  if (inner) {
    const t = clean(inner.textContent || "");
    if (t) return cut(t, 80);
  }
  const before = el.previousElementSibling;
  if (before && (before.matches(HEADINGS) || before.tagName === "LABEL")) {
    const t = clean(before.textContent || "");
    if (t) return cut(t, 80);
  }
  return "";
}

// How much of a scroll container's content lies wholly outside its scrollport, by direction:
// the outermost boxes beyond it (a flight card, a table row, a paragraph), each counted once,
// and only on an axis a person can scroll. A direction with content beyond but no whole box
// there (half a card) gets -1: "more", without a number.
const MAX_SCROLL_VISITS = 5000;
function scrollBeyond(el, st) {
  const axes = scrollAxes(el, st) || { x: false, y: false };
  const b = rectOf(el);
  const top = b.top + el.clientTop;
  const left = b.left + el.clientLeft;
  const bottom = top + el.clientHeight;
  const right = left + el.clientWidth;
  const out = { above: 0, below: 0, left: 0, right: 0 };
  const stack = [...childrenOf(el)];
  let visits = 0;
  while (stack.length && visits < MAX_SCROLL_VISITS) {
    const n = stack.pop();
    visits++;
    const r = boxOf(n); // its content was placed before a scroll container's line is written
    if (r.width < 1 && r.height < 1) {
      // display:contents, an empty wrapper or something not rendered: look inside.
      for (const ch of childrenOf(n)) stack.push(ch);
      continue;
    }
    let where = null;
    if (axes.y && r.top >= bottom - 1) where = "below";
    else if (axes.y && r.bottom <= top + 1) where = "above";
    else if (axes.x && r.left >= right - 1) where = "right";
    else if (axes.x && r.right <= left + 1) where = "left";
    if (where === null) {
      for (const ch of childrenOf(n)) stack.push(ch);
    } else if (!n.checkVisibility || n.checkVisibility({ opacityProperty: true, visibilityProperty: true })) {
      out[where]++;
    }
  }
  // Content beyond without a whole box there: scrolling still shows more.
  const more = (room) => (room ? -1 : 0);
  if (axes.y && !out.below) out.below = more(el.scrollTop + el.clientHeight < el.scrollHeight - 1);
  if (axes.y && !out.above) out.above = more(el.scrollTop > 0);
  const sl = Math.abs(el.scrollLeft);
  if (axes.x && !out.right) out.right = more(sl + el.clientWidth < el.scrollWidth - 1);
  if (axes.x && !out.left) out.left = more(sl > 0);
  out.capped = visits >= MAX_SCROLL_VISITS;
  return out;
}

function childrenOf(n) {
  // (A form's members may be its controls; it is never a shadow host nor a slot.)
  if (isForm(n)) return CHILDREN.call(n);
  const root = rootOf(n);
  if (root) return root.children;
  if (n.tagName === "SLOT") {
    const assigned = n.assignedElements();
    return assigned.length ? assigned : n.children;
  }
  return n.children;
}

// The note after a scroll container's line: " (3 more below, more right: scroll{index: 12})".
function scrollNote(beyond, index) {
  const fmt = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const parts = [];
  for (const where of ["above", "below", "left", "right"]) {
    const n = beyond[where];
    if (n > 0) parts.push(`${fmt(n)}${beyond.capped ? "+" : ""} more ${where}`);
    else if (n < 0) parts.push(`more ${where}`);
  }
  return parts.length ? ` (${parts.join(", ")}: scroll{index: ${index}})` : "";
}
