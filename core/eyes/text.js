// @ts-check
// The eyes, stage: escaping page strings.
// One part of handrail's page script: core/eyes/script.py joins core/eyes/*.js (in the order
// of its EYES_PARTS) inside one closure, so these names are shared with the other parts and
// invisible to the page (the script runs in our isolated world).
// ---- escaping page strings ----------------------------------------------------------
// Control and invisible formatting characters (bidi overrides, zero-width) are dropped so
// a page cannot hide or reorder what the person and the model read.
// eslint-disable-next-line no-control-regex
const INVISIBLE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
const ROLE_MARK = /\b(human|assistant|system|user|developer)(\s*):/gi;

function clean(s) {
  return s.replace(INVISIBLE, "").replace(/\s+/g, " ").trim();
}
// `<`/`>` become guillemets (no tag, no envelope can be closed or faked), `[12]` becomes
// `［12］` (the page cannot name an index), `Human:` gets a lookalike colon.
function esc(s) {
  return s
    .replace(/</g, "‹")
    .replace(/>/g, "›")
    .replace(/\[(\s*\d+\s*)\]/g, "［$1］")
    .replace(ROLE_MARK, "$1$2꞉");
}
function cut(s, n) {
  return s.length > n ? s.slice(0, n - 1) + "…" : s;
}
function attrVal(v, n = 80) {
  const s = esc(cut(clean(v), n));
  return /^[\w\-./:@%+,]+$/.test(s) && s.length > 0 ? s : `"${s.replace(/"/g, '\\"')}"`;
}
function quoted(v, n = 80) {
  return `"${esc(cut(clean(v), n)).replace(/"/g, '\\"')}"`;
}

