// @ts-check
// The hands' page script, last stage: the one `api` object the closure returns, the calls
// core/hands/ctx.py js() makes by name. Each takes JSON arguments and returns a JSON value;
// an element argument is the index the digest showed, which __handrail.element turns into
// the element (or throws the stale/unknown error core/world/ turns into a message for the
// model). Coordinates returned to Python are CSS pixels in the top-level viewport
// of the document the script runs in (what Input.dispatchMouseEvent takes): elements inside
// same-origin iframes have their frames' offsets added. In a cross-origin frame the script
// runs in that frame's own world, and ctx.py js() maps its answers to the top level.
//
// core/hands/ctx.py joins the stages in the order of its PAGE_PARTS inside one closure,
// with `judgeSensitive` (core/world/sensitive.js) in scope, and runs it in handrail's
// isolated world (core/world/), where the eyes' script (core/eyes/*.js) has defined
// globalThis.__handrail: the stages share their top-level names, and the page sees none
// of them.

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

  pressAgain(index, x, y) {
    return armPress(element(index), x, y);
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
    return focusedSensitivity();
  },

  target(index) {
    return targetOf(element(index));
  },

  toggleState(index) {
    return toggleOf(element(index));
  },

  async aimReadings(index, options) {
    return aimReadings(index, options);
  },

  focusDescription() {
    return focusDescription();
  },

  fieldInfo(index) {
    return fieldInfo(element(index));
  },

  // A code editor draws what it was typed on its next frames (Monaco on an animation frame):
  // read after two, or after 100 ms where frames are not drawn (a hidden tab).
  async fieldInfoDrawn(index) {
    const frame = () => new Promise((resolve) => {
      requestAnimationFrame(resolve);
      setTimeout(resolve, 100);
    });
    await frame();
    await frame();
    return fieldInfo(element(index));
  },

  pasteText(index, text) {
    return pasteText(element(index), text);
  },

  focusField(index) {
    return focusField(element(index));
  },

  caretToEnd(index) {
    placeCaretAtEnd(editableOf(element(index)));
  },

  selectAll(index) {
    return selectAll(element(index));
  },

  insertText(index, text, clear) {
    return insertText(element(index), text, clear);
  },

  setValue(index, value) {
    setNativeValue(editableOf(element(index)), value);
    return fieldValue(editableOf(element(index)));
  },

  selectOption(index, wanted) {
    return selectOption(element(index), wanted);
  },

  scrollBy(direction, pages) {
    return scrollPage(direction, pages);
  },

  scrollToElement(index) {
    return scrollToElement(element(index));
  },

  fileInput(index) {
    return fileInput(element(index));
  },

  fileNames(index) {
    return fileNames(element(index));
  },

  nativeInput(index, text, apply) {
    return nativeInput(element(index), text, apply);
  },

  watchMotion() {
    watchMotion();
    return true;
  },

  async settleAfterInput(ms, motionMs, withProbe) {
    return settleAfterInput(ms, motionMs, withProbe);
  },

  hoverBaseline(index) {
    return hoverBaseline(element(index));
  },

  hoverAppeared(_index) {
    return hoverAppeared();
  },

  pointHit(x, y) {
    return pointHit(x, y);
  },

  dropPoint(index) {
    return dropPoint(element(index));
  },

  dropCheck(source, dest, x, y) {
    return dropCheck(source === null ? null : element(source), element(dest), x, y);
  },

  async dragFrame() {
    return dragFrame();
  },

  dragBaseline(source, dest) {
    return dragBaseline(source === null ? null : element(source), dest === null ? null : element(dest));
  },

  dragEffect() {
    return dragEffect();
  },

  async prepareAt(index, x, y) {
    return prepareAt(element(index), x, y);
  },

  scrollArea(index, direction, pages) {
    return scrollArea(element(index), direction, pages);
  },
};
