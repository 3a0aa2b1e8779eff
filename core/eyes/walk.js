// @ts-check
// The eyes, stage: the walk (one pass over the rendered page, into lines in reading order).
// One part of handrail's page script: core/eyes/script.py joins core/eyes/*.js (in the order
// of its EYES_PARTS) inside one closure, so these names are shared with the other parts and
// invisible to the page (the script runs in our isolated world). core/eyes/snapshot.py calls
// the walk through api.js and reads what it returns.
//
// This stage owns the walk's state (newWalkState), the context each element hands its
// children (WalkContext), and the descent: visit() decides for each element whether it is
// skipped, hidden, counted beyond the listing margin (beyond.js), described as an element of
// its own (describe.js), walked into as a frame (frames.js) or read for its text (lines.js).

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
/** @param {Element} el */
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
const ROW_PARENTS = new Set(["TBODY", "THEAD", "TFOOT", "TABLE", "UL", "OL", "DL"]);
// What visit() returns for an element it counted beyond the listing margin (beyond.js).
const FAR_ABOVE = 1;
const FAR_BELOW = 2;
// Kinds found by heuristics (a handler, a cursor, a list): a scroll container found so too is
// listed as the scroll container it is.
const WEAK_KINDS = new Set(["container", "list", "weak"]);
// Elements whose content is never read as text (media, embedded documents).
const MEDIA_TAGS = new Set(["IMG", "CANVAS", "VIDEO", "AUDIO", "OBJECT", "EMBED"]);
const MAX_FAR_FRAMES = 10;
// Elements nested deeper than this are not read: the walk recurses per level, and a page can
// nest thousands (Chrome renders 2,500 nested divs; the walk's stack does not hold them).
// Real pages stay under a hundred. The cut is announced in the digest, once per walk.
const MAX_DEPTH = 400;

/**
 * One line of the walk's output, in reading order.
 * @typedef {object} Line
 * @property {string} s the line's text (an element's line once describe() made it)
 * @property {any} el the element record (describe.js) behind the line, or null for text
 * @property {number} dist distance from the top-level viewport, in viewports (0: in view)
 * @property {boolean} above whether it lies above the viewport
 * @property {number} [slot] a cross-origin frame's place (frames.js fills it in finish())
 * @property {number[]} [at] where an SVG text line is drawn, [x, y], for reading order
 * @property {boolean} [note] a note of ours (serialise.js), not page text
 * @property {string} [frameLabel] the frame the line came from (frames.js)
 * @property {boolean} [header] a frame's header line (frames.js)
 * @property {any[]} [els] a table row's line: the records of the elements in its cells
 */

/**
 * The geometry core/eyes/snapshot.py passes when a walk reads a frame through CDP
 * (opts.frame): positions are then the top-level viewport's.
 * @typedef {object} FrameGeometry
 * @property {number} vw the top-level viewport's width
 * @property {number} vh the top-level viewport's height
 * @property {number} ox the frame's content box in the top-level viewport: left
 * @property {number} oy ... and top
 * @property {number[]} clip [x1, y1, x2, y2]: what of the frame can show
 * @property {number[] | null} [m] the frame's map to the top level when it is scaled or
 *   rotated ([a, b, c, d, e, f], see mapBox)
 * @property {number} dist the frame's distance from the viewport (its lines inherit it)
 * @property {boolean} above whether the frame lies above the viewport
 */

/**
 * What one walk has found so far: made by newWalkState() and handed to every stage function
 * of the walk (one object, so a stage's functions are plain top-level functions).
 * @typedef {object} WalkState
 * @property {number} t0 performance.now() when the walk began
 * @property {number} marginV the listing margin, in viewports (opts.margin)
 * @property {number} maxLine longer text blocks are cut into lines of this many characters
 * @property {boolean} includeText false: interactive elements only, no page text
 * @property {boolean} firstOfDoc no digest of this document yet: nothing is marked new
 * @property {number} newFrom indexes from this one up were issued since the last digest
 * @property {Document} doc the document walked
 * @property {Window} win its window
 * @property {FrameGeometry | null} cdpFrame opts.frame, or null for a top-level walk
 * @property {number} vw the top-level viewport's width (the frame's, read through CDP)
 * @property {number} vh ... and height
 * @property {Element} scrollEl the document's scroller
 * @property {string} topUrl the top page's address: links are printed as short as they read against it
 * @property {Element | null} focusedEl the focused element, inside frames and shadow roots
 * @property {Line[]} lines the lines so far, in reading order
 * @property {object[]} frames the frames met ({url, crossOrigin, index, rect, name?})
 * @property {object[]} slots cross-origin frames left for core/eyes/snapshot.py to read
 *   (listed ones, and those beyond the margin: `far`, no line)
 * @property {number} farFrames how many slots are frames beyond the margin (at most
 *   MAX_FAR_FRAMES)
 * @property {Set<Node>} rootsWalked shadow roots this walk entered
 * @property {{password: object[], otp: object[], payment: object[], captcha: object[],
 *   paymentFrames: string[], blockedFrames?: object[]}} signals what the detectors found
 * @property {{aboveEl: number, belowEl: number, aboveText: number, belowText: number}} beyond
 *   interactive elements and characters of text counted beyond the margin, by side
 * @property {number} hidden instruction-like fragments a person cannot see
 * @property {number} visited elements visit() was called on
 * @property {number} interactiveSeen interactive elements described or counted
 * @property {string} buf text of the current block, not yet a line (flush() makes it one)
 * @property {number} bufDist the distance of the block's first text
 * @property {boolean} bufAbove ... and whether it lies above
 * @property {string | null} lastName the name of the element just described: a label or
 *   tooltip repeating it right after is not printed again
 * @property {Box} box visit()'s scratch box for the element it is placing (read into locals
 *   at once: visits nest)
 * @property {number} depth how deep walkChildren() is nested now
 * @property {boolean} tooDeep whether the walk has met (and announced) MAX_DEPTH
 */

/**
 * An element's box as placeBox() leaves it in WalkState.box.
 * @typedef {object} Box
 * @property {number} x left, in top-level viewport coordinates
 * @property {number} y top
 * @property {number} w width
 * @property {number} h height
 * @property {boolean} visible the element itself shows (it is in its clip and not empty)
 * @property {number} dist distance from the viewport, in viewports
 * @property {boolean} above it lies above the viewport
 * @property {boolean} far it lies beyond the listing margin
 */

/**
 * What an element hands its children (visit() makes one per element it walks into).
 * @typedef {object} WalkContext
 * @property {Document} doc the document the element is in
 * @property {Window} view its window (for computed styles)
 * @property {number} ox the document's offset in top-level viewport coordinates: left
 * @property {number} oy ... and top
 * @property {number[] | null} m the document's map to the top level when a frame holding it
 *   is scaled or rotated (see mapBox), else null
 * @property {boolean} tf the element or something around it is transformed
 * @property {number[]} clip [x1, y1, x2, y2]: what may show of static content
 * @property {number[]} absClip ... of absolutely positioned content
 * @property {number[]} fixedClip ... of fixed content
 * @property {number[] | null} bg the effective background [r, g, b(, a)], null when unknown
 *   (an image)
 * @property {boolean} vis the parent is visible itself (its text nodes show)
 * @property {CSSStyleDeclaration | null} st the parent's computed style (for its text nodes)
 * @property {string[] | null} name collects an interactive ancestor's name text, or null
 * @property {boolean} fold inside a link or button: descendants are part of its name, not
 *   listed on their own
 * @property {boolean} suppress a label's text that became a field's name
 * @property {string | null} frame the frame's URL, null in the top document
 * @property {boolean} shadow inside a shadow root
 * @property {boolean} inInteractive some ancestor is listed
 * @property {number} dist the parent's distance from the viewport, in viewports
 * @property {boolean} above the parent lies above the viewport
 * @property {boolean} far the parent lies beyond the listing margin
 * @property {boolean} [textHiddenCache] textHidden()'s answer for this parent (lines.js)
 * @property {Element | null} [itemsOf] a listbox or menu whose items are targets of their own
 * @property {{starts: number[]} | null} [row] the table row being read as one line (tables.js):
 *   where each of its cells' lines begin
 */

/**
 * The walk's options (core/eyes/snapshot.py's js_opts; opts.frame for a frame read through
 * CDP).
 * @typedef {{margin?: number, maxLine?: number, includeText?: boolean, maxChars?: number,
 *   frame?: FrameGeometry, ask?: boolean, askAllRoots?: boolean, retake?: boolean,
 *   reuse?: boolean, topUrl?: string}} WalkOptions
 */

// The page as lines in reading order: {s, el (element record | null), dist, above}, plus
// what the detectors found on the way and what lies beyond the listing margin.
/** @param {WalkOptions} opts */
function walk(opts) {
  labelScans = new Map();
  walkRects = new Map();
  try {
    return walkDocument(opts);
  } finally {
    labelScans = null;
    walkRects = null;
    handlers = null; // good for one walk only (see listeners.js)
  }
}

/** @param {WalkOptions} opts */
function walkDocument(opts) {
  const t0 = performance.now();
  if (opts.retake) farRuns = farRuns.filter((run) => run.snap !== snapNo); // the same walk again
  else snapNo++;
  farRuns = farRuns.filter((run) => run.snap > snapNo - FAR_RUNS_KEPT);
  const ws = newWalkState(opts, t0);
  const { doc, win, vw, vh, scrollEl } = ws;
  const sx = win.scrollX;
  const sy = win.scrollY;
  const rootCtx = rootContext(ws, sx, sy);
  if (doc.body) visit(ws, doc.body, rootCtx);
  flush(ws);
  countComments(ws, doc);
  farRootFields(ws);
  captchaWidgets(ws);
  const tWalk = performance.now();
  const { lines, frames, slots, firstOfDoc, newFrom, signals, beyond, hidden, visited, interactiveSeen } = ws;
  return {
    t0, tWalk, lines, frames, slots, firstOfDoc, newFrom, signals, beyond, hidden, visited, interactiveSeen,
    scroll: [sx, sy, scrollEl.scrollWidth, scrollEl.scrollHeight, vw, vh],
  };
}

/**
 * @param {WalkOptions} opts
 * @param {number} t0
 * @returns {WalkState}
 */
function newWalkState(opts, t0) {
  // In a frame read through CDP (opts.frame), geometry is the top-level viewport's: the
  // frame's content box is at (ox, oy) there, and clip is what of it can show.
  const cdpFrame = opts.frame || null;
  return {
    t0,
    marginV: opts.margin === undefined ? 1.5 : opts.margin,
    maxLine: opts.maxLine || 300,
    includeText: opts.includeText !== false,
    firstOfDoc: seenUpTo === 0,
    newFrom: seenUpTo,
    doc: document,
    win: window,
    cdpFrame,
    vw: cdpFrame ? cdpFrame.vw : window.innerWidth,
    vh: cdpFrame ? cdpFrame.vh : window.innerHeight,
    scrollEl: document.scrollingElement || document.documentElement,
    // (A cross-origin frame read through CDP is told the top page's address: its links
    // read against that, as the guard resolves them.)
    topUrl: opts.topUrl || location.href,
    focusedEl: deepActive(),
    lines: [],
    frames: [],
    slots: [],
    farFrames: 0,
    rootsWalked: new Set(),
    signals: { password: [], otp: [], payment: [], captcha: [], paymentFrames: [] },
    beyond: { aboveEl: 0, belowEl: 0, aboveText: 0, belowText: 0 },
    hidden: 0,
    visited: 0,
    interactiveSeen: 0,
    buf: "",
    bufDist: 0,
    bufAbove: false,
    lastName: null,
    box: { x: 0, y: 0, w: 0, h: 0, visible: true, dist: 0, above: false, far: false },
    depth: 0,
    tooDeep: false,
  };
}

// The root context: the document's scrollable area clips static content (a "left:-9999px"
// element can never be scrolled to), the viewport clips fixed content; a frame read through
// CDP shows what its box shows (as a same-origin frame walked inline).
/**
 * @param {WalkState} ws
 * @param {number} sx the window's scroll offset: left
 * @param {number} sy ... and top
 * @returns {WalkContext}
 */
function rootContext(ws, sx, sy) {
  const { doc, win, vw, vh, scrollEl, cdpFrame: F } = ws;
  const docClip = [-sx, -sy, Math.max(scrollEl.scrollWidth, vw) - sx, Math.max(scrollEl.scrollHeight, vh) - sy];
  const viewClip = [0, 0, vw, vh];
  const rootClip = F ? F.clip : docClip;
  /** @type {WalkContext} */
  const rootCtx = {
    doc, view: win, ox: F ? F.ox : 0, oy: F ? F.oy : 0, m: F && F.m ? F.m : null, tf: !!(F && F.m),
    clip: rootClip, absClip: rootClip,
    fixedClip: F ? F.clip : viewClip,
    bg: [255, 255, 255], vis: true, st: null, name: null, fold: false, suppress: false,
    frame: null, shadow: false, inInteractive: false, dist: F ? F.dist : 0,
    above: F ? F.above : false, far: false,
  };
  const htmlBg = parseRgb(win.getComputedStyle(doc.documentElement).backgroundColor);
  if (htmlBg && htmlBg[3] > 0.95) rootCtx.bg = htmlBg;
  return rootCtx;
}

function deepActive() {
  let a = document.activeElement;
  for (let k = 0; a && k < 20; k++) {
    if (rootOf(a) && rootOf(a).activeElement) a = rootOf(a).activeElement;
    else if ((a.tagName === "IFRAME" || a.tagName === "FRAME") && /** @type {HTMLIFrameElement} */ (a).contentDocument) {
      const inner = /** @type {HTMLIFrameElement} */ (a).contentDocument.activeElement;
      if (!inner || inner === /** @type {HTMLIFrameElement} */ (a).contentDocument.body) break;
      a = inner;
    } else break;
  }
  return a;
}

// The children of `parent` (an element or a shadow root), in document order; `skip`, a
// child not to visit (a tree item's nested group, visited after the item's line).
/**
 * @param {WalkState} ws
 * @param {any} parent
 * @param {WalkContext} c
 * @param {Node | null} [skip]
 */
function walkChildren(ws, parent, c, skip) {
  if (ws.depth >= MAX_DEPTH) return tooDeep(ws, c);
  ws.depth++;
  try {
    walkChildrenOf(ws, parent, c, skip);
  } finally {
    ws.depth--;
  }
}

// The first time the walk reaches MAX_DEPTH: say so where it happened (its text so far is a
// line of its own, and the note follows it).
/**
 * @param {WalkState} ws
 * @param {WalkContext} c
 */
function tooDeep(ws, c) {
  if (ws.tooDeep) return;
  ws.tooDeep = true;
  if (c.name) return; // inside an element's name: the name is cut there, silently
  flush(ws);
  ws.lines.push({
    s: `[the page nests elements deeper than ${MAX_DEPTH} levels here: what lies deeper is not read]`,
    el: null, dist: c.dist, above: c.above, note: true,
  });
}

/**
 * @param {WalkState} ws
 * @param {any} parent
 * @param {WalkContext} c
 * @param {Node | null} [skip]
 */
function walkChildrenOf(ws, parent, c, skip) {
  const rows = ROW_PARENTS.has(parent.tagName);
  let n = firstChildOf(parent);
  if (rows && !skip && !c.m && !c.name && parent.childElementCount > MIN_RUN_ROWS) {
    // Rows far above (a long table scrolled down): one run up to the first row that is
    // not, found by a binary search on the rows' boxes, instead of a visit per row.
    const kids = parent.children;
    const k = firstWhere(kids, (row) => rectOf(row).bottom + c.oy >= -ws.marginV * ws.vh);
    if (k > 1 && k < kids.length) {
      countRun(ws, parent, kids[0], c, kids[k]);
      n = kids[k];
    }
  }
  const onScreen = c.name ? null : rowsOnScreen(parent) || flexOrder(parent, c.st);
  if (onScreen) {
    for (const node of onScreen) {
      if (node === skip) continue;
      const t = nodeTypeOf(node);
      if (t === 1) visit(ws, node, c);
      else if (t === 3) textNode(ws, /** @type {Text} */ (node), c);
    }
    return;
  }
  for (; n; n = nextSiblingOf(n)) {
    if (n === skip) continue;
    const t = nodeTypeOf(n);
    if (t === 1) {
      // In a table or list, once a row lies far below, so do all the rows after it.
      if (visit(ws, n, c) === FAR_BELOW && rows) {
        if (n.nextElementSibling) countRun(ws, parent, n.nextElementSibling, c);
        return;
      }
    } else if (t === 3) textNode(ws, n, c);
  }
}

// One element and what lies inside it; FAR_ABOVE / FAR_BELOW when it was counted beyond the
// listing margin instead of walked.
/**
 * @param {WalkState} ws
 * @param {any} el
 * @param {WalkContext} c
 * @returns {number | void}
 */
function visit(ws, el, c) {
  ws.visited++;
  const tag = el.tagName;
  // A form's controls may hide its own properties (a field named "tagName" makes tag that
  // field): such a form is read as what it is to a person, a block of its children.
  if ((tag === "FORM" || typeof tag !== "string") && isForm(el) && isClobbered(el)) {
    return visitClobberedForm(ws, el, c);
  }
  if (SKIP.has(tag)) return;
  if (el.namespaceURI === SVG_NS && !el.firstElementChild && SVG_SHAPES.has(tag)) {
    if (!el.hasAttribute("onclick") && !el.hasAttribute("role") && !el.hasAttribute("tabindex")) return;
  }
  if (tag === "title" && el.namespaceURI === SVG_NS) return svgTitle(ws, el, c);
  const st = c.view.getComputedStyle(el);
  const display = st.display;
  if (hiddenByStyle(el, st, display) && !headerIcon(el, st, display) && !stepperArrow(el, st, display)) {
    return hiddenScan(ws, el);
  }
  if (tag === "SLOT") return visitSlot(ws, el, st, c);
  const isRoot = el === c.doc.body || el === c.doc.documentElement;
  const pos = st.position;
  const contents = display === "contents";
  let x = 0, y = 0, w = 0, h = 0;
  let selfVisible = true;
  let dist = c.dist;
  let above = c.above;
  let far = false;
  if (!contents) {
    if (placeBox(ws, el, st, c, isRoot, pos)) {
      // Clipped away or a 1px box: out of sight, but a name still holds its text (the
      // visually-hidden class, CSS image replacement), as the accessible name does.
      if (!c.name) return hiddenScan(ws, el);
      selfVisible = false;
    } else {
      const b = ws.box;
      ({ x, y, w, h, dist, above, far } = b);
      selfVisible = b.visible;
      if (far && selfVisible && !isRoot && pos !== "fixed" && pos !== "sticky" && !c.name && !rootOf(el)) {
        return countBeyond(ws, el, above, c);
      }
    }
  }
  if (st.visibility !== "visible") selfVisible = false;

  const block = !(display.startsWith("inline") || contents);
  if (block) endBlock(ws, c);
  else if (c.name && display !== "inline" && !contents) c.name.push(" "); // an inline block is a word of its own
  // Each computed-style property read builds its value again: read once here.
  const transformed = st.transform !== "none";
  const clipping = !contents && !isRoot && clipsOverflow(st);
  const cc = childContext(el, st, pos, c, selfVisible, dist, above, far, transformed);
  if (c.row && !c.name && isCellEl(el)) {
    flush(ws);
    c.row.starts.push(ws.lines.length); // a cell of the row being read as one line
  }
  if (clipping) cc.clip = intersect(cc.clip, x, y, w, h);
  narrowClips(cc, transformed, pos);

  // Iframes: same-origin ones are walked, cross-origin ones listed as such.
  if (tag === "IFRAME" || tag === "FRAME") {
    frameOf(ws, el, st, cc, x, y, w, h, selfVisible, far);
    if (block && !c.name) flush(ws);
    return;
  }

  let kind = null;
  if (selfVisible && !far) kind = interactiveKind(el, tag, st, c);
  if (kind && c.fold) kind = null; // inside a link/button: part of its name
  // An area a person scrolls is listed once, with what lies beyond its scrollport (unless
  // it is a control of its own kind: a field, a link, a button).
  let scrollOf = null;
  if (selfVisible && !far && !c.fold && !c.name && clipping && (kind === null || WEAK_KINDS.has(kind)) && isScroller(el, st)) {
    scrollOf = kind;
    kind = "scroll";
  }

  if (kind) describe(ws, el, tag, st, kind, cc, [x, y, w, h], c, scrollOf);
  else if (!visitPlain(ws, el, tag, cc, c, selfVisible, x, y)) return;
  if (block) endBlock(ws, c);
  else if (c.name && display !== "inline" && !contents) c.name.push(" ");
}

// Not rendered, or hidden from a person (and from assistive technology) as a whole.
/**
 * @param {Element} el
 * @param {CSSStyleDeclaration} st
 * @param {string} display st.display (read once by visit())
 */
function hiddenByStyle(el, st, display) {
  if (display === "none") return true;
  if (el.getAttribute("aria-hidden") === "true" || el.hasAttribute("inert")) return true;
  return st.opacity === "0" || st.contentVisibility === "hidden";
}

// A block boundary: a space in the name being collected, or the end of a text line.
/**
 * @param {WalkState} ws
 * @param {WalkContext} c
 */
function endBlock(ws, c) {
  if (c.name) c.name.push(" ");
  else flush(ws);
}

// A form whose controls hide its properties: its box and style are the browser's to
// give (getComputedStyle asks the window), and its children are reached through Node's
// own getters. Forms draw nothing of their own and are never targets, so nothing else of
// the form itself is read.
/**
 * @param {WalkState} ws
 * @param {HTMLFormElement} form
 * @param {WalkContext} c
 */
function visitClobberedForm(ws, form, c) {
  const st = c.view.getComputedStyle(form);
  if (st.display === "none") return;
  endBlock(ws, c);
  for (const n of formChildren(form)) {
    const t = nodeTypeOf(n);
    if (t === 1) visit(ws, n, c);
    else if (t === 3) textNode(ws, /** @type {Text} */ (n), c);
  }
  endBlock(ws, c);
}

// A <slot>: what is assigned to it, else its fallback content.
/**
 * @param {WalkState} ws
 * @param {HTMLSlotElement} el
 * @param {CSSStyleDeclaration} st
 * @param {WalkContext} c
 */
function visitSlot(ws, el, st, c) {
  const assigned = el.assignedNodes();
  const cc = Object.assign({}, c, { st, textHiddenCache: undefined });
  if (assigned.length) {
    for (const n of assigned) {
      if (n.nodeType === 1) visit(ws, n, cc);
      else if (n.nodeType === 3) textNode(ws, /** @type {Text} */ (n), cc);
    }
  } else walkChildren(ws, el, cc);
}

// The element's box, into ws.box (x, y, w, h in top-level viewport coordinates; visible,
// dist, above, far); true when the element is hidden as a whole instead (clipped away, or an
// empty or clipped-out box that clips its content).
/**
 * @param {WalkState} ws
 * @param {Element} el
 * @param {CSSStyleDeclaration} st
 * @param {WalkContext} c
 * @param {boolean} isRoot
 * @param {string} pos
 */
function placeBox(ws, el, st, c, isRoot, pos) {
  if (!isRoot && clipHidesAll(st)) return true;
  const box = ws.box;
  const b = boxOf(el);
  let x, y, w, h;
  if (c.m) {
    // In a scaled or rotated frame: the box around the element's transformed corners,
    // as the hands compute it (core/world/geometry.py frame_map).
    [x, y, w, h] = mapBox(c.m, b.left, b.top, b.width, b.height);
  } else {
    x = b.left + c.ox;
    y = b.top + c.oy;
    w = b.width;
    h = b.height;
  }
  const clip = pos === "fixed" ? c.fixedClip : pos === "absolute" ? c.absClip : c.clip;
  box.visible = true;
  if (!isRoot) {
    if (w < 1 || h < 1) {
      if (clipsOverflow(st) && el.tagName !== "IFRAME") return true;
      box.visible = false;
    } else if (!intersects(clip, x, y, w, h)) {
      if (clipsOverflow(st)) return true;
      box.visible = false;
    }
  }
  // Distance from the top-level viewport, for "~" and the listing margin.
  const { vw, vh, marginV } = ws;
  const dy = y + h <= 0 ? -(y + h) : y >= vh ? y - vh : 0;
  const dx = x + w <= 0 ? -(x + w) : x >= vw ? x - vw : 0;
  box.x = x;
  box.y = y;
  box.w = w;
  box.h = h;
  box.dist = Math.max(dy / vh, dx / vw);
  box.above = y + h <= 0;
  box.far = dy > marginV * vh || dx > marginV * vw;
  return false;
}

// The context an element hands its children; clip is the one its own position gives it
// (visit() narrows it to the element's box when it clips its overflow).
/**
 * @param {Element} el
 * @param {CSSStyleDeclaration} st
 * @param {string} pos st.position
 * @param {WalkContext} c
 * @param {boolean} selfVisible
 * @param {number} dist
 * @param {boolean} above
 * @param {boolean} far
 * @param {boolean} transformed the element has a transform
 * @returns {WalkContext}
 */
function childContext(el, st, pos, c, selfVisible, dist, above, far, transformed) {
  return {
    doc: c.doc, view: c.view, ox: c.ox, oy: c.oy, m: c.m, tf: c.tf || transformed,
    clip: pos === "fixed" ? c.fixedClip : pos === "absolute" ? c.absClip : c.clip,
    absClip: c.absClip, fixedClip: c.fixedClip, bg: backgroundOf(st, c.bg),
    vis: selfVisible, st, name: c.name, fold: c.fold, suppress: c.suppress,
    frame: c.frame, shadow: c.shadow, inInteractive: c.inInteractive,
    dist, above, far, textHiddenCache: undefined,
    // A listbox or menu the page did not make clickable still has items a person clicks.
    itemsOf: LIST_ROLES.has(el.getAttribute("role")) ? el : null,
    row: c.row,
  };
}

// The clips of positioned and fixed descendants: a positioned element contains the first,
// a transformed one both.
/**
 * @param {WalkContext} cc
 * @param {boolean} transformed the element has a transform
 * @param {string} pos
 */
function narrowClips(cc, transformed, pos) {
  if (pos !== "static") cc.absClip = cc.clip;
  if (transformed || pos === "fixed") {
    cc.absClip = cc.clip;
    if (transformed) cc.fixedClip = cc.clip;
  }
}

// The effective background for the same-colour-as-background test: the element's own when
// opaque, unknown (null) under an image or a translucent colour, else the parent's.
/**
 * @param {CSSStyleDeclaration} st
 * @param {number[] | null} bg
 */
function backgroundOf(st, bg) {
  const bgc = st.backgroundColor;
  if (st.backgroundImage !== "none") return null;
  if (bgc !== "rgba(0, 0, 0, 0)" && bgc !== "transparent") {
    const p = parseRgb(bgc);
    if (p && p[3] > 0.95) return p;
    if (p && p[3] > 0.05) return null;
  }
  return bg;
}

// An element that is no target of its own: its text and children, read as the page's.
// false when visit() is done with it (no block end follows).
/**
 * @param {WalkState} ws
 * @param {any} el
 * @param {string} tag
 * @param {WalkContext} cc
 * @param {WalkContext} c
 * @param {boolean} selfVisible
 * @param {number} x
 * @param {number} y
 */
function visitPlain(ws, el, tag, cc, c, selfVisible, x, y) {
  if (tag === "LABEL" && el.control && !c.name) {
    const ctl = el.control;
    // A field a widget shrank to nothing (Tagify's original input) is not the one it names.
    const box = rectOf(ctl);
    const drawn = box.width >= 1 && box.height >= 1;
    if (drawn && !ctl.hasAttribute("aria-label") && !ctl.hasAttribute("aria-labelledby")) cc.suppress = true;
  }
  if (tag === "BR") endBlock(ws, c);
  if (tag === "IMG" && c.name && cc.st && cc.st.visibility === "visible") c.name.push(" " + (el.getAttribute("alt") || "") + " ");
  else if (tag === "IMG" && !c.name && selfVisible && cc.vis && !cc.far) iconAlt(ws, el, c);
  if (tag === "svg" && el.namespaceURI === SVG_NS) {
    svgRoot(ws, el, cc);
    return false;
  }
  if (tag === "text" && el.namespaceURI === SVG_NS) {
    svgText(ws, el, cc, x, y);
    return false;
  }
  if (MEDIA_TAGS.has(tag)) return false;
  const range = c.name ? null : rangeOf(el, tag);
  if (range) {
    // A bar a person reads but cannot act on: its reading joins the text, after its name
    // (a <progress> or <meter> may have a label, whose text is then not shown twice).
    const labels = el.labels ? [...el.labels] : [];
    const name = accessibleName(el, "strong", "") || (labels.length ? labelText(labels[0], el) : "");
    if (cc.vis && !cc.far) textLine(ws, (name ? `${name}: ` : "") + rangeText(range), c, null);
    if (tag === "PROGRESS" || tag === "METER") return true; // their content is never drawn
  }
  if (!c.name && isRowEl(el)) rowLine(ws, el, cc);
  else walkInto(ws, el, cc);
  if (!c.name && cc.vis && !cc.far && el.hasAttribute("aria-sort")) {
    // A sorted column's header that is only text: its direction follows its text (on a
    // control inside the header, the control's line carries it as sort=).
    const sort = sortOf(el);
    if (sort && !el.querySelector(SELECTOR)) ws.buf += ` (sorted ${sort})`;
  }
  return true;
}

// Whether `el` holds elements a person acts on: its descendants, or what its slots show.
/** @param {Element} el */
function holdsControls(el) {
  return !!el.querySelector(SELECTOR) || slotsControls(el);
}

/** @param {Element} el */
function slotsControls(el) {
  for (const slot of el.querySelectorAll("slot")) {
    for (const shown of /** @type {HTMLSlotElement} */ (slot).assignedElements({ flatten: true })) {
      if (shown.matches(SELECTOR) || shown.querySelector(SELECTOR)) return true;
    }
  }
  return false;
}

// An icon's alt text is read where it stands ("True" and "False" in a table's cells), as
// a person reads the icon: the alt of an image icon-sized or in a table cell.
/**
 * @param {WalkState} ws
 * @param {HTMLImageElement} el
 * @param {WalkContext} c
 */
function iconAlt(ws, el, c) {
  const alt = clean(el.getAttribute("alt") || "");
  if (!alt || c.suppress) return;
  const r = rectOf(el);
  if ((r.width > 48 || r.height > 48) && !el.closest("td, th")) return;
  if (!ws.buf) {
    ws.bufDist = c.dist;
    ws.bufAbove = c.above;
  }
  ws.buf += ` ${alt} `;
}

// An element's children, or its shadow root's (which this walk then has entered).
/**
 * @param {WalkState} ws
 * @param {Element} el
 * @param {WalkContext} cc
 * @param {Node | null} [skip]
 */
function walkInto(ws, el, cc, skip) {
  const root = rootOf(el);
  if (root) ws.rootsWalked.add(root);
  walkChildren(ws, root || el, root ? Object.assign(cc, { shadow: true }) : cc, skip);
}

// The walk's kind for an element a person may act on, or null: "strong" (a link, a button,
// a role), "field", "editable", "label" (a styled checkbox's label), "container" (a handler
// around controls of its own), "list" (a clickable list: its items are the targets) or
// "weak" (a handler, a cursor or a tabindex alone).
/**
 * @param {any} el
 * @param {string} tag
 * @param {CSSStyleDeclaration} st
 * @param {WalkContext} c
 * @returns {string | null}
 */
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
      // (A hidden textarea's label is not: the editor that replaced it is named by it.)
      if (ctl && ctl.tagName !== "TEXTAREA" && ctl.checkVisibility && !ctl.checkVisibility({ opacityProperty: true, visibilityProperty: true })) {
        return "label"; // a styled checkbox/radio: the label is what a person clicks
      }
      return null;
    }
    default:
  }
  return attributeKind(el, st, c);
}

// interactiveKind() for an element whose tag says nothing: its role, contenteditable,
// handlers, cursor and tabindex.
/**
 * @param {Element} el
 * @param {CSSStyleDeclaration} st
 * @param {WalkContext} c
 * @returns {string | null}
 */
function attributeKind(el, st, c) {
  // An editor's root is a text field whatever role it carries (CodeMirror 6 and
  // ProseMirror say role=textbox): named by its label, its text read as its value.
  if (isEditableRoot(el) || codeEditorAt(el)) return "editable";
  const role = el.getAttribute("role");
  if (role && ROLES.has(role.trim().split(/\s+/)[0])) return "strong";
  if (role === "row" && !c.name) return null; // read as a line of cells (tables.js)
  if (role && CELL_ROLES.has(role) && isGridCell(el)) return "strong";
  // A control with its own handler inside a clickable row or card (a trash icon on a
  // message) is a target of its own; a pointer cursor there may be the row's.
  if (el.hasAttribute("onclick")) return holdsControls(el) ? "container" : isItemList(el) ? "list" : "weak";
  // One listener for the controls inside (a web component's tab nav, whose tabs are slotted
  // in from the light DOM): the controls are the targets, not the wrapper.
  // (Not inside a control's name: what a person reads there is that control, its target.)
  if (handlers && !c.name && handlerTarget(el, st)) return isItemList(el) ? "list" : slotsControls(el) ? "container" : "weak";
  if (c.itemsOf && isListItem(el, c.itemsOf)) return "weak";
  if (c.inInteractive) return null;
  const tabindex = el.getAttribute("tabindex");
  // (A pointer merely inherited from the parent is not a new target; the parent's style is
  // read only then.)
  const pointer = st.cursor === "pointer" && !(c.st && c.st.cursor === "pointer");
  if ((pointer || (tabindex !== null && +tabindex >= 0)) && !holdsControls(el)) {
    if (el === c.doc.body || el === c.doc.documentElement) return null;
    return isItemList(el) ? "list" : "weak";
  }
  return null;
}
