// @ts-check
// The eyes, stage: visibility and geometry helpers.
// One part of handrail's page script: core/eyes/script.py joins core/eyes/*.js (in the order
// of its EYES_PARTS) inside one closure, so these names are shared with the other parts and
// invisible to the page (the script runs in our isolated world).
// ---- small helpers --------------------------------------------------------------------
function parseRgb(s) {
  const m = /rgba?\(([\d.]+),?\s*([\d.]+),?\s*([\d.]+)(?:[,/]\s*([\d.]+%?))?\)/.exec(s);
  if (!m) return null;
  let a = m[4] === undefined ? 1 : parseFloat(m[4]);
  if (m[4] && m[4].endsWith("%")) a /= 100;
  return [+m[1], +m[2], +m[3], a];
}
function clipsOverflow(st) {
  return st.overflowX !== "visible" || st.overflowY !== "visible";
}
function intersects(c, x, y, w, h) {
  return x < c[2] && x + w > c[0] && y < c[3] && y + h > c[1];
}
function intersect(c, x, y, w, h) {
  return [Math.max(c[0], x), Math.max(c[1], y), Math.min(c[2], x + w), Math.min(c[3], y + h)];
}
function clipHidesAll(st) {
  // The "visually hidden" patterns: clip: rect(0 0 0 0), clip-path: inset(50%) / circle(0).
  const clip = st.clip;
  if (clip && clip !== "auto" && /rect\(/.test(clip)) {
    const n = clip.match(/-?[\d.]+/g) || [];
    if (n.length === 4 && (+n[2] - +n[0] <= 1 || +n[1] - +n[3] <= 1)) return true;
  }
  const cp = st.clipPath;
  if (cp && cp !== "none") {
    if (/inset\(\s*(50%|[5-9]\d%|100%)/.test(cp)) return true;
    if (/circle\(\s*0(px|%)?[\s)]/.test(cp) || /ellipse\(\s*0(px|%)?\s+0/.test(cp)) return true;
  }
  return false;
}
