// @ts-check
// The eyes, stage: click targets found by their listeners.
// One part of handrail's page script: core/eyes/script.py joins core/eyes/*.js (in the order
// of its EYES_PARTS) inside one closure, so these names are shared with the other parts and
// invisible to the page (the script runs in our isolated world).
// core/eyes/listeners.py asks CDP which elements hold click-like listeners (and, for jQuery, the
// selectors of the handlers they delegate) and calls noteHandlers() just before a walk; the
// walk lists those a person can see and click, then forgets them (listeners come and go
// without a DOM change, so nothing is kept from one digest to the next).
let handlers = null; // Map(Element -> "direct" | "delegated") for the coming walk, or null
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
    const doc = el.nodeType === 9 ? el : el.ownerDocument;
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
  handlers = map;
  return map.size;
}

// An element a handler acts on is listed when a person could take it for one control: it
// takes the pointer, holds no control of its own, and is small (a wrapper full of text with a
// "click anywhere" listener is not a button).
function handlerTarget(el, st) {
  const how = handlers ? handlers.get(el) : undefined;
  if (how !== "direct" && how !== "delegated") return false;
  if (st.pointerEvents === "none") return false;
  if (el.querySelector(SELECTOR)) return false;
  if (el.getElementsByTagName("*").length > 15) return false;
  const text = el.textContent || "";
  if (!el.firstElementChild && !clean(text) && coversViewport(el)) return false;
  return text.length <= 200 && clean(text).length <= 80;
}

// An empty layer over the whole viewport: a modal's backdrop (Bootstrap's, jQuery UI's
// overlay), which only dismisses the dialog or keeps its focus; the dialog has its buttons.
/** @param {Element} el */
function coversViewport(el) {
  const view = el.ownerDocument.defaultView;
  if (!view) return false;
  const r = el.getBoundingClientRect();
  return r.width >= view.innerWidth * 0.9 && r.height >= view.innerHeight * 0.9;
}
