// @ts-check
// The eyes, stage: click targets found by their listeners.
// One part of handrail's page script: core/eyes/script.py joins core/eyes/*.js (in the order
// of its EYES_PARTS) inside one closure, so these names are shared with the other parts and
// invisible to the page (the script runs in our isolated world).
// core/eyes/listeners.py asks CDP which elements hold click-like listeners (and, for jQuery, the
// selectors of the handlers they delegate) and calls noteHandlers() just before a walk; the
// walk lists those a person can see and click. Listeners come and go without a DOM change, so
// every digest lists them again; its walk goes out at once with the latest listing (kept in
// `verdicts`, api.js `reuse`) and is taken again when the new listing differs.
let handlers = null; // Map(Element -> "direct" | "delegated" | "root") for the coming walk, or null
// Ask mode (a page with thousands of listeners, where listing them all costs more than the
// walk: Jupyter's React roots carry 130 each): the walk records the elements whose verdict it
// consulted (`asking`, with the verdict it used) and their ancestors and documents, the
// places a delegating listener sits (`askingRoots`); core/eyes/listeners.py then asks CDP
// about those alone and hands the answers to noteAsked(), whose verdicts the next walk uses.
// When an answer differs from what the walk used, the walk is taken again (api.js).
let asking = null; // Map(Element -> verdict used), or null when not asking
let askingRoots = null; // Set(Element | Document)
let askAllRoots = false; // the page has jQuery's delegated handlers: any ancestor may delegate
let verdicts = new Map(); // the latest answers: Element -> "direct" | "delegated" | "root"
const askSerial = new WeakMap(); // Element | Document -> serial, stable for the document's life
let askSerialNext = 1;
let askedList = []; // the latest walk's asked nodes
let bySerial = new Map(); // serial -> node, for the latest asked() (its nodes and their ancestors)
// Framework roots (listeners.py FRAMEWORK_ROOT) the latest listing found: an asked node that is
// one is answered from that listing, and no call reaches as deep as one (noteHeavy()).
let heavyNodes = new Set();

// What the listeners say of `el` in this walk (ask mode records that it was consulted).
/** @param {Element} el */
function handlerOf(el) {
  if (asking) {
    if (!asking.has(el)) {
      asking.set(el, handlers ? handlers.get(el) : undefined);
      // Without jQuery, a listener on an ancestor acts on `el` only through its action
      // attribute (buildHandlers): the ancestors of other elements need no asking.
      if (askAllRoots || el.matches(ACTION_SELECTOR)) noteAskRoots(el);
    }
  }
  return handlers ? handlers.get(el) : undefined;
}

// The places a listener acting on `el` may sit: its ancestors in its tree and its document.
/** @param {Element} el */
function noteAskRoots(el) {
  const roots = /** @type {Set<Element | Document>} */ (askingRoots);
  for (let p = parentOf(el); p && !roots.has(p); p = parentOf(p)) roots.add(p);
  roots.add(el.ownerDocument);
}

// Before a walk (api.js): ask mode on or off for it; `all`, the ancestors of every element
// asked about are asked about too (a page with jQuery), else those of elements with an
// action attribute only.
/**
 * @param {boolean} on
 * @param {boolean} all
 */
function startAsking(on, all) {
  askAllRoots = all;
  asking = on ? new Map() : null;
  askingRoots = on ? new Set() : null;
  if (on) handlers = verdicts;
}

// After the walk: what it asked, as serials (the first `consulted` of them, the elements whose
// verdict it used; the rest, places a delegating handler could sit), and `chains[k]`, the
// serials of the k-th's ancestors ASK_CHAIN levels up (0 past the top): core/eyes/listeners.py
// may ask about several nodes in one call on an ancestor they share (a CDP round trip costs as
// much as a dozen listeners listed). `mutations`: the DOM's change count, for telling whether
// the answers can read otherwise than last time.
const ASK_CHAIN = 3;
function asked() {
  if (!asking || !askingRoots) return { serials: [], chains: [], consulted: 0, mutations, heavy: [], reach: [] };
  const consulted = asking;
  askedList = [...consulted.keys(), ...[...askingRoots].filter((n) => !consulted.has(/** @type {Element} */ (n)))];
  /** @param {Node} n */
  const serialOf = (n) => {
    let serial = askSerial.get(n);
    if (serial === undefined) askSerial.set(n, (serial = askSerialNext++));
    bySerial.set(serial, n);
    return serial;
  };
  bySerial = new Map();
  const serials = askedList.map(serialOf);
  // How deep a call on an ancestor may reach without listing a framework root under it.
  /** @type {Map<Node, number>} */
  const reachOf = new Map();
  for (const h of heavyNodes) {
    if (!h.isConnected) continue;
    let a = parentOf(h);
    for (let level = 1; a && level <= ASK_CHAIN; level++, a = parentOf(a)) {
      reachOf.set(a, Math.min(reachOf.get(a) || level, level));
    }
  }
  const reach = [];
  const chains = askedList.map((n) => {
    const chain = [];
    let a = n.nodeType === 1 ? parentOf(/** @type {Element} */ (n)) : null;
    for (let k = 0; k < ASK_CHAIN; k++, a = a ? parentOf(a) : null) {
      chain.push(a ? serialOf(a) : 0);
      const limit = a ? reachOf.get(a) : undefined;
      if (a && limit !== undefined) reach.push([serialOf(a), limit]);
    }
    return chain;
  });
  const heavy = askedList.filter((n) => heavyNodes.has(n)).map(serialOf);
  return { serials, chains, consulted: consulted.size, mutations, heavy, reach };
}

// The framework roots the latest listing found (core/eyes/listeners.py), for asked().
/** @param {Element[]} els */
function noteHeavy(els) {
  heavyNodes = new Set(els.filter(Boolean));
  return heavyNodes.size;
}

// The nodes of the latest asked() with these serials, keyed by serial (core/eyes/listeners.py
// asks once for each node's handle in the document's life).
/** @param {number[]} serials */
function handOver(serials) {
  /** @type {Record<number, Node>} */
  const out = Object.create(null);
  for (const serial of serials) {
    const n = bySerial.get(serial);
    if (n) out[serial] = n;
  }
  return out;
}

// The answers for the latest asks: specs[k] = {serial, direct, selectors} for each asked node
// holding a click-like listener. The verdicts the next walk uses; `changed`, an element the
// walk consulted would now be read another way.
function noteAsked(specs) {
  const els = specs.map((s) => bySerial.get(s.serial) || null);
  const fresh = buildHandlers(specs, els);
  let changed = false;
  if (asking) {
    for (const [el, used] of asking) {
      if (isTarget(fresh.get(el)) !== isTarget(used)) changed = true;
    }
  }
  verdicts = fresh;
  return { changed, found: fresh.size };
}

/** @param {string | undefined} how */
function isTarget(how) {
  return how === "direct" || how === "delegated";
}

// A plain listener on an ancestor delegates, by convention, to descendants marked with one of
// these (Bootstrap's data-bs-toggle, jQuery UI's data-handler, a calendar's data-date...).
const ACTION_DATA = [
  "data-action", "data-handler", "data-event", "data-click", "data-cmd", "data-command",
  "data-toggle", "data-bs-toggle", "data-dismiss", "data-bs-dismiss", "data-href", "data-url",
  "data-link", "data-nav", "data-date", "data-day", "data-month",
];
const ACTION_SELECTOR = ACTION_DATA.map((a) => `[${a}]`).join(",");
const MAX_DELEGATED = 3000;

// specs[k] = {direct, selectors} for els[k]: direct, the element's own handler acts on it;
// selectors, jQuery's delegated handlers (`$(el).on("click", "a[title]", f)`).
function noteHandlers(specs, els) {
  handlers = verdicts = buildHandlers(specs, els);
  return handlers.size;
}

/**
 * @param {{direct: boolean, selectors?: string[]}[]} specs
 * @param {(Element | Document | null)[]} els
 * @returns {Map<Element | Document, string>}
 */
function buildHandlers(specs, els) {
  const map = new Map();
  let budget = MAX_DELEGATED;
  const add = (list) => {
    let found = 0;
    for (const x of list) {
      if (budget-- <= 0) break;
      if (!map.has(x) || map.get(x) === "root") map.set(x, "delegated");
      found++;
    }
    return found;
  };
  for (let k = 0; k < els.length && k < specs.length; k++) {
    const el = els[k];
    const spec = specs[k];
    if (!el || !el.querySelectorAll) continue;
    const doc = /** @type {Document} */ (el.nodeType === 9 ? el : el.ownerDocument);
    const top = el === doc || el === doc.documentElement || el === doc.body;
    // A handler on the document or the body acts on anything: it marks nothing by itself.
    let delegates = 0;
    for (const sel of spec.selectors || []) {
      try {
        delegates += add(el.querySelectorAll(sel));
      } catch (_e) {
        // a jQuery-only selector (":visible", "> a"): not one the DOM can match
      }
    }
    if (spec.direct && !(spec.selectors || []).length) delegates += add(el.querySelectorAll(ACTION_SELECTOR));
    // An element that delegates to its items is their container, not a target itself.
    if (!map.has(el)) map.set(el, spec.direct && !top && !delegates ? "direct" : "root");
  }
  return map;
}

// An element a handler acts on is listed when a person could take it for one control: it
// takes the pointer, holds no control of its own, and is small (a wrapper full of text with a
// "click anywhere" listener is not a button).
function handlerTarget(el, st) {
  // (Given every listener, the map decides first; asking, the question is asked last, for
  // the elements whose answer counts.)
  if (!asking && !isTarget(handlers ? handlers.get(el) : undefined)) return false;
  if (st.pointerEvents === "none") return false;
  // (Cheapest first: this runs for every element the walk reads as plain content.)
  if (el.childElementCount > 15 || el.getElementsByTagName("*")[15] !== undefined) return false;
  const text = el.textContent || "";
  if (text.length > 200 || clean(text).length > 80) return false;
  if (el.querySelector(SELECTOR)) return false;
  if (!isTarget(handlerOf(el))) return false;
  return !(!el.firstElementChild && !clean(text) && coversViewport(el));
}

// An empty layer over the whole viewport: a modal's backdrop (Bootstrap's, jQuery UI's
// overlay), which only dismisses the dialog or keeps its focus; the dialog has its buttons.
/** @param {Element} el */
function coversViewport(el) {
  const view = el.ownerDocument.defaultView;
  if (!view) return false;
  const r = rectOf(el);
  return r.width >= view.innerWidth * 0.9 && r.height >= view.innerHeight * 0.9;
}
