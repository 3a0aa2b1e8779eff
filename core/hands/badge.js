// @ts-check
// Runs in handrail's isolated world (core/world/contexts.py). Marks the page the agent drives: a
// badge ("agent is driving" / "your turn"), a dot where the pointer is, and an outline
// around the target of an approval that waits.
//
// Where it lives, and why the page cannot see it: a closed shadow root attached to <body>
// by this world. The page's document.querySelectorAll never enters a shadow tree, and a
// closed one is not reachable from the page's script (body.shadowRoot is null there). The
// root holds a <slot>, so body's own children render exactly as before (a slot is
// display: contents), and our elements, position: fixed. Everything of ours has
// pointer-events: none, so no hit test (elementFromPoint, a trusted click) ever finds it;
// `all: initial` stops the page's inherited styles from reaching in. Python hides it for
// every screenshot (core/hands/screenshot_mask.py).
({
  root: null,
  host: null,
  parts: null,
  state: { mode: "driving", pointer: null, target: null, hidden: false },

  css: `
    .hr { all: initial; position: fixed; pointer-events: none; z-index: 2147483647;
          box-sizing: border-box; }
    #badge { left: 50%; bottom: 14px; transform: translateX(-50%); padding: 6px 14px;
             border-radius: 16px; font: 600 13px/1.2 system-ui, sans-serif; color: #fff;
             background: rgba(109, 40, 217, 0.92); box-shadow: 0 2px 10px rgba(0,0,0,.35);
             white-space: nowrap; }
    #badge.turn { background: rgba(180, 83, 9, 0.95); }
    #pointer { width: 18px; height: 18px; margin: -9px 0 0 -9px; border-radius: 50%;
               border: 3px solid #7c3aed; background: rgba(124, 58, 237, 0.25); }
    #target { border: 3px solid #ff40a0; border-radius: 4px;
              box-shadow: 0 0 0 3px rgba(255, 64, 160, 0.3); }
    .off { display: none; }
  `,

  // Attach (again, after a navigation or if the page replaced <body>). False when the
  // page gives us no place: no <body>, a <frameset>, or a body with a shadow root of its own.
  ensure() {
    const body = document.body;
    if (!body || body.tagName !== "BODY") return false;
    if (this.host === body && this.root) return true;
    let root;
    try {
      root = body.attachShadow({ mode: "closed" });
    } catch (_) {
      return false;
    }
    const style = document.createElement("style");
    style.textContent = this.css;
    const make = (id) => {
      const el = document.createElement("div");
      el.id = id;
      el.className = "hr off";
      return el;
    };
    this.parts = { badge: make("badge"), pointer: make("pointer"), target: make("target") };
    root.append(style, document.createElement("slot"), this.parts.target, this.parts.pointer,
      this.parts.badge);
    this.root = root;
    this.host = body;
    return true;
  },

  render() {
    if (!this.ensure()) return false;
    const { badge, pointer, target } = this.parts;
    const s = this.state;
    const show = (el, on) => el.classList.toggle("off", !on || s.hidden);
    badge.textContent = s.mode === "turn" ? "handrail: your turn" : "handrail: agent is driving";
    badge.classList.toggle("turn", s.mode === "turn");
    show(badge, true);
    if (s.pointer) {
      pointer.style.left = `${s.pointer[0]}px`;
      pointer.style.top = `${s.pointer[1]}px`;
    }
    show(pointer, !!s.pointer && s.mode !== "turn");
    if (s.target) {
      const [x, y, w, h] = s.target;
      Object.assign(target.style, {
        left: `${x - 3}px`, top: `${y - 3}px`, width: `${w + 6}px`, height: `${h + 6}px`,
      });
    }
    show(target, !!s.target && s.mode !== "turn");
    return true;
  },

  // pointer: [x, y], or "keep" for where it was.
  set(mode, pointer, target) {
    this.state.mode = mode;
    if (pointer !== "keep") this.state.pointer = pointer;
    this.state.target = target || null;
    return this.render();
  },

  // Screenshots: off for the capture (which paints a fresh frame), back after.
  hide() {
    this.state.hidden = true;
    return this.attached() ? this.render() : true;
  },

  show() {
    this.state.hidden = false;
    return this.attached() ? this.render() : true;
  },

  attached() {
    return !!this.root && this.host === document.body;
  },

  remove() {
    if (this.parts) for (const el of Object.values(this.parts)) el.classList.add("off");
    this.state = { mode: "driving", pointer: null, target: null, hidden: false };
    return true;
  },
})
