// Runs in handrail's isolated world (core/world.py): the page can neither see nor patch
// it. Masks what a screenshot must not show. collect() lists the texts on screen (text
// nodes, their parents' text, and field values, in this document and in same-origin
// frames), Python decides which hold a secret, cover(ids) draws opaque boxes over those,
// verify() checks the boxes are still on top, uncover() removes them.
({
  state: { refs: [], boxes: [] },

  collect() {
    const refs = [];
    const items = [];
    const unreadable = [];
    const onScreen = (r) =>
      r.width > 0 && r.height > 0 && r.bottom > 0 && r.right > 0 && r.top < innerHeight && r.left < innerWidth;
    const add = (target, text, dx, dy) => {
      if (!text || !text.trim()) return;
      refs.push({ target, dx, dy });
      items.push({ id: refs.length - 1, text });
    };
    const visit = (doc, dx, dy) => {
      const root = doc.body || doc.documentElement;
      if (!root) return;
      for (const field of doc.querySelectorAll("input, textarea, select")) {
        add(field, String(field.value || ""), dx, dy);
      }
      // The document's whole text, so a value split across elements (<b>k9</b>Tq...) is
      // found whole; Python answers with character offsets into it.
      add(root, root.textContent, dx, dy);
      for (const frame of doc.querySelectorAll("iframe, frame")) {
        const r = frame.getBoundingClientRect();
        if (!onScreen({ ...r.toJSON(), top: r.top + dy, left: r.left + dx, bottom: r.bottom + dy, right: r.right + dx })) continue;
        let inner = null;
        try {
          inner = frame.contentDocument;
        } catch {
          inner = null;
        }
        if (inner) visit(inner, dx + r.left + frame.clientLeft, dy + r.top + frame.clientTop);
        else unreadable.push(frame.src || frame.title || "(a frame without an address)");
      }
    };
    visit(document, 0, 0);
    this.state.refs = refs;
    return { items, unreadable };
  },

  // The rectangles (top-document coordinates) of characters start..end of a ref's text:
  // the whole box of a field, the client rects of a range over the text nodes otherwise.
  _rects(ref, start, end) {
    const shift = (r) => ({ left: r.left + ref.dx, top: r.top + ref.dy, width: r.width, height: r.height });
    if (ref.target.nodeType === Node.ELEMENT_NODE && ref.target.matches("input, textarea, select")) {
      return [shift(ref.target.getBoundingClientRect())];
    }
    const doc = ref.target.ownerDocument;
    const range = doc.createRange();
    const walker = doc.createTreeWalker(ref.target, NodeFilter.SHOW_TEXT);
    let offset = 0;
    let started = false;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const next = offset + node.data.length;
      if (!started && start < next) {
        range.setStart(node, start - offset);
        started = true;
      }
      if (started && end <= next) {
        range.setEnd(node, end - offset);
        break;
      }
      offset = next;
    }
    if (!started) return [];
    return [...range.getClientRects()].filter((r) => r.width > 0 && r.height > 0).map(shift);
  },

  cover(spans) {
    this.uncover();
    for (const [id, start, end] of spans) {
      for (const r of this._rects(this.state.refs[id], start, end)) this._box(r);
    }
    return this.state.boxes.length;
  },

  _box(r) {
    const box = document.createElement("div");
      box.style.cssText =
        `position: fixed !important; left: ${r.left - 2}px !important; top: ${r.top - 2}px !important;` +
        `width: ${r.width + 4}px !important; height: ${r.height + 4}px !important;` +
        "background: #000 !important; opacity: 1 !important; z-index: 2147483647 !important;" +
        "display: block !important; visibility: visible !important; margin: 0 !important;" +
        "border: 0 !important; transform: none !important; pointer-events: none !important;";
    document.documentElement.append(box);
    this.state.boxes.push({ box, rect: r });
  },

  verify() {
    // Every box still in the document, on top at its centre, and its target where it was.
    return this.state.boxes.every(({ box, rect }) => {
      if (!box.isConnected) return false;
      if (rect.top + rect.height <= 0 || rect.left + rect.width <= 0) return true;
      if (rect.top >= innerHeight || rect.left >= innerWidth) return true;
      const x = Math.min(Math.max(rect.left + rect.width / 2, 0), innerWidth - 1);
      const y = Math.min(Math.max(rect.top + rect.height / 2, 0), innerHeight - 1);
      box.style.setProperty("pointer-events", "auto", "important");
      const top = document.elementFromPoint(x, y);
      box.style.setProperty("pointer-events", "none", "important");
      return top === box;
    });
  },

  uncover() {
    for (const { box } of this.state.boxes) box.remove();
    this.state.boxes = [];
  },
})
