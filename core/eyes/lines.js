// @ts-check
// The eyes, stage: the page's text as lines (text nodes, blocks, inline SVG's text).
// One part of handrail's page script: core/eyes/script.py joins core/eyes/*.js (in the order
// of its EYES_PARTS) inside one closure, so these names are shared with the other parts and
// invisible to the page (the script runs in our isolated world).
//
// This stage owns WalkState.buf (walk.js): the text of the current block, collected from its
// text nodes and made one escaped line (or several, at maxLine) by flush() at each block
// boundary. Text a person cannot see is counted when it reads like an instruction, never
// printed. Text inside an element being described goes to the context's `name` instead.

// The current block's text as lines (nothing when it is white space only).
/** @param {WalkState} ws */
function flush(ws) {
  if (!ws.buf) return;
  const s = clean(ws.buf);
  ws.buf = "";
  if (!s) return;
  if (ROBOT_TEXT.test(s)) ws.signals.captcha.push({ kind: "generic", where: cut(s, 80) });
  if (!ws.includeText) return;
  if (ws.lastName !== null && s === ws.lastName) return; // a label or tooltip repeating a name
  let e = esc(s);
  if (/^[\s*~]*\[/.test(e)) e = e.replace("[", "&#91;"); // only our lines start with "["
  // ... and our frame headers with `frame "` / `frame (`: a page cannot fake one.
  if (/^frame\s*["(]/i.test(e)) e = e.replace(/^(frame\s*)"/i, "$1“").replace(/^(frame\s*)\(/i, "$1❨");
  const maxLine = ws.maxLine;
  for (let k = 0; k < e.length; k += maxLine) {
    let part = e.slice(k, k + maxLine);
    if (k > 0 && /^[\s*~]*\[/.test(part)) part = part.replace("[", "&#91;");
    ws.lines.push({ s: part, el: null, dist: ws.bufDist, above: ws.bufAbove });
  }
  ws.lastName = null;
}

// A text node: into the block's text, the name being collected, or (hidden) the count.
/**
 * @param {WalkState} ws
 * @param {Text} n
 * @param {WalkContext} c
 */
function textNode(ws, n, c) {
  const s = n.data;
  if (c.name && !c.far && !c.suppress && (!c.st || c.st.visibility === "visible")) {
    // A name holds text out of sight (clipped, indented away, 1px, transparent) as the
    // accessible name does; only what is out of the accessibility tree never reached here.
    c.name.push(s);
    return;
  }
  if (!c.vis || c.far) {
    if (!c.vis && s.length > 8 && INSTR.test(s)) ws.hidden++;
    return;
  }
  if (c.suppress) return;
  if (/^\s*$/.test(s)) {
    if (c.name) c.name.push(" ");
    else if (ws.buf) ws.buf += " ";
    return;
  }
  if (textHidden(c)) {
    if (INSTR.test(s)) ws.hidden++;
    return;
  }
  if (c.name) {
    c.name.push(s);
    return;
  }
  if (!ws.buf) {
    ws.bufDist = c.dist;
    ws.bufAbove = c.above;
  }
  ws.buf += s;
}

// Is the text of the element whose context `c` is drawn so that no one reads it (too
// small, pushed away, transparent, the background's colour)? Once per element.
/** @param {WalkContext} c */
function textHidden(c) {
  if (c.textHiddenCache !== undefined) return c.textHiddenCache;
  const st = c.st;
  let hide = false;
  if (st) {
    if (parseFloat(st.fontSize) < 1) hide = true;
    else if (parseFloat(st.textIndent) < -500) hide = true;
    else {
      const col = parseRgb(st.color);
      if (col && col[3] < 0.05) hide = true;
      else if (col && c.bg) {
        const d = Math.abs(col[0] - c.bg[0]) + Math.abs(col[1] - c.bg[1]) + Math.abs(col[2] - c.bg[2]);
        if (d < 10) hide = true;
      }
    }
  }
  c.textHiddenCache = hide;
  return hide;
}

// `t` as a block of its own; its lines drawn at `at` ([x, y], for an SVG's reading order).
/**
 * @param {WalkState} ws
 * @param {string} t
 * @param {WalkContext} c
 * @param {number[] | null} at
 */
function textLine(ws, t, c, at) {
  flush(ws);
  ws.buf = t;
  ws.bufDist = c.dist;
  ws.bufAbove = c.above;
  const from = ws.lines.length;
  flush(ws);
  if (at) for (let k = from; k < ws.lines.length; k++) ws.lines[k].at = at;
}

// The last `n` text lines so far, joined (what the page says just before a frame).
/**
 * @param {WalkState} ws
 * @param {number} n
 */
function lastText(ws, n) {
  flush(ws);
  const lines = ws.lines;
  const out = [];
  for (let k = lines.length - 1; k >= 0 && out.length < n; k--) {
    if (!lines[k].el && lines[k].slot === undefined) out.unshift(lines[k].s);
  }
  return cut(out.join(" "), 300);
}

// ---- inline SVG: its <text> and <title> are read like the page's text ----------------
// A drawing with no control inside reads in the order a person reads it (top to bottom,
// left to right); one with controls keeps document order, so each control stays next to
// its own label.
/**
 * @param {WalkState} ws
 * @param {Element} el
 * @param {WalkContext} cc
 */
function svgRoot(ws, el, cc) {
  const label = clean(el.getAttribute("aria-label") || "");
  if (label) {
    if (cc.name) cc.name.push(" " + label + " ");
    else if (el.getAttribute("role") === "img") textLine(ws, label, cc, null);
    return;
  }
  if (cc.name) return walkChildren(ws, el, cc);
  const lines = ws.lines;
  flush(ws);
  const from = lines.length;
  walkChildren(ws, el, cc);
  flush(ws);
  const part = lines.slice(from);
  if (part.length < 2 || part.some((l) => l.el || !l.at || l.slot !== undefined)) return;
  part.sort((p, q) => (Math.abs(p.at[1] - q.at[1]) > 4 ? p.at[1] - q.at[1] : p.at[0] - q.at[0]));
  lines.splice(from, part.length, ...part);
}

// An SVG <text> at (x, y): its lines are placed there for svgRoot()'s reading order.
/**
 * @param {WalkState} ws
 * @param {Element} el
 * @param {WalkContext} cc
 * @param {number} x
 * @param {number} y
 */
function svgText(ws, el, cc, x, y) {
  if (cc.name) {
    cc.name.push(" ");
    walkChildren(ws, el, cc);
    cc.name.push(" ");
    return;
  }
  const lines = ws.lines;
  flush(ws);
  const from = lines.length;
  walkChildren(ws, el, cc);
  flush(ws);
  for (let k = from; k < lines.length; k++) if (!lines[k].el) lines[k].at = [x, y];
}

// An SVG <title>: never rendered, yet what a person's tooltip and reader say.
/**
 * @param {WalkState} ws
 * @param {Element} el
 * @param {WalkContext} c
 */
function svgTitle(ws, el, c) {
  if (!c.vis || c.far || c.suppress) return;
  const t = clean(el.textContent || "");
  if (!t) return;
  if (c.name) {
    c.name.push(" " + t + " ");
    return;
  }
  const parent = parentOf(el);
  const b = parent ? rectOf(parent) : null;
  textLine(ws, t, c, b ? [b.left + c.ox, b.top + c.oy] : null);
}
