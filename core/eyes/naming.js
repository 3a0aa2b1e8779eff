// @ts-check
// The eyes, stage: naming (roles and accessible names).
// One part of handrail's page script: core/eyes/script.py joins core/eyes/*.js (in the order
// of its EYES_PARTS) inside one closure, so these names are shared with the other parts and
// invisible to the page (the script runs in our isolated world).
// ---- what counts as interactive --------------------------------------------------------
const ROLES = new Set([
  "button", "link", "checkbox", "radio", "switch", "tab", "menuitem", "menuitemcheckbox",
  "menuitemradio", "option", "combobox", "textbox", "searchbox", "slider", "spinbutton",
  "treeitem",
]);
// Roles of a region that holds content: named by its label only, never by what it holds.
const PANEL_ROLES = new Set(["tabpanel", "dialog", "alertdialog", "region", "group", "document", "article"]);
const IMPLIED_ROLE = {
  A: "link", BUTTON: "button", SELECT: "combobox", TEXTAREA: "textbox", SUMMARY: "button",
  OPTION: "option",
};
const INPUT_ROLE = {
  checkbox: "checkbox", radio: "radio", button: "button", submit: "button", reset: "button",
  image: "button", range: "slider", number: "spinbutton", search: "searchbox",
};
function labelText(label, control) {
  // A wrapping label's text without the control's own content (a select's options).
  let out = "";
  const walk = (n) => {
    for (let c = firstChildOf(n); c; c = nextSiblingOf(c)) {
      const t = nodeTypeOf(c);
      if (t === 3) out += /** @type {Text} */ (c).data;
      else if (t === 1) {
        if (c === control || SKIP.has(c.tagName)) continue;
        const t = c.tagName;
        if (t === "SELECT" || t === "TEXTAREA" || t === "INPUT" || t === "BUTTON") continue;
        // An aria-label inside a label is what Chrome reads there (Django's filter_horizontal
        // labels its "Filter" boxes with an icon <span aria-label="Type into this box...">).
        const own = clean(c.getAttribute("aria-label") || "");
        if (own) out += " " + own + " ";
        else if (t === "IMG") out += " " + (c.getAttribute("alt") || "") + " ";
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

// THE accessible name of an element, for the digest line, the approval and the hands'
// re-check before dispatch (core/hands/describe.js calls __handrail.accessibleName): one function, so an
// approved element is never "relabelled" because two code paths named it differently.
// Order: aria-labelledby, aria-label, (frames: title), label[for] / wrapping label, a
// button-like input's value, an image input's alt, the content of links and buttons,
// placeholder, title. `kind` is the walk's kind for the element and `content` the visible
// text the walk collected inside it; without them (a call from the hands) both are worked
// out here the same way.
const GLYPHS_ONLY = /^[^\p{L}\p{N}]+$/u;
function accessibleName(el, kind, content) {
  const tag = el.tagName;
  const code = tag === "DIV" && (kind === undefined || kind === "editable") ? codeEditorAt(el) : null;
  if (code) return codeEditorName(code);
  let name = idrefText(el, "aria-labelledby") || clean(el.getAttribute("aria-label") || "");
  if (tag === "IFRAME" || tag === "FRAME") return cut(name || clean(el.title || ""), 150);
  if (kind === undefined) kind = nameKind(el);
  const isField = tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA";
  const labels = !name && isField ? labelsOf(el) : [];
  if (labels.length) {
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
  if (!name && kind === "scroll") return cut(clean(el.title || "") || scrollLabel(el), 150);
  const panel = PANEL_ROLES.has((el.getAttribute("role") || "").trim());
  if (!name && content === undefined && !panel && kind !== "field" && kind !== "editable" && kind !== "container" && kind !== "list") {
    content = contentText(el);
  }
  // A glyph a person reads by its tooltip ("‹" titled "Previous page", "×" titled "Close").
  if (!name && content && !(GLYPHS_ONLY.test(content) && clean(el.title || ""))) name = drawnAround(el, content);
  if (!name && (el.getAttribute("placeholder") || "")) name = clean(el.getAttribute("placeholder"));
  if (!name && el.title) name = clean(el.title);
  if (!name && kind === "container") name = clean((el.textContent || "").slice(0, 200));
  if (!name && kind !== "field" && kind !== "editable" && kind !== "list") name = iconName(el);
  return cut(name, 150);
}

// ---- icons -------------------------------------------------------------------------------
// (A library's own prefix is allowed before the icon class: AG Grid's "ag-icon-filter".)
// An icon-only control (a glyph drawn by CSS, an empty span, an image without alt) is named
// by what a person would see or hover: text the CSS draws, the title of an image or glyph
// inside, its tooltip; failing those, by a class or data-attribute hint ("icon-reply"),
// printed as "reply (icon)" so the model knows it is a guess.
const ICON_CLASS = /^(?:[a-z]{2,3}-)?(?:icons?|ico|fa[srlbdk]?|glyphicon|bi|mdi|ion|ti|la|octicon|feather|lucide|ri|uil|gg|svg-icon|i)[-_]+([a-z][a-z0-9]*(?:[-_]+[a-z0-9]+)*)$/i;
const ICON_SUFFIX = /^([a-z][a-z0-9]*(?:[-_][a-z0-9]+)*?)[-_]icons?$/i;
// Words before "-icon" that say where an icon sits, not what it does.
const ICON_PLACES = new Set(["header", "cell", "nav", "item", "button", "btn", "left", "right", "leading", "trailing", "prefix", "suffix", "start", "end", "ag"]);
// A library's class saying where a bare arrow goes ("flatpickr-next-month", "swiper-button-prev").
const STEP_CLASS = /(?:^|[-_])((?:prev|previous|next)(?:[-_]+(?:month|year|page|day|week|slide|item))?|(?:month|year|page|slide|button)[-_]+(?:prev|previous|next))$/i;
// Class parts that say how an icon looks, not what it does.
const ICON_STYLE = new Set([
  "lg", "sm", "xs", "xl", "fw", "2x", "3x", "4x", "5x", "solid", "regular", "light", "thin",
  "duotone", "brands", "fill", "filled", "outline", "outlined", "o", "alt", "large", "small",
  "white", "black", "inverse", "spin", "pulse", "round", "rounded", "sharp", "two", "tone",
  "button", "btn", "icon",
]);
const TOOLTIP_ATTRS = ["aria-description", "data-tooltip", "data-tip", "data-title", "data-original-title", "data-bs-original-title"];
const HINT_ATTRS = ["data-icon", "data-action", "data-testid", "data-test-id"];

function iconName(el) {
  const drawn = cssText(el);
  if (drawn) return drawn;
  const titled = el.querySelector("[title]");
  if (titled && clean(titled.getAttribute("title"))) return clean(titled.getAttribute("title"));
  const tip = idrefText(el, "aria-describedby");
  if (tip) return tip;
  for (const attr of TOOLTIP_ATTRS) {
    const v = clean(el.getAttribute(attr) || "");
    if (v) return v;
  }
  const hint = iconHint(el);
  return hint ? `${hint} (icon)` : "";
}

// Words the CSS draws on or before the element (`content: "Reply"`, or the alternative
// text of `content: "★" / "Starred"`); not glyph codes.
function cssText(el) {
  const view = el.ownerDocument.defaultView;
  if (!view) return "";
  for (const pseudo of ["::before", "::after"]) {
    const words = pseudoContent(el, view, pseudo);
    if (/[A-Za-z]{2}/.test(words)) return words;
  }
  return "";
}

// A name from content carries what the element's own ::before and ::after draw, as Chrome's
// does (Django's disclosure arrow: "↓ By confirmed"). Only the element's own pseudo-elements:
// two style reads per named control, not two per node inside it.
function drawnAround(el, content) {
  const view = el.ownerDocument.defaultView;
  if (!view) return content;
  return clean(`${pseudoContent(el, view, "::before")} ${content} ${pseudoContent(el, view, "::after")}`);
}

// What one pseudo-element's `content` says in words: its quoted strings and attr() values
// (not an image's url()), or its alternative text after "/"; an icon font's private-use
// code means nothing outside its font and is left out, and a counter's number is not read
// (a list's "3." says nothing a name needs).
const PRIVATE_USE = /[\uE000-\uF8FF]|[\u{F0000}-\u{10FFFF}]/gu;
function pseudoContent(el, view, pseudo) {
  const raw = view.getComputedStyle(el, pseudo).content || "";
  if (raw === "none" || raw === "normal" || raw === "" || raw.includes("counter")) return "";
  const alt = /\/\s*((?:"(?:[^"\\]|\\.)*"\s*)+)$/.exec(raw);
  // An image's address is no words: url("data:…") is left out before strings are read.
  const source = alt ? alt[1] : raw.replace(/url\((?:"(?:[^"\\]|\\.)*"|[^)]*)\)/g, "");
  let out = "";
  for (const m of source.matchAll(/"((?:[^"\\]|\\.)*)"|attr\(\s*([\w-]+)\s*\)/g)) {
    out += m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : el.getAttribute(m[2]) || "";
  }
  return clean(out.replace(PRIVATE_USE, ""));
}

function iconHint(el) {
  const candidates = [el, ...el.querySelectorAll("[class], [data-icon]")].slice(0, 8);
  for (const x of candidates) {
    for (const attr of HINT_ATTRS) {
      const words = hintWords(x.getAttribute(attr) || "");
      if (words) return words;
    }
    for (const token of x.classList || []) {
      const m = ICON_CLASS.exec(token) || STEP_CLASS.exec(token);
      const words = m ? hintWords(m[1]) : "";
      if (words) return words;
    }
  }
  // Failing those, a class that ends in "icon" says what the icon is ("dropdown-menu-icon",
  // Datasette's column menu), unless it only says where it sits ("header-icon").
  for (const x of candidates) {
    for (const token of x.classList || []) {
      const m = ICON_SUFFIX.exec(token);
      const words = m ? hintWords(m[1]) : "";
      if (words && !ICON_PLACES.has(words.split(" ").pop() || "")) return words;
    }
  }
  return "";
}

function hintWords(raw) {
  const words = raw.toLowerCase().split(/[-_\s]+/).filter((w) => w && !ICON_STYLE.has(w) && !/^\d+$/.test(w));
  return words.length && words.length <= 4 ? words.join(" ") : "";
}

// A field's labels. `el.labels` makes the browser scan the whole tree for labels the first
// time it is asked for each field (about 80 ms on a 5,000-row table): during a walk, one
// scan per tree (document or shadow root) answers for every field in it.
let labelScans = null; // Map(root -> Map(control -> [label])) while a walk runs
function labelsOf(el) {
  if (labelScans === null) return el.labels ? [...el.labels] : [];
  const root = el.getRootNode();
  let map = labelScans.get(root);
  if (map === undefined) {
    map = new Map();
    if (root.querySelectorAll) {
      for (const label of root.querySelectorAll("label")) {
        const control = label.control;
        if (!control) continue;
        const list = map.get(control);
        if (list) list.push(label);
        else map.set(control, [label]);
      }
    }
    labelScans.set(root, map);
  }
  return map.get(el) || [];
}

// The walk's kind, as far as naming cares, for an element met outside a walk.
// The root of a contenteditable region (an editor), not a node inside one. The walk's kind
// (interactiveKind) and the naming kind (nameKind) both ask this, first.
/** @param {Element} el */
function isEditableRoot(el) {
  const parent = parentOf(el);
  return isEditableNode(el) && !(parent && isEditableNode(parent));
}

function nameKind(el) {
  const tag = el.tagName;
  if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return "field";
  if (tag === "LABEL") return "label";
  if (isEditableRoot(el) || codeEditorAt(el)) return "editable";
  const role = el.getAttribute("role");
  const strong = tag === "A" || tag === "BUTTON" || tag === "SUMMARY" || (!!role && ROLES.has(role.trim().split(/\s+/)[0]));
  if (!strong && isScroller(el)) return "scroll";
  if (!strong && el.hasAttribute("onclick") && el.querySelector(SELECTOR)) return "container";
  if (!strong && isItemList(el)) return "list";
  return "strong";
}

// What the walk collects as a link's or button's content: its visible text (its shadow
// root's, when it has one), images' alt text and SVG titles.
// How deep contentText() reads into an element (it recurses per level; see walk.js MAX_DEPTH).
const MAX_NAME_DEPTH = 400;

function contentText(el) {
  const parts = [];
  const one = (c) => {
    const type = nodeTypeOf(c);
    if (type === 3) {
      parts.push(c.data);
      return;
    }
    if (type !== 1 || isForm(c)) return; // a form inside a button or link says nothing of its own
    const t = c.tagName;
    if (SKIP.has(t)) return;
    const svg = c.namespaceURI === SVG_NS;
    // An SVG <title> is never rendered, yet it is what a person's tooltip and reader say.
    if (svg && t === "title") {
      parts.push(" " + (c.textContent || "") + " ");
      return;
    }
    // A <slot> or a display: contents wrapper has no box of its own, yet its children are drawn.
    if (c.checkVisibility && !c.checkVisibility({ opacityProperty: true, visibilityProperty: true })
        && c.ownerDocument.defaultView.getComputedStyle(c).display !== "contents") return;
    if (c.getAttribute("aria-hidden") === "true" || c.hasAttribute("inert")) return; // out of the accessibility tree, as in the walk
    if (t === "IMG") parts.push(" " + (c.getAttribute("alt") || "") + " ");
    else if (svg && t === "svg" && c.getAttribute("aria-label")) parts.push(" " + c.getAttribute("aria-label") + " ");
    else if (svg) {
      const gap = t === "text" ? " " : ""; // each <text> is a line of its own; a <tspan> is not
      parts.push(gap);
      children(c);
      parts.push(gap);
    } else if (t === "SLOT") {
      const assigned = c.assignedNodes();
      if (assigned.length) assigned.forEach(one);
      else children(c);
    } else {
      // In a name an inline block is a word of its own too (as the walk and Chrome have it).
      const display = c.ownerDocument.defaultView.getComputedStyle(c).display;
      const block = display !== "inline" && display !== "contents";
      if (block) parts.push(" ");
      children(rootOf(c) || c);
      if (block) parts.push(" ");
    }
  };
  // A tree or menu item's nested group is not its name (the walk lists the group's items).
  const skip = el.tagName === "LI" || el.getAttribute("role") === "treeitem" ? nestedGroup(el) : null;
  let depth = 0;
  const children = (n) => {
    if (depth >= MAX_NAME_DEPTH) return; // a page nesting thousands of levels: the name stops
    depth++;
    for (let c = firstChildOf(n); c; c = nextSiblingOf(c)) if (c !== skip) one(c);
    depth--;
  };
  children(rootOf(el) || el);
  return clean(parts.join(""));
}
