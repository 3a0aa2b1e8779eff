// @ts-check
// The eyes, stage: frames (walked inline when our world can reach them; else read through
// CDP and merged into the top document's lines).
// One part of handrail's page script: core/eyes/script.py joins core/eyes/*.js (in the order
// of its EYES_PARTS) inside one closure, so these names are shared with the other parts and
// invisible to the page (the script runs in our isolated world).
//
// A same-origin frame's document is walked by the walk itself (frameOf), in the frame's
// place. A cross-origin frame is a document our world in the top frame cannot touch: the
// walk leaves a slot where it stands (WalkState.slots; farFrame for one beyond the listing
// margin, a slot without a line); core/eyes/snapshot.py runs frameWalk() in our world inside
// that frame (through the frame's own CDP session), recursively for frames inside it, and
// passes the tree to finish() in the top world, which puts each frame's lines into its slot
// under a header line, gives its elements indexes from the tab's one counter and merges what
// the detectors found there.

// Frame elements by index: index -> {key, local}. The key names the frame's document
// (frame id and world generation); local is the index our world in that frame gave it.
const frameIdx = new Map();
const frameIdxOf = new Map(); // `${key}#${local}` -> index
let pendingWalk = null; // the top walk waiting for its frames

// ---- in the walk: a frame element ----------------------------------------------------------
// A listed frame (visible, within the margin): walked inline when its document is ours to
// read, else a slot and a line where its lines will go. Either way its URL tells the
// detectors of CAPTCHA and payment frames.
/**
 * @param {WalkState} ws
 * @param {any} el the <iframe> or <frame>
 * @param {CSSStyleDeclaration} st its computed style
 * @param {WalkContext} cc the context it hands its content
 * @param {number} x its box in top-level viewport coordinates: left
 * @param {number} y top
 * @param {number} w width
 * @param {number} h height
 * @param {boolean} selfVisible
 * @param {boolean} far
 */
function frameOf(ws, el, st, cc, x, y, w, h, selfVisible, far) {
  if (!selfVisible || far) return;
  let src = el.src || el.getAttribute("src") || "about:blank";
  let inner = null;
  try {
    inner = el.contentDocument;
  } catch (_e) {
    inner = null;
  }
  for (const [re, kind] of CAPTCHA_SRC) {
    if (/** @type {RegExp} */ (re).test(src)) ws.signals.captcha.push({ kind, where: cut(src, 120) });
  }
  if (PAYMENT_SRC.test(src) && !/^about:/.test(src)) ws.signals.paymentFrames.push(cut(src, 200));
  if (!inner || !inner.documentElement) return frameSlot(ws, el, st, cc, src, [x, y, w, h]);
  const view = inner.defaultView;
  if (!view || !inner.body) return;
  ws.frames.push({ url: inner.URL, crossOrigin: false, index: null, rect: [x, y, w, h] });
  flush(ws);
  visit(ws, inner.body, frameContext(el, st, cc, inner, x, y));
  flush(ws);
  countComments(ws, inner);
}

// A frame our world cannot reach (another origin): core/eyes/snapshot.py reads it through
// CDP with our world inside it and hands its lines to finish(), which puts them here.
/**
 * @param {WalkState} ws
 * @param {any} el
 * @param {CSSStyleDeclaration} st
 * @param {WalkContext} cc
 * @param {string} src
 * @param {number[]} rect its box [x, y, w, h]
 */
function frameSlot(ws, el, st, cc, src, rect) {
  const [x, y] = rect;
  const ox = x + el.clientLeft + parseFloat(st.paddingLeft);
  const oy = y + el.clientTop + parseFloat(st.paddingTop);
  const cw = el.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight);
  const ch = el.clientHeight - parseFloat(st.paddingTop) - parseFloat(st.paddingBottom);
  const slot = {
    slot: ws.slots.length,
    index: indexOf(el),
    name: accessibleName(el),
    src: cut(src, 300),
    ox, oy, clip: intersect(cc.clip, ox, oy, cw, ch), rect,
    dist: cc.dist, above: cc.above, vw: ws.vw, vh: ws.vh,
    // The frame or something around it is transformed: core/eyes/snapshot.py maps it by quads.
    transformed: !!cc.tf,
    // What the page says just before the frame ("enter your card below"): for the
    // detectors when the frame itself cannot be read.
    context: lastText(ws, 2),
  };
  ws.slots.push(slot);
  flush(ws);
  ws.lines.push({ s: "", el: null, dist: cc.dist, above: cc.above, slot: slot.slot });
  ws.frames.push({ url: src, crossOrigin: true, index: null, rect: rect.slice(), name: slot.name });
}

// The context a same-origin frame's document starts with: the frame's content box as its
// offset and clip.
/**
 * @param {any} el
 * @param {CSSStyleDeclaration} st
 * @param {WalkContext} cc
 * @param {Document} inner
 * @param {number} x
 * @param {number} y
 * @returns {WalkContext}
 */
function frameContext(el, st, cc, inner, x, y) {
  const ox = x + el.clientLeft + parseFloat(st.paddingLeft);
  const oy = y + el.clientTop + parseFloat(st.paddingTop);
  const box = intersect(cc.clip, ox, oy, el.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight), el.clientHeight - parseFloat(st.paddingTop) - parseFloat(st.paddingBottom));
  // Inside a frame mapped by its quads (scaled, rotated...): the inner document's points
  // move by its content box's offset in the holder's own coordinates, then through the
  // holder's map; a translation in top-level coordinates alone would misplace them.
  let m = null;
  if (cc.m) {
    const b = rectOf(el);
    const dx = b.left + el.clientLeft + parseFloat(st.paddingLeft);
    const dy = b.top + el.clientTop + parseFloat(st.paddingTop);
    const p = cc.m;
    m = [p[0], p[1], p[0] * dx + p[1] * dy + p[2], p[3], p[4], p[3] * dx + p[4] * dy + p[5]];
  }
  return {
    doc: inner, view: inner.defaultView, ox, oy, m, tf: cc.tf, clip: box, absClip: box, fixedClip: box, bg: null, vis: true,
    st: null, name: null, fold: false, suppress: false, frame: inner.URL, shadow: false,
    inInteractive: false, dist: cc.dist, above: cc.above, far: false,
  };
}

// A cross-origin frame beyond the listing margin is not listed, but the detectors still
// look inside it (a sign-in or card frame below the fold still hands over): a slot
// without a line, whose frame core/eyes/snapshot.py reads like the others.
/**
 * @param {WalkState} ws
 * @param {any} f the <iframe>
 * @param {boolean} above
 */
function farFrame(ws, f, above) {
  if (ws.farFrames >= MAX_FAR_FRAMES) return;
  let inner = null;
  try {
    inner = f.contentDocument;
  } catch (_e) {
    inner = null;
  }
  if (inner) return;
  const b = rectOf(f);
  if (b.width < 1 || b.height < 1) return;
  ws.farFrames++;
  const F = ws.cdpFrame;
  const ox = b.left + (F ? F.ox : 0) + f.clientLeft;
  const oy = b.top + (F ? F.oy : 0) + f.clientTop;
  const box = [ox, oy, ox + f.clientWidth, oy + f.clientHeight];
  ws.slots.push({
    slot: ws.slots.length, index: indexOf(f), name: accessibleName(f),
    src: cut(f.src || f.getAttribute("src") || "about:blank", 300),
    ox, oy, clip: box, rect: [b.left, b.top, b.width, b.height], dist: 2, above,
    vw: ws.vw, vh: ws.vh, focused: false, context: "", far: true,
  });
}

// In our world inside a cross-origin frame: the walk with the top-level geometry core/eyes/snapshot.py
// passes (opts.frame), as lines and facts, not yet serialised.
function frameWalk(opts) {
  const w = walk(opts);
  seenUpTo = next;
  return {
    url: location.href,
    title: document.title,
    lines: w.lines.map((l) => ({
      s: l.s, el: l.el, dist: l.dist, above: l.above, slot: l.slot, note: l.note,
    })),
    slots: w.slots,
    signals: w.signals,
    hidden: w.hidden,
    beyond: w.beyond,
    visited: w.visited,
    interactiveSeen: w.interactiveSeen,
    frames: w.frames,
  };
}

function frameIndex(key, local) {
  const id = `${key}#${local}`;
  let i = frameIdxOf.get(id);
  if (i === undefined) {
    i = next++;
    frameIdxOf.set(id, i);
    frameIdx.set(i, { key, local });
  }
  return i;
}

// `frame "Secure card payment" (pay.example)`: the frame's accessible name and its host.
function frameLabel(name, url) {
  let host = "";
  try {
    host = new URL(url).host;
  } catch (_e) {
    host = "";
  }
  const n = name ? `"${esc(cut(clean(name), 80)).replace(/"/g, "'")}"` : "";
  const h = host ? `(${esc(host)})` : url && !/^about:/.test(url) ? `(${esc(cut(url, 60))})` : "";
  return ["frame", n, h].filter(Boolean).join(" ");
}

const PAYMENT_WORDS =
  /\b(pay(ment)?s?|card|checkout|billing|credit|debit|stripe|paypal|adyen|braintree|klarna|cvc|cvv)\b/i;
const SIGNIN_WORDS = /\b(sign.?in|log.?in|password|passcode|account|authenticat\w*|sso|oauth|identity)\b/i;
const CAPTCHA_WORDS = /captcha|recaptcha|hcaptcha|turnstile|not a robot|human verification|are you human/i;

// What a frame is for, judged from what we can know without reading it.
function frameKinds(texts) {
  const hay = texts.filter(Boolean).join(" ");
  const kinds = [];
  if (CAPTCHA_WORDS.test(hay)) kinds.push("captcha");
  if (PAYMENT_WORDS.test(hay) || PAYMENT_SRC.test(hay)) kinds.push("payment");
  if (SIGNIN_WORDS.test(hay)) kinds.push("signin");
  return kinds;
}

// Put the frames' lines (tree: slot number -> frame result from core/eyes/snapshot.py) into the
// pending top walk, then serialise it as snapshot() would have.
function finish(tree, opts) {
  const w = pendingWalk;
  pendingWalk = null;
  if (!w) throw new Error("handrail: no walk is waiting for its frames");
  const lines = [];
  const frameInfos = w.frames.filter((f) => !f.crossOrigin);
  const merge = (src, depth, slots, results) => {
    for (const l of src) {
      if (l.slot === undefined) {
        lines.push(depth ? indent(l, depth) : l);
        continue;
      }
      const slot = slots[l.slot];
      const got = results[l.slot] || { unreadable: true, url: slot.src };
      mergeFrame(slot, got, depth + 1);
    }
    // Frames beyond the listing margin: no lines, but what the detectors found there.
    for (const slot of slots) {
      if (slot.far && results[slot.slot]) mergeFar(slot, results[slot.slot]);
    }
  };
  const mergeFar = (slot, got) => {
    const url = got.url || slot.src;
    const label = frameLabel(slot.name, url);
    const kinds = frameKinds([slot.name, url, got.title]);
    if (got.blocked) {
      (w.signals.blockedFrames = w.signals.blockedFrames || []).push({
        label, host: hostOf(url), url: cut(url, 200), kinds,
      });
      return;
    }
    if (!got.lines) return;
    mergeSignals(got, label, url, kinds);
    for (const s of got.slots || []) {
      const child = (got.children || {})[s.slot];
      if (child) mergeFar(s, child);
    }
  };
  const mergeSignals = (got, label, url, kinds) => {
    const where = (local) => (local === "page" ? label : local === "shadow root" ? `a shadow root in ${label}` : `${local} in ${label}`);
    const sig = got.signals;
    for (const k of ["password", "otp", "payment"]) {
      for (const f of sig[k]) {
        w.signals[k].push({ index: frameIndex(got.key, f.index), name: f.name, where: where(f.where) });
      }
    }
    for (const c of sig.captcha) w.signals.captcha.push({ kind: c.kind, where: `${c.where} in ${label}` });
    for (const u of sig.paymentFrames) w.signals.paymentFrames.push(u);
    for (const b of sig.blockedFrames || []) {
      (w.signals.blockedFrames = w.signals.blockedFrames || []).push(b);
    }
    // A payment provider's frame by its URL, its name, its title, or card fields inside.
    const cardInside = sig.payment.length > 0;
    if (kinds.includes("payment") || cardInside) {
      w.signals.paymentFrames.push(`${label}${url && !/^about:/.test(url) ? ` ${cut(url, 160)}` : ""}`);
    }
    w.hidden += got.hidden || 0;
    w.visited += got.visited || 0;
    w.interactiveSeen += got.interactiveSeen || 0;
    for (const k of ["aboveEl", "belowEl", "aboveText", "belowText"]) w.beyond[k] += got.beyond[k] || 0;
  };
  const indent = (l, depth) => Object.assign({}, l, { s: "  ".repeat(depth) + l.s });
  const mergeFrame = (slot, got, depth) => {
    const url = got.url || slot.src;
    const label = frameLabel(slot.name, url);
    const pad = "  ".repeat(depth - 1);
    const info = {
      url, crossOrigin: true, index: null, rect: slot.rect, name: slot.name, label,
      blocked: !!got.blocked, unreadable: !!(got.unreadable || got.failed), depth, title: got.title || "",
    };
    frameInfos.push(info);
    const header = { s: "", el: null, dist: slot.dist, above: slot.above, frameLabel: label, header: true };
    lines.push(header);
    const kinds = frameKinds([slot.name, url, got.title, slot.context]);
    if (got.blocked || got.unreadable || got.failed) {
      const host = hostOf(url);
      header.s = got.blocked
        ? `${pad}${label}: blocked, not loaded (this run may not load ${esc(host || url)})`
        : got.failed
          ? `${pad}${label}: did not load`
          : `${pad}${label}: contents not readable`;
      if (got.blocked) {
        w.signals.blockedFrames = w.signals.blockedFrames || [];
        w.signals.blockedFrames.push({ label, host, url: cut(url, 200), kinds });
      } else if (kinds.includes("payment")) {
        // Unread, but by its name, URL or the text before it a payment form.
        w.signals.paymentFrames.push(`${label} ${cut(url, 160)}`);
      }
      return;
    }
    header.s = `${pad}${label}:`;
    for (const l of got.lines) {
      if (l.el) {
        const rec = l.el;
        const local = rec.index;
        const index = frameIndex(got.key, local);
        rec.index = index;
        rec.localIndex = local;
        rec.frameKey = got.key;
        rec.frame = rec.frame || url;
        rec.frameLabel = label;
        rec.isNew = !w.firstOfDoc && index >= w.newFrom;
        const mark = (rec.isNew ? "*" : "") + (rec.inView ? "" : "~");
        rec.line = rec.line.replace(/^[*~]*\[\d+\]/, `${mark}[${index}]`);
        // A scroll container's note names its index too (the last thing on its line).
        rec.line = rec.line.replace(/scroll\{index: \d+\}\)$/, `scroll{index: ${index}})`);
        l.s = rec.line;
      }
      l.frameLabel = label;
    }
    mergeSignals(got, label, url, kinds);
    merge(got.lines, depth, got.slots, got.children || {});
  };
  merge(w.lines, 0, w.slots, tree);
  w.lines = lines;
  w.frames = frameInfos;
  return result(w, opts);
}

function hostOf(url) {
  try {
    return new URL(url).host;
  } catch (_e) {
    return "";
  }
}
