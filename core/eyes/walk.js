// The eyes, stage: collect roots and frames (the one-pass walk).
// One part of handrail's page script: core/world/world.py concatenates core/eyes/*.js (in the order
// of world.EYES_PARTS) inside one closure, so these names are shared with the other parts and
// invisible to the page (the script runs in our isolated world).
// Elements a person can act on: these tags, and any element one of ATTR_SELECTOR's
// attributes makes a control (the parts of SELECTOR after TAG_SELECTOR).
const TAG_SELECTOR = [
  "a[href]", "button", "input:not([type=hidden])", "select", "textarea", "summary",
].join(",");
const ATTR_SELECTOR = "[onclick],[contenteditable],[tabindex],[role]";
const SELECTOR = [
  TAG_SELECTOR, "[onclick]", "[contenteditable='']", "[contenteditable=true]",
  "[contenteditable=plaintext-only]", "[tabindex]:not([tabindex^='-'])",
  ...[...ROLES].map((r) => `[role=${r}]`),
].join(",");
// An element of `ATTR_SELECTOR` that SELECTOR takes for its attributes alone (not its tag).
function controlByAttribute(el) {
  return !el.matches(TAG_SELECTOR) && el.matches(SELECTOR);
}
// Fields beyond the listing margin the detectors still judge: a password, one-time-code or
// card field by its type or autocomplete (FAR_AUTOCOMPLETE), found by one query.
const FAR_SENSITIVE = "input[type=password i],input[autocomplete]";
const FAR_AUTOCOMPLETE = /password|one-time-code|cc-/;
// Above this many elements with one of ATTR_SELECTOR's attributes, a far run is counted with
// SELECTOR itself rather than by looking at each of them.
const MANY_ATTRS = 2000;
// A table or list with more rows than this has the rows far above the viewport counted as
// one run rather than visited one by one.
const MIN_RUN_ROWS = 32;
// Subtrees never read: not rendered, or not text a person reads.
const SKIP = new Set([
  "SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "META", "LINK", "TITLE", "BASE",
  "OPTION", "OPTGROUP", "DATALIST", "PARAM", "SOURCE", "TRACK",
]);
const SVG_NS = "http://www.w3.org/2000/svg";
// SVG leaves that draw and say nothing: not visited unless they may be controls.
const SVG_SHAPES = new Set(["path", "rect", "circle", "ellipse", "line", "polyline", "polygon", "use", "image", "stop"]);
// The attributes a digest line may carry, in the order it prints them.
const LINE_ATTRS = [
  "role", "type", "name", "placeholder", "value", "selected", "options", "multiple", "checked",
  "pressed", "haspopup", "expanded", "level", "current", "required", "disabled", "scrollable",
  "href", "target", "focused",
];
const ROW_PARENTS = new Set(["TBODY", "THEAD", "TFOOT", "TABLE", "UL", "OL", "DL"]);
const FAR_ABOVE = 1;
const FAR_BELOW = 2;
// Kinds found by heuristics (a handler, a cursor, a list): a scroll container found so too is
// listed as the scroll container it is.
const WEAK_KINDS = new Set(["container", "list", "weak"]);
function shortHref(el, topOrigin) {
  const raw = el.getAttribute("href");
  if (raw === null) return null;
  let href = raw;
  try {
    const u = new URL(raw, el.baseURI);
    if (u.protocol === "javascript:") return "javascript:…";
    href = u.origin === topOrigin ? u.pathname + u.search + u.hash : u.href;
  } catch (_e) {
    // keep the raw attribute
  }
  return cut(href, 100);
}
// [x, y, w, h] around the box (left, top, width, height) mapped by m = [a, b, c, d, e, f]:
// (x, y) -> (a x + b y + c, d x + e y + f).
function mapBox(m, left, top, width, height) {
  const xs = [];
  const ys = [];
  for (const [px, py] of [[left, top], [left + width, top], [left, top + height], [left + width, top + height]]) {
    xs.push(m[0] * px + m[1] * py + m[2]);
    ys.push(m[3] * px + m[4] * py + m[5]);
  }
  const x = Math.min(...xs);
  const y = Math.min(...ys);
  return [x, y, Math.max(...xs) - x, Math.max(...ys) - y];
}
function deepActive() {
  let a = document.activeElement;
  for (let k = 0; a && k < 20; k++) {
    if (rootOf(a) && rootOf(a).activeElement) a = rootOf(a).activeElement;
    else if ((a.tagName === "IFRAME" || a.tagName === "FRAME") && a.contentDocument) {
      const inner = a.contentDocument.activeElement;
      if (!inner || inner === a.contentDocument.body) break;
      a = inner;
    } else break;
  }
  return a;
}

// ---- the walk -----------------------------------------------------------------------
const MAX_FAR_FRAMES = 10;
// The page as lines in reading order: {s, el (element record | null), dist, above}, plus
// what the detectors found on the way and what lies beyond the listing margin.
function walk(opts) {
  labelScans = new Map();
  try {
    return walkDocument(opts);
  } finally {
    labelScans = null;
    handlers = null; // good for one walk only (see listeners.js)
  }
}

function walkDocument(opts) {
  const t0 = performance.now();
  snapNo++;
  farRuns = farRuns.filter((run) => run.snap > snapNo - FAR_RUNS_KEPT);
  const marginV = opts.margin === undefined ? 1.5 : opts.margin;
  const maxLine = opts.maxLine || 300;
  const includeText = opts.includeText !== false;
  const firstOfDoc = seenUpTo === 0;
  const newFrom = seenUpTo;

  const doc = document;
  const win = window;
  // In a frame read through CDP (opts.frame), geometry is the top-level viewport's: the
  // frame's content box is at (ox, oy) there, and clip is what of it can show.
  const F = opts.frame || null;
  const VW = F ? F.vw : win.innerWidth;
  const VH = F ? F.vh : win.innerHeight;
  const scrollEl = doc.scrollingElement || doc.documentElement;
  const topOrigin = location.origin;
  const focusedEl = deepActive();

  const lines = []; // {s, el (record|null), dist, above}
  const records = [];
  const frames = [];
  const slots = []; // frames to be read through CDP (see frameOf and farFrame)
  let farFrames = 0;
  const rootsWalked = new Set(); // shadow roots this walk entered
  const signals = { password: [], otp: [], payment: [], captcha: [], paymentFrames: [] };
  const beyond = { aboveEl: 0, belowEl: 0, aboveText: 0, belowText: 0 };
  let hidden = 0;
  let visited = 0;
  let interactiveSeen = 0;

  // Text accumulated for the current block; flushed at block boundaries.
  let buf = "";
  let bufDist = 0;
  let bufAbove = false;
  let lastName = null;

  function flush() {
    if (!buf) return;
    const s = clean(buf);
    buf = "";
    if (!s) return;
    if (ROBOT_TEXT.test(s)) signals.captcha.push({ kind: "generic", where: cut(s, 80) });
    if (!includeText) return;
    if (lastName !== null && s === lastName) return; // a label or tooltip repeating a name
    let e = esc(s);
    if (/^[\s*~]*\[/.test(e)) e = e.replace("[", "［"); // only our lines start with "["
    // ... and our frame headers with `frame "` / `frame (`: a page cannot fake one.
    if (/^frame\s*["(]/i.test(e)) e = e.replace(/^(frame\s*)"/i, "$1“").replace(/^(frame\s*)\(/i, "$1❨");
    for (let k = 0; k < e.length; k += maxLine) {
      let part = e.slice(k, k + maxLine);
      if (k > 0 && /^[\s*~]*\[/.test(part)) part = part.replace("[", "［");
      lines.push({ s: part, el: null, dist: bufDist, above: bufAbove });
    }
    lastName = null;
  }

  function isNew(el, index) {
    if (firstOfDoc || index < newFrom) return false;
    // Counted by an earlier walk: inside a far subtree it counted, or a run of far rows.
    for (let a = el, k = 0; a && k < 64; k++) {
      const counted = farSeen.get(a);
      if (counted !== undefined && counted < snapNo) return false;
      a = a.parentElement || (a.parentNode && a.parentNode.host) || null;
    }
    for (const run of farRuns) if (run.snap < snapNo && inRun(run, el)) return false;
    return true;
  }

  function hiddenScan(root) {
    // Count instruction-like fragments a person cannot see (they never reach the digest).
    const tw = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = tw.nextNode(); n; n = tw.nextNode()) {
      const p = n.parentNode;
      if (p && (p.tagName === "SCRIPT" || p.tagName === "STYLE")) continue;
      if (n.data.length > 8 && INSTR.test(n.data)) hidden++;
    }
  }

  // Subtrees entirely outside the listing margin are counted, not described (see farSeen),
  // but a sensitive field there still hands over.
  function farSensitive(x, c) {
    if (x.type !== "password" && (x.type === "hidden" || !FAR_AUTOCOMPLETE.test(x.getAttribute("autocomplete") || ""))) return;
    const kind = sensitiveOf(x, "INPUT");
    if (kind) signalField(kind, x, indexOf(x), accessibleName(x), c.frame, c.shadow);
  }

  function addBeyond(above, n, chars) {
    interactiveSeen += n;
    if (above) {
      beyond.aboveEl += n;
      beyond.aboveText += chars;
    } else {
      beyond.belowEl += n;
      beyond.belowText += chars;
    }
  }

  function countBeyond(el, above, c) {
    farSeen.set(el, snapNo);
    const n = (el.matches(SELECTOR) ? 1 : 0) + el.querySelectorAll(SELECTOR).length;
    if (el.matches(FAR_SENSITIVE)) farSensitive(el, c);
    for (const x of el.querySelectorAll(FAR_SENSITIVE)) farSensitive(x, c);
    addBeyond(above, n, (el.textContent || "").length);
    if (el.tagName === "IFRAME") farFrame(el, above);
    else for (const f of el.getElementsByTagName("iframe")) farFrame(f, above);
    return above ? FAR_ABOVE : FAR_BELOW;
  }

  // A cross-origin frame beyond the listing margin is not listed, but the detectors still
  // look inside it (a sign-in or card frame below the fold still hands over): a slot
  // without a line, whose frame core/eyes/snapshot.py reads like the others.
  function farFrame(f, above) {
    if (farFrames >= MAX_FAR_FRAMES) return;
    let inner = null;
    try {
      inner = f.contentDocument;
    } catch (_e) {
      inner = null;
    }
    if (inner) return;
    const b = f.getBoundingClientRect();
    if (b.width < 1 || b.height < 1) return;
    farFrames++;
    const ox = b.left + (F ? F.ox : 0) + f.clientLeft;
    const oy = b.top + (F ? F.oy : 0) + f.clientTop;
    const box = [ox, oy, ox + f.clientWidth, oy + f.clientHeight];
    slots.push({
      slot: slots.length, index: indexOf(f), name: accessibleName(f),
      src: cut(f.src || f.getAttribute("src") || "about:blank", 300),
      ox, oy, clip: box, rect: [b.left, b.top, b.width, b.height], dist: 2, above,
      vw: VW, vh: VH, focused: false, context: "", far: true,
    });
  }

  function countRun(parent, first, c, end = null) {
    // The rows from `first` up to `end` (exclusive; null: to the last) of a table or list,
    // all beyond the listing margin (below, or above when `end` is given): queries on the
    // parent, and binary searches for where the rows start and end in each.
    const above = end !== null;
    const span = (list) => [firstWhere(list, atOrAfter(first)), above ? firstWhere(list, atOrAfter(end)) : list.length];
    // SELECTOR's thirty selectors cost several times its tags and its four attributes.
    let n;
    const attrs = parent.querySelectorAll(ATTR_SELECTOR);
    if (attrs.length > MANY_ATTRS) {
      const [from, to] = span(parent.querySelectorAll(SELECTOR));
      n = to - from;
    } else {
      const [from, to] = span(parent.querySelectorAll(TAG_SELECTOR));
      n = to - from;
      const [a, b] = span(attrs);
      for (let k = a; k < b; k++) if (controlByAttribute(attrs[k])) n++;
    }
    const fields = parent.querySelectorAll(FAR_SENSITIVE);
    const [f0, f1] = span(fields);
    for (let k = f0; k < f1; k++) farSensitive(fields[k], c);
    farRuns.push({ parent, first, last: above ? end.previousElementSibling : parent.lastElementChild, snap: snapNo });
    const range = first.ownerDocument.createRange();
    range.setStartBefore(first);
    if (above) range.setEndBefore(end);
    else range.setEndAfter(parent.lastChild);
    addBeyond(above, n, range.toString().length);
    const frames = parent.getElementsByTagName("iframe");
    const [i0, i1] = span(frames);
    for (let k = i0; k < i1; k++) farFrame(frames[k], above);
  }

  function signalField(kind, el, index, name, frame, shadow) {
    const list = kind === "password" ? signals.password : kind === "otp" ? signals.otp : signals.payment;
    if (list.length < 50) {
      list.push({ index, name: cut(name, 80), where: frame ? `frame ${frame}` : shadow ? "shadow root" : "page" });
    }
  }

  // c: context inherited from the parent element.
  //   view, ox, oy: the frame's window and its offset in top-level viewport coordinates
  //   clip / absClip / fixedClip: [x1,y1,x2,y2] what may show for static / absolute / fixed
  //   bg: effective background [r,g,b] or null when unknown (images)
  //   vis: the parent is visible itself (its text nodes show)
  //   st: the parent's computed style (for its text nodes)
  //   name: array collecting an interactive ancestor's name text, or null
  //   fold: descendants of a link/button: not listed on their own
  //   suppress: a label's text that became a field's name
  //   frame: frame URL or null; shadow: inside a shadow root
  //   cursor: parent's cursor (a pointer that is merely inherited is not a new target)
  //   inInteractive: some ancestor is listed
  function walkChildren(parent, c, skip) {
    const rows = ROW_PARENTS.has(parent.tagName);
    let n = parent.firstChild;
    if (rows && !skip && !c.m && !c.name && parent.childElementCount > MIN_RUN_ROWS) {
      // Rows far above (a long table scrolled down): one run up to the first row that is
      // not, found by a binary search on the rows' boxes, instead of a visit per row.
      const kids = parent.children;
      const k = firstWhere(kids, (row) => row.getBoundingClientRect().bottom + c.oy >= -marginV * VH);
      if (k > 1 && k < kids.length) {
        countRun(parent, kids[0], c, kids[k]);
        n = kids[k];
      }
    }
    for (; n; n = n.nextSibling) {
      if (n === skip) continue;
      const t = n.nodeType;
      if (t === 1) {
        // In a table or list, once a row lies far below, so do all the rows after it.
        if (visit(n, c) === FAR_BELOW && rows) {
          if (n.nextElementSibling) countRun(parent, n.nextElementSibling, c);
          return;
        }
      } else if (t === 3) text(n, c);
    }
  }

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

  function text(n, c) {
    const s = n.data;
    if (!c.vis || c.far) {
      if (!c.vis && s.length > 8 && INSTR.test(s)) hidden++;
      return;
    }
    if (c.suppress) return;
    if (/^\s*$/.test(s)) {
      if (c.name) c.name.push(" ");
      else if (buf) buf += " ";
      return;
    }
    if (textHidden(c)) {
      if (INSTR.test(s)) hidden++;
      return;
    }
    if (c.name) {
      c.name.push(s);
      return;
    }
    if (!buf) {
      bufDist = c.dist;
      bufAbove = c.above;
    }
    buf += s;
  }

  function visit(el, c) {
    visited++;
    const tag = el.tagName;
    if (SKIP.has(tag)) return;
    if (el.namespaceURI === SVG_NS && !el.firstElementChild && SVG_SHAPES.has(tag)) {
      if (!el.hasAttribute("onclick") && !el.hasAttribute("role") && !el.hasAttribute("tabindex")) return;
    }
    if (tag === "title" && el.namespaceURI === SVG_NS) return svgTitle(el, c);
    const st = c.view.getComputedStyle(el);
    const display = st.display;
    if (display === "none") return hiddenScan(el);
    if (el.getAttribute("aria-hidden") === "true" || el.hasAttribute("inert")) return hiddenScan(el);
    if (st.opacity === "0") return hiddenScan(el);
    if (st.contentVisibility === "hidden") return hiddenScan(el);
    if (tag === "SLOT") {
      const assigned = el.assignedNodes();
      const cc = Object.assign({}, c, { st, textHiddenCache: undefined });
      if (assigned.length) {
        for (const n of assigned) {
          if (n.nodeType === 1) visit(n, cc);
          else if (n.nodeType === 3) text(n, cc);
        }
      } else walkChildren(el, cc);
      return;
    }
    const isRoot = el === c.doc.body || el === c.doc.documentElement;
    const pos = st.position;
    const contents = display === "contents";
    let x = 0, y = 0, w = 0, h = 0;
    let selfVisible = true;
    let dist = c.dist;
    let above = c.above;
    let far = false;
    if (!contents) {
      if (!isRoot && clipHidesAll(st)) return hiddenScan(el);
      const b = el.getBoundingClientRect();
      if (c.m) {
        // In a scaled or rotated frame: the box around the element's transformed corners,
        // as the hands compute it (core/world/world.py frame_map).
        [x, y, w, h] = mapBox(c.m, b.left, b.top, b.width, b.height);
      } else {
        x = b.left + c.ox;
        y = b.top + c.oy;
        w = b.width;
        h = b.height;
      }
      const clip = pos === "fixed" ? c.fixedClip : pos === "absolute" ? c.absClip : c.clip;
      if (!isRoot) {
        if (w < 1 || h < 1) {
          if (clipsOverflow(st) && tag !== "IFRAME") return hiddenScan(el);
          selfVisible = false;
        } else if (!intersects(clip, x, y, w, h)) {
          if (clipsOverflow(st)) return hiddenScan(el);
          selfVisible = false;
        }
      }
      // Distance from the top-level viewport, for "~" and the listing margin.
      const dy = y + h <= 0 ? -(y + h) : y >= VH ? y - VH : 0;
      const dx = x + w <= 0 ? -(x + w) : x >= VW ? x - VW : 0;
      dist = Math.max(dy / VH, dx / VW);
      above = y + h <= 0;
      far = dy > marginV * VH || dx > marginV * VW;
      if (far && selfVisible && !isRoot && pos !== "fixed" && pos !== "sticky" && !c.name && !rootOf(el)) {
        return countBeyond(el, above, c);
      }
    }
    if (st.visibility !== "visible") selfVisible = false;

    // Background for the same-colour-as-background test.
    let bg = c.bg;
    const bgc = st.backgroundColor;
    if (st.backgroundImage !== "none") bg = null;
    else if (bgc !== "rgba(0, 0, 0, 0)" && bgc !== "transparent") {
      const p = parseRgb(bgc);
      if (p && p[3] > 0.95) bg = p;
      else if (p && p[3] > 0.05) bg = null;
    }

    const inline = display.startsWith("inline") || contents;
    const block = !inline;
    if (block) {
      if (c.name) c.name.push(" ");
      else flush();
    }

    // Clip for descendants.
    let clip = pos === "fixed" ? c.fixedClip : pos === "absolute" ? c.absClip : c.clip;
    let absClip = c.absClip;
    let fixedClip = c.fixedClip;
    if (!contents && !isRoot && clipsOverflow(st)) clip = intersect(clip, x, y, w, h);
    if (pos !== "static") absClip = clip;
    if (st.transform !== "none" || pos === "fixed") {
      absClip = clip;
      if (st.transform !== "none") fixedClip = clip;
    }

    const cc = {
      doc: c.doc, view: c.view, ox: c.ox, oy: c.oy, m: c.m, tf: c.tf || st.transform !== "none",
      clip, absClip, fixedClip, bg,
      vis: selfVisible, st, name: c.name, fold: c.fold, suppress: c.suppress,
      frame: c.frame, shadow: c.shadow, cursor: st.cursor, inInteractive: c.inInteractive,
      dist, above, far, textHiddenCache: undefined,
      // A listbox or menu the page did not make clickable still has items a person clicks.
      itemsOf: LIST_ROLES.has(el.getAttribute("role")) ? el : null,
    };

    // Iframes: same-origin ones are walked, cross-origin ones listed as such.
    if (tag === "IFRAME" || tag === "FRAME") {
      frameOf(el, st, cc, x, y, w, h, selfVisible, far);
      if (block && !c.name) flush();
      return;
    }

    let kind = null;
    if (selfVisible && !far) kind = interactiveKind(el, tag, st, c);
    if (kind && c.fold) kind = null; // inside a link/button: part of its name
    // An area a person scrolls is listed once, with what lies beyond its scrollport (unless
    // it is a control of its own kind: a field, a link, a button).
    let scrollOf = null;
    if (selfVisible && !far && !c.fold && !c.name && !contents && !isRoot && clipsOverflow(st) && (kind === null || WEAK_KINDS.has(kind)) && isScroller(el, st)) {
      scrollOf = kind;
      kind = "scroll";
    }

    if (kind) {
      describe(el, tag, st, kind, cc, x, y, w, h, dist, above, c, scrollOf);
    } else {
      if (tag === "LABEL" && el.control && !c.name) {
        const ctl = el.control;
        if (!ctl.hasAttribute("aria-label") && !ctl.hasAttribute("aria-labelledby")) cc.suppress = true;
      }
      if (tag === "BR") {
        if (c.name) c.name.push(" ");
        else flush();
      }
      if (tag === "IMG" && c.name && selfVisible) c.name.push(" " + (el.getAttribute("alt") || "") + " ");
      if (tag === "svg" && el.namespaceURI === SVG_NS) return svgRoot(el, cc);
      if (tag === "text" && el.namespaceURI === SVG_NS) return svgText(el, cc, x, y);
      if (tag === "IMG" || tag === "CANVAS" || tag === "VIDEO" || tag === "AUDIO" || tag === "OBJECT" || tag === "EMBED") return;
      const root = rootOf(el);
      if (root) rootsWalked.add(root);
      walkChildren(root || el, root ? Object.assign(cc, { shadow: true }) : cc);
    }
    if (block) {
      if (c.name) c.name.push(" ");
      else flush();
    }
  }

  function interactiveKind(el, tag, st, c) {
    switch (tag) {
      case "A":
        if (el.hasAttribute("href")) return "strong";
        break;
      case "BUTTON":
      case "SUMMARY":
        return "strong";
      case "INPUT":
        return el.type === "hidden" ? null : "field";
      case "SELECT":
      case "TEXTAREA":
        return "field";
      case "LABEL": {
        const ctl = el.control;
        if (ctl && ctl.checkVisibility && !ctl.checkVisibility({ opacityProperty: true, visibilityProperty: true })) {
          return "label"; // a styled checkbox/radio: the label is what a person clicks
        }
        return null;
      }
      default:
    }
    const role = el.getAttribute("role");
    if (role && ROLES.has(role.trim().split(/\s+/)[0])) return "strong";
    const ce = el.getAttribute("contenteditable");
    if (ce !== null && ce !== "false" && !(el.parentElement && el.parentElement.isContentEditable)) return "editable";
    // A control with its own handler inside a clickable row or card (a trash icon on a
    // message) is a target of its own; a pointer cursor there may be the row's.
    if (el.hasAttribute("onclick")) return el.querySelector(SELECTOR) ? "container" : isItemList(el) ? "list" : "weak";
    if (handlers && handlerTarget(el, st)) return isItemList(el) ? "list" : "weak";
    if (c.itemsOf && isListItem(el, c.itemsOf)) return "weak";
    if (c.inInteractive) return null;
    const tabindex = el.getAttribute("tabindex");
    const pointer = st.cursor === "pointer" && c.cursor !== "pointer";
    if ((pointer || (tabindex !== null && +tabindex >= 0)) && !el.querySelector(SELECTOR)) {
      if (el === c.doc.body || el === c.doc.documentElement) return null;
      return isItemList(el) ? "list" : "weak";
    }
    return null;
  }

  // scrollOf: for a scroll container ("scroll"), the kind it would have had otherwise.
  function describe(el, tag, st, kind, cc, x, y, w, h, dist, above, c, scrollOf) {
    const index = indexOf(el);
    interactiveSeen++;
    const rec = {
      index, tag: tag.toLowerCase(), role: null, name: "", attrs: {}, line: "",
      rect: [x, y, w, h], inView: dist === 0, isNew: isNew(el, index),
      frame: c.frame, shadow: !!c.shadow, editable: false, disabled: false, inputType: null,
      autocomplete: null, formAction: null, formMethod: null, submits: false,
      focused: el === focusedEl, sensitive: null,
    };
    records.push(rec);
    const entry = { s: "", el: rec, dist, above };
    if (!c.name) {
      flush();
      lines.push(entry);
    }

    // Walk the content: for links/buttons it becomes the name; containers list children.
    let parts = null;
    let group = null;
    let groupCtx = null;
    if (kind === "field" || kind === "editable") {
      // A select's options or an editor's text are its value, not page text.
      if (kind === "editable") {
        const inner = el.innerText || "";
        rec.attrs.value = cut(clean(inner), 200);
      }
    } else if (kind === "container") {
      cc.inInteractive = true;
      walkChildren(rootOf(el) || el, cc);
    } else if (kind === "list") {
      cc.inInteractive = true;
      cc.itemsOf = el;
      walkChildren(el, cc);
    } else if (kind === "scroll") {
      // Its content is listed as the page's own, clipped to the scrollport (cc.clip).
      if (scrollOf === "container" || scrollOf === "list") cc.inInteractive = true;
      if (scrollOf === "list") cc.itemsOf = el;
      const root = rootOf(el);
      if (root) rootsWalked.add(root);
      walkChildren(root || el, root ? Object.assign(cc, { shadow: true }) : cc);
    } else {
      // A tree item or menu item holding its nested group: named by its own label, and the
      // group's items walked after it as elements of their own.
      group = tag === "LI" || el.getAttribute("role") === "treeitem" ? nestedGroup(el) : null;
      if (group) groupCtx = Object.assign({}, cc);
      parts = [];
      cc.name = parts;
      cc.fold = true;
      cc.inInteractive = true;
      const root = rootOf(el);
      if (root) rootsWalked.add(root);
      walkChildren(root || el, root ? Object.assign(cc, { shadow: true }) : cc, group);
    }
    const content = parts ? clean(parts.join("")) : "";
    const a = rec.attrs;
    const role = el.getAttribute("role");
    let implied = IMPLIED_ROLE[tag] || null;
    if (tag === "INPUT") implied = INPUT_ROLE[el.type] || "textbox";
    if (role && role !== implied) a.role = role;
    rec.role = role || implied;

    const name = accessibleName(el, kind, content);
    const isField = tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA";
    rec.name = name;

    // Facts and attributes.
    let type = null;
    if (tag === "INPUT") {
      type = (el.type || "text").toLowerCase();
      a.type = type;
      rec.inputType = type;
    } else if (tag === "BUTTON") {
      type = (el.type || "submit").toLowerCase();
      if (el.hasAttribute("type") || el.form) a.type = type;
    }
    if (isField && el.getAttribute("name")) a.name = el.getAttribute("name");
    const ph = el.getAttribute("placeholder");
    if (ph && isField) a.placeholder = ph;
    const form = el.form || null;
    const submits = form && ((tag === "BUTTON" && type === "submit") || (tag === "INPUT" && (type === "submit" || type === "image")));
    if (form) {
      try {
        rec.formAction = submits && el.hasAttribute("formaction") ? el.formAction : form.action;
        rec.formMethod = ((submits && el.getAttribute("formmethod")) || form.method || "get").toLowerCase();
      } catch (_e) {
        // a form with odd attributes: leave the facts empty
      }
    }
    rec.submits = !!submits;
    const ac = el.getAttribute("autocomplete");
    if (ac) rec.autocomplete = ac;
    rec.sensitive = sensitiveOf(el, tag);
    if (tag === "INPUT" && (type === "checkbox" || type === "radio")) {
      if (el.checked) a.checked = "";
      if (el.indeterminate) a.checked = "mixed";
    } else if (tag === "INPUT" && type !== "submit" && type !== "button" && type !== "reset" && type !== "image") {
      if (type === "file") {
        const files = el.files ? [...el.files].map((f) => f.name).join(", ") : "";
        if (files) a.value = files;
      } else if (el.value) {
        a.value = rec.sensitive === "password" || type === "password" ? "«hidden»" : el.value;
      }
      rec.editable = !el.readOnly && !el.disabled;
    } else if (tag === "TEXTAREA") {
      if (el.value) a.value = el.value;
      rec.editable = !el.readOnly && !el.disabled;
    } else if (tag === "SELECT") {
      const opts = [...el.options];
      const sel = opts.filter((o) => o.selected).map((o) => clean(o.label || o.text));
      if (sel.length) a.selected = sel.join("|");
      if (el.multiple) a.multiple = "";
      if (opts.length <= 8) a.options = opts.map((o) => cut(clean(o.label || o.text), 30)).join("|");
      else a.options = String(opts.length);
    } else if (kind === "editable") {
      rec.editable = true;
    } else if (kind === "label") {
      const ctl = el.control;
      if (ctl && ctl.type) a.type = ctl.type;
      if (ctl && ctl.checked) a.checked = "";
    }
    const ariaChecked = el.getAttribute("aria-checked");
    if (ariaChecked === "true") a.checked = "";
    else if (ariaChecked === "mixed") a.checked = "mixed";
    if (el.getAttribute("aria-selected") === "true") a.selected = a.selected || "";
    widgetStates(el, tag, a);
    if (el.required || el.getAttribute("aria-required") === "true") a.required = "";
    // aria-disabled holds for the subtree (jQuery UI marks the item, its wrapper is the menuitem).
    const disabled = !!el.disabled || !!el.closest("[aria-disabled=true]") || !!el.closest("fieldset:disabled");
    if (disabled) a.disabled = "";
    rec.disabled = disabled;
    if (tag === "A") {
      const href = shortHref(el, topOrigin);
      if (href !== null) a.href = href;
      if (el.target === "_blank") a.target = "_blank";
    }
    if (rec.focused) a.focused = "";
    let scrollNoteText = "";
    if (kind === "scroll") {
      a.scrollable = "";
      scrollNoteText = scrollNote(scrollBeyond(el, st), index);
    }
    if (rec.sensitive) signalField(rec.sensitive, el, index, name, c.frame, c.shadow);
    // A control inside a CAPTCHA widget is part of the CAPTCHA (the policy refuses clicks
    // on it); not printed in the line, only carried in the element's facts.
    const widget = el.closest(".g-recaptcha, .h-captcha, .cf-turnstile");
    if (widget) a.captcha = widget.className;
    if (ROBOT_TEXT.test(name)) signals.captcha.push({ kind: "generic", where: cut(name, 80) });

    // The line. Attribute values are page strings: escaped and quoted where needed.
    let attrs = "";
    for (const k of LINE_ATTRS) {
      const v = a[k];
      if (v === undefined) continue;
      if (v === "") attrs += ` ${k}`;
      else if (k === "placeholder" || k === "value" || k === "selected" || k === "options") attrs += ` ${k}=${quoted(v, k === "options" ? 240 : 100)}`;
      else attrs += ` ${k}=${attrVal(v, 100)}`;
    }
    const mark = (rec.isNew ? "*" : "") + (rec.inView ? "" : "~");
    const nameText = esc(name);
    rec.line = `${mark}[${index}]<${rec.tag}${attrs}>${nameText}${nameText ? `</${rec.tag}>` : ""}`;
    if (scrollNoteText) rec.line += scrollNoteText;
    entry.s = rec.line;
    lastName = name;
    if (group && !c.name) visit(group, groupCtx);
    return rec;
  }

  function frameOf(el, st, cc, x, y, w, h, selfVisible, far) {
    if (!selfVisible || far) return;
    let src = el.src || el.getAttribute("src") || "about:blank";
    let inner = null;
    try {
      inner = el.contentDocument;
    } catch (_e) {
      inner = null;
    }
    for (const [re, kind] of CAPTCHA_SRC) {
      if (re.test(src)) signals.captcha.push({ kind, where: cut(src, 120) });
    }
    if (PAYMENT_SRC.test(src) && !/^about:/.test(src)) signals.paymentFrames.push(cut(src, 200));
    if (!inner || !inner.documentElement) {
      // A frame our world cannot reach (another origin): core/eyes/snapshot.py reads it through
      // CDP with our world inside it and hands its lines to finish(), which puts them here.
      const ox = x + el.clientLeft + parseFloat(st.paddingLeft);
      const oy = y + el.clientTop + parseFloat(st.paddingTop);
      const cw = el.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight);
      const ch = el.clientHeight - parseFloat(st.paddingTop) - parseFloat(st.paddingBottom);
      const slot = {
        slot: slots.length,
        index: indexOf(el),
        name: accessibleName(el),
        src: cut(src, 300),
        ox, oy, clip: intersect(cc.clip, ox, oy, cw, ch), rect: [x, y, w, h],
        dist: cc.dist, above: cc.above, vw: VW, vh: VH,
        // The frame or something around it is transformed: core/eyes/snapshot.py maps it by quads.
        transformed: !!cc.tf,
        // What the page says just before the frame ("enter your card below"): for the
        // detectors when the frame itself cannot be read.
        context: lastText(2),
      };
      slots.push(slot);
      flush();
      lines.push({ s: "", el: null, dist: cc.dist, above: cc.above, slot: slot.slot });
      frames.push({ url: src, crossOrigin: true, index: null, rect: [x, y, w, h], name: slot.name });
      return;
    }
    const view = inner.defaultView;
    if (!view || !inner.body) return;
    frames.push({ url: inner.URL, crossOrigin: false, index: null, rect: [x, y, w, h] });
    const ox = x + el.clientLeft + parseFloat(st.paddingLeft);
    const oy = y + el.clientTop + parseFloat(st.paddingTop);
    const box = intersect(cc.clip, ox, oy, el.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight), el.clientHeight - parseFloat(st.paddingTop) - parseFloat(st.paddingBottom));
    // Inside a frame mapped by its quads (scaled, rotated...): the inner document's points
    // move by its content box's offset in the holder's own coordinates, then through the
    // holder's map; a translation in top-level coordinates alone would misplace them.
    let m = null;
    if (cc.m) {
      const b = el.getBoundingClientRect();
      const dx = b.left + el.clientLeft + parseFloat(st.paddingLeft);
      const dy = b.top + el.clientTop + parseFloat(st.paddingTop);
      const p = cc.m;
      m = [p[0], p[1], p[0] * dx + p[1] * dy + p[2], p[3], p[4], p[3] * dx + p[4] * dy + p[5]];
    }
    const fc = {
      doc: inner, view, ox, oy, m, tf: cc.tf, clip: box, absClip: box, fixedClip: box, bg: null, vis: true,
      st: null, name: null, fold: false, suppress: false, frame: inner.URL, shadow: false,
      cursor: "auto", inInteractive: false, dist: cc.dist, above: cc.above, far: false,
    };
    flush();
    visit(inner.body, fc);
    flush();
    countComments(inner);
  }

  // ---- inline SVG: its <text> and <title> are read like the page's text ----------------
  // A drawing with no control inside reads in the order a person reads it (top to bottom,
  // left to right); one with controls keeps document order, so each control stays next to
  // its own label.
  function svgRoot(el, cc) {
    const label = clean(el.getAttribute("aria-label") || "");
    if (label) {
      if (cc.name) cc.name.push(" " + label + " ");
      else if (el.getAttribute("role") === "img") textLine(label, cc, null);
      return;
    }
    if (cc.name) return walkChildren(el, cc);
    flush();
    const from = lines.length;
    walkChildren(el, cc);
    flush();
    const part = lines.slice(from);
    if (part.length < 2 || part.some((l) => l.el || !l.at || l.slot !== undefined)) return;
    part.sort((p, q) => (Math.abs(p.at[1] - q.at[1]) > 4 ? p.at[1] - q.at[1] : p.at[0] - q.at[0]));
    lines.splice(from, part.length, ...part);
  }

  function svgText(el, cc, x, y) {
    if (cc.name) {
      cc.name.push(" ");
      walkChildren(el, cc);
      cc.name.push(" ");
      return;
    }
    flush();
    const from = lines.length;
    walkChildren(el, cc);
    flush();
    for (let k = from; k < lines.length; k++) if (!lines[k].el) lines[k].at = [x, y];
  }

  function svgTitle(el, c) {
    if (!c.vis || c.far || c.suppress) return;
    const t = clean(el.textContent || "");
    if (!t) return;
    if (c.name) {
      c.name.push(" " + t + " ");
      return;
    }
    const parent = el.parentElement;
    const b = parent ? parent.getBoundingClientRect() : null;
    textLine(t, c, b ? [b.left + c.ox, b.top + c.oy] : null);
  }

  function textLine(t, c, at) {
    flush();
    buf = t;
    bufDist = c.dist;
    bufAbove = c.above;
    const from = lines.length;
    flush();
    if (at) for (let k = from; k < lines.length; k++) lines[k].at = at;
  }

  function lastText(n) {
    flush();
    const out = [];
    for (let k = lines.length - 1; k >= 0 && out.length < n; k--) {
      if (!lines[k].el && lines[k].slot === undefined) out.unshift(lines[k].s);
    }
    return cut(out.join(" "), 300);
  }

  function countComments(d) {
    const tw = d.createTreeWalker(d, NodeFilter.SHOW_COMMENT);
    for (let n = tw.nextNode(); n; n = tw.nextNode()) {
      if (INSTR.test(n.data)) hidden++;
    }
  }

  // Root context: the document's scrollable area clips static content (a "left:-9999px"
  // element can never be scrolled to), the viewport clips fixed content.
  const sx = win.scrollX;
  const sy = win.scrollY;
  const docClip = [-sx, -sy, Math.max(scrollEl.scrollWidth, VW) - sx, Math.max(scrollEl.scrollHeight, VH) - sy];
  const viewClip = [0, 0, VW, VH];
  // A frame read through CDP shows what its box shows (as a same-origin frame walked inline).
  const rootClip = F ? F.clip : docClip;
  const rootCtx = {
    doc, view: win, ox: F ? F.ox : 0, oy: F ? F.oy : 0, m: F && F.m ? F.m : null, tf: !!(F && F.m),
    clip: rootClip, absClip: rootClip,
    fixedClip: F ? F.clip : viewClip,
    bg: [255, 255, 255], vis: true, st: null, name: null, fold: false, suppress: false,
    frame: null, shadow: false, cursor: "auto", inInteractive: false, dist: F ? F.dist : 0,
    above: F ? F.above : false, far: false,
  };
  const htmlBg = parseRgb(win.getComputedStyle(doc.documentElement).backgroundColor);
  if (htmlBg && htmlBg[3] > 0.95) rootCtx.bg = htmlBg;
  if (doc.body) visit(doc.body, rootCtx);
  flush();
  countComments(doc);

  // Shadow roots the walk did not enter (beyond the listing margin, or under an element it
  // only counted): their sensitive fields still hand over, like the light DOM's far fields.
  for (const root of knownRoots) {
    if (rootsWalked.has(root) || !root.host || !root.host.isConnected) continue;
    for (const x of root.querySelectorAll("input, textarea, [contenteditable], [role]")) {
      if (x.checkVisibility && !x.checkVisibility({ opacityProperty: true, visibilityProperty: true })) continue;
      const kind = sensitiveOf(x, x.tagName);
      if (kind) signalField(kind, x, indexOf(x), accessibleName(x), null, true);
    }
  }

  // Widgets announced by class, visible ones only.
  for (const [sel, kind] of CAPTCHA_CLASS) {
    for (const el of doc.querySelectorAll(sel)) {
      if (el.checkVisibility && el.checkVisibility({ opacityProperty: true, visibilityProperty: true })) {
        signals.captcha.push({ kind, where: sel });
        break;
      }
    }
  }
  const tWalk = performance.now();

  return {
    t0, tWalk, lines, frames, slots, firstOfDoc, newFrom, signals, beyond, hidden, visited, interactiveSeen,
    scroll: [sx, sy, scrollEl.scrollWidth, scrollEl.scrollHeight, VW, VH],
  };
}
