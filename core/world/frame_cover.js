// @ts-check
// In the world holding an iframe (core/world/geometry.py calls it there with the iframe's
// index and a point of that world's viewport): what receives a click at (x, y) when it is
// not the iframe itself, described in a few words, or null when the iframe gets it (open
// shadow roots descended like the hands' hit test).
(function frameCover(i, x, y) {
  const el = globalThis.__handrail.element(i);
  let hit = el.ownerDocument.elementFromPoint(x, y);
  for (let k = 0; hit && hit.shadowRoot && k < 32; k++) {
    const inner = hit.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  if (hit === el) return null;
  if (!hit) return "nothing (the point is outside the frame's parent)";
  const text = (hit.getAttribute("aria-label") || /** @type {HTMLElement} */ (hit).innerText || hit.textContent || "")
    .replace(/\s+/g, " ").trim().slice(0, 60);
  const id = hit.id ? ` id=${hit.id.slice(0, 40)}` : "";
  return `<${hit.tagName.toLowerCase()}${id}>` + (text ? ` "${text}"` : "");
})
