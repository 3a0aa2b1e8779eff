// @ts-check
// The hands' page script, stage: listeners of our world at the moment of input, which the
// press and key guards share.
//
// Listeners in our isolated world see the page's own events: they record which element
// really received a press or a key, and stop what was meant for another element.
//
// core/hands/ctx.py joins the stages in the order of its PAGE_PARTS inside one closure,
// with `judgeSensitive` (core/world/sensitive.js) in scope, and runs it in handrail's
// isolated world (core/world/), where the eyes' script (core/eyes/*.js) has defined
// globalThis.__handrail: the stages share their top-level names, and the page sees none
// of them.

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
