// @ts-check
// The eyes, stage: the API core/eyes/snapshot.py and the hands (core/hands/*.js) call.
// One part of handrail's page script: core/eyes/script.py joins core/eyes/*.js (in the order
// of its EYES_PARTS) inside one closure, so these names are shared with the other parts and
// invisible to the page (the script runs in our isolated world).
// opts.ask: listeners are asked about after the walk (listeners.js; opts.askAllRoots: on
// every ancestor too); opts.retake: this walk
// replaces the previous one (its answers changed what the walk reads), so what is new is
// judged against the digest before it.
function snapshot(opts) {
  if (opts.retake) seenUpTo = seenBefore;
  else seenBefore = seenUpTo;
  startAsking(Boolean(opts.ask), Boolean(opts.askAllRoots));
  // The listing handed last time, while core/eyes/listeners.py reads the new one (it takes
  // the walk again when that differs).
  if (opts.reuse && !opts.ask) handlers = verdicts;
  const w = walk(opts);
  // What the walk asked about comes with it (listeners.js asked()): no round trip of its own.
  const asks = opts.ask ? asked() : undefined;
  if (w.slots.length) {
    // Cross-origin frames: core/eyes/snapshot.py reads them and calls finish().
    pendingWalk = w;
    return { slots: w.slots, asks, url: location.href };
  }
  return Object.assign(result(w, opts), { asks });
}

// A record without its nulls and falses (core/eyes/snapshot.py reads them as its defaults; a
// record always says whether it is in view and new): a long page's answer is a third
// smaller, and CDP copies it faster.
function compact(rec) {
  const out = {};
  for (const key in rec) {
    const value = rec[key];
    if ((value !== null && value !== false) || key === "inView" || key === "isNew") out[key] = value;
  }
  return out;
}

function result(w, opts) {
  const out = serialise(w, opts);
  let focusedIndex = null;
  for (const r of out.listed) if (r.focused) focusedIndex = r.index;
  seenUpTo = next;
  const tEnd = performance.now();
  return {
    url: location.href,
    title: document.title,
    text: out.text,
    elements: out.listed.map(compact),
    scroll: w.scroll,
    truncated: out.truncated,
    hidden: w.hidden,
    frames: w.frames,
    signals: w.signals,
    focused: focusedIndex,
    next,
    stats: {
      walk_ms: Math.round((w.tWalk - w.t0) * 10) / 10,
      total_ms: Math.round((tEnd - w.t0) * 10) / 10,
      nodes: w.visited,
      interactive: w.interactiveSeen,
      listed: out.listed.length,
      beyond_above: w.beyond.aboveEl,
      beyond_below: w.beyond.belowEl,
      lines: out.lines,
      chars: out.text.length,
      frames: w.frames.filter((f) => f.crossOrigin).length,
    },
  };
}

function probe() {
  // Interactive elements a person can see that no digest has listed yet. The far runs of
  // rows the latest walk counted are skipped (looking at each of a long table's rows cost
  // 100 ms per probe, twice per action): the probes before and after an action skip the same
  // rows, and rows it adds at the end of a list still count. SELECTOR is matched as its
  // tags, then the few elements its attributes may make controls (as in countRun).
  let fresh = 0;
  const look = (el) => {
    if (byEl.has(el)) return;
    if (el.checkVisibility && !el.checkVisibility({ opacityProperty: true, visibilityProperty: true })) return;
    const r = rectOf(el);
    if (r.width >= 1 && r.height >= 1) fresh++;
  };
  outsideRuns(document.querySelectorAll(TAG_SELECTOR), look);
  outsideRuns(document.querySelectorAll(ATTR_SELECTOR), (el) => {
    if (controlByAttribute(el)) look(el);
  });
  return { url: location.href, title: document.title, mutations, new_interactive: fresh };
}

// fn(el) for each element of `list` (this document's, in document order) outside the far
// runs of the latest walk.
function outsideRuns(list, fn) {
  const spans = runSpans(list);
  for (let k = 0, s = 0; k < list.length; k++) {
    if (s < spans.length && k === spans[s][0]) {
      k = spans[s++][1] - 1;
      continue;
    }
    fn(list[k]);
  }
}

Object.defineProperty(globalThis, "__handrail", {
  value: Object.freeze({
    init,
    element,
    indexOf,
    snapshot,
    probe,
    frameWalk,
    finish,
    accessibleName: (el) => accessibleName(el),
    // A code editor's box and the field that takes its keys (editors.js), and its text.
    codeEditor: (el) => {
      const ed = codeEditorAround(el);
      return ed ? { root: ed.root, input: ed.input } : null;
    },
    codeEditorValue: (el) => codeEditorValue(el),
    adoptRoots,
    noteHandlers,
    asked,
    handOver,
    noteHeavy,
    noteAsked,
    reach,
    restyledWithin,
    restyleLogAge,
    get next() {
      return next;
    },
  }),
  enumerable: false,
});
