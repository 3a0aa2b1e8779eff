// @ts-check
// Runs in handrail's isolated world (core/world/contexts.py): the page can neither see nor patch
// it. Masks what a screenshot must not show.
//
// collect() walks every document on screen in composed order: this document, its shadow
// roots (open ones, and closed ones core/world/closed_roots.py adopted into this world: `el.shadowRoot`
// answers with those here) and its same-origin frames, at any depth. It lists the texts a
// secret could be drawn from, as items Python searches (core/secrets.py):
//   - "text": the document's text nodes joined, so a value split across elements is found
//     whole; Python answers with offsets in UTF-16 code units (as JS strings count);
//   - "box": what is drawn from an element without being its text nodes: a field's value,
//     placeholder and option texts, and ::before/::after/::marker content (attr() resolved).
//     A match covers the whole element (a pseudo element has no rectangle of its own).
// and, as "graphics", every element whose pixels are not text our world can read: canvas,
// img, svg, video (its poster), object/embed, input type=image, and anything with a CSS
// image (background, border, mask, list-style, or url() content). Python covers those whole
// whenever secrets are configured. Frames from other sites are "unreadable": refused.
//
// cover(spans) draws opaque boxes in the top layer (a popover: above the page's own
// dialogs and popovers, and outside its filters and opacity), verify() checks that every box
// is where it was drawn, opaque and on top, and that what it covers has not moved;
// uncover() removes them.
({
  state: { refs: [], spans: [], expected: [], layer: null, boxes: [], hidden: [], fx: [], styles: [] },

  collect(graphicsToo) {
    const HIDE = "data-handrail-hide";
    const refs = [];
    const items = [];
    const graphics = [];
    const drawnPseudos = [];
    const unreadable = [];
    // Only what is not rendered is skipped: a page may display <head>, <title> or <style>.
    const GRAPHIC = new Set(["canvas", "img", "svg", "video", "object", "embed", "picture"]);
    const IMAGE = /url\(|image-set\(|image\(|element\(|paint\(/i;
    const BUILTIN_MARKERS = new Set([
      "none", "disc", "circle", "square", "decimal", "decimal-leading-zero", "lower-roman", "upper-roman",
      "lower-greek", "lower-alpha", "lower-latin", "upper-alpha", "upper-latin", "disclosure-open", "disclosure-closed",
    ]);
    const onScreen = (r) =>
      r.width > 0 && r.height > 0 && r.bottom > 0 && r.right > 0 && r.top < innerHeight && r.left < innerWidth;
    const addBox = (el, text, dx, dy) => {
      if (!text || !text.trim()) return;
      refs.push({ kind: "box", target: el, dx, dy });
      items.push({ id: refs.length - 1, text, whole: true });
    };
    // The text a pseudo element draws: strings and attr() values of its `content`.
    const pseudoText = (el, content) => {
      let out = "";
      const re = /"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|attr\(\s*([^\s)]+)[^)]*\)/g;
      for (let m = re.exec(content); m; m = re.exec(content)) {
        if (m[3]) out += el.getAttribute(m[3]) || "";
        else out += (m[1] ?? m[2]).replace(/\\([0-9a-fA-F]{1,6})\s?/g, (_, h) => String.fromCodePoint(parseInt(h, 16))).replace(/\\(.)/g, "$1");
      }
      return out;
    };
    const visitDoc = (doc, dx, dy) => {
      const view = doc.defaultView;
      const root = doc.documentElement;
      if (!root || !view) return;
      const nodes = [];
      let length = 0;
      let text = "";
      const element = (el) => {
        const tag = el.localName;
        if (tag === "template" || el === this.state.layer) return false;
        const style = view.getComputedStyle(el);
        if (style.display === "none") return false;
        if (tag === "input" || tag === "textarea" || tag === "select") {
          const options = tag === "select" ? [...el.options].map((o) => o.text).join("\n") : "";
          addBox(el, [el.value, el.placeholder || "", options].join("\n"), dx, dy);
          if (graphicsToo && el.type === "image") graphics.push([el, dx, dy]);
        }
        for (const pseudo of ["before", "after", "marker"]) {
          const ps = view.getComputedStyle(el, "::" + pseudo);
          const content = ps.content;
          const listed = style.display.includes("list-item");
          if (pseudo === "marker" && !listed) continue;
          const image = pseudo === "marker" ? style.listStyleImage : ps.backgroundImage;
          // What our world cannot read as text: an image, or counters and list markers in a
          // page-defined @counter-style (its symbols can be any text).
          const type = style.listStyleType;
          const opaque =
            (content && (IMAGE.test(content) || /counters?\(/.test(content))) ||
            (image && IMAGE.test(image)) ||
            (pseudo === "marker" && !type.startsWith('"') && !BUILTIN_MARKERS.has(type));
          if (graphicsToo && opaque) {
            refs.push({ kind: "pseudo", target: el, pseudo });
            drawnPseudos.push(refs.length - 1);
          }
          let shown = content && content !== "none" && content !== "normal" ? pseudoText(el, content) : "";
          // Quotes come from the `quotes` property; a marker's text may be its list-style-type.
          if (/open-quote|close-quote/.test(content)) shown += pseudoText(el, ps.quotes);
          if (pseudo === "marker" && type.startsWith('"')) shown += pseudoText(el, type);
          // One we hid keeps its place in refs, so that ids stay the same when the page is
          // read again with the boxes on (and its text, now gone, is not listed).
          const ours = (el.getAttribute(HIDE) || "").split(" ").includes(pseudo);
          if (!shown.trim() && !ours) continue;
          refs.push({ kind: "pseudo", target: el, pseudo });
          if (shown.trim()) items.push({ id: refs.length - 1, text: shown, whole: true });
        }
        if (graphicsToo) {
          const css = [style.backgroundImage, style.borderImageSource, style.maskImage, style.webkitMaskImage];
          if (GRAPHIC.has(tag) || css.some((v) => v && IMAGE.test(v))) graphics.push([el, dx, dy]);
        }
        if (tag === "iframe" || tag === "frame") {
          const r = el.getBoundingClientRect();
          const shifted = { width: r.width, height: r.height, top: r.top + dy, left: r.left + dx, bottom: r.bottom + dy, right: r.right + dx };
          if (onScreen(shifted)) {
            let inner = null;
            try {
              inner = el.contentDocument;
            } catch {
              inner = null;
            }
            const fs = view.getComputedStyle(el);
            const x = dx + r.left + el.clientLeft + parseFloat(fs.paddingLeft);
            const y = dy + r.top + el.clientTop + parseFloat(fs.paddingTop);
            if (inner) visitDoc(inner, x, y);
            else unreadable.push(el.src || el.title || "(a frame without an address)");
          }
          return false;
        }
        // An <svg> is covered whole as a graphic; its own text is read anyway.
        return true;
      };
      const walk = (parent) => {
        const shadow = parent.nodeType === Node.ELEMENT_NODE ? parent.shadowRoot : null;
        if (shadow) walk(shadow);
        for (let node = parent.firstChild; node; node = node.nextSibling) {
          if (node.nodeType === Node.TEXT_NODE) {
            nodes.push({ node, start: length });
            length += node.data.length;
            text += node.data;
          } else if (node.nodeType === Node.ELEMENT_NODE && element(node)) {
            walk(node);
          }
        }
      };
      if (element(root)) walk(root);
      if (text.trim()) {
        refs.push({ kind: "text", nodes, dx, dy });
        items.push({ id: refs.length - 1, text, whole: false });
      }
    };
    visitDoc(document, 0, 0);
    const drawn = [...drawnPseudos];
    for (const [el, dx, dy] of graphics) {
      refs.push({ kind: "box", target: el, dx, dy });
      drawn.push(refs.length - 1);
    }
    this.state.refs = refs;
    return { items, graphics: drawn, unreadable };
  },

  // The rectangles (top-document viewport coordinates) of characters start..end (UTF-16
  // offsets) of a ref's text: the whole box of a "box" ref.
  _rects(ref, start, end) {
    const shift = (r) => ({ left: r.left + ref.dx, top: r.top + ref.dy, width: r.width, height: r.height });
    const visible = (r) => r.width > 0 && r.height > 0;
    if (ref.kind === "pseudo") return [];
    if (ref.kind === "box") {
      return [...ref.target.getClientRects()].filter(visible).map(shift);
    }
    const out = [];
    for (const { node, start: at } of ref.nodes) {
      const next = at + node.data.length;
      if (next <= start || at >= end || !node.isConnected) continue;
      const range = node.ownerDocument.createRange();
      range.setStart(node, Math.max(start - at, 0));
      range.setEnd(node, Math.min(end - at, node.data.length));
      for (const r of range.getClientRects()) if (visible(r)) out.push(shift(r));
    }
    return out;
  },

  _all() {
    const out = [];
    for (const [id, start, end] of this.state.spans) out.push(...this._rects(this.state.refs[id], start, end));
    return out;
  },

  cover(spans) {
    const HIDE = "data-handrail-hide";
    this.uncover();
    this.state.spans = spans;
    this.state.expected = this._all();
    const layer = document.createElement("div");
    layer.style.cssText = this._css("position: fixed; left: 0; top: 0; width: 0; height: 0; overflow: visible; background: transparent; pointer-events: none");
    this.state.layer = layer;
    for (const r of this.state.expected) {
      if (r.top + r.height <= 0 || r.left + r.width <= 0 || r.top >= innerHeight || r.left >= innerWidth) continue;
      const box = document.createElement("div");
      const rect = { left: r.left - 2, top: r.top - 2, width: r.width + 4, height: r.height + 4 };
      box.style.cssText = this._css(
        `position: absolute; left: ${rect.left}px; top: ${rect.top}px; width: ${rect.width}px; height: ${rect.height}px; background: #000; pointer-events: none`,
      );
      layer.append(box);
      this.state.boxes.push({ box, rect });
    }
    // Pseudo elements have no rectangle to cover, and may be drawn anywhere (positioned,
    // outside markers): they are hidden in place instead, layout unchanged. The rule is
    // as specific as a page is likely to write; verify() checks that it won.
    const hidden = [];
    for (const [id] of spans) {
      const ref = this.state.refs[id];
      if (ref.kind !== "pseudo") continue;
      const marks = new Set((ref.target.getAttribute(HIDE) || "").split(" ").filter(Boolean));
      marks.add(ref.pseudo);
      ref.target.setAttribute(HIDE, [...marks].join(" "));
      hidden.push(ref);
    }
    this.state.hidden = hidden;
    // Copies of what is covered drawn elsewhere: a text-shadow, a filter (drop-shadow, an
    // SVG offset) or a reflection, on the element or any ancestor (across shadow roots and
    // frames). They are switched off for the capture; verify() checks they stayed off.
    // Through Node's own getters: an ancestor may be a form whose controls hide its
    // parentElement and parentNode (DOM clobbering).
    const parentGet = (/** @type {string} */ name) =>
      /** @type {PropertyDescriptor} */ (Object.getOwnPropertyDescriptor(Node.prototype, name)).get;
    const up = parentGet("parentElement");
    const upNode = parentGet("parentNode");
    const parentOf = (el) =>
      up.call(el) ||
      (upNode.call(el) && upNode.call(el).host) ||
      (el.ownerDocument.defaultView && el.ownerDocument.defaultView.frameElement) ||
      null;
    const starts = [];
    for (const [id, start, end] of spans) {
      const ref = this.state.refs[id];
      if (ref.kind !== "text") {
        starts.push(ref.target);
        continue;
      }
      for (const { node, start: at } of ref.nodes) {
        if (at < end && at + node.data.length > start) starts.push(node.parentElement || node.parentNode.host);
      }
    }
    const seen = new Set();
    const fx = [];
    for (let el of starts) {
      for (; el && !seen.has(el); el = parentOf(el)) {
        seen.add(el);
        if (this._copies(el)) fx.push(el);
      }
    }
    for (const el of fx) {
      const marks = new Set((el.getAttribute(HIDE) || "").split(" ").filter(Boolean));
      marks.add("fx");
      el.setAttribute(HIDE, [...marks].join(" "));
    }
    this.state.fx = fx;
    const boost = ":not(#\\31):not(#\\32):not(#\\33):not(#\\34):not(#\\35):not(#\\36):not(#\\37):not(#\\38)";
    const rules =
      `[${HIDE}~=before]${boost}::before, [${HIDE}~=after]${boost}::after { visibility: hidden !important; }\n` +
      `[${HIDE}~=marker]${boost}::marker { content: none !important; }\n` +
      `[${HIDE}~=marker]${boost} { list-style-image: none !important; }\n` +
      // (`-webkit-box-reflect: none` does not parse in Chromium 156; `initial` is none.)
      `[${HIDE}~=fx]${boost} { text-shadow: none !important; filter: none !important; -webkit-box-reflect: initial !important; }`;
    // A rule reaches only its own tree: one style per document or shadow root concerned.
    const roots = new Set([...hidden.map((ref) => ref.target), ...fx].map((el) => el.getRootNode()));
    for (const root of roots) {
      const style = (root.ownerDocument || root).createElement("style");
      style.textContent = rules;
      if (root === document) layer.append(style);
      else (root.nodeType === Node.DOCUMENT_NODE ? root.documentElement : root).append(style);
      this.state.styles.push(style);
    }
    // A modal dialog makes the rest of the document inert, our layer too, and an inert box
    // cannot be checked to be on top: the layer then goes inside the dialog (still drawn in
    // the top layer, above it).
    const modal = [...document.querySelectorAll("dialog:modal")].pop();
    (modal || document.documentElement).append(layer);
    try {
      // The top layer: above the page's dialogs, popovers and fullscreen element.
      layer.popover = "manual";
      layer.showPopover();
    } catch {
      layer.removeAttribute("popover"); // fixed and on top by z-index; verify() checks it
    }
    return this.state.boxes.length;
  },

  _copies(el) {
    const st = el.ownerDocument.defaultView.getComputedStyle(el);
    return st.textShadow !== "none" || st.filter !== "none" || (st.webkitBoxReflect || "none") !== "none";
  },

  _css(rules) {
    const fixed =
      "display: block; visibility: visible; opacity: 1; z-index: 2147483647; margin: 0; padding: 0; border: 0;" +
      "inset: auto; transform: none; filter: none; mix-blend-mode: normal; clip-path: none; mask: none;" +
      "zoom: 1; max-width: none; max-height: none; min-width: 0; min-height: 0; box-sizing: border-box;" +
      "outline: 0; box-shadow: none; content-visibility: visible; contain: none; translate: none; rotate: none; scale: none";
    return `${fixed};${rules}`
      .split(";")
      .filter((d) => d.trim())
      .map((d) => `${d.trim()} !important`)
      .join(";");
  },

  verify() {
    const near = (a, b) =>
      Math.abs(a.left - b.left) < 1 && Math.abs(a.top - b.top) < 1 && Math.abs(a.width - b.width) < 1 && Math.abs(a.height - b.height) < 1;
    // What the boxes cover is where it was when they were drawn.
    const now = this._all();
    if (now.length !== this.state.expected.length || !now.every((r, i) => near(r, this.state.expected[i]))) return false;
    const layer = this.state.layer;
    if (!layer || !layer.isConnected) return false;
    if (this.state.fx.some((el) => this._copies(el))) return false;
    for (const { target, pseudo } of this.state.hidden) {
      const st = target.ownerDocument.defaultView.getComputedStyle(target, "::" + pseudo);
      if (pseudo === "marker" ? st.content !== "none" : st.visibility !== "hidden") return false;
    }
    return this.state.boxes.every(({ box, rect }) => {
      if (!box.isConnected || !near(box.getBoundingClientRect(), rect)) return false;
      for (const el of [box, layer]) {
        const st = getComputedStyle(el);
        if (st.visibility !== "visible" || st.opacity !== "1" || st.filter !== "none" || st.display !== "block") return false;
      }
      const x = Math.min(Math.max(rect.left + rect.width / 2, 0), innerWidth - 1);
      const y = Math.min(Math.max(rect.top + rect.height / 2, 0), innerHeight - 1);
      box.style.setProperty("pointer-events", "auto", "important");
      const top = document.elementFromPoint(x, y);
      box.style.setProperty("pointer-events", "none", "important");
      return top === box;
    });
  },

  uncover() {
    for (const { target } of this.state.hidden) target.removeAttribute("data-handrail-hide");
    for (const el of this.state.fx) el.removeAttribute("data-handrail-hide");
    this.state.hidden = [];
    this.state.fx = [];
    for (const style of this.state.styles) style.remove();
    this.state.styles = [];
    if (this.state.layer) this.state.layer.remove();
    this.state.layer = null;
    this.state.boxes = [];
    this.state.expected = [];
  },
})
