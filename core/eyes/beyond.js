// @ts-check
// The eyes, stage: what lies beyond the listing margin (counted, not described).
// One part of handrail's page script: core/eyes/script.py joins core/eyes/*.js (in the order
// of its EYES_PARTS) inside one closure, so these names are shared with the other parts and
// invisible to the page (the script runs in our isolated world).
//
// A subtree entirely outside the margin (1.5 viewports) is counted by queries on its root,
// and a table's or list's rows past the first far one (or before the first near one) as one
// run (registry.js keeps farSeen and farRuns), into WalkState.beyond: the digest's notes
// say how many interactive elements and characters lie there. Password, one-time-code and
// card fields there are still judged, and cross-origin frames there still read
// (frames.js farFrame), so a sign-in or card form below the fold still hands over.

// Is the element with this index new since the last digest? Not when an earlier walk
// counted it: inside a far subtree it counted, or in a run of far rows.
/**
 * @param {WalkState} ws
 * @param {Element} el
 * @param {number} index
 */
function isNew(ws, el, index) {
  if (ws.firstOfDoc || index < ws.newFrom) return false;
  for (let a = el, k = 0; a && k < 64; k++) {
    const counted = farSeen.get(a);
    if (counted !== undefined && counted < snapNo) return false;
    a = parentOf(a) || (a.parentNode && /** @type {ShadowRoot} */ (a.parentNode).host) || null;
  }
  for (const run of farRuns) if (run.snap < snapNo && inRun(run, el)) return false;
  return true;
}

// A field beyond the margin that FAR_SENSITIVE found: judged, and signalled when sensitive.
/**
 * @param {WalkState} ws
 * @param {any} x
 * @param {WalkContext} c
 */
function farSensitive(ws, x, c) {
  if (x.type !== "password" && (x.type === "hidden" || !FAR_AUTOCOMPLETE.test(x.getAttribute("autocomplete") || ""))) return;
  const kind = sensitiveOf(x, "INPUT");
  if (kind) signalField(ws, kind, x, indexOf(x), accessibleName(x), c.frame, c.shadow);
}

/**
 * @param {WalkState} ws
 * @param {boolean} above
 * @param {number} n interactive elements
 * @param {number} chars characters of text
 */
function addBeyond(ws, above, n, chars) {
  ws.interactiveSeen += n;
  const beyond = ws.beyond;
  if (above) {
    beyond.aboveEl += n;
    beyond.aboveText += chars;
  } else {
    beyond.belowEl += n;
    beyond.belowText += chars;
  }
}

// A far subtree: counted, remembered (farSeen), its sensitive fields judged and its
// cross-origin frames left to be read; what visit() returns for it.
/**
 * @param {WalkState} ws
 * @param {Element} el
 * @param {boolean} above
 * @param {WalkContext} c
 */
function countBeyond(ws, el, above, c) {
  farSeen.set(el, snapNo);
  const n = (el.matches(SELECTOR) ? 1 : 0) + el.querySelectorAll(SELECTOR).length;
  if (el.matches(FAR_SENSITIVE)) farSensitive(ws, el, c);
  for (const x of /** @type {Iterable<Element>} */ (/** @type {unknown} */ (el.querySelectorAll(FAR_SENSITIVE)))) farSensitive(ws, x, c);
  addBeyond(ws, above, n, (el.textContent || "").length);
  if (el.tagName === "IFRAME") farFrame(ws, el, above);
  else for (const f of /** @type {Iterable<Element>} */ (/** @type {unknown} */ (el.getElementsByTagName("iframe")))) farFrame(ws, f, above);
  return above ? FAR_ABOVE : FAR_BELOW;
}

// The rows from `first` up to `end` (exclusive; null: to the last) of a table or list, all
// beyond the listing margin (below, or above when `end` is given): queries on the parent,
// and binary searches for where the rows start and end in each.
/**
 * @param {WalkState} ws
 * @param {Element} parent
 * @param {Element} first
 * @param {WalkContext} c
 * @param {Element | null} [end]
 */
function countRun(ws, parent, first, c, end = null) {
  const above = end !== null;
  /** @param {ArrayLike<Element>} list */
  const span = (list) => [firstWhere(list, atOrAfter(first)), above ? firstWhere(list, atOrAfter(end)) : list.length];
  const n = countRunControls(parent, span);
  const fields = parent.querySelectorAll(FAR_SENSITIVE);
  const [f0, f1] = span(fields);
  for (let k = f0; k < f1; k++) farSensitive(ws, fields[k], c);
  farRuns.push({ parent, first, last: above ? end.previousElementSibling : parent.lastElementChild, snap: snapNo });
  const range = first.ownerDocument.createRange();
  range.setStartBefore(first);
  if (above) range.setEndBefore(end);
  else range.setEndAfter(parent.lastChild);
  addBeyond(ws, above, n, range.toString().length);
  const frames = parent.getElementsByTagName("iframe");
  const [i0, i1] = span(frames);
  for (let k = i0; k < i1; k++) farFrame(ws, frames[k], above);
}

// How many controls a run holds: its elements matching SELECTOR, whose thirty selectors
// cost several times its tags and its four attributes (so those are queried apart).
/**
 * @param {Element} parent
 * @param {(list: ArrayLike<Element>) => number[]} span the run's [from, to) in a query's list
 */
function countRunControls(parent, span) {
  const attrs = parent.querySelectorAll(ATTR_SELECTOR);
  if (attrs.length > MANY_ATTRS) {
    const [from, to] = span(parent.querySelectorAll(SELECTOR));
    return to - from;
  }
  const [from, to] = span(parent.querySelectorAll(TAG_SELECTOR));
  let n = to - from;
  const [a, b] = span(attrs);
  for (let k = a; k < b; k++) if (controlByAttribute(attrs[k])) n++;
  return n;
}

// Shadow roots the walk did not enter (beyond the listing margin, or under an element it
// only counted): their sensitive fields still hand over, like the light DOM's far fields.
/** @param {WalkState} ws */
function farRootFields(ws) {
  for (const root of knownRoots) {
    if (ws.rootsWalked.has(root) || !root.host || !root.host.isConnected) continue;
    for (const x of root.querySelectorAll("input, textarea, [contenteditable], [role]")) {
      if (x.checkVisibility && !x.checkVisibility({ opacityProperty: true, visibilityProperty: true })) continue;
      const kind = sensitiveOf(x, x.tagName);
      if (kind) signalField(ws, kind, x, indexOf(x), accessibleName(x), null, true);
    }
  }
}
