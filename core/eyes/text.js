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
// Page text as the page has it, but for what could open a digest tag or an index
// reference: "<" before a letter, "/", "!" or "?" reads "&lt;", and "[" before a number in
// brackets "&#91;"; "&" before either of those (or "&amp;") reads "&amp;", so the escape
// is undone exactly (core/eyes/snapshot.py escape_page_text is the same rule in Python, and
// the system prompt says how the escapes read). A comparison ("price > 40", "a < b"), an
// arrow or a quote stays what it is. `Human:` gets a lookalike colon.
function esc(s) {
  return s
    .replace(/&(?=lt;|amp;|#91;)/g, "&amp;")
    .replace(/<(?=[A-Za-z/!?])/g, "&lt;")
    .replace(/\[(?=\s*\d+\s*\])/g, "&#91;")
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

