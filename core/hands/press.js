// @ts-check
// The hands' page script, stage: the pointer's guards: the move watch and hover check
// after the move, the press check after the button went down, and the release guard.
//
// core/hands/ctx.py joins the stages in the order of its PAGE_PARTS inside one closure,
// with `judgeSensitive` (core/world/sensitive.js) in scope, and runs it in handrail's
// isolated world (core/world/), where the eyes' script (core/eyes/*.js) has defined
// globalThis.__handrail: the stages share their top-level names, and the page sees none
// of them.

let pressGuard = null;

// An animation (CSS, Web Animations) running on the element or on one of its ancestors in
// its document: something that moves its box with the page's clock.
function animated(el) {
  const doc = el.ownerDocument;
  if (typeof doc.getAnimations !== "function") return false;
  for (const a of doc.getAnimations()) {
    if (a.playState !== "running" && !a.pending) continue;
    const target = a.effect && a.effect.target;
    if (target && (target === el || containsComposed(target, el))) return true;
  }
  return false;
}

// The frame of the pointer's move. The page gets a move at the start of an animation
// frame, before that frame's callbacks; a listener of ours on the window, in the bubble
// phase (after the page's own handlers of the move and of the hover events before it),
// asks for an animation frame then: the callbacks the page's handlers asked for run
// first, in that same frame, and a task after ours runs after the tasks they queued.
// Armed by prepareClick, before the move; answered by hoverCheck.
let moveWatch = null;

function armMoveWatch(win) {
  disarm(moveWatch);
  const settled = deferred();
  const state = { undo: [], seen: false, settled: settled.promise };
  const moved = () => {
    disarm(state);
    state.seen = true;
    win.requestAnimationFrame((time) => {
      countFrame(time);
      setTimeout(settled.resolve, 0);
    });
  };
  listen(state, win, "mousemove", moved, false);
  moveWatch = state;
}

// Set while a hover check sent together with the move waits to learn that the move's
// dispatch is over (the caller calls moveAnswered when Chrome answered the move).
let moveAnswered = null;

// After the pointer moved onto (x, y): let the page react (its hover handlers, one frame
// and a task after it: the move's own frame when our watch saw the move, else the next
// frame, as when the page stopped the move from reaching the window), complete a deferred
// stability check, hit-test again, and arm the guard that records the press target.
//
// With `withMove`, the check was sent right behind the move, and may run before the move
// reaches the page: it waits for our watch to see the move, or, when the page stopped
// the move before the window, for moveAnswered (Chrome answers a move once the page has
// handled it).
async function hoverCheck(el, x, y, options) {
  disarm(pressGuard);
  pressGuard = null;
  const first = pendingStable && pendingStable.el === el ? pendingStable : null;
  pendingStable = null;
  const watch = moveWatch;
  moveWatch = null;
  moveAnswered = null;
  if (options && options.withMove && !(watch && watch.seen)) {
    const answered = deferred();
    moveAnswered = answered.resolve;
    await (watch ? Promise.race([watch.settled, answered.promise]) : answered.promise);
    moveAnswered = null;
  }
  disarm(watch);
  // A frame came after the first reading: our callback ran in one, or the page's clock
  // moved (Chrome's clock, read between frames, may already hold the next frame's time).
  let framed = false;
  if (watch && watch.seen) {
    await watch.settled;
    framed = true;
    // A click right after the document's first digest: the eyes' log of restyles has not
    // looked long enough before the press to tell a spinner from motion the click starts.
    const watchedMs = registry().restyleLogAge ? registry().restyleLogAge() : MOTION_WATCH_MIN_MS;
    if (watchedMs < MOTION_WATCH_MIN_MS) {
      await new Promise((resolve) => setTimeout(resolve, MOTION_WATCH_MIN_MS - watchedMs));
    }
  } else {
    await nextFrame(el.ownerDocument.defaultView);
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  // Without our move watch: the pointer's move, input the page gets aligned to its
  // animation frames, came in a frame before ours and after the watch was armed: the
  // watch saw that one too.
  if (first && !framed) countFrame("pointer");
  if (!el.isConnected) return { ok: false, what: "nothing: the element left the page" };
  if (first) {
    const doc = el.ownerDocument;
    const clock = frameClock(doc);
    // Chrome may give the move's frame the time the first reading already had (its clock,
    // read between frames, runs ahead to the coming frame's time): then an animation had
    // no time to move the box, and only an element no animation moves counts as still.
    const clockMoved = clock === null || clock !== first.clock || doc.visibilityState === "hidden";
    const framePassed = clockMoved || (framed && !animated(el));
    if (!framePassed || !sameRect(topRect(el), first.rect)) return { ok: false, moved: true };
  }
  return armPress(el, x, y);
}

// The last hit test before a press, and the guard that checks who gets it (pressCheck).
// A double click's second press is armed again here, at the same point, after the first
// release: the target must still be the topmost element there.
function armPress(el, x, y) {
  disarm(pressGuard);
  pressGuard = null;
  if (!el.isConnected) return { ok: false, what: "nothing: the element left the page" };
  const hit = deepElementFromPoint(x, y);
  if (!pressReaches(el, hit)) return { ok: false, what: hit ? describe(hit) : "nothing" };
  // The page's handlers of the press are over when the mousedown reaches the window (bubble
  // phase; our listener is the last one the page registered before the press), or at the
  // pointerdown there when the page cancelled it (then no mousedown follows).
  const state = { el, target: null, captured: null, pointerId: 1, undo: [], dispatched: deferred() };
  const record = (event) => {
    if (state.target) return;
    const target = eventTarget(event);
    state.target = target;
    if (typeof event.pointerId === "number") state.pointerId = event.pointerId;
  };
  const over = (event) => {
    if (event.type === "mousedown" || event.defaultPrevented) state.dispatched.resolve();
  };
  // A page can also redirect the release: capturing the pointer to another element makes
  // pointerup (and so the click) go there. A capture asked for in the pointerdown handler
  // takes effect only at the next pointer event (pressCheck overrides it before that);
  // one that already took effect is seen here.
  const captured = (event) => {
    const target = eventTarget(event);
    if (!pressReaches(el, target)) {
      event.stopImmediatePropagation();
      state.captured = target;
      state.pointerId = event.pointerId;
    }
  };
  for (const win of windowsOf(el)) {
    listen(state, win, "pointerdown", record);
    listen(state, win, "mousedown", record);
    listen(state, win, "gotpointercapture", captured);
    for (const type of ["pointerdown", "mousedown"]) listen(state, win, type, over, false);
  }
  pressGuard = state;
  return { ok: true };
}

// A point of the viewport whose element is outside `target` (a release there makes no
// click on it), or one just outside the viewport when `target` covers all of it.
function neutralPoint(target) {
  const vp = viewport();
  const candidates = [[1, 1], [vp.w - 2, 1], [1, vp.h - 2], [vp.w - 2, vp.h - 2], [vp.w / 2, 1], [1, vp.h / 2]];
  for (const [x, y] of candidates) {
    const hit = deepElementFromPoint(x, y);
    if (hit && target && !containsComposed(target, hit) && !containsComposed(hit, target)) return { x, y };
  }
  return { x: -10, y: -10 };
}

// The release goes where the press went. A page can ask, in its pointerdown handler, to
// capture the pointer to another element, so that pointerup and the click land there; the
// request takes effect at the next pointer event, and a later request replaces it. So
// unless the capture asked for is already within the approved element, our world asks for
// it to go to the element that got the press (as a touch press always is), before the
// release. It cannot be done when the pressed element left the page: the release guard
// (guardRelease) covers that.
function holdRelease(state, target) {
  try {
    for (let node = target; node; node = composedParent(node)) {
      if (node.nodeType === 1 && node.hasPointerCapture(state.pointerId)) return;
      if (node === state.el) break;
    }
    target.setPointerCapture(state.pointerId);
  } catch (_) {
    // not connected, or no such pointer down
  }
}

// Set while a press check sent together with the press waits to learn that the press's
// dispatch is over (the caller calls pressAnswered when Chrome answered the press).
let pressAnswered = null;

// After the button went down: did the approved element receive it? If not, the click
// must not happen: the target loses any pointer capture, clicks are stopped until the
// release is done, and the caller releases the button at `neutral`.
//
// With `withPress`, the check was sent right behind the press and may run before it
// reaches the page: it waits for the end of the page's handlers of the press, or, when
// the page stopped the press's events before the window, for pressAnswered (Chrome
// answers a press once the page has handled it).
async function pressCheck(options) {
  const state = pressGuard;
  if (!state) return { ok: false, what: "nothing handrail could see" };
  pressAnswered = null;
  if (options && options.withPress) {
    const answered = deferred();
    pressAnswered = answered.resolve;
    await Promise.race([state.dispatched.promise, answered.promise]);
    pressAnswered = null;
    if (pressGuard !== state) return { ok: false, what: "nothing handrail could see" };
  }
  const target = state.target;
  disarm(state);
  if (pressReaches(state.el, target) && !state.captured && options && options.drag) {
    // A drag's press: the button stays down and the release goes where the drag ends
    // (drag.js dropCheck judges that point), so neither the capture nor the guard is set.
    pressGuard = null;
    return { ok: true };
  }
  if (pressReaches(state.el, target) && !state.captured) {
    // A pressed element the page removed in its reaction to the press takes no capture
    // (a suggestion list that picks on mousedown and closes): the guard stops the release.
    holdRelease(state, target);
    pressGuard = null;
    guardRelease(state.el);
    return { ok: true };
  }
  for (const holder of [target, state.captured]) {
    if (holder && typeof holder.hasPointerCapture === "function") {
      try {
        if (holder.hasPointerCapture(state.pointerId)) holder.releasePointerCapture(state.pointerId);
      } catch (_) {
        // not a pointer this element captured
      }
    }
  }
  if (state.captured && pressReaches(state.el, target)) {
    const what = describe(state.captured);
    installClickBlock(state);
    return { ok: false, what, captured: true, neutral: neutralPoint(state.captured) };
  }
  installClickBlock(state);
  return { ok: false, what: target ? describe(target) : "nothing handrail could see", neutral: neutralPoint(target) };
}

function installClickBlock(state) {
  const block = (event) => {
    event.stopImmediatePropagation();
    event.preventDefault();
  };
  for (const win of windowsOf(state.el)) {
    for (const type of ["click", "auxclick", "dblclick", "contextmenu"]) listen(state, win, type, block);
  }
}

function pressDone() {
  disarm(pressGuard);
  pressGuard = null;
}

// Between the press check and the release a page's timer could still capture the pointer
// elsewhere: the release's events that reach anything outside the approved element are
// stopped before the page's handlers there (and their default actions cancelled), and
// releaseCheck says where they went.
let releaseGuard = null;
const RELEASE_EVENTS = ["gotpointercapture", "pointerup", "mouseup", "click", "auxclick", "dblclick"];

function guardRelease(el) {
  disarm(releaseGuard);
  const state = { el, strayed: null, undo: [], ending: false };
  const stop = (event) => {
    // The release's events come in one task: the guard ends with it, before the page's
    // own later clicks (a handler's el.click() in a timer is not ours to judge).
    if (!state.ending) {
      state.ending = true;
      setTimeout(() => disarm(state), 0);
    }
    const target = eventTarget(event);
    if (pressReaches(el, target)) return;
    event.stopImmediatePropagation();
    event.preventDefault();
    // The approved element left the page in the page's own reaction to the press: the
    // release is nobody's, and is stopped without blame.
    if (!el.isConnected) return;
    if (!state.strayed) state.strayed = describe(target);
  };
  for (const win of windowsOf(el)) for (const type of RELEASE_EVENTS) listen(state, win, type, stop);
  releaseGuard = state;
}

function releaseCheck() {
  const state = releaseGuard;
  disarm(state);
  releaseGuard = null;
  return { strayed: state ? state.strayed : null };
}
