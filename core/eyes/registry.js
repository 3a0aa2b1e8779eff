// @ts-check
// The eyes, stage: the index registry (element <-> index, mutation count).
// One part of handrail's page script: core/eyes/script.py joins core/eyes/*.js (in the order
// of its EYES_PARTS) inside one closure, so these names are shared with the other parts and
// invisible to the page (the script runs in our isolated world).
// The API (exported by api.js as globalThis.__handrail, in our world only):
//   __handrail.element(i)   the element shown as [i], or throws {handrail: "index", code, index}
//                           with code "stale" (removed, or an earlier document's index),
//                           "unknown" (never issued) or "frame" (inside a cross-origin frame);
//                           core/world/errors.py turns those into errors written for the model
//   __handrail.indexOf(el)  the element's index (assigned on first sight, never reused)
//   __handrail.probe()      cheap reading for before/after change reports
//   __handrail.snapshot(o)  the digest; see core/eyes/snapshot.py for the result's shape
const byEl = new WeakMap(); // Element -> index
const byIdx = new Map(); // index -> WeakRef(Element)
let docSeed = 1; // first index this document may use; lower ones were earlier documents'
let next = 1;
let seenUpTo = 0; // `next` at the end of the previous snapshot; 0 = no snapshot yet
let seenBefore = 0; // seenUpTo before the latest snapshot (a retake restores it)
let mutations = 0;
let snapNo = 0;
// What walks counted beyond the listing margin instead of listing, so that scrolling to it
// later does not mark it new: the root of each far subtree (Element -> the walk's number),
// and the runs of far rows of a table or list, [{parent, first, last, snap}], from the last
// FAR_RUNS_KEPT walks (a run is remembered whole: marking its thousands of elements one by
// one cost more than the rest of the walk).
const farSeen = new WeakMap();
let farRuns = [];
const FAR_RUNS_KEPT = 4;

const FOLLOWING = Node.DOCUMENT_POSITION_FOLLOWING;

// Tests for firstWhere: `x` is `node` or comes after it in document order (its descendants
// included); `x` comes after `node` and everything inside it.
const atOrAfter = (node) => (x) => x === node || node.compareDocumentPosition(x) & FOLLOWING;
const pastEnd = (node) => (x) => x !== node && !node.contains(x) && node.compareDocumentPosition(x) & FOLLOWING;

// The run's first and last rows are still where the walk found them.
function runIntact(run) {
  const { parent, first, last } = run;
  return first.isConnected && first.parentNode === parent && last.isConnected && last.parentNode === parent;
}

// Is `el` between the run's first row and the end of its last one? (Rows added at the end
// of the list after the walk that counted them are not.)
function inRun(run, el) {
  const { parent, first, last } = run;
  if (!runIntact(run) || !parent.contains(el)) return false;
  return Boolean(atOrAfter(first)(el) && !pastEnd(last)(el));
}

// The first k of `list` (elements in document order) for which test(list[k]) holds, when it
// holds for a tail of the list.
function firstWhere(list, test) {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (test(list[mid])) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

// [start, end) of `list` (elements of this document in document order) inside the far runs
// the latest walk counted, sorted and apart.
function runSpans(list) {
  const spans = [];
  for (const run of farRuns) {
    const { parent, first, last } = run;
    if (run.snap !== snapNo || !runIntact(run) || parent.getRootNode() !== document) continue;
    const start = firstWhere(list, atOrAfter(first));
    const end = firstWhere(list, pastEnd(last));
    if (end > start) spans.push([start, end]);
  }
  spans.sort((a, b) => a[0] - b[0]);
  const apart = [];
  for (const span of spans) {
    const prev = apart[apart.length - 1];
    if (prev && span[0] <= prev[1]) prev[1] = Math.max(prev[1], span[1]);
    else apart.push(span);
  }
  return apart;
}

function indexOf(el) {
  let i = byEl.get(el);
  if (i === undefined) {
    i = next++;
    byEl.set(el, i);
    byIdx.set(i, new WeakRef(el));
  }
  return i;
}

/**
 * An index the registry refuses, thrown as data: core/world/errors.py reads these fields
 * from the exception CDP reports (its preview), never from a message.
 * @param {"stale" | "unknown" | "frame"} code
 * @param {number} index
 */
function indexError(code, index) {
  return { handrail: "index", code, index };
}

/** @param {number} i @returns {Element} */
function element(i) {
  if (frameIdx.has(i)) throw indexError("frame", i);
  const ref = byIdx.get(i);
  if (!ref) throw indexError(i < docSeed ? "stale" : "unknown", i);
  const el = ref.deref();
  if (!el || !el.isConnected || !el.ownerDocument.defaultView) throw indexError("stale", i);
  return el;
}

// ---- closed shadow roots -----------------------------------------------------------------
// A page's closed shadow root is unreachable from script, ours included. core/world/closed_roots.py
// (find_closed_roots) counts the top-level elements of the shadow roots in the page's
// documents through CDP, compares that with reach() below, and on a difference finds the
// closed roots in the browser's own DOM tree and hands them to adoptRoots(); from then on
// rootOf() returns them like open roots.
// The page can neither see nor undo this: nothing changes in its world.
const closedRoots = new WeakMap(); // host Element -> its closed ShadowRoot (our wrapper)
let adopted = 0; // how many closedRoots ever held (0: reach() skips the lookup)
let knownRoots = []; // every root the last reach() met (open and adopted closed ones)
// The page cannot shadow this getter for us (our world has its own prototypes), and the
// override below is ours; keep the native one for the hot loop of reach().
const nativeShadowRoot = (() => {
  const desc = Object.getOwnPropertyDescriptor(Element.prototype, "shadowRoot");
  return desc && desc.get ? desc.get : null;
})();

function rootOf(el) {
  return el.shadowRoot || closedRoots.get(el) || null;
}

// The marks of a driven tab (core/hands/badge.js) are ours, drawn in this world in a closed root on
// <body>: CDP counts their elements like any others, but the eyes never read them.
function marksRoot() {
  // An own property only: an element named __handrailBadge is a named property of window.
  const marks = Object.prototype.hasOwnProperty.call(globalThis, "__handrailBadge") ? globalThis.__handrailBadge : null;
  return (marks && marks.root) || null;
}

function marksCount(doc) {
  const root = marksRoot();
  return root && root.host && root.host.ownerDocument === doc ? root.childElementCount : 0;
}

function adoptRoots(...pairs) {
  // pairs: host, root, host, root...; returns how many of them were new to us.
  let fresh = 0;
  const marks = marksRoot();
  for (let k = 0; k + 1 < pairs.length; k += 2) {
    const host = pairs[k];
    const root = pairs[k + 1];
    if (!host || !root || closedRoots.get(host) === root) continue;
    if (marks && root === marks) continue; // ours: counted by reach(), never read
    if (nativeShadowRoot && nativeShadowRoot.call(host)) continue; // open: nothing to adopt
    closedRoots.set(host, root);
    adopted++;
    fresh++;
  }
  return fresh;
}

// How many top-level elements of shadow roots our world reaches: every root we can open
// (open ones, adopted closed ones, our marks' root) in this document and in every frame
// document we can read, nested to any depth. CDP counts the same in all documents of a
// renderer session (core/world/closed_roots.py SHADOW_TOP_QUERY, closed roots included, user-agent roots
// excluded): a difference means a root is hidden from us. Any element in a root lies under
// one of its top-level elements, so a closed root that holds anything to act on shows.
// The TreeWalker is the only way to find open roots (about 10 ms per 40,000 elements);
// core/world/closed_roots.py skips this call when CDP counts no shadow element at all, and when all it
// counted (`counted`) are our marks' (a driven tab's badge), no page has a root to find.
function reach(counted) {
  let n = marksCount(document);
  if (n > 0 && n === counted) {
    knownRoots = [];
    return n;
  }
  const roots = [];
  const trees = [document];
  while (trees.length) {
    const tree = trees.pop();
    const doc = tree.ownerDocument || tree;
    const tw = doc.createTreeWalker(tree, NodeFilter.SHOW_ELEMENT);
    for (let el = tw.nextNode(); el; el = tw.nextNode()) {
      const root = (nativeShadowRoot && nativeShadowRoot.call(el)) || (adopted ? closedRoots.get(el) : undefined);
      if (root) {
        n += root.childElementCount;
        trees.push(root);
        roots.push(root);
      }
    }
    for (const f of tree.querySelectorAll("iframe, frame, object")) {
      const inner = frameDocument(f);
      if (inner) trees.push(inner);
    }
  }
  knownRoots = roots;
  return n;
}

function frameDocument(f) {
  try {
    return f.contentDocument;
  } catch (_e) {
    return null;
  }
}

// The hands (core/hands/geometry.js) ask `el.shadowRoot` when it hit-tests; in our world only, that getter
// also answers with an adopted closed root, so a click inside one is not taken for a cover.
(() => {
  const desc = Object.getOwnPropertyDescriptor(Element.prototype, "shadowRoot");
  if (!desc || !desc.get) return;
  const native = desc.get;
  Object.defineProperty(Element.prototype, "shadowRoot", {
    get() {
      return native.call(this) || closedRoots.get(this) || null;
    },
    configurable: true,
    enumerable: desc.enumerable,
  });
})();

// Elements whose style attribute a script changed lately (element -> page-clock time), kept
// from init on, for the hands' motion settle (core/hands/motion.js): a spinner a script was
// already turning before an input is not motion the input started, and the hands need not
// wait frames of their own to see it. Past RESTYLED_MAX entries, those older than
// RESTYLED_KEEP_MS are dropped.
const restyled = new Map();
let restyledSince = null;
const RESTYLED_MAX = 2000;
const RESTYLED_KEEP_MS = 500;

const observer = new MutationObserver((records) => {
  mutations += records.length;
  let now = 0;
  for (const record of records) {
    if (record.type !== "attributes" || record.attributeName !== "style") continue;
    now = now || performance.now();
    restyled.set(record.target, now);
  }
  if (restyled.size > RESTYLED_MAX) {
    for (const [el, at] of restyled) if (now - at > RESTYLED_KEEP_MS) restyled.delete(el);
  }
});

// How long the log of restyles has been kept, in ms (0: not yet).
function restyleLogAge() {
  return restyledSince === null ? 0 : performance.now() - restyledSince;
}

// The elements restyled within the last `ms`, and how long the log has been kept (a log
// younger than `ms` may have missed some).
function restyledWithin(ms) {
  const now = performance.now();
  const elements = [];
  for (const [el, at] of restyled) if (now - at <= ms) elements.push(el);
  return { elements, watchedMs: restyleLogAge() };
}

function init(seed) {
  docSeed = Math.max(docSeed, seed);
  next = Math.max(next, seed);
  try {
    observer.observe(document, {
      subtree: true,
      childList: true,
      attributes: true,
      characterData: true,
    });
    if (restyledSince === null) restyledSince = performance.now();
  } catch (_e) {
    // No document element yet: the count stays 0, which only makes reports vaguer.
  }
  return next;
}
