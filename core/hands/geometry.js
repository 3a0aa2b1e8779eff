// @ts-check
// The hands' page script, stage: geometry across open shadow roots and same-origin frames:
// boxes and points in the top-level viewport, the deep hit test and the deep focus.
//
// core/hands/ctx.py joins the stages in the order of its PAGE_PARTS inside one closure,
// with `judgeSensitive` (core/world/sensitive.js) in scope, and runs it in handrail's
// isolated world (core/world/), where the eyes' script (core/eyes/*.js) has defined
// globalThis.__handrail: the stages share their top-level names, and the page sees none
// of them.

// A node's parent through Node's own getters: a form's controls may be named "parentNode"
// or "parentElement" and hide the form's (DOM clobbering; see core/eyes/dom.js).
const NODE_PARENT = /** @type {(this: Node) => (ParentNode | null)} */ (
  /** @type {PropertyDescriptor} */ (Object.getOwnPropertyDescriptor(Node.prototype, "parentNode")).get
);
const NODE_PARENT_ELEMENT = /** @type {(this: Node) => (Element | null)} */ (
  /** @type {PropertyDescriptor} */ (Object.getOwnPropertyDescriptor(Node.prototype, "parentElement")).get
);

/** @param {Node} node */
function parentElementOf(node) {
  return NODE_PARENT_ELEMENT.call(node);
}

// The next node on a click's path: a node shown through a <slot> goes on through that slot
// (and the slot's ancestors in the shadow tree) before it reaches its own parent, the host.
function composedParent(node) {
  const slot = /** @type {any} */ (node).assignedSlot;
  if (slot && slot.nodeType === 1) return slot;
  const parent = NODE_PARENT.call(node);
  if (parent) return parent.nodeType === 11 && parent.host ? parent.host : parent;
  if (node.nodeType === 9) {
    try {
      return node.defaultView ? node.defaultView.frameElement : null;
    } catch (_) {
      return null;
    }
  }
  return null;
}

function containsComposed(ancestor, node) {
  for (let n = node; n; n = composedParent(n)) if (n === ancestor) return true;
  return false;
}

function styleOf(el) {
  return el.ownerDocument.defaultView.getComputedStyle(el);
}

// Offset of a frame's content box (its viewport origin) in its parent's viewport.
function frameContentOrigin(frameEl) {
  const r = frameEl.getBoundingClientRect();
  const cs = styleOf(frameEl);
  return {
    x: r.left + frameEl.clientLeft + parseFloat(cs.paddingLeft || "0"),
    y: r.top + frameEl.clientTop + parseFloat(cs.paddingTop || "0"),
  };
}

// Offset of a document's viewport in the top-level viewport.
function documentOffset(doc) {
  let x = 0;
  let y = 0;
  let win = doc.defaultView;
  while (win) {
    let frameEl = null;
    try {
      frameEl = win.frameElement;
    } catch (_) {
      frameEl = null;
    }
    if (!frameEl) break;
    const o = frameContentOrigin(frameEl);
    x += o.x;
    y += o.y;
    win = frameEl.ownerDocument.defaultView;
  }
  return { x, y };
}

function topRect(el) {
  const r = el.getBoundingClientRect();
  const o = documentOffset(el.ownerDocument);
  return { x: r.left + o.x, y: r.top + o.y, w: r.width, h: r.height };
}

function viewport() {
  const vv = window.visualViewport;
  return {
    w: vv ? vv.width : window.innerWidth,
    h: vv ? vv.height : window.innerHeight,
  };
}

// The element that receives a click at (x, y) in the top-level viewport: descends into
// open shadow roots and same-origin frames, as the browser's own hit test does.
function deepElementFromPoint(x, y) {
  let doc = document;
  let ox = 0;
  let oy = 0;
  let hit = doc.elementFromPoint(x, y);
  for (let guard = 0; hit && guard < 64; guard++) {
    if (hit.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint(x - ox, y - oy);
      if (inner && inner !== hit) {
        hit = inner;
        continue;
      }
      // The host's own text, shown through a slot, is under the point (Shoelace's switch:
      // "Dark mode" slotted into a <label>): the click goes through that slot.
      const slot = slottedTextAt(hit, x - ox, y - oy);
      if (slot) {
        hit = slot;
        continue;
      }
    }
    if (hit.tagName === "IFRAME" || hit.tagName === "FRAME") {
      let childDoc = null;
      try {
        childDoc = /** @type {HTMLIFrameElement} */ (hit).contentDocument;
      } catch (_) {
        childDoc = null;
      }
      if (childDoc) {
        const o = frameContentOrigin(hit);
        ox += o.x;
        oy += o.y;
        const inner = childDoc.elementFromPoint(x - ox, y - oy);
        if (inner) {
          doc = childDoc;
          hit = inner;
          continue;
        }
      }
    }
    break;
  }
  return hit;
}

// The slot that shows the text of `host` lying under (x, y) in its document's viewport.
/**
 * @param {Element} host
 * @param {number} x
 * @param {number} y
 * @returns {Element | null}
 */
function slottedTextAt(host, x, y) {
  const range = host.ownerDocument.createRange();
  for (const node of host.childNodes) {
    const slot = node.nodeType === 3 ? /** @type {Text} */ (node).assignedSlot : null;
    if (!slot) continue;
    range.selectNodeContents(node);
    for (const r of range.getClientRects()) {
      if (x >= r.left && x <= r.right && y >= r.top && y <= r.bottom) return slot;
    }
  }
  return null;
}

function deepActiveElement() {
  let active = document.activeElement;
  for (let guard = 0; active && guard < 64; guard++) {
    if (active.shadowRoot && active.shadowRoot.activeElement) {
      active = active.shadowRoot.activeElement;
      continue;
    }
    if (active.tagName === "IFRAME" || active.tagName === "FRAME") {
      let childDoc = null;
      try {
        childDoc = /** @type {HTMLIFrameElement} */ (active).contentDocument;
      } catch (_) {
        childDoc = null;
      }
      // A frame's body has the focus when it is the editor (TinyMCE's contenteditable body).
      const inner = childDoc && childDoc.activeElement;
      if (inner && (inner !== childDoc.body || /** @type {HTMLElement} */ (inner).isContentEditable)) {
        active = childDoc.activeElement;
        continue;
      }
    }
    break;
  }
  return active;
}

function inViewport(rect) {
  const vp = viewport();
  return rect.x >= 0 && rect.y >= 0 && rect.x + rect.w <= vp.w && rect.y + rect.h <= vp.h;
}

// The point to click: the centre of the element's largest box, clipped to the viewport.
function clickPoint(el) {
  const o = documentOffset(el.ownerDocument);
  const vp = viewport();
  let best = null;
  let bestArea = -1;
  const rects = el.getClientRects();
  for (const r of rects.length ? rects : [el.getBoundingClientRect()]) {
    const left = Math.max(r.left + o.x, 0);
    const top = Math.max(r.top + o.y, 0);
    const right = Math.min(r.right + o.x, vp.w);
    const bottom = Math.min(r.bottom + o.y, vp.h);
    const area = Math.max(0, right - left) * Math.max(0, bottom - top);
    if (area > bestArea) {
      bestArea = area;
      best = { left, top, right, bottom };
    }
  }
  if (!best || bestArea <= 0) return null;
  return { x: (best.left + best.right) / 2, y: (best.top + best.bottom) / 2 };
}

// Same box, to half a pixel.
function sameRect(a, b) {
  return Math.abs(a.x - b.x) < 0.5 && Math.abs(a.y - b.y) < 0.5 && Math.abs(a.w - b.w) < 0.5 && Math.abs(a.h - b.h) < 0.5;
}

function frameClock(doc) {
  return doc.timeline ? doc.timeline.currentTime : null;
}
