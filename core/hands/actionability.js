// @ts-check
// The hands' page script, stage: actionability: whether a trusted click on an element
// would reach it (visible, enabled, still, not covered), and the readings before a click.
//
// core/hands/ctx.py joins the stages in the order of its PAGE_PARTS inside one closure,
// with `judgeSensitive` (core/world/sensitive.js) in scope, and runs it in handrail's
// isolated world (core/world/), where the eyes' script (core/eyes/*.js) has defined
// globalThis.__handrail: the stages share their top-level names, and the page sees none
// of them.

function nextFrame(win) {
  // requestAnimationFrame does not run in a hidden tab; a timer keeps us moving there.
  return new Promise((resolve) => {
    let done = false;
    const finish = () => {
      if (!done) {
        done = true;
        resolve();
      }
    };
    win.setTimeout(finish, 100);
    win.requestAnimationFrame((time) => {
      // The frames the hands wait for anyway tell the motion watch how long it looked
      // before the input (asking for frames of its own slows the click that follows).
      countFrame(time);
      finish();
    });
  });
}

function visibilityProblem(el) {
  if (!el.isConnected) return ["detached", "it is no longer on the page"];
  if (typeof el.checkVisibility === "function" && !el.checkVisibility({ visibilityProperty: true })) {
    return ["hidden", "it is hidden (display:none or visibility:hidden, on it or a parent)"];
  }
  const r = el.getBoundingClientRect();
  if (r.width < 1 || r.height < 1) return ["zero_size", "it has no size on the page (zero width or height)"];
  for (let n = el; n && n.nodeType === 1; n = composedParent(n)) {
    if (parseFloat(styleOf(n).opacity) === 0) {
      return [
        "transparent",
        n === el ? "it is fully transparent (opacity 0)" : `it is fully transparent (its container ${describe(n)} has opacity 0)`,
      ];
    }
  }
  if (el.closest("[inert]")) return ["inert", "it is inert (the page has disabled interaction with it)"];
  return null;
}

function disabledProblem(el) {
  let disabled = false;
  try {
    disabled = el.matches(":disabled");
  } catch (_) {
    disabled = false;
  }
  if (disabled || el.getAttribute("aria-disabled") === "true") {
    return ["disabled", "it is disabled"];
  }
  return null;
}

function receivesClick(el, hit) {
  if (!hit) return false;
  if (hit === el || containsComposed(el, hit)) return true;
  // A click on a field's own label reaches the field.
  for (let n = hit; n; n = composedParent(n)) {
    if (n.tagName === "LABEL" && n.control === el) return true;
  }
  // An icon that ignores the pointer passes the click to its button.
  if (containsComposed(hit, el) && styleOf(el).pointerEvents === "none") return true;
  return false;
}

// Stable = the same box in two consecutive frames. One frame is enough here: the press
// itself is checked again after the pointer moved (hoverCheck, pressCheck). Two readings
// inside one frame prove nothing (animations move only from frame to frame, and on a busy
// machine the 100 ms timer often beats the frame), so a pair counts only when the page's
// animation clock moved between them, or the page is hidden (it draws no frames, and
// nothing animates in it). A box that never changed by the deadline is stable too: no
// frame came, so nothing moved.
async function stableRect(el, maxMs) {
  const win = el.ownerDocument.defaultView;
  const doc = el.ownerDocument;
  const clock = () => frameClock(doc);
  const started = Date.now();
  let prev = topRect(el);
  let prevClock = clock();
  let moved = false;
  for (;;) {
    await nextFrame(win);
    if (!el.isConnected) return { ok: false, rect: prev };
    const cur = topRect(el);
    const now = clock();
    const same = sameRect(cur, prev);
    const framePassed = now === null || now !== prevClock || doc.visibilityState === "hidden";
    if (same && framePassed) return { ok: true, rect: cur };
    if (!same) moved = true;
    if (Date.now() - started > maxMs) return moved ? { ok: false, rect: cur } : { ok: true, rect: cur };
    prev = cur;
    prevClock = now;
  }
}

function refusal(code, reason, extra) {
  return Object.assign({ ok: false, code, reason }, extra || {});
}

// The first reading of a stability check that the hover check completes (deferStable):
// the element, its box and the frame it was read in.
let pendingStable = null;

// Everything a trusted click needs: scrolled into view, visible, enabled, not moving,
// and really the element that receives a click at its centre.
//
// With `deferStable`, the box is read once here and the second reading is the hover
// check's, a frame after the pointer moved (when it differs, or no frame came between,
// the hover check answers `moved` and the caller prepares again without deferring):
// the wait for the pointer's own frame then doubles as the stability wait.
async function prepareClick(el, options) {
  const opts = Object.assign({ stableMs: 1000, requireEnabled: true, deferStable: false, noScroll: false }, options || {});
  pendingStable = null;
  // Armed here, the watch sees the frames of the stability wait (or of the pointer's
  // move, when it is deferred) and of the hover check.
  watchMotion();
  let problem = visibilityProblem(el);
  if (problem) return refusal(problem[0], problem[1]);
  if (opts.requireEnabled) {
    problem = disabledProblem(el);
    if (problem) return refusal(problem[0], problem[1]);
  }
  let scrolled = false;
  if (!inViewport(topRect(el))) {
    // Read while the caller still checks that the target is the approved one: nothing
    // may move before that check (a scroll is a change the page sees).
    if (opts.noScroll) return refusal("needs_scroll", "it is outside the visible part of the page", { needsScroll: true });
    el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
    scrolled = true;
  }
  const stable = opts.deferStable ? { ok: true, rect: topRect(el) } : await stableRect(el, opts.stableMs);
  if (!stable.ok) {
    if (!el.isConnected) return refusal("detached", "it left the page while handrail was getting ready to click");
    return refusal("moving", "the element keeps moving (animated or repositioned on every frame), so a click could land on something else");
  }
  problem = visibilityProblem(el);
  if (problem) return refusal(problem[0], problem[1]);
  const point = clickPoint(el);
  if (!point) {
    return refusal("outside", "it could not be brought into the visible part of the page (clipped by its container or off-screen)");
  }
  const hit = deepElementFromPoint(point.x, point.y);
  if (!receivesClick(el, hit)) {
    return refusal("covered", `it is covered by ${describe(hit)}, which would receive the click instead`, {
      covering: describe(hit),
    });
  }
  if (opts.deferStable) pendingStable = { el, rect: stable.rect, clock: frameClock(el.ownerDocument) };
  armMoveWatch(el.ownerDocument.defaultView);
  return { ok: true, x: point.x, y: point.y, rect: stable.rect, scrolled, name: accessibleName(el) };
}

// What a pointer action reads before it acts, in one call: the eyes' probe, the target
// and its toggle state for the approval check, and prepareClick's answer (with
// noScroll: nothing moves before that check).
async function aimReadings(index, options) {
  const probe = registry().probe();
  const target = targetOf(element(index));
  const toggle = toggleOf(element(index));
  const prep = await prepareClick(element(index), options);
  return { probe, target, toggle, prep };
}
