// @ts-check
// In the world holding an iframe (core/world/geometry.py calls it there with the iframe's
// index): where the frame's viewport starts inside the iframe's border box, and that box's
// own (untransformed) size, in the iframe's CSS pixels.
(function frameInset(i) {
  const el = /** @type {HTMLElement} */ (globalThis.__handrail.element(i));
  const st = el.ownerDocument.defaultView.getComputedStyle(el);
  return [el.clientLeft + parseFloat(st.paddingLeft), el.clientTop + parseFloat(st.paddingTop),
          el.offsetWidth, el.offsetHeight];
})
