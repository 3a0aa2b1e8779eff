// @ts-check
// The eyes, stage: serialise (repeats, notes, the size cap).
// One part of handrail's page script: core/eyes/script.py joins core/eyes/*.js (in the order
// of its EYES_PARTS) inside one closure, so these names are shared with the other parts and
// invisible to the page (the script runs in our isolated world).
// The walk's lines as the digest text: long runs of a repeated line collapsed, notes for
// what lies beyond the margin, and the size cap (farthest first), always announced.
// A name that ends its line needs no closing tag: `[3]<a href=/help>Help`. One that text
// follows on its line keeps it (`[39]<a>Reykjavik</a> | Jan. 9, 2027`), and so does one with
// a note after it. Page text never holds a tag of its own (text.js esc), so a "</x>" that
// ends a line is always ours.
const CLOSE_AT_END = /<\/[a-z][a-z0-9-]*>$/;

function serialise(w, opts) {
  const lines = w.lines;
  const beyond = w.beyond;
  const maxChars = opts.maxChars || 40000;
  const includeText = opts.includeText !== false;

  // Long runs of the same text line collapse to one line and a note.
  const out = [];
  for (let k = 0; k < lines.length; k++) {
    const l = lines[k];
    if (!l.el) {
      let j = k;
      while (j + 1 < lines.length && !lines[j + 1].el && lines[j + 1].s === l.s) j++;
      if (j - k >= 2) {
        out.push(l);
        out.push({ s: `[… the line above repeats ${j - k} more times]`, el: null, dist: l.dist, above: l.above, note: true });
        k = j;
        continue;
      }
    }
    out.push(l);
  }

  // Notes for what lies beyond the margin.
  // 12,345 (toLocaleString would load the locale's data on a cold world: ~20 ms).
  const fmt = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const beyondNote = (els, chars, where, how) => {
    if (!els && !chars) return null;
    const what = [];
    if (els) what.push(`${fmt(els)} more interactive element${els === 1 ? "" : "s"}`);
    if (chars) what.push(`about ${fmt(chars)} characters of text`);
    return `[… ${what.join(" and ")} ${where} the viewport: ${how} to see them]`;
  };
  const noteAbove = beyondNote(beyond.aboveEl, includeText ? beyond.aboveText : 0, "above", "scroll up");
  const noteBelow = beyondNote(beyond.belowEl, includeText ? beyond.belowText : 0, "below", "scroll down");

  // The size cap: drop what is farthest from the viewport first, and say so.
  let total = 0;
  for (const l of out) total += l.s.length + 1;
  const reserve = 600 + (noteAbove ? noteAbove.length + 1 : 0) + (noteBelow ? noteBelow.length + 1 : 0);
  let truncated = null;
  const dropped = new Set();
  if (total + reserve > maxChars) {
    const order = out.map((l, k) => k);
    const rank = (l) => (l.dist > 0 ? 0 : l.el || l.header ? 2 : 1);
    order.sort((p, q) => {
      const lp = out[p], lq = out[q];
      const rp = rank(lp), rq = rank(lq);
      if (rp !== rq) return rp - rq;
      if (rp === 0 && lp.dist !== lq.dist) return lq.dist - lp.dist;
      return q - p;
    });
    const cutFrames = new Set(); // frames whose contents were cut, in part or whole
    let cutEl = 0, cutElInView = 0, cutAbove = 0, cutBelow = 0, cutText = 0, cutTextChars = 0;
    for (const k of order) {
      if (total + reserve <= maxChars) break;
      const l = out[k];
      dropped.add(k);
      total -= l.s.length + 1;
      if (l.frameLabel) cutFrames.add(l.frameLabel);
      if (l.header) continue;
      if (l.el) {
        cutEl++;
        if (l.dist === 0) cutElInView++;
        else if (l.above) cutAbove++;
        else cutBelow++;
      } else if (!l.note) {
        cutText++;
        cutTextChars += l.s.length;
      }
    }
    const parts = [];
    if (cutEl) {
      const where = [];
      if (cutElInView) where.push(`${fmt(cutElInView)} in the viewport`);
      if (cutBelow) where.push(`${fmt(cutBelow)} below it`);
      if (cutAbove) where.push(`${fmt(cutAbove)} above it`);
      parts.push(`${fmt(cutEl)} interactive element${cutEl === 1 ? "" : "s"} (${where.join(", ")})`);
    }
    if (cutText) parts.push(`${fmt(cutText)} line${cutText === 1 ? "" : "s"} of text (${fmt(cutTextChars)} characters)`);
    const how = cutElInView || (cutText && !cutBelow && !cutAbove)
      ? "scroll down a little at a time (or scroll to an element) to see them"
      : "scroll toward them to see them";
    const fromFrames = cutFrames.size
      ? `, including from ${[...cutFrames].slice(0, 5).join(", ")}${cutFrames.size > 5 ? ` and ${cutFrames.size - 5} more frames` : ""}`
      : "";
    truncated = `[… cut to fit ${fmt(maxChars)} characters: left out ${parts.join(" and ")}${fromFrames}; ${how}]`;
  }

  const textLines = [];
  if (noteAbove) textLines.push(noteAbove);
  const listed = [];
  for (let k = 0; k < out.length; k++) {
    if (dropped.has(k)) continue;
    textLines.push(out[k].s.replace(CLOSE_AT_END, ""));
    const row = out[k].els;
    if (row) listed.push(...row);
    else if (out[k].el) listed.push(out[k].el);
  }
  if (noteBelow) textLines.push(noteBelow);
  if (truncated) textLines.push(truncated);
  // Elements folded into an ancestor's name never got a line; they are not "listed".
  const textOut = textLines.join("\n");
  return { text: textOut, listed, truncated, lines: textLines.length };
}
