// The hands' page-side helpers.
//
// This file is one expression that evaluates to an object of functions; `judgeSensitive`
// (core/world/sensitive.js with its words bound) is in scope. core/page.py runs
// it in handrail's isolated world (core/world/world.py), where core/snapshot.js has installed
// globalThis.__handrail: __handrail.element(i) returns the element the digest showed as
// [i] or throws the stale/unknown error that world.py turns into a message for the model.
//
// Every function takes JSON arguments and returns a JSON value. Coordinates returned to
// Python are CSS pixels in the top-level viewport (what Input.dispatchMouseEvent takes):
// elements inside same-origin iframes have their frames' offsets added.
(() => {
  "use strict";

  const registry = () => globalThis.__handrail;
  const element = (index) => registry().element(index);

  // --- geometry across shadow roots and same-origin frames -----------------------------

  function composedParent(node) {
    const parent = node.parentNode;
    if (parent) return parent.nodeType === 11 && parent.host ? parent.host : parent;
    if (node.nodeType === 9) {
      try {
        return node.defaultView ? node.defaultView.frameElement : null;
      } catch (_) {
        return null;
      }
    }
    return null;
  }

  function containsComposed(ancestor, node) {
    for (let n = node; n; n = composedParent(n)) if (n === ancestor) return true;
    return false;
  }

  function styleOf(el) {
    return el.ownerDocument.defaultView.getComputedStyle(el);
  }

  // Offset of a frame's content box (its viewport origin) in its parent's viewport.
  function frameContentOrigin(frameEl) {
    const r = frameEl.getBoundingClientRect();
    const cs = styleOf(frameEl);
    return {
      x: r.left + frameEl.clientLeft + parseFloat(cs.paddingLeft || "0"),
      y: r.top + frameEl.clientTop + parseFloat(cs.paddingTop || "0"),
    };
  }

  // Offset of a document's viewport in the top-level viewport.
  function documentOffset(doc) {
    let x = 0;
    let y = 0;
    let win = doc.defaultView;
    while (win) {
      let frameEl = null;
      try {
        frameEl = win.frameElement;
      } catch (_) {
        frameEl = null;
      }
      if (!frameEl) break;
      const o = frameContentOrigin(frameEl);
      x += o.x;
      y += o.y;
      win = frameEl.ownerDocument.defaultView;
    }
    return { x, y };
  }

  function topRect(el) {
    const r = el.getBoundingClientRect();
    const o = documentOffset(el.ownerDocument);
    return { x: r.left + o.x, y: r.top + o.y, w: r.width, h: r.height };
  }

  function viewport() {
    const vv = window.visualViewport;
    return {
      w: vv ? vv.width : window.innerWidth,
      h: vv ? vv.height : window.innerHeight,
    };
  }

  // The element that receives a click at (x, y) in the top-level viewport: descends into
  // open shadow roots and same-origin frames, as the browser's own hit test does.
  function deepElementFromPoint(x, y) {
    let doc = document;
    let ox = 0;
    let oy = 0;
    let hit = doc.elementFromPoint(x, y);
    for (let guard = 0; hit && guard < 64; guard++) {
      if (hit.shadowRoot) {
        const inner = hit.shadowRoot.elementFromPoint(x - ox, y - oy);
        if (inner && inner !== hit) {
          hit = inner;
          continue;
        }
      }
      if (hit.tagName === "IFRAME" || hit.tagName === "FRAME") {
        let childDoc = null;
        try {
          childDoc = hit.contentDocument;
        } catch (_) {
          childDoc = null;
        }
        if (childDoc) {
          const o = frameContentOrigin(hit);
          ox += o.x;
          oy += o.y;
          const inner = childDoc.elementFromPoint(x - ox, y - oy);
          if (inner) {
            doc = childDoc;
            hit = inner;
            continue;
          }
        }
      }
      break;
    }
    return hit;
  }

  function deepActiveElement() {
    let active = document.activeElement;
    for (let guard = 0; active && guard < 64; guard++) {
      if (active.shadowRoot && active.shadowRoot.activeElement) {
        active = active.shadowRoot.activeElement;
        continue;
      }
      if (active.tagName === "IFRAME" || active.tagName === "FRAME") {
        let childDoc = null;
        try {
          childDoc = active.contentDocument;
        } catch (_) {
          childDoc = null;
        }
        if (childDoc && childDoc.activeElement && childDoc.activeElement !== childDoc.body) {
          active = childDoc.activeElement;
          continue;
        }
      }
      break;
    }
    return active;
  }

  // --- naming elements for messages ----------------------------------------------------

  function clip(text, n) {
    const t = String(text || "").replace(/\s+/g, " ").trim();
    return t.length > n ? t.slice(0, n - 1) + "…" : t;
  }

  // "<div id=overlay class="modal open"> "Subscribe to our newsletter"": enough for the
  // model (and the person) to recognise what is in the way.
  function describe(el) {
    if (!el || el.nodeType !== 1) return "nothing";
    const tag = el.tagName.toLowerCase();
    const parts = [tag];
    if (el.id) parts.push(`id=${clip(el.id, 40)}`);
    const cls = typeof el.className === "string" ? clip(el.className, 60) : "";
    if (cls) parts.push(`class="${cls}"`);
    const role = el.getAttribute("role");
    if (role) parts.push(`role=${clip(role, 20)}`);
    const label = el.getAttribute("aria-label");
    const field = el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT";
    const text = clip(label || (field ? fallbackName(el) : el.innerText || el.textContent) || "", 60);
    return `<${parts.join(" ")}>` + (text ? ` "${text}"` : "");
  }

  // A fallback accessible name, used only when the registry does not offer its own.
  function fallbackName(el) {
    const doc = el.ownerDocument;
    const byIds = (attr) =>
      (el.getAttribute(attr) || "")
        .split(/\s+/)
        .map((id) => id && doc.getElementById(id))
        .filter(Boolean)
        .map((n) => n.textContent)
        .join(" ");
    const labelled = byIds("aria-labelledby");
    if (labelled.trim()) return clip(labelled, 200);
    const aria = el.getAttribute("aria-label");
    if (aria && aria.trim()) return clip(aria, 200);
    if (el.labels && el.labels.length) {
      return clip(Array.from(el.labels, (l) => l.textContent).join(" "), 200);
    }
    const attr = el.getAttribute("placeholder") || el.getAttribute("title") || el.getAttribute("alt");
    if (attr && attr.trim()) return clip(attr, 200);
    const tag = el.tagName;
    if (tag === "INPUT" && ["submit", "button", "reset"].includes(el.type)) return clip(el.value, 200);
    return clip(el.innerText || el.textContent || "", 200);
  }

  // Every string the digest may have used as the element's name, for comparing with what
  // the person approved (the digest's own naming runs inside its page walk).
  function nameCandidates(el) {
    const out = [accessibleName(el)];
    const doc = el.ownerDocument;
    const root = el.getRootNode();
    const ids = (el.getAttribute("aria-labelledby") || "").trim();
    if (ids) {
      const parts = ids.split(/\s+/).map((id) => (root.getElementById ? root.getElementById(id) : doc.getElementById(id)));
      out.push(parts.filter(Boolean).map((n) => n.textContent).join(" "));
    }
    for (const attr of ["aria-label", "placeholder", "title", "alt"]) {
      const v = el.getAttribute(attr);
      if (v) out.push(v);
    }
    if (el.labels) for (const l of el.labels) out.push(l.textContent);
    if (el.tagName === "LABEL") out.push(el.textContent);
    if (el.tagName === "INPUT") {
      out.push(el.value || "");
      if (el.type === "submit") out.push("Submit");
      if (el.type === "reset") out.push("Reset");
    }
    out.push(el.innerText || "", el.textContent || "");
    if (el.shadowRoot) out.push(el.shadowRoot.textContent || "");
    return out.map((s) => clip(s, 400)).filter((s, i, a) => a.indexOf(s) === i);
  }

  function accessibleName(el) {
    const reg = registry();
    if (reg && typeof reg.accessibleName === "function") return reg.accessibleName(el);
    if (reg && typeof reg.name === "function") return reg.name(el);
    return fallbackName(el);
  }

  // --- actionability -------------------------------------------------------------------

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

  function inViewport(rect) {
    const vp = viewport();
    return rect.x >= 0 && rect.y >= 0 && rect.x + rect.w <= vp.w && rect.y + rect.h <= vp.h;
  }

  // The point to click: the centre of the element's largest box, clipped to the viewport.
  function clickPoint(el) {
    const o = documentOffset(el.ownerDocument);
    const vp = viewport();
    let best = null;
    let bestArea = -1;
    const rects = el.getClientRects();
    for (const r of rects.length ? rects : [el.getBoundingClientRect()]) {
      const left = Math.max(r.left + o.x, 0);
      const top = Math.max(r.top + o.y, 0);
      const right = Math.min(r.right + o.x, vp.w);
      const bottom = Math.min(r.bottom + o.y, vp.h);
      const area = Math.max(0, right - left) * Math.max(0, bottom - top);
      if (area > bestArea) {
        bestArea = area;
        best = { left, top, right, bottom };
      }
    }
    if (!best || bestArea <= 0) return null;
    return { x: (best.left + best.right) / 2, y: (best.top + best.bottom) / 2 };
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

  // Same box, to half a pixel.
  function sameRect(a, b) {
    return Math.abs(a.x - b.x) < 0.5 && Math.abs(a.y - b.y) < 0.5 && Math.abs(a.w - b.w) < 0.5 && Math.abs(a.h - b.h) < 0.5;
  }

  function frameClock(doc) {
    return doc.timeline ? doc.timeline.currentTime : null;
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
    return { ok: true, x: point.x, y: point.y, rect: stable.rect, scrolled, names: nameCandidates(el) };
  }

  // --- guards at the moment of input ------------------------------------------------------
  //
  // Listeners in our isolated world see the page's own events: they record which element
  // really received a press or a key, and stop what was meant for another element.

  let pressGuard = null;
  let keyGuard = null;

  function windowsOf(el) {
    const own = el.ownerDocument.defaultView;
    return own && own !== window ? [window, own] : [window];
  }

  // Capture phase unless `capture` is false (bubble: after the page's handlers on the way).
  function listen(state, win, type, fn, capture = true) {
    win.addEventListener(type, fn, capture);
    state.undo.push(() => win.removeEventListener(type, fn, capture));
  }

  // A promise and the function that fulfils it.
  function deferred() {
    let resolve = null;
    const promise = new Promise((fulfil) => {
      resolve = fulfil;
    });
    return { promise, resolve };
  }

  function disarm(state) {
    if (state) for (const undo of state.undo.splice(0)) undo();
  }

  function pressReaches(el, target) {
    return Boolean(target) && (target === el || containsComposed(el, target) || receivesClick(el, target));
  }

  // The element a pointer event is for. A closed shadow root retargets the event to its
  // host; the roots the eyes adopted let us look inside it at the event's point.
  function eventTarget(event) {
    const path = event.composedPath();
    let target = path[0] || event.target;
    if (target && target.shadowRoot && !path.includes(target.shadowRoot)) {
      const inner = deepElementFromPoint(event.clientX, event.clientY);
      if (inner && containsComposed(target, inner)) target = inner;
    }
    return target;
  }

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

  // Keys typed for `el` are cancelled whenever the focus is elsewhere; the first element
  // that had the focus instead is remembered for the report.
  function guardKeys(el) {
    disarm(keyGuard);
    const state = { el, strayed: null, undo: [] };
    const check = (event) => {
      if (isFocused(el)) return;
      if (!state.strayed) state.strayed = describe(deepActiveElement() || document.body);
      event.stopImmediatePropagation();
      event.preventDefault();
    };
    for (const win of windowsOf(el)) {
      for (const type of ["keydown", "keypress", "beforeinput"]) listen(state, win, type, check);
    }
    keyGuard = state;
  }

  function keysDone() {
    const state = keyGuard;
    keyGuard = null;
    if (!state) return null;
    disarm(state);
    if (!state.strayed && !isFocused(state.el)) {
      const active = deepActiveElement();
      return describe(active || document.body);
    }
    return state.strayed;
  }

  // --- state readers -------------------------------------------------------------------

  function toggleOf(el) {
    const tag = el.tagName;
    const type = (el.getAttribute("type") || "").toLowerCase();
    if (tag === "INPUT" && (type === "checkbox" || type === "radio")) {
      return { kind: type, state: el.indeterminate ? "mixed" : el.checked ? "checked" : "unchecked" };
    }
    const role = (el.getAttribute("role") || "").toLowerCase();
    const checked = el.getAttribute("aria-checked");
    if (checked !== null) {
      const state = checked === "true" ? "checked" : checked === "mixed" ? "mixed" : "unchecked";
      return { kind: role || "toggle", state: role === "switch" ? (checked === "true" ? "on" : "off") : state };
    }
    const pressed = el.getAttribute("aria-pressed");
    if (pressed !== null) {
      return { kind: "toggle button", state: pressed === "true" ? "pressed" : pressed === "mixed" ? "mixed" : "not pressed" };
    }
    if (tag === "LABEL" && el.control && el.control !== el) return toggleOf(el.control);
    const expanded = el.getAttribute("aria-expanded");
    if (expanded !== null) return { kind: "expandable", state: expanded === "true" ? "expanded" : "collapsed" };
    if (tag === "SUMMARY" && el.parentElement && el.parentElement.tagName === "DETAILS") {
      return { kind: "expandable", state: el.parentElement.open ? "expanded" : "collapsed" };
    }
    return null;
  }

  const TEXT_INPUT_TYPES = new Set([
    "", "text", "search", "email", "url", "tel", "password", "number",
    "date", "datetime-local", "month", "week", "time", "color", "range",
  ]);

  // The field that typing into [index] should fill: the element itself, the control of a
  // label, or the single editable field inside a wrapper.
  function editableOf(el) {
    if (isEditable(el)) return el;
    if (el.tagName === "LABEL" && el.control && isEditable(el.control)) return el.control;
    const inner = el.querySelectorAll("input, textarea, [contenteditable]");
    const candidates = Array.from(inner).filter(isEditable);
    return candidates.length === 1 ? candidates[0] : el;
  }

  function isEditable(el) {
    if (el.tagName === "TEXTAREA") return true;
    if (el.tagName === "INPUT") return TEXT_INPUT_TYPES.has((el.getAttribute("type") || "").toLowerCase());
    return el.isContentEditable === true;
  }

  function fieldKind(el) {
    if (el.tagName === "TEXTAREA") return "textarea";
    if (el.tagName === "INPUT") return "input";
    if (el.isContentEditable) return "contenteditable";
    return "other";
  }

  // Password, one-time-code and card fields, judged by meaning (core/world/sensitive.js, whose
  // words are core/world/sensitive.json): the function is passed in as `judgeSensitive`.
  function sensitivityOf(el) {
    return judgeSensitive(el) || (editableOf(el) !== el ? judgeSensitive(editableOf(el)) : null);
  }

  function fieldValue(el) {
    if (el.tagName === "INPUT" || el.tagName === "TEXTAREA") return el.value;
    // innerText follows what the person sees (line breaks for blocks), without trailing ones.
    return (el.innerText || "").replace(/\u00a0/g, " ").replace(/\n+$/, "");
  }

  function fieldInfo(el) {
    const target = editableOf(el);
    const kind = fieldKind(target);
    const maxLength = target.tagName === "INPUT" || target.tagName === "TEXTAREA" ? target.maxLength : -1;
    return {
      kind,
      tag: target.tagName.toLowerCase(),
      type: (target.getAttribute("type") || "").toLowerCase(),
      editable: isEditable(target),
      readOnly: Boolean(target.readOnly) || target.getAttribute("aria-readonly") === "true",
      disabled: disabledProblem(target) !== null,
      maxLength: maxLength > 0 ? maxLength : null,
      sensitive: sensitivityOf(target) !== null,
      focused: isFocused(target),
      value: fieldValue(target),
      describe: describe(target),
      isSelf: target === el,
    };
  }

  function isFocused(el) {
    const active = deepActiveElement();
    if (!active) return false;
    if (active === el) return true;
    return el.isContentEditable === true && containsComposed(el, active);
  }

  function placeCaretAtEnd(target) {
    if (target.tagName === "INPUT" || target.tagName === "TEXTAREA") {
      try {
        const n = target.value.length;
        target.setSelectionRange(n, n);
      } catch (_) {
        // email and number inputs have no selection API; the caret is already at the end.
      }
      return;
    }
    const doc = target.ownerDocument;
    const range = doc.createRange();
    range.selectNodeContents(target);
    range.collapse(false);
    const sel = doc.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }

  function selectAllIn(target) {
    if (target.tagName === "INPUT" || target.tagName === "TEXTAREA") {
      target.select();
      return;
    }
    const doc = target.ownerDocument;
    const range = doc.createRange();
    range.selectNodeContents(target);
    const sel = doc.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }

  // Sets a value the way a framework's own listeners expect: through the prototype's
  // setter (below any instance-level override a framework installs) and then the input and
  // change events it listens to.
  function setNativeValue(target, value) {
    const win = target.ownerDocument.defaultView;
    if (target.tagName === "INPUT" || target.tagName === "TEXTAREA") {
      const proto = target.tagName === "INPUT" ? win.HTMLInputElement.prototype : win.HTMLTextAreaElement.prototype;
      const setter = Object.getOwnPropertyDescriptor(proto, "value").set;
      setter.call(target, value);
    } else {
      target.textContent = value;
    }
    target.dispatchEvent(new win.Event("input", { bubbles: true, composed: true }));
    target.dispatchEvent(new win.Event("change", { bubbles: true }));
  }

  // --- the API page.py calls ------------------------------------------------------------

  // --- the page's clock ------------------------------------------------------------------

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

  const api = {
    async pageSettle(ms) {
      return pageSettle(ms);
    },

    async prepareClick(index, options) {
      return prepareClick(element(index), options);
    },

    async hoverCheck(index, x, y, options) {
      return hoverCheck(element(index), x, y, options);
    },

    moveAnswered() {
      if (moveAnswered) moveAnswered();
      return true;
    },

    async pressCheck(index, options) {
      return pressCheck(options);
    },

    pressAnswered() {
      if (pressAnswered) pressAnswered();
      return true;
    },

    pressDone() {
      pressDone();
      return true;
    },

    releaseCheck() {
      return releaseCheck();
    },

    armKeys(index) {
      const el = element(index);
      guardKeys(editableOf(el));
      return sensitivityOf(el);
    },

    keysDone() {
      return keysDone();
    },

    sensitivity(index) {
      return sensitivityOf(element(index));
    },

    focusedSensitivity() {
      const active = deepActiveElement();
      return active && active !== document.body ? judgeSensitive(active) : null;
    },

    target(index) {
      const el = element(index);
      return {
        name: accessibleName(el),
        names: nameCandidates(el),
        rect: topRect(el),
        tag: el.tagName.toLowerCase(),
        describe: describe(el),
      };
    },

    toggleState(index) {
      return toggleOf(element(index));
    },

    // What a pointer action reads before it acts, in one call: the eyes' probe, the target
    // and its toggle state for the approval check, and prepareClick's answer (with
    // noScroll: nothing moves before that check).
    async aimReadings(index, options) {
      const probe = registry().probe();
      const target = api.target(index);
      const toggle = api.toggleState(index);
      const prep = await prepareClick(element(index), options);
      return { probe, target, toggle, prep };
    },

    focusDescription() {
      const active = deepActiveElement();
      if (!active || active === document.body || active === document.documentElement) return null;
      return describe(active);
    },

    fieldInfo(index) {
      return fieldInfo(element(index));
    },

    focusField(index) {
      const target = editableOf(element(index));
      if (!isFocused(target)) target.focus({ preventScroll: false });
      return isFocused(target);
    },

    caretToEnd(index) {
      placeCaretAtEnd(editableOf(element(index)));
    },

    selectAll(index) {
      const target = editableOf(element(index));
      if (!isFocused(target)) target.focus();
      selectAllIn(target);
      return fieldValue(target);
    },

    setValue(index, value) {
      setNativeValue(editableOf(element(index)), value);
      return fieldValue(editableOf(element(index)));
    },

    selectOption(index, wanted) {
      const el = element(index);
      if (el.tagName !== "SELECT") {
        return {
          ok: false,
          code: "not_select",
          reason: `${describe(el)} is not a native <select>; click it to open its list, then click the option`,
        };
      }
      const problem = disabledProblem(el);
      if (problem) return { ok: false, code: "disabled", reason: "the list is disabled" };
      const norm = (s) => String(s).replace(/\s+/g, " ").trim().toLowerCase();
      const options = Array.from(el.options).filter((o) => !o.disabled);
      const listed = Array.from(el.options).map((o) => ({
        label: clip(o.label || o.text, 80),
        value: o.value,
        disabled: o.disabled,
      }));
      const want = norm(wanted);
      let found = options.filter((o) => o.value === String(wanted));
      if (!found.length) found = options.filter((o) => norm(o.label || o.text) === want);
      if (!found.length) found = options.filter((o) => norm(o.value) === want);
      if (!found.length && want) found = options.filter((o) => norm(o.label || o.text).includes(want));
      if (found.length !== 1) {
        const disabledMatch = Array.from(el.options).some(
          (o) => o.disabled && (o.value === String(wanted) || norm(o.label || o.text) === want),
        );
        return {
          ok: false,
          code: found.length ? "ambiguous" : disabledMatch ? "disabled_option" : "no_match",
          matches: found.map((o) => clip(o.label || o.text, 80)),
          options: listed,
        };
      }
      const option = found[0];
      const before = el.value;
      const win = el.ownerDocument.defaultView;
      if (el.multiple) {
        option.selected = true;
      } else {
        const setter = Object.getOwnPropertyDescriptor(win.HTMLSelectElement.prototype, "value").set;
        setter.call(el, option.value);
      }
      el.dispatchEvent(new win.Event("input", { bubbles: true, composed: true }));
      el.dispatchEvent(new win.Event("change", { bubbles: true }));
      const now = el.selectedOptions.length ? el.selectedOptions[0] : null;
      return {
        ok: true,
        changed: before !== el.value,
        label: now ? clip(now.label || now.text, 80) : "",
        value: now ? now.value : "",
        wanted: clip(option.label || option.text, 80),
      };
    },

    // Scrolls the window, or the page's main scrolling container when the window cannot
    // scroll (apps that scroll a <main> or a div), by a number of "pages".
    scrollBy(direction, pages) {
      const sign = direction === "up" ? -1 : 1;
      const scroller = mainScroller();
      const before = scrollState(scroller);
      const step = Math.max(1, Math.round(before.view * 0.9 * pages));
      if (scroller === null) {
        window.scrollBy({ top: sign * step, behavior: "instant" });
      } else {
        scroller.scrollBy({ top: sign * step, behavior: "instant" });
      }
      const after = scrollState(scroller);
      return { before, after, container: scroller === null ? null : describe(scroller) };
    },

    scrollToElement(index) {
      const el = element(index);
      el.scrollIntoView({ block: "center", inline: "nearest", behavior: "instant" });
      const scroller = mainScroller();
      const rect = topRect(el);
      return { after: scrollState(scroller), visible: inViewport(rect) || clickPoint(el) !== null, describe: describe(el) };
    },

    fileInput(index) {
      const el = element(index);
      const ok = el.tagName === "INPUT" && (el.getAttribute("type") || "").toLowerCase() === "file";
      return {
        ok,
        describe: describe(el),
        multiple: ok && el.multiple,
        accept: ok ? el.accept : "",
        disabled: disabledProblem(el) !== null,
      };
    },

    fileNames(index) {
      const el = element(index);
      return el.files ? Array.from(el.files, (f) => f.name) : [];
    },
  };

  function scrollState(scroller) {
    if (scroller === null) {
      const se = document.scrollingElement || document.documentElement;
      return { top: window.scrollY, height: se.scrollHeight, view: window.innerHeight };
    }
    return { top: scroller.scrollTop, height: scroller.scrollHeight, view: scroller.clientHeight };
  }

  function canScrollY(el) {
    if (el.scrollHeight <= el.clientHeight + 1) return false;
    const oy = styleOf(el).overflowY;
    return oy === "auto" || oy === "scroll" || oy === "overlay";
  }

  // null means the window itself.
  function mainScroller() {
    const se = document.scrollingElement || document.documentElement;
    const rootOverflow = styleOf(document.documentElement).overflowY;
    const bodyOverflow = document.body ? styleOf(document.body).overflowY : "";
    const windowScrolls =
      se.scrollHeight > window.innerHeight + 1 && rootOverflow !== "hidden" && bodyOverflow !== "hidden";
    if (windowScrolls) return null;
    let best = null;
    let bestArea = 0;
    const walker = document.createTreeWalker(document.body || document.documentElement, NodeFilter.SHOW_ELEMENT);
    let count = 0;
    for (let n = walker.currentNode; n && count < 20000; n = walker.nextNode(), count++) {
      if (n.nodeType !== 1 || !canScrollY(n)) continue;
      const r = n.getBoundingClientRect();
      const area = Math.max(0, Math.min(r.right, window.innerWidth) - Math.max(r.left, 0)) *
        Math.max(0, Math.min(r.bottom, window.innerHeight) - Math.max(r.top, 0));
      if (area > bestArea) {
        bestArea = area;
        best = n;
      }
    }
    return best;
  }


  // --- native date, time, colour and range inputs ----------------------------------------
  //
  // What a person types for the browser's own picker becomes the value that picker would
  // set (ISO for dates and times, #rrggbb for colours), checked against the field's own
  // min, max and step by the browser itself (on a detached twin of the field), then set
  // through the prototype's setter with input and change, as the picker does. The order of
  // a numeric date ("09/10/2010") is the one of navigator.language, the language the browser
  // tells pages its person reads, as Intl formats dates for it.

  const NATIVE_TYPES = new Set(["date", "time", "month", "week", "datetime-local", "color", "range"]);
  const NATIVE_NOUNS = {
    date: "date", time: "time", month: "month", week: "week",
    "datetime-local": "date and time", color: "colour", range: "number",
  };
  const EN_MONTHS = [
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
  ];

  function pageLocale() {
    return navigator.language || Intl.DateTimeFormat().resolvedOptions().locale;
  }

  // "MDY", "DMY" or "YMD": how the locale writes a numeric date; null when unknown.
  function numericDateOrder(locale) {
    try {
      const parts = new Intl.DateTimeFormat(locale, { year: "numeric", month: "2-digit", day: "2-digit" })
        .formatToParts(new Date(2010, 8, 23));
      const order = parts.filter((p) => p.type === "year" || p.type === "month" || p.type === "day")
        .map((p) => p.type[0].toUpperCase()).join("");
      return ["MDY", "DMY", "YMD"].includes(order) ? order : null;
    } catch (_) {
      return null;
    }
  }

  function numericDateExample(locale) {
    try {
      return new Intl.DateTimeFormat(locale, { year: "numeric", month: "2-digit", day: "2-digit" })
        .format(new Date(2010, 8, 23));
    } catch (_) {
      return "09/23/2010";
    }
  }

  // Month names, English and the locale's own (long and short), to their numbers.
  function monthNumber(token) {
    const word = token.replace(/\.$/, "");
    if (word.length < 3 || /\d/.test(word)) return null;
    const found = EN_MONTHS.findIndex((name) => name.startsWith(word));
    if (found >= 0) return found + 1;
    for (const style of ["long", "short"]) {
      try {
        const fmt = new Intl.DateTimeFormat(pageLocale(), { month: style });
        for (let m = 0; m < 12; m++) {
          const name = fmt.format(new Date(2010, m, 15)).toLowerCase().replace(/\.$/, "");
          if (name === word) return m + 1;
        }
      } catch (_) {
        return null;
      }
    }
    return null;
  }

  const pad = (n, width) => String(n).padStart(width || 2, "0");

  function isoDate(y, m, d) {
    if (!(m >= 1 && m <= 12 && d >= 1 && y >= 1)) return null;
    const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
    const inMonth = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
    return d <= inMonth ? `${pad(y, 4)}-${pad(m)}-${pad(d)}` : null;
  }

  function parseDate(text) {
    const t = text.toLowerCase().replace(/\s+/g, " ").replace(/^(mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,? /, "");
    let m = t.match(/^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})$/);
    if (m) return isoDate(+m[1], +m[2], +m[3]);
    m = t.match(/^(\d{1,2})[-/.](\d{1,2})[-/.](\d{4})$/);
    if (m) {
      const [a, b, y] = [+m[1], +m[2], +m[3]];
      const order = numericDateOrder(pageLocale());
      const monthFirst = isoDate(y, a, b);
      const dayFirst = isoDate(y, b, a);
      // The locale decides; a reading it rules out (a 13th month) leaves the other one.
      if (order === "MDY") return monthFirst || dayFirst;
      if (order === "DMY") return dayFirst || monthFirst;
      return monthFirst && dayFirst && monthFirst !== dayFirst ? null : monthFirst || dayFirst;
    }
    const tokens = t.replace(/,/g, " ").split(/[\s/-]+/).filter(Boolean);
    if (tokens.length !== 3) return null;
    let month = null;
    let year = null;
    let day = null;
    for (const token of tokens) {
      const named = month === null ? monthNumber(token) : null;
      if (named) {
        month = named;
        continue;
      }
      const num = token.match(/^(\d{1,4})(st|nd|rd|th|\.)?$/);
      if (!num) return null;
      if (num[1].length === 4 && year === null) year = +num[1];
      else if (num[1].length <= 2 && day === null) day = +num[1];
      else return null;
    }
    return month && year && day ? isoDate(year, month, day) : null;
  }

  function parseTime(text) {
    const t = text.toLowerCase().replace(/\s+/g, " ");
    const clock = (h, mi, s) => {
      if (!(h >= 0 && h < 24 && mi >= 0 && mi < 60)) return null;
      if (s === undefined) return `${pad(h)}:${pad(mi)}`;
      return +s < 60 ? `${pad(h)}:${pad(mi)}:${pad(+s)}` : null;
    };
    let m = t.match(/^(\d{1,2})(?:[:.](\d{2}))?(?::(\d{2}))? ?([ap])\.? ?m\.?$/);
    if (m) {
      const h = +m[1];
      if (h < 1 || h > 12) return null;
      return clock((h % 12) + (m[4] === "p" ? 12 : 0), +(m[2] || 0), m[3]);
    }
    m = t.match(/^(\d{1,2})[:h](\d{2})(?::(\d{2}))?$/);
    return m ? clock(+m[1], +m[2], m[3]) : null;
  }

  function parseMonth(text) {
    const t = text.toLowerCase().replace(/\s+/g, " ");
    let m = t.match(/^(\d{4})[-/.](\d{1,2})$/);
    if (m) return +m[2] >= 1 && +m[2] <= 12 ? `${m[1]}-${pad(+m[2])}` : null;
    m = t.match(/^(\d{1,2})[-/.](\d{4})$/);
    if (m) return +m[1] >= 1 && +m[1] <= 12 ? `${m[2]}-${pad(+m[1])}` : null;
    const tokens = t.replace(/,/g, " ").split(/[\s/-]+/).filter(Boolean);
    if (tokens.length !== 2) return null;
    const [first, second] = tokens;
    const named = monthNumber(first) || monthNumber(second);
    const year = [first, second].find((x) => /^\d{4}$/.test(x));
    return named && year ? `${year}-${pad(named)}` : null;
  }

  // ISO 8601 week of a date: the week of its Thursday.
  function isoWeekOf(iso) {
    const [y, mo, d] = iso.split("-").map(Number);
    const day = new Date(Date.UTC(y, mo - 1, d));
    const weekday = day.getUTCDay() || 7;
    day.setUTCDate(day.getUTCDate() + 4 - weekday);
    const yearStart = new Date(Date.UTC(day.getUTCFullYear(), 0, 1));
    const week = Math.ceil(((day - yearStart) / 86400000 + 1) / 7);
    return `${pad(day.getUTCFullYear(), 4)}-W${pad(week)}`;
  }

  function parseWeek(text) {
    const t = text.toLowerCase().replace(/\s+/g, " ");
    let m = t.match(/^(\d{4})[- ]?w(?:eek)? ?(\d{1,2})$/);
    if (m) return `${m[1]}-W${pad(+m[2])}`;
    m = t.match(/^w(?:eek)? ?(\d{1,2}),? (?:of )?(\d{4})$/);
    if (m) return `${m[2]}-W${pad(+m[1])}`;
    const date = parseDate(text);
    return date ? isoWeekOf(date) : null;
  }

  function parseDateTime(text) {
    const t = text.replace(/\s+/g, " ");
    let m = t.match(/^(\d{4}-\d{1,2}-\d{1,2})[tT ](.+)$/);
    if (!m) m = t.match(/^(.+?)[, ]+(?:at )?(\d{1,2}(?:[:.]\d{2}){1,2} ?(?:[aApP]\.? ?[mM]\.?)?|\d{1,2} ?[aApP]\.? ?[mM]\.?)$/);
    if (!m) return null;
    const date = parseDate(m[1].replace(/,$/, ""));
    const time = parseTime(m[2]);
    return date && time ? `${date}T${time}` : null;
  }

  function parseColor(text) {
    const t = text.trim().toLowerCase();
    if (/^#?[0-9a-f]{6}$/.test(t)) return t.startsWith("#") ? t : `#${t}`;
    if (/^#?[0-9a-f]{3}$/.test(t)) return "#" + Array.from(t.replace("#", ""), (c) => c + c).join("");
    // The canvas parses every CSS colour (names, rgb(), hsl()); a text it does not take
    // leaves the previous style, which two different starting styles reveal.
    const paint = new OffscreenCanvas(1, 1).getContext("2d");
    paint.fillStyle = "#000000";
    paint.fillStyle = t;
    const first = paint.fillStyle;
    paint.fillStyle = "#ffffff";
    paint.fillStyle = t;
    if (paint.fillStyle !== first) return null;
    return first.startsWith("#") ? first : { error: "it has transparency, which a colour field cannot hold" };
  }

  function nativeValue(type, text) {
    switch (type) {
      case "date":
        return parseDate(text);
      case "time":
        return parseTime(text);
      case "month":
        return parseMonth(text);
      case "week":
        return parseWeek(text);
      case "datetime-local":
        return parseDateTime(text);
      case "color":
        return parseColor(text);
      case "range": {
        const n = Number(text.replace(/\s+/g, ""));
        return text.trim() && Number.isFinite(n) ? String(n) : null;
      }
      default:
        return null;
    }
  }

  // Why the field would not hold `value` (null when it would), asked of the browser on a
  // detached twin with the field's min, max and step.
  function nativeRejection(target, type, value) {
    const twin = target.ownerDocument.createElement("input");
    twin.type = type;
    for (const attr of ["min", "max", "step"]) {
      if (target.hasAttribute(attr)) twin.setAttribute(attr, target.getAttribute(attr));
    }
    twin.value = value;
    if (type === "range") {
      if (Number(twin.value) === Number(value)) return null;
      const lowest = twin.min === "" ? 0 : twin.min;
      const highest = twin.max === "" ? 100 : twin.max;
      const step = twin.step === "" ? 1 : twin.step;
      return `${value} is not one of its values (from ${lowest} to ${highest} in steps of ${step}; the nearest is ${twin.value})`;
    }
    if (twin.value === "") return `${value} is not a real ${NATIVE_NOUNS[type]}`;
    if (twin.validity.rangeUnderflow) return `${value} is before the earliest it allows, ${target.min}`;
    if (twin.validity.rangeOverflow) return `${value} is after the latest it allows, ${target.max}`;
    if (twin.validity.stepMismatch) {
      const clock = type === "time" || type === "datetime-local";
      if (clock && !target.getAttribute("step")) return `${value} has seconds, and the field takes whole minutes`;
      return `${value} is not on its step (step ${target.step}${clock ? " seconds" : ""})`;
    }
    return null;
  }

  function nativeFormats(type, target) {
    const locale = pageLocale();
    switch (type) {
      case "date":
        return `a date: ISO "2010-09-23", the browser's own order "${numericDateExample(locale)}" (navigator.language ${locale}) or "23 September 2010"`;
      case "time":
        return 'a time: "19:50", "7:50 PM", or "19:50:30" when the field takes seconds';
      case "month":
        return 'a month: "2010-09" or "September 2010"';
      case "week":
        return 'a week: "2010-W36", "week 36 2010", or a date in that week';
      case "datetime-local":
        return 'a date and a time: "2010-09-23T19:50", "2010-09-23 19:50" or "23 September 2010 7:50 PM"';
      case "color":
        return 'a colour: "#ff0000", "#f00", "rgb(255, 0, 0)" or a CSS colour name such as "red"';
      default: {
        const lowest = target.min === "" ? 0 : target.min;
        const highest = target.max === "" ? 100 : target.max;
        return `a number from ${lowest} to ${highest} in steps of ${target.step || 1}`;
      }
    }
  }

  // {native: false} when [index] is not a native date/time/colour/range input right now;
  // otherwise whether `text` reads as a value it holds, and (with `apply`) sets it.
  function nativeInput(el, text, apply) {
    const target = editableOf(el);
    const type = target.tagName === "INPUT" ? String(target.type).toLowerCase() : "";
    if (!NATIVE_TYPES.has(type)) return { native: false };
    const raw = String(text).trim();
    const answer = { native: true, type, noun: NATIVE_NOUNS[type], formats: nativeFormats(type, target) };
    let value = "";
    if (raw || type === "color" || type === "range") {
      const parsed = nativeValue(type, raw);
      if (parsed === null || typeof parsed === "object") {
        const reason = parsed ? parsed.error : `handrail cannot read "${clip(raw, 60)}" as a ${answer.noun}`;
        return Object.assign(answer, { ok: false, reason });
      }
      value = parsed;
      const problem = nativeRejection(target, type, value);
      if (problem) return Object.assign(answer, { ok: false, value, reason: problem });
    }
    if (!apply) return Object.assign(answer, { ok: true, value });
    setNativeValue(target, value);
    return Object.assign(answer, { ok: true, value, holds: target.value });
  }

  api.nativeInput = (index, text, apply) => nativeInput(element(index), text, apply);


  // --- motion an input started ------------------------------------------------------------
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
          const moving = movers.length ? movers[0] : animations.length ? animations[0].effect && animations[0].effect.target : null;
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

  api.watchMotion = () => {
    watchMotion();
    return true;
  };
  // withProbe: the eyes' probe at the end, so that a click whose page made no request
  // needs no round trip of its own for it.
  api.settleAfterInput = async (ms, motionMs, withProbe) => {
    const clock = await pageSettle(ms);
    const reading = Object.assign({ clock }, await settleMotion(motionMs));
    if (navigatingSince(lastInputAt)) reading.navigating = true;
    if (withProbe && registry() && typeof registry().probe === "function") reading.probe = registry().probe();
    return reading;
  };

  // --- hover and scrolling areas (the hover and scroll tools) -------------------------------

  // Seen by a person: rendered, not hidden by CSS, not fully transparent, with a box.
  function shown(el) {
    if (typeof el.checkVisibility === "function") {
      const opts = { checkOpacity: true, checkVisibilityCSS: true, opacityProperty: true, visibilityProperty: true };
      if (!el.checkVisibility(opts)) return false;
    }
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  }

  // Where a hover's reaction is looked for, so a huge page costs no more than a small one:
  // the hovered element's neighbourhood (its ancestors up to HOVER_LEVELS levels below the
  // body, and all they hold: a submenu, a mega-menu panel, a sibling tooltip), and whatever
  // the page inserted anywhere after the move (a tooltip or popup appended to the body).
  const HOVER_LEVELS = 4;
  const HOVER_LIMIT = 3000;

  function neighbourhood(el) {
    const doc = el.ownerDocument;
    let root = el;
    for (let i = 0; i < HOVER_LEVELS; i++) {
      const up = root.parentElement;
      if (!up || up === doc.body || up === doc.documentElement) break;
      root = up;
    }
    return root;
  }

  function within(roots) {
    const out = new Set();
    for (const root of roots) {
      if (!root.isConnected) continue;
      out.add(root);
      for (const el of root.getElementsByTagName("*")) {
        if (out.size >= HOVER_LIMIT) return [...out];
        out.add(el);
      }
    }
    return [...out];
  }

  let hoverBefore = null;

  // What a 1-pixel clipping box holds is not seen (the "visually hidden" text for screen
  // readers: jQuery UI's live region, .sr-only).
  function visuallyHidden(el) {
    for (let n = el; n && n.nodeType === 1; n = n.parentElement) {
      const st = styleOf(n);
      if (st.clip === "rect(0px, 0px, 0px, 0px)" || st.clipPath === "inset(50%)") return true;
      if (st.overflowX !== "visible" && st.overflowY !== "visible") {
        const r = n.getBoundingClientRect();
        if (r.width <= 1 || r.height <= 1) return true;
      }
    }
    return false;
  }

  // What a menu or a tooltip that appeared holds: its innermost actionable items' texts.
  const ITEM_SELECTOR =
    "a[href], button, input, select, textarea, [role^=menuitem], [role=option], [role=tab], [role=treeitem], [role=link], [role=button], li";

  function appearedItem(el) {
    const found = Array.from(el.querySelectorAll(ITEM_SELECTOR)).filter(shown);
    if (el.matches(ITEM_SELECTOR)) found.unshift(el);
    const innermost = found.filter((item) => !found.some((other) => other !== item && item.contains(other)));
    const items = innermost.map((item) => clip(item.innerText || item.textContent || item.getAttribute("aria-label"), 40)).filter(Boolean);
    return {
      role: el.getAttribute("role") || "",
      tag: el.tagName.toLowerCase(),
      items: items.slice(0, 8),
      more: Math.max(0, items.length - 8),
      text: clip(el.innerText || el.textContent || el.getAttribute("aria-label") || "", 100),
    };
  }

  // --- scrolling areas ------------------------------------------------------------------

  function scrollsAlong(value) {
    return value === "auto" || value === "scroll" || value === "overlay";
  }

  // How far an element's own content can still move each way (px); null when it is not a
  // scroll container a person could scroll (overflow hidden clips, but has no scrollbar).
  function scrollRoom(el) {
    if (!el || el.nodeType !== 1 || el === el.ownerDocument.documentElement || el === el.ownerDocument.body) return null;
    const st = styleOf(el);
    const y = scrollsAlong(st.overflowY) && el.scrollHeight > el.clientHeight + 1;
    const x = scrollsAlong(st.overflowX) && el.scrollWidth > el.clientWidth + 1;
    if (!x && !y) return null;
    const left = Math.abs(el.scrollLeft);
    return {
      y,
      x,
      up: y ? el.scrollTop : 0,
      down: y ? Math.max(0, el.scrollHeight - el.clientHeight - el.scrollTop) : 0,
      left: x ? left : 0,
      right: x ? Math.max(0, el.scrollWidth - el.clientWidth - left) : 0,
    };
  }

  const VERTICAL = new Set(["up", "down"]);

  function scrollsToward(room, direction) {
    return room !== null && (VERTICAL.has(direction) ? room.y : room.x);
  }

  // What lies wholly outside an area's visible box, each way it scrolls: the outermost boxes
  // there (a card, a row), each counted once; -1 when there is more but no whole box (half a
  // card). The digest counts the same way (core/eyes/scrolling.js), so the result of a
  // scroll and the next digest agree.
  const BEYOND_VISITS = 5000;
  function beyond(area, room) {
    const r = area.getBoundingClientRect();
    const top = r.top + area.clientTop;
    const left = r.left + area.clientLeft;
    const bottom = top + area.clientHeight;
    const right = left + area.clientWidth;
    const out = { up: 0, down: 0, left: 0, right: 0, capped: false };
    const stack = [...(area.shadowRoot || area).children];
    let visits = 0;
    while (stack.length && visits < BEYOND_VISITS) {
      const n = stack.pop();
      visits++;
      const c = n.getBoundingClientRect();
      let where = null;
      if (c.width >= 1 || c.height >= 1) {
        if (room.y && c.top >= bottom - 1) where = "down";
        else if (room.y && c.bottom <= top + 1) where = "up";
        else if (room.x && c.left >= right - 1) where = "right";
        else if (room.x && c.right <= left + 1) where = "left";
      }
      if (where === null) stack.push(...(n.shadowRoot || n).children);
      else if (!n.checkVisibility || n.checkVisibility({ opacityProperty: true, visibilityProperty: true })) out[where]++;
    }
    for (const way of ["up", "down", "left", "right"]) if (!out[way] && room[way] > 1) out[way] = -1;
    out.capped = visits >= BEYOND_VISITS;
    return out;
  }

  function areaState(area) {
    const room = scrollRoom(area);
    return { room, items: room ? beyond(area, room) : null, describe: describe(area), name: accessibleName(area) };
  }

  Object.assign(api, {
    // Before a hover: what is shown now in the element's document, and its title tooltip.
    hoverBaseline(index) {
      const el = element(index);
      const doc = el.ownerDocument;
      if (hoverBefore) hoverBefore.observer.disconnect();
      const root = neighbourhood(el);
      const inserted = [];
      const observer = new MutationObserver((records) => {
        for (const record of records) {
          for (const node of record.addedNodes) if (node.nodeType === 1 && inserted.length < 50) inserted.push(node);
        }
      });
      observer.observe(doc, { childList: true, subtree: true });
      hoverBefore = { doc, root, inserted, observer, seen: new WeakSet(within([root]).filter(shown)) };
      // The settle counts the page's clock from the move (hover timers start there).
      lastInputAt = inputEndAt = performance.now();
      const moved = () => {
        lastInputAt = inputEndAt = performance.now();
      };
      doc.defaultView.addEventListener("pointermove", moved, { capture: true, once: true });
      const titled = el.closest("[title]");
      return { title: titled ? clip(titled.getAttribute("title"), 100) : "" };
    },

    // After it: the outermost elements shown now that were not shown before (a menu, a
    // tooltip), in document order. Needs no element: the hovered one may be gone.
    hoverAppeared(_index) {
      const before = hoverBefore;
      hoverBefore = null;
      if (!before) return [];
      for (const record of before.observer.takeRecords()) {
        for (const node of record.addedNodes) if (node.nodeType === 1) before.inserted.push(node);
      }
      before.observer.disconnect();
      if (!before.doc.defaultView) return [];
      const fresh = within([before.root, ...before.inserted]).filter(
        (el) => shown(el) && !before.seen.has(el) && !visuallyHidden(el),
      );
      const freshSet = new Set(fresh);
      const roots = fresh.filter((el) => !freshSet.has(el.parentElement));
      return roots.slice(0, 4).map(appearedItem);
    },

    // Scroll the content of the scrolling area [index], or of the nearest one around it that
    // scrolls along `direction`, by `pages` of its visible size. With no direction: toward
    // where it has more. {scrolled: false} when there is no such area.
    scrollArea(index, direction, pages) {
      const el = element(index);
      let area = el;
      let room = scrollRoom(el);
      if (direction) {
        while (area && !scrollsToward(room, direction)) {
          area = composedParent(area);
          room = area && area.nodeType === 1 ? scrollRoom(area) : null;
        }
      } else if (room) {
        // Toward where it has more, as the digest's note promises ("3 more above:
        // scroll{index: 7}"): down first, then right, up, left.
        direction = ["down", "right", "up", "left"].find((way) => room[way] > 1) || null;
      }
      if (!area || !direction || !scrollsToward(room, direction)) {
        return { scrolled: false };
      }
      let intoView = false;
      if (!inViewport(topRect(area))) {
        area.scrollIntoView({ block: "nearest", inline: "nearest", behavior: "instant" });
        intoView = true;
      }
      const vertical = VERTICAL.has(direction);
      const sign = direction === "up" || direction === "left" ? -1 : 1;
      const size = vertical ? area.clientHeight : area.clientWidth;
      const step = Math.max(1, Math.round(size * 0.9 * pages));
      const before = vertical ? area.scrollTop : area.scrollLeft;
      area.scrollBy({ top: vertical ? sign * step : 0, left: vertical ? 0 : sign * step, behavior: "instant" });
      const after = vertical ? area.scrollTop : area.scrollLeft;
      return {
        scrolled: true,
        direction,
        moved: Math.abs(after - before),
        itself: area === el,
        intoView,
        after: areaState(area),
      };
    },
  });

  return api;
})()
