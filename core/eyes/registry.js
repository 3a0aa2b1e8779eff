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
  if (frameIdx.has(i)) throw new Error(`handrail:frame:${i}`);
  const ref = byIdx.get(i);
  if (!ref) throw new Error(`handrail:${i < docSeed ? "stale" : "unknown"}:${i}`);
  const el = ref.deref();
  if (!el || !el.isConnected || !el.ownerDocument.defaultView) {
    throw new Error(`handrail:stale:${i}`);
  }
  return el;
}

// ---- closed shadow roots -----------------------------------------------------------------
// A page's closed shadow root is unreachable from script, ours included. core/snapshot.py
// reaches it through CDP (DOM.describeNode with pierce, then DOM.resolveNode into this world)
// and hands it to adoptRoots(); from then on rootOf() returns it like an open root. The page
// can neither see nor undo this: nothing changes in its world.
const closedRoots = new WeakMap(); // host Element -> its closed ShadowRoot (our wrapper)
const hostChecked = new WeakSet(); // candidate hosts already asked about (a root is attached once)
let hostsToCheck = [];
// Elements that may host a shadow root without it showing: custom elements, and the other
// tags attachShadow accepts when they are sized but have no children of their own.
const HOST_TAGS = new Set([
  "DIV", "SPAN", "P", "SECTION", "ARTICLE", "ASIDE", "HEADER", "FOOTER", "NAV", "MAIN",
  "BLOCKQUOTE", "H1", "H2", "H3", "H4", "H5", "H6",
]);
const MAX_HOSTS_PER_DIGEST = 400;

function rootOf(el) {
  return el.shadowRoot || closedRoots.get(el) || null;
}

// Called by the walk for every rendered element without a root we know of.
function maybeHost(el, tag, sized, list) {
  if (hostChecked.has(el) || list.length >= MAX_HOSTS_PER_DIGEST) return;
  if (tag.includes("-") || (sized && !el.firstChild && HOST_TAGS.has(tag))) list.push(el);
}

function adoptRoots(...pairs) {
  // pairs: host, root, host, root... (root null: the host has none)
  for (let k = 0; k + 1 < pairs.length; k += 2) {
    const host = pairs[k];
    const root = pairs[k + 1];
    if (host && root && !host.shadowRoot) closedRoots.set(host, root);
  }
  return pairs.length / 2;
}

function takeHosts() {
  const out = hostsToCheck;
  hostsToCheck = [];
  for (const el of out) hostChecked.add(el);
  return out;
}

// page.js (the hands) asks `el.shadowRoot` when it hit-tests; in our world only, that getter
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
