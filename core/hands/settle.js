// @ts-check
// The hands' page script, stage: the page's clock: when the latest input's dispatch began
// and ended, navigations it started, and the settle after an input.
//
// core/hands/ctx.py joins the stages in the order of its PAGE_PARTS inside one closure,
// with `judgeSensitive` (core/world/sensitive.js) in scope, and runs it in handrail's
// isolated world (core/world/), where the eyes' script (core/eyes/*.js) has defined
// globalThis.__handrail: the stages share their top-level names, and the page sees none
// of them.

// The page-clock time of the latest input the page received (when its dispatch began, for
// the motion watch) and when that dispatch was over, for the settle: a timer of ours due
// `ms` after the end fires only after every timer the page's handlers set for `ms` or
// sooner (timers run in the order they are due, and in the order they were set when due
// together), however slow the machine is. The end is the event's arrival at the window,
// in the bubble phase, after the page's handlers on the way; when the page stopped it
// before (or the input is unknown to us), it is the settle's own start, which comes after
// the dispatch (a task queued at the input would wait behind the frame the input asks for).
let lastInputAt = null;
let inputEndAt = null;
for (const type of ["pointerdown", "pointerup", "click", "keydown", "keyup", "input", "change"]) {
  window.addEventListener(type, () => {
    lastInputAt = performance.now();
  }, true);
  window.addEventListener(type, () => {
    inputEndAt = performance.now();
  }, false);
}

// A new document this one's page started loading (a script's location change, a form's
// submit): Chrome tells the CDP client on another channel than our world's answers, a
// moment later or sooner, so the settle also reads it here (the Navigation API's
// `navigate` event comes at once, in the task that started it). A navigation the page
// cancelled does not count.
let navigated = null;
if (typeof navigation !== "undefined" && navigation && typeof navigation.addEventListener === "function") {
  navigation.addEventListener("navigate", (event) => {
    if (event.destination && event.destination.sameDocument) return;
    navigated = { at: performance.now(), event };
  });
}

function navigatingSince(at) {
  return Boolean(navigated && (at === null || navigated.at >= at) && !navigated.event.defaultPrevented);
}

async function pageSettle(ms) {
  const now = performance.now();
  let since = now;
  if (lastInputAt !== null) since = inputEndAt !== null && inputEndAt >= lastInputAt ? inputEndAt : now;
  // setTimeout counts whole milliseconds (it drops the fraction) and performance.now() is
  // coarsened (by up to 0.1 ms): rounded up past both, our timer is due no sooner than
  // one the page set for `ms` at the end of the input.
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.ceil(since + ms - performance.now() + 0.2))));
  // One more task: what those timers started (a navigation, a fetch) is under way.
  await new Promise((resolve) => setTimeout(resolve, 0));
  return performance.now() - since;
}

// withProbe: the eyes' probe at the end, so that a click whose page made no request
// needs no round trip of its own for it.
async function settleAfterInput(ms, motionMs, withProbe) {
  const clock = await pageSettle(ms);
  const reading = Object.assign({ clock }, await settleMotion(motionMs));
  if (navigatingSince(lastInputAt)) reading.navigating = true;
  if (withProbe && registry() && typeof registry().probe === "function") reading.probe = registry().probe();
  return reading;
}
