// @ts-check
// The hands' page script, stage: motion an input started.
//
// After an input the settle also waits, bounded, for the motion the input started, so a
// section that opens is read open: CSS transitions and animations and Web Animations
// (document.getAnimations(): finite ones whose start is not before the input), and motion
// a script draws by writing inline styles frame after frame (a jQuery animate). The latter
// is seen by a style observer armed before the input (watchMotion; prepareClick arms it,
// so a click's own frame waits count); an element that was already being restyled then,
// or in the 100 ms before the input by the eyes' log of restyles (a script-drawn
// spinner), is not waited for. When neither the observer saw two frames before the input
// nor the log covers those 100 ms, script motion is not judged at all.
//
// core/hands/ctx.py joins the stages in the order of its PAGE_PARTS inside one closure,
// with `judgeSensitive` (core/world/sensitive.js) in scope, and runs it in handrail's
// isolated world (core/world/), where the eyes' script (core/eyes/*.js) has defined
// globalThis.__handrail: the stages share their top-level names, and the page sees none
// of them.

const MOTION_RECENT_MS = 200;
// How far back a restyle before the input marks an element as already moving (a spinner
// drawn at 10 frames a second or more; a slower one has quiet frames, which end the wait).
const MOTION_LOOKBACK_MS = 100;
// The least a look before the input must last for script motion to be judged: more than
// two frames at 60 Hz (a spinner drawn at 30 frames a second shows in it).
const MOTION_WATCH_MIN_MS = 40;
const MOTION_ELEMENTS = 2000;
const motion = {
  observer: null,
  frames: 0,
  lastFrame: null,
  judged: false,
  inputAt: null,
  inputFrame: null,
  last: new Map(),
  before: new Set(),
};

for (const type of ["pointerdown", "keydown", "input", "change"]) {
  window.addEventListener(type, () => {
    if (motion.observer && motion.inputAt === null) {
      motion.inputAt = performance.now();
      // The time of the frame the input came in: an animation it started may carry it.
      motion.inputFrame = document.timeline ? document.timeline.currentTime : null;
      // Script motion is judged when the watch saw two frames before the input, or the
      // eyes' log of restyles covers the lookback: what it saw restyled then was moving
      // before the input.
      motion.judged = motion.frames >= 2;
      const lately = registry() && registry().restyledWithin ? registry().restyledWithin(MOTION_LOOKBACK_MS) : null;
      if (lately) {
        for (const el of lately.elements) motion.before.add(el);
        if (lately.watchedMs >= MOTION_WATCH_MIN_MS) motion.judged = true;
      }
    }
  }, true);
}

// A frame the watch looked at before the input (callbacks of one frame share its time;
// "pointer" stands for the frame of the pointer's move).
function countFrame(time) {
  if (!motion.observer || motion.inputAt !== null || time === motion.lastFrame) return;
  motion.frames += 1;
  motion.lastFrame = time;
}

function watchMotion() {
  stopMotionWatch();
  motion.frames = 0;
  motion.lastFrame = null;
  motion.inputAt = null;
  motion.inputFrame = null;
  motion.observer = new MutationObserver((records) => {
    const now = performance.now();
    for (const record of records) {
      const el = record.target;
      if (!motion.last.has(el) && motion.last.size >= MOTION_ELEMENTS) continue;
      if (motion.inputAt === null) motion.before.add(el);
      motion.last.set(el, now);
    }
  });
  motion.observer.observe(document, { attributes: true, attributeFilter: ["style"], subtree: true });
}

function stopMotionWatch() {
  if (motion.observer) motion.observer.disconnect();
  motion.observer = null;
  motion.last = new Map();
  motion.before = new Set();
}

// Finite animations of the document's timeline that started at or after `since`.
function animationsSince(since) {
  if (typeof document.getAnimations !== "function") return [];
  return document.getAnimations().filter((a) => {
    if (a.timeline !== document.timeline) return false; // scroll-driven: moves with scrolling
    if (a.playState !== "running" && !a.pending) return false;
    const timing = a.effect ? a.effect.getComputedTiming() : null;
    if (!timing || !Number.isFinite(timing.endTime)) return false; // a spinner: never ends
    return a.startTime === null || a.startTime >= since;
  });
}

// Elements a script restyled after the input (and not before it), since `recent`.
function scriptMovers(recent) {
  if (motion.inputAt === null || !motion.judged) return [];
  const out = [];
  for (const [el, at] of motion.last) {
    if (at >= recent && at >= motion.inputAt && !motion.before.has(el)) out.push(el);
  }
  return out;
}

async function settleMotion(boundMs) {
  // Animations count from the frame of the input (armed watch), or a few frames before
  // the latest input the page received (the input that armed nothing).
  let since = lastInputAt === null ? null : lastInputAt - 50;
  if (motion.inputAt !== null) {
    since = typeof motion.inputFrame === "number" ? Math.min(motion.inputAt, motion.inputFrame) : motion.inputAt;
  }
  const started = performance.now();
  try {
    if (since === null) return { waited: 0, cut: false };
    let recent = started - MOTION_RECENT_MS;
    // Script motion is over after two quiet looks in a row (a busy frame may skip one).
    let quietLooks = 2;
    for (;;) {
      const animations = animationsSince(since);
      const movers = scriptMovers(recent);
      quietLooks = movers.length ? 0 : quietLooks + 1;
      if (!animations.length && quietLooks >= 2) return { waited: performance.now() - started, cut: false };
      if (performance.now() - started >= boundMs) {
        const moving = movers.length ? movers[0] : animations.length ? animations[0].effect && /** @type {KeyframeEffect} */ (animations[0].effect).target : null;
        return { waited: performance.now() - started, cut: true, what: moving ? describe(moving) : "an animation" };
      }
      // Script motion is judged frame by frame from here: still moving means restyled
      // since the last look, which spans a whole frame (every callback of it has run).
      recent = performance.now();
      await nextFrame(window);
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  } finally {
    stopMotionWatch();
  }
}
