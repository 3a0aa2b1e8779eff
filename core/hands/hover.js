// @ts-check
// The hands' page script, stage: hover: what a hover made appear (a menu, a tooltip).
//
// core/hands/ctx.py joins the stages in the order of its PAGE_PARTS inside one closure,
// with `judgeSensitive` (core/world/sensitive.js) in scope, and runs it in handrail's
// isolated world (core/world/), where the eyes' script (core/eyes/*.js) has defined
// globalThis.__handrail: the stages share their top-level names, and the page sees none
// of them.

// Seen by a person: rendered, not hidden by CSS, not fully transparent, with a box.
function shown(el) {
  if (typeof el.checkVisibility === "function") {
    const opts = { checkOpacity: true, checkVisibilityCSS: true, opacityProperty: true, visibilityProperty: true };
    if (!el.checkVisibility(opts)) return false;
  }
  const r = el.getBoundingClientRect();
  return r.width > 0 && r.height > 0;
}

// Where a hover's reaction is looked for, so a huge page costs no more than a small one:
// the hovered element's neighbourhood (its ancestors up to HOVER_LEVELS levels below the
// body, and all they hold: a submenu, a mega-menu panel, a sibling tooltip), and whatever
// the page inserted anywhere after the move (a tooltip or popup appended to the body).
const HOVER_LEVELS = 4;
const HOVER_LIMIT = 3000;

function neighbourhood(el) {
  const doc = el.ownerDocument;
  let root = el;
  for (let i = 0; i < HOVER_LEVELS; i++) {
    const up = parentElementOf(root);
    if (!up || up === doc.body || up === doc.documentElement) break;
    root = up;
  }
  return root;
}

const NODE_IS_CONNECTED = /** @type {(this: Node) => boolean} */ (
  /** @type {PropertyDescriptor} */ (Object.getOwnPropertyDescriptor(Node.prototype, "isConnected")).get
);
const ELEMENT_BY_TAG = Element.prototype.getElementsByTagName;
const isFormElement = (/** @type {Element} */ el) =>
  Object.prototype.toString.call(el) === "[object HTMLFormElement]";

function within(roots) {
  const out = new Set();
  for (const root of roots) {
    // The neighbourhood's root may be a form: read through Node's and Element's own
    // members (its controls may be named "isConnected" or "getElementsByTagName").
    if (!NODE_IS_CONNECTED.call(root)) continue;
    // A form draws nothing and never appears on hover; its members may be shadowed.
    if (!isFormElement(root)) out.add(root);
    for (const el of ELEMENT_BY_TAG.call(root, "*")) {
      if (out.size >= HOVER_LIMIT) return [...out];
      if (!isFormElement(el)) out.add(el);
    }
  }
  return [...out];
}

let hoverBefore = null;

// What a 1-pixel clipping box holds is not seen (the "visually hidden" text for screen
// readers: jQuery UI's live region, .sr-only).
function visuallyHidden(el) {
  for (let n = el; n && n.nodeType === 1; n = parentElementOf(n)) {
    const st = styleOf(n);
    if (st.clip === "rect(0px, 0px, 0px, 0px)" || st.clipPath === "inset(50%)") return true;
    if (st.overflowX !== "visible" && st.overflowY !== "visible") {
      const r = n.getBoundingClientRect();
      if (r.width <= 1 || r.height <= 1) return true;
    }
  }
  return false;
}

// What a menu or a tooltip that appeared holds: its innermost actionable items' texts.
const ITEM_SELECTOR =
  "a[href], button, input, select, textarea, [role^=menuitem], [role=option], [role=tab], [role=treeitem], [role=link], [role=button], li";

function appearedItem(el) {
  const found = Array.from(el.querySelectorAll(ITEM_SELECTOR)).filter(shown);
  if (el.matches(ITEM_SELECTOR)) found.unshift(el);
  const innermost = found.filter((item) => !found.some((other) => other !== item && item.contains(other)));
  const items = innermost.map((item) => clip(item.innerText || item.textContent || item.getAttribute("aria-label"), 40)).filter(Boolean);
  return {
    role: el.getAttribute("role") || "",
    tag: el.tagName.toLowerCase(),
    items: items.slice(0, 8),
    more: Math.max(0, items.length - 8),
    text: clip(el.innerText || el.textContent || el.getAttribute("aria-label") || "", 100),
  };
}

// Before a hover: what is shown now in the element's document, and its title tooltip.
function hoverBaseline(el) {
  const doc = el.ownerDocument;
  if (hoverBefore) hoverBefore.observer.disconnect();
  const root = neighbourhood(el);
  const inserted = [];
  const observer = new MutationObserver((records) => {
    for (const record of records) {
      for (const node of record.addedNodes) if (node.nodeType === 1 && inserted.length < 50) inserted.push(node);
    }
  });
  observer.observe(doc, { childList: true, subtree: true });
  hoverBefore = { doc, root, inserted, observer, seen: new WeakSet(within([root]).filter(shown)) };
  // The settle counts the page's clock from the move (hover timers start there).
  lastInputAt = inputEndAt = performance.now();
  const moved = () => {
    lastInputAt = inputEndAt = performance.now();
  };
  doc.defaultView.addEventListener("pointermove", moved, { capture: true, once: true });
  const titled = el.closest("[title]");
  return { title: titled ? clip(titled.getAttribute("title"), 100) : "" };
}

// After it: the outermost elements shown now that were not shown before (a menu, a
// tooltip), in document order. Needs no element: the hovered one may be gone.
function hoverAppeared() {
  const before = hoverBefore;
  hoverBefore = null;
  if (!before) return [];
  for (const record of before.observer.takeRecords()) {
    for (const node of record.addedNodes) if (node.nodeType === 1) before.inserted.push(node);
  }
  before.observer.disconnect();
  if (!before.doc.defaultView) return [];
  const fresh = within([before.root, ...before.inserted]).filter(
    (el) => shown(el) && !before.seen.has(el) && !visuallyHidden(el),
  );
  const freshSet = new Set(fresh);
  const roots = fresh.filter((el) => !freshSet.has(parentElementOf(el)));
  return roots.slice(0, 4).map(appearedItem);
}
