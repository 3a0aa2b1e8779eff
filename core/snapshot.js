// handrail's page-side code: the index registry and the one-pass page walk ("the eyes").
//
// Evaluated once per isolated world by core/world.py, then `__handrail.init(seed)`.
// Nothing here is visible to page scripts (it lives in our isolated world), and the DOM
// methods we call are the browser's own, not whatever the page patched in its world.
//
//   __handrail.element(i)   the element shown as [i], or throws "handrail:stale:i" (removed,
//                           or an earlier document's index) / "handrail:unknown:i" (never
//                           issued); world.py turns those into errors written for the model
//   __handrail.indexOf(el)  the element's index (assigned on first sight, never reused)
//   __handrail.probe()      cheap reading for before/after change reports
//   __handrail.snapshot(o)  the digest; see core/snapshot.py for the result's shape
(() => {
  "use strict";
  if (globalThis.__handrail) return;

  // ---- registry ------------------------------------------------------------------------
  const byEl = new WeakMap(); // Element -> index
  const byIdx = new Map(); // index -> WeakRef(Element)
  let docSeed = 1; // first index this document may use; lower ones were earlier documents'
  let next = 1;
  let seenUpTo = 0; // `next` at the end of the previous snapshot; 0 = no snapshot yet
  let mutations = 0;
  let snapNo = 0;
  const farSeen = new WeakMap(); // Element -> snapshot number in which it was only counted

  function indexOf(el) {
    let i = byEl.get(el);
    if (i === undefined) {
      i = next++;
      byEl.set(el, i);
      byIdx.set(i, new WeakRef(el));
    }
    return i;
  }

  function element(i) {
    const ref = byIdx.get(i);
    if (!ref) throw new Error(`handrail:${i < docSeed ? "stale" : "unknown"}:${i}`);
    const el = ref.deref();
    if (!el || !el.isConnected || !el.ownerDocument.defaultView) {
      throw new Error(`handrail:stale:${i}`);
    }
    return el;
  }

  const observer = new MutationObserver((records) => {
    mutations += records.length;
  });

  function init(seed) {
    docSeed = Math.max(docSeed, seed);
    next = Math.max(next, seed);
    try {
      observer.observe(document, {
        subtree: true,
        childList: true,
        attributes: true,
        characterData: true,
      });
    } catch (_e) {
      // No document element yet: the count stays 0, which only makes reports vaguer.
    }
    return next;
  }

  // ---- what counts as interactive --------------------------------------------------------
  const ROLES = new Set([
    "button", "link", "checkbox", "radio", "switch", "tab", "menuitem", "menuitemcheckbox",
    "menuitemradio", "option", "combobox", "textbox", "searchbox", "slider", "spinbutton",
    "treeitem",
  ]);
  const IMPLIED_ROLE = {
    A: "link", BUTTON: "button", SELECT: "combobox", TEXTAREA: "textbox", SUMMARY: "button",
  };
  const INPUT_ROLE = {
    checkbox: "checkbox", radio: "radio", button: "button", submit: "button", reset: "button",
    image: "button", range: "slider", number: "spinbutton", search: "searchbox",
  };
  const SELECTOR = [
    "a[href]", "button", "input:not([type=hidden])", "select", "textarea", "summary",
    "[onclick]", "[contenteditable='']", "[contenteditable=true]",
    "[contenteditable=plaintext-only]", "[tabindex]:not([tabindex^='-'])",
    ...[...ROLES].map((r) => `[role=${r}]`),
  ].join(",");
  // Subtrees never read: not rendered, or not text a person reads.
  const SKIP = new Set([
    "SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "META", "LINK", "TITLE", "BASE",
    "OPTION", "OPTGROUP", "DATALIST", "PARAM", "SOURCE", "TRACK",
  ]);
  const ROW_PARENTS = new Set(["TBODY", "THEAD", "TFOOT", "TABLE", "UL", "OL", "DL"]);
  const FAR_ABOVE = 1;
  const FAR_BELOW = 2;
  const INSTR =
    /ignore (all |any |the )?(previous|prior|above|earlier)|disregard|instruction|system prompt|\bsystem\b|\bassistant\b|you must|new task|forget (all|everything|your)/i;

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
  function labelText(label, control) {
    // A wrapping label's text without the control's own content (a select's options).
    let out = "";
    const walk = (n) => {
      for (let c = n.firstChild; c; c = c.nextSibling) {
        if (c.nodeType === 3) out += c.data;
        else if (c.nodeType === 1) {
          if (c === control || SKIP.has(c.tagName)) continue;
          const t = c.tagName;
          if (t === "SELECT" || t === "TEXTAREA" || t === "INPUT" || t === "BUTTON") continue;
          if (t === "IMG") out += " " + (c.getAttribute("alt") || "") + " ";
          else walk(c);
        }
      }
    };
    walk(label);
    return clean(out);
  }
  function idrefText(el, attr) {
    const ids = (el.getAttribute(attr) || "").trim();
    if (!ids) return "";
    const root = el.getRootNode();
    const parts = [];
    for (const id of ids.split(/\s+/)) {
      const ref = root.getElementById ? root.getElementById(id) : null;
      if (ref) parts.push(ref === el ? el.getAttribute("aria-label") || "" : ref.textContent);
    }
    return clean(parts.join(" "));
  }
  const CARD =
    /card.?num|cardnumber|credit.?card|\bcc.?(num|number|no)\b|\bcvc\b|\bcvv\b|\bcsc\b|security code|expir|exp.?date|\bmm\s*\/\s*yy|name on card|cardholder/i;
  const OTP =
    /\botp\b|one.?time|\b2fa\b|two.?factor|verification code|auth(entication)? code|\btotp\b|passcode|sms code|\d.digit code/i;
  function sensitiveOf(el, tag, name) {
    if (tag !== "INPUT" && tag !== "TEXTAREA") return null;
    const type = (el.type || "").toLowerCase();
    if (["checkbox", "radio", "submit", "button", "reset", "image", "file", "range", "color"].includes(type)) return null;
    const ac = (el.getAttribute("autocomplete") || "").toLowerCase();
    if (type === "password" || /current-password|new-password/.test(ac)) return "password";
    if (/\bcc-/.test(ac)) return "payment";
    if (/one-time-code/.test(ac)) return "otp";
    const hay = [el.name, el.id, name, el.placeholder, el.getAttribute("aria-label")].join(" ");
    if (CARD.test(hay)) return "payment";
    if (OTP.test(hay)) return "otp";
    return null;
  }
  const CAPTCHA_SRC = [
    [/google\.com\/recaptcha|recaptcha\.net|gstatic\.com\/recaptcha/i, "recaptcha"],
    [/hcaptcha\.com/i, "hcaptcha"],
    [/challenges\.cloudflare\.com/i, "turnstile"],
  ];
  const CAPTCHA_CLASS = [
    [".g-recaptcha", "recaptcha"], [".h-captcha", "hcaptcha"], [".cf-turnstile", "turnstile"],
  ];
  const ROBOT_TEXT = /i'?m not a robot|i am not a robot|verify (that )?you are (a )?human|are you a robot/i;
  const PAYMENT_SRC =
    /js\.stripe\.com|checkout\.stripe\.com|stripe\.network|adyen|braintree|paypal\.com|paypalobjects|checkout\.com|squareup|klarna|payments?\./i;

  function deepActive() {
    let a = document.activeElement;
    for (let k = 0; a && k < 20; k++) {
      if (a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
      else if ((a.tagName === "IFRAME" || a.tagName === "FRAME") && a.contentDocument) {
        const inner = a.contentDocument.activeElement;
        if (!inner || inner === a.contentDocument.body) break;
        a = inner;
      } else break;
    }
    return a;
  }

  // ---- the walk -----------------------------------------------------------------------
  function snapshot(opts) {
    const t0 = performance.now();
    snapNo++;
    const maxChars = opts.maxChars || 40000;
    const marginV = opts.margin === undefined ? 1.5 : opts.margin;
    const maxLine = opts.maxLine || 300;
    const includeText = opts.includeText !== false;
    const firstOfDoc = seenUpTo === 0;
    const newFrom = seenUpTo;

    const doc = document;
    const win = window;
    const VW = win.innerWidth;
    const VH = win.innerHeight;
    const scrollEl = doc.scrollingElement || doc.documentElement;
    const topOrigin = location.origin;
    const focusedEl = deepActive();

    const lines = []; // {s, el (record|null), dist, above}
    const records = [];
    const frames = [];
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
      for (let k = 0; k < e.length; k += maxLine) {
        let part = e.slice(k, k + maxLine);
        if (k > 0 && /^[\s*~]*\[/.test(part)) part = part.replace("[", "［");
        lines.push({ s: part, el: null, dist: bufDist, above: bufAbove });
      }
      lastName = null;
    }

    function isNew(el, index) {
      if (firstOfDoc || index < newFrom) return false;
      const counted = farSeen.get(el);
      return counted === undefined || counted >= snapNo;
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

    // Subtrees entirely outside the listing margin are counted, not described. Elements
    // counted are remembered, so scrolling to them later does not mark them new.
    function countOne(x) {
      farSeen.set(x, snapNo);
      if (x.tagName === "INPUT" && (x.type === "password" || /password|one-time-code|cc-/.test(x.getAttribute("autocomplete") || ""))) {
        const kind = sensitiveOf(x, "INPUT", "");
        if (kind) signalField(kind, x, indexOf(x), x.name || "", null, false);
      }
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

    function countBeyond(el, above) {
      let n = 0;
      if (el.matches(SELECTOR)) {
        countOne(el);
        n++;
      }
      for (const x of el.querySelectorAll(SELECTOR)) {
        countOne(x);
        n++;
      }
      addBeyond(above, n, (el.textContent || "").length);
      return above ? FAR_ABOVE : FAR_BELOW;
    }

    function countRun(parent, first) {
      // `first` and every later sibling (rows of a table or list below the margin): one
      // query on the parent, then a binary search for where `first` starts.
      const list = parent.querySelectorAll(SELECTOR);
      let lo = 0;
      let hi = list.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        const x = list[mid];
        if (x === first || first.compareDocumentPosition(x) & Node.DOCUMENT_POSITION_FOLLOWING) hi = mid;
        else lo = mid + 1;
      }
      for (let k = lo; k < list.length; k++) countOne(list[k]);
      const range = first.ownerDocument.createRange();
      range.setStartBefore(first);
      range.setEndAfter(parent.lastChild);
      addBeyond(false, list.length - lo, range.toString().length);
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
    function walkChildren(parent, c) {
      const rows = ROW_PARENTS.has(parent.tagName);
      for (let n = parent.firstChild; n; n = n.nextSibling) {
        const t = n.nodeType;
        if (t === 1) {
          // In a table or list, once a row lies far below, so do all the rows after it.
          if (visit(n, c) === FAR_BELOW && rows) {
            if (n.nextElementSibling) countRun(parent, n.nextElementSibling);
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
        x = b.left + c.ox;
        y = b.top + c.oy;
        w = b.width;
        h = b.height;
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
        if (far && selfVisible && !isRoot && pos !== "fixed" && pos !== "sticky" && !c.name && !el.shadowRoot) {
          return countBeyond(el, above);
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
        doc: c.doc, view: c.view, ox: c.ox, oy: c.oy, clip, absClip, fixedClip, bg,
        vis: selfVisible, st, name: c.name, fold: c.fold, suppress: c.suppress,
        frame: c.frame, shadow: c.shadow, cursor: st.cursor, inInteractive: c.inInteractive,
        dist, above, far, textHiddenCache: undefined,
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

      if (kind) {
        describe(el, tag, st, kind, cc, x, y, w, h, dist, above, c);
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
        if (tag === "svg" || tag === "SVG") {
          if (c.name) {
            const t = el.getAttribute("aria-label") || (el.querySelector("title") || {}).textContent || "";
            if (t) c.name.push(" " + t + " ");
          }
          return;
        }
        if (tag === "IMG" || tag === "CANVAS" || tag === "VIDEO" || tag === "AUDIO" || tag === "OBJECT" || tag === "EMBED") return;
        walkChildren(el.shadowRoot || el, el.shadowRoot ? Object.assign(cc, { shadow: true }) : cc);
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
      if (c.inInteractive) return null;
      if (el.hasAttribute("onclick")) return el.querySelector(SELECTOR) ? "container" : "weak";
      const tabindex = el.getAttribute("tabindex");
      const pointer = st.cursor === "pointer" && c.cursor !== "pointer";
      if ((pointer || (tabindex !== null && +tabindex >= 0)) && !el.querySelector(SELECTOR)) {
        if (el === c.doc.body || el === c.doc.documentElement) return null;
        return "weak";
      }
      return null;
    }

    function describe(el, tag, st, kind, cc, x, y, w, h, dist, above, c) {
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
      if (kind === "field" || kind === "editable") {
        // A select's options or an editor's text are its value, not page text.
        if (kind === "editable") {
          const inner = el.innerText || "";
          rec.attrs.value = cut(clean(inner), 200);
        }
      } else if (kind === "container") {
        cc.inInteractive = true;
        walkChildren(el.shadowRoot || el, cc);
      } else {
        parts = [];
        cc.name = parts;
        cc.fold = true;
        cc.inInteractive = true;
        walkChildren(el.shadowRoot || el, el.shadowRoot ? Object.assign(cc, { shadow: true }) : cc);
      }
      const content = parts ? clean(parts.join("")) : "";
      const a = rec.attrs;
      const role = el.getAttribute("role");
      let implied = IMPLIED_ROLE[tag] || null;
      if (tag === "INPUT") implied = INPUT_ROLE[el.type] || "textbox";
      if (role && role !== implied) a.role = role;
      rec.role = role || implied;

      // Accessible name: aria-labelledby, aria-label, label[for], wrapping label,
      // (content for links/buttons), placeholder, title, alt.
      let name = idrefText(el, "aria-labelledby") || clean(el.getAttribute("aria-label") || "");
      const isField = tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA";
      if (!name && isField && el.labels && el.labels.length) {
        const labels = [...el.labels];
        labels.sort((p, q) => (q.htmlFor === el.id ? 1 : 0) - (p.htmlFor === el.id ? 1 : 0));
        for (const l of labels) {
          name = labelText(l, el);
          if (name) break;
        }
      }
      if (!name && kind === "label") name = labelText(el, el.control);
      if (!name && tag === "INPUT" && ["submit", "button", "reset"].includes(el.type)) {
        name = clean(el.value || (el.type === "submit" ? "Submit" : el.type === "reset" ? "Reset" : ""));
      }
      if (!name && tag === "INPUT" && el.type === "image") name = clean(el.alt || "");
      if (!name && content) name = content;
      if (!name && (el.getAttribute("placeholder") || "")) name = clean(el.getAttribute("placeholder"));
      if (!name && el.title) name = clean(el.title);
      if (!name && kind === "container") name = clean((el.textContent || "").slice(0, 200));
      name = cut(name, 150);
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
      rec.sensitive = sensitiveOf(el, tag, name);
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
      const expanded = el.getAttribute("aria-expanded");
      if (expanded !== null) a.expanded = expanded === "true" ? "true" : "false";
      if (tag === "SUMMARY" && el.parentElement && el.parentElement.tagName === "DETAILS") {
        a.expanded = el.parentElement.open ? "true" : "false";
      }
      if (el.required || el.getAttribute("aria-required") === "true") a.required = "";
      const disabled = !!el.disabled || el.getAttribute("aria-disabled") === "true" || !!el.closest("fieldset:disabled");
      if (disabled) a.disabled = "";
      rec.disabled = disabled;
      if (tag === "A") {
        const href = shortHref(el, topOrigin);
        if (href !== null) a.href = href;
        if (el.target === "_blank") a.target = "_blank";
      }
      if (rec.focused) a.focused = "";
      if (rec.sensitive) signalField(rec.sensitive, el, index, name, c.frame, c.shadow);
      // A control inside a CAPTCHA widget is part of the CAPTCHA (the policy refuses clicks
      // on it); not printed in the line, only carried in the element's facts.
      const widget = el.closest(".g-recaptcha, .h-captcha, .cf-turnstile");
      if (widget) a.captcha = widget.className;
      if (ROBOT_TEXT.test(name)) signals.captcha.push({ kind: "generic", where: cut(name, 80) });

      // The line. Attribute values are page strings: escaped and quoted where needed.
      let attrs = "";
      for (const k of ["role", "type", "name", "placeholder", "value", "selected", "options", "multiple", "checked", "expanded", "required", "disabled", "href", "target", "focused"]) {
        const v = a[k];
        if (v === undefined) continue;
        if (v === "") attrs += ` ${k}`;
        else if (k === "placeholder" || k === "value" || k === "selected" || k === "options") attrs += ` ${k}=${quoted(v, k === "options" ? 240 : 100)}`;
        else attrs += ` ${k}=${attrVal(v, 100)}`;
      }
      const mark = (rec.isNew ? "*" : "") + (rec.inView ? "" : "~");
      const nameText = esc(name);
      rec.line = `${mark}[${index}]<${rec.tag}${attrs}>${nameText}${nameText ? `</${rec.tag}>` : ""}`;
      entry.s = rec.line;
      lastName = name;
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
        const index = indexOf(el);
        interactiveSeen++;
        const inView = cc.dist === 0;
        const rec = {
          index, tag: "iframe", role: null, name: "cross-origin frame (contents not readable)",
          attrs: { src: cut(src, 120) }, line: "", rect: [x, y, w, h], inView,
          isNew: isNew(el, index), frame: cc.frame, shadow: !!cc.shadow,
          editable: false, disabled: false, inputType: null, autocomplete: null,
          formAction: null, formMethod: null, submits: false, focused: false, sensitive: null,
        };
        const mark = (rec.isNew ? "*" : "") + (inView ? "" : "~");
        rec.line = `${mark}[${index}]<iframe src=${attrVal(src, 120)}>cross-origin frame (contents not readable)</iframe>`;
        records.push(rec);
        lines.push({ s: rec.line, el: rec, dist: cc.dist, above: cc.above });
        frames.push({ url: src, crossOrigin: true, index, rect: [x, y, w, h] });
        return;
      }
      const view = inner.defaultView;
      if (!view || !inner.body) return;
      frames.push({ url: inner.URL, crossOrigin: false, index: null, rect: [x, y, w, h] });
      const ox = x + el.clientLeft + parseFloat(st.paddingLeft);
      const oy = y + el.clientTop + parseFloat(st.paddingTop);
      const box = intersect(cc.clip, ox, oy, el.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight), el.clientHeight - parseFloat(st.paddingTop) - parseFloat(st.paddingBottom));
      const fc = {
        doc: inner, view, ox, oy, clip: box, absClip: box, fixedClip: box, bg: null, vis: true,
        st: null, name: null, fold: false, suppress: false, frame: inner.URL, shadow: false,
        cursor: "auto", inInteractive: false, dist: cc.dist, above: cc.above, far: false,
      };
      flush();
      visit(inner.body, fc);
      flush();
      countComments(inner);
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
    const rootCtx = {
      doc, view: win, ox: 0, oy: 0, clip: docClip, absClip: docClip, fixedClip: viewClip,
      bg: [255, 255, 255], vis: true, st: null, name: null, fold: false, suppress: false,
      frame: null, shadow: false, cursor: "auto", inInteractive: false, dist: 0, above: false,
      far: false,
    };
    const htmlBg = parseRgb(win.getComputedStyle(doc.documentElement).backgroundColor);
    if (htmlBg && htmlBg[3] > 0.95) rootCtx.bg = htmlBg;
    if (doc.body) visit(doc.body, rootCtx);
    flush();
    countComments(doc);

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
    const fmt = (n) => n.toLocaleString("en-US");
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
      const rank = (l) => (l.dist > 0 ? 0 : l.el ? 2 : 1);
      order.sort((p, q) => {
        const lp = out[p], lq = out[q];
        const rp = rank(lp), rq = rank(lq);
        if (rp !== rq) return rp - rq;
        if (rp === 0 && lp.dist !== lq.dist) return lq.dist - lp.dist;
        return q - p;
      });
      let cutEl = 0, cutElInView = 0, cutAbove = 0, cutBelow = 0, cutText = 0, cutTextChars = 0;
      for (const k of order) {
        if (total + reserve <= maxChars) break;
        const l = out[k];
        dropped.add(k);
        total -= l.s.length + 1;
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
      truncated = `[… cut to fit ${fmt(maxChars)} characters: left out ${parts.join(" and ")}; ${how}]`;
    }

    const textLines = [];
    if (noteAbove) textLines.push(noteAbove);
    const listed = [];
    for (let k = 0; k < out.length; k++) {
      if (dropped.has(k)) continue;
      textLines.push(out[k].s);
      if (out[k].el) listed.push(out[k].el);
    }
    if (noteBelow) textLines.push(noteBelow);
    if (truncated) textLines.push(truncated);
    // Elements folded into an ancestor's name never got a line; they are not "listed".
    const textOut = textLines.join("\n");
    let focusedIndex = null;
    for (const r of listed) if (r.focused) focusedIndex = r.index;
    seenUpTo = next;

    const tEnd = performance.now();
    return {
      url: location.href,
      title: document.title,
      text: textOut,
      elements: listed,
      scroll: [sx, sy, scrollEl.scrollWidth, scrollEl.scrollHeight, VW, VH],
      truncated,
      hidden,
      frames,
      signals,
      focused: focusedIndex,
      next,
      stats: {
        walk_ms: Math.round((tWalk - t0) * 10) / 10,
        total_ms: Math.round((tEnd - t0) * 10) / 10,
        nodes: visited,
        interactive: interactiveSeen,
        listed: listed.length,
        beyond_above: beyond.aboveEl,
        beyond_below: beyond.belowEl,
        lines: textLines.length,
        chars: textOut.length,
      },
    };
  }

  function probe() {
    let fresh = 0;
    for (const el of document.querySelectorAll(SELECTOR)) {
      if (byEl.has(el)) continue;
      if (el.checkVisibility && !el.checkVisibility({ opacityProperty: true, visibilityProperty: true })) continue;
      const r = el.getBoundingClientRect();
      if (r.width >= 1 && r.height >= 1) fresh++;
    }
    return { url: location.href, title: document.title, mutations, new_interactive: fresh };
  }

  Object.defineProperty(globalThis, "__handrail", {
    value: Object.freeze({ init, element, indexOf, snapshot, probe, get next() { return next; } }),
    enumerable: false,
  });
})();
