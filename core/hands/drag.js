// @ts-check
// The hands' page script, stage: drag and click_at: what is at a point (the hit test that
// names it for the gate), where a drag may end, the check before the drop, and what the
// drag moved (the order of a list, the container an item is in, a slider's value).
//
// core/hands/ctx.py joins the stages in the order of its PAGE_PARTS inside one closure,
// with `judgeSensitive` (core/world/sensitive.js) in scope, and runs it in handrail's
// isolated world (core/world/), where the eyes' script (core/eyes/*.js) has defined
// globalThis.__handrail: the stages share their top-level names, and the page sees none
// of them.

// A frame element whose document our world cannot read (another site's).
function foreignFrame(el) {
  if (!el || (el.tagName !== "IFRAME" && el.tagName !== "FRAME" && el.tagName !== "OBJECT")) return null;
  try {
    if (/** @type {HTMLIFrameElement} */ (el).contentDocument) return null;
  } catch (_) {
    // cross-origin: fall through
  }
  const src = el.getAttribute("src") || el.getAttribute("data") || "";
  try {
    return new URL(src, el.ownerDocument.baseURI).host || src || "another site";
  } catch (_) {
    return src || "another site";
  }
}

// What makes the element at a point something a person cannot see: fully transparent (on
// it or an ancestor), hidden, or a box with nothing drawn in it over something that is.
function invisibleAt(el) {
  const problem = visibilityProblem(el);
  if (problem && problem[0] !== "inert") return problem[1];
  return null;
}

// The visible element under an invisible one at (x, y) in the top-level viewport: what
// the person sees there in a picture.
function seenBeneath(hit, x, y) {
  const list = document.elementsFromPoint(x, y);
  for (const el of list) {
    if (el === hit || containsComposed(el, hit)) continue;
    if (!invisibleAt(el)) return describe(el);
  }
  return null;
}

// What the browser's hit test gives at (x, y), top-level viewport CSS pixels, for the gate:
// the element (registered, so the hands can act on it by index), its name and box, the
// indexes of the elements around it (innermost first: the gate finds the digest's element
// among them), whether a person can see it, and whether it is another site's frame.
function pointHit(x, y) {
  const vp = viewport();
  if (!(x >= 0 && y >= 0 && x < vp.w && y < vp.h)) {
    return { ok: false, reason: `the point (${Math.round(x)}, ${Math.round(y)}) is outside the viewport (${Math.round(vp.w)}x${Math.round(vp.h)})` };
  }
  const hit = deepElementFromPoint(x, y);
  if (!hit) return { ok: false, reason: "nothing is at that point" };
  const reg = registry();
  const chain = [];
  for (let n = hit; n && n.nodeType === 1 && chain.length < 24; n = composedParent(n)) {
    chain.push(reg.indexOf(n));
    if (n === n.ownerDocument.body) break;
  }
  const invisible = invisibleAt(hit);
  const sensitive = sensitivityOf(hit);
  return {
    ok: true,
    index: reg.indexOf(hit),
    chain,
    name: accessibleName(hit),
    describe: describe(hit),
    tag: hit.tagName.toLowerCase(),
    rect: topRect(hit),
    invisible,
    beneath: invisible ? seenBeneath(hit, x, y) : null,
    frame: foreignFrame(hit),
    sensitive: sensitive ? String(sensitive.kind || "sensitive") : null,
  };
}

// The point a drag ends on `el`: its centre, in view, and `el` (or what passes the click to
// it) the element hit there.
function dropPoint(el) {
  const problem = visibilityProblem(el);
  if (problem) return refusal(problem[0], problem[1]);
  const point = clickPoint(el);
  if (!point || !inViewport(topRect(el))) {
    return refusal("outside", "it is outside the visible part of the page while the dragged element is in view");
  }
  const hit = deepElementFromPoint(point.x, point.y);
  if (!receivesClick(el, hit)) {
    return refusal("covered", `it is covered by ${describe(hit)}, which would receive the drop instead`, { covering: describe(hit) });
  }
  return { ok: true, x: point.x, y: point.y, name: accessibleName(el) };
}

// Just before the release (or the drop): the point must still reach what the person
// approved: the destination, or the dragged element itself (a sortable list moves it under
// the pointer as it goes; a slider's handle follows it). For a drag by an offset the
// destination is the element that was at the end point when the drag was approved.
function dropCheck(source, dest, x, y) {
  const hit = deepElementFromPoint(x, y);
  if (!hit) return { ok: false, what: "nothing" };
  if (pressReaches(dest, hit) || (source && pressReaches(source, hit))) return { ok: true };
  return { ok: false, what: describe(hit) };
}

// One frame of the page's, and a task after it: a library's reaction to a move runs before
// the next move comes.
async function dragFrame() {
  await nextFrame(window);
  await new Promise((resolve) => setTimeout(resolve, 0));
  return true;
}

// ---- what the drag moved ----------------------------------------------------------------

let dragBefore = null;

function shortName(el) {
  const name = accessibleName(el) || (el.textContent || "").replace(/\s+/g, " ").trim();
  return name.length > 40 ? name.slice(0, 39) + "…" : name;
}

function valueOf(el) {
  if (!el) return null;
  const text = el.getAttribute("aria-valuetext");
  if (text) return text;
  const now = el.getAttribute("aria-valuenow");
  if (now !== null) return now;
  if (el.tagName === "INPUT") return /** @type {HTMLInputElement} */ (el).value;
  return null;
}

// The name of the list or column an element is in: the nearest ancestor (within four
// levels) named by ARIA, or headed by a heading of its own.
function containerName(el) {
  let n = el;
  for (let depth = 0; n && n.nodeType === 1 && depth < 4; depth++, n = parentElementOf(n)) {
    if (n.hasAttribute("aria-label") || n.hasAttribute("aria-labelledby")) {
      const name = accessibleName(n);
      if (name) return name;
    }
    const heading = n.querySelector(":scope > h1, :scope > h2, :scope > h3, :scope > h4, :scope > header, :scope > legend");
    if (heading) return (heading.textContent || "").replace(/\s+/g, " ").trim().slice(0, 40);
  }
  return "";
}

function siblingNames(parent) {
  if (!parent) return [];
  return Array.from(parent.children)
    .filter((c) => !visibilityProblem(c) && !/^(H[1-6]|HEADER|LEGEND)$/.test(c.tagName))
    .slice(0, 30)
    .map(shortName);
}

function dragBaseline(source, dest) {
  const parent = source ? parentElementOf(source) : null;
  dragBefore = {
    source,
    dest,
    name: source ? shortName(source) : "",
    parent,
    order: siblingNames(parent),
    position: parent && source ? Array.prototype.indexOf.call(parent.children, source) : -1,
    value: valueOf(source),
    destText: dest ? (dest.innerText || "").replace(/\s+/g, " ").trim().slice(0, 200) : "",
    destValue: valueOf(dest),
  };
  return { name: dragBefore.name, value: dragBefore.value };
}

// What changed since dragBaseline: the dragged element's value, its place in its list, the
// list it is in, and the destination's own text or value.
function dragEffect() {
  const before = dragBefore;
  dragBefore = null;
  if (!before) return {};
  const out = { name: before.name };
  const source = before.source;
  if (source) {
    if (!source.isConnected) {
      out.replaced = true;
    } else {
      const value = valueOf(source);
      if (value !== before.value) Object.assign(out, { valueBefore: before.value, value });
      const parent = parentElementOf(source);
      if (parent !== before.parent) {
        out.movedInto = containerName(parent) || describe(parent);
        out.movedFrom = before.parent ? containerName(before.parent) : "";
        out.order = siblingNames(parent);
      } else if (parent) {
        const order = siblingNames(parent);
        if (order.join("\u0000") !== before.order.join("\u0000")) {
          out.order = order;
          out.orderBefore = before.order;
        }
      }
    }
  }
  const dest = before.dest;
  if (dest && dest.isConnected && !out.movedInto) {
    const text = (dest.innerText || "").replace(/\s+/g, " ").trim().slice(0, 200);
    if (text !== before.destText) out.destText = text;
    const value = valueOf(dest);
    if (value !== before.destValue) Object.assign(out, { destValueBefore: before.destValue, destValue: value });
  }
  return out;
}

// click_at's readiness at a point: the element hit there as approved is visible, enabled
// and still, and is (or passes the click to) what the browser hits at (x, y). Arms the
// move watch the hover check answers, as prepareClick does for a click at the centre.
async function prepareAt(el, x, y) {
  watchMotion();
  let problem = visibilityProblem(el) || disabledProblem(el);
  if (problem) return refusal(problem[0], problem[1]);
  const stable = await stableRect(el, 1000);
  if (!stable.ok) {
    return refusal("moving", "the element at that point keeps moving, so a click could land on something else");
  }
  problem = visibilityProblem(el);
  if (problem) return refusal(problem[0], problem[1]);
  const hit = deepElementFromPoint(x, y);
  if (!pressReaches(el, hit)) {
    return refusal("covered", `the point is now covered by ${describe(hit)}, which would receive the click instead`, { covering: describe(hit) });
  }
  armMoveWatch(el.ownerDocument.defaultView);
  return { ok: true, x, y, name: accessibleName(el) };
}
