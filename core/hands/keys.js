// @ts-check
// The hands' page script, stage: the key guard (keys typed only while the field has the
// focus).
//
// core/hands/ctx.py joins the stages in the order of its PAGE_PARTS inside one closure,
// with `judgeSensitive` (core/world/sensitive.js) in scope, and runs it in handrail's
// isolated world (core/world/), where the eyes' script (core/eyes/*.js) has defined
// globalThis.__handrail: the stages share their top-level names, and the page sees none
// of them.

let keyGuard = null;

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
