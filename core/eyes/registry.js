// The eyes, stage: the index registry (element <-> index, mutation count).
// One part of handrail's page script: core/world.py concatenates core/eyes/*.js (in the order
// of world.EYES_PARTS) inside one closure, so these names are shared with the other parts and
// invisible to the page (the script runs in our isolated world).
// The API (exported by api.js as globalThis.__handrail, in our world only):
//   __handrail.element(i)   the element shown as [i], or throws "handrail:stale:i" (removed,
//                           or an earlier document's index) / "handrail:unknown:i" (never
//                           issued); world.py turns those into errors written for the model
//   __handrail.indexOf(el)  the element's index (assigned on first sight, never reused)
//   __handrail.probe()      cheap reading for before/after change reports
//   __handrail.snapshot(o)  the digest; see core/snapshot.py for the result's shape
const byEl = new WeakMap(); // Element -> index
const byIdx = new Map(); // index -> WeakRef(Element)
let docSeed = 1; // first index this document may use; lower ones were earlier documents'
let next = 1;
let seenUpTo = 0; // `next` at the end of the previous snapshot; 0 = no snapshot yet
let mutations = 0;
let snapNo = 0;
const farSeen = new WeakMap(); // Element -> snapshot number in which it was only counted

function indexOf(el) {
  let i = byEl.get(el);
  if (i === undefined) {
    i = next++;
    byEl.set(el, i);
    byIdx.set(i, new WeakRef(el));
  }
  return i;
}

function element(i) {
  const ref = byIdx.get(i);
  if (!ref) throw new Error(`handrail:${i < docSeed ? "stale" : "unknown"}:${i}`);
  const el = ref.deref();
  if (!el || !el.isConnected || !el.ownerDocument.defaultView) {
    throw new Error(`handrail:stale:${i}`);
  }
  return el;
}

const observer = new MutationObserver((records) => {
  mutations += records.length;
});

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
  } catch (_e) {
    // No document element yet: the count stays 0, which only makes reports vaguer.
  }
  return next;
}
