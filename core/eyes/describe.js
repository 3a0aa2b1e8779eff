// @ts-check
// The eyes, stage: one interactive element as a record and its digest line.
// One part of handrail's page script: core/eyes/script.py joins core/eyes/*.js (in the order
// of its EYES_PARTS) inside one closure, so these names are shared with the other parts and
// invisible to the page (the script runs in our isolated world).
//
// visit() (walk.js) decides that an element is a control and of which kind; describe() makes
// its record (the element's one name, from naming.js, its role, facts and attributes), walks
// what is inside it (for a link or a button that is its name), and writes its line.

// The attributes a digest line may carry, in the order it prints them.
const LINE_ATTRS = [
  "role", "editor", "lines", "empty", "type", "name", "placeholder", "value", "min", "max", "selected", "options", "multiple", "checked",
  "pressed", "haspopup", "expanded", "level", "current", "sort", "required", "disabled", "scrollable",
  "href", "target", "focused",
];

// Roles a line shows in place of the element's tag, as a person's screen reader says them:
// `[8]<gridcell>Lyon` for <div role=gridcell>, `[3]<tab selected>General` for
// <sl-tab role=tab>. A field keeps its tag beside the role (<input role=combobox>: one types
// into it), and so does a link with an address; any other role keeps `role=` beside the tag.
// core/rerun/match.py reads older lines (`<div role=gridcell>`) as these (its TAG_ROLES is
// this list; a test holds the two equal).
const TAG_ROLES = new Set([
  "alert", "alertdialog", "application", "article", "banner", "button", "cell", "checkbox",
  "columnheader", "combobox", "complementary", "contentinfo", "definition", "dialog",
  "document", "feed", "figure", "form", "grid", "gridcell", "group", "heading", "img", "link",
  "list", "listbox", "listitem", "log", "main", "marquee", "math", "menu", "menubar",
  "menuitem", "menuitemcheckbox", "menuitemradio", "meter", "navigation", "note", "option",
  "progressbar", "radio", "radiogroup", "region", "row", "rowheader", "scrollbar", "search",
  "searchbox", "separator", "slider", "spinbutton", "status", "switch", "tab", "table",
  "tablist", "tabpanel", "term", "textbox", "timer", "toolbar", "tooltip", "tree", "treegrid",
  "treeitem",
]);
const FIELD_TAGS = new Set(["input", "select", "textarea"]);

/**
 * The tag a line shows for `rec`, and whether its role is said by it (see TAG_ROLES).
 * @param {any} rec
 * @returns {[string, boolean]}
 */
function shownTag(rec) {
  const role = rec.attrs.role;
  if (!TAG_ROLES.has(role) || FIELD_TAGS.has(rec.tag) || rec.attrs.href !== undefined) return [rec.tag, false];
  return [role, true];
}

/**
 * A link's href as the line shows it, never a script: as short as it reads against the top
 * page's address (core/guard/policy.py resolves it against the digest's URL the same way):
 * "?o=2" on the same path, "6/change/" under the page's folder, a path on its origin, the
 * whole URL elsewhere.
 * @param {Element} el
 * @param {string} topUrl
 * @returns {string | null}
 */
function shortHref(el, topUrl) {
  const raw = el.getAttribute("href");
  if (raw === null) return null;
  let href = raw;
  try {
    const u = new URL(raw, el.baseURI);
    if (u.protocol === "javascript:") return "javascript:…";
    href = hrefFrom(u, new URL(topUrl));
  } catch (_e) {
    // keep the raw attribute
  }
  return cut(href, 80);
}

/**
 * A link's whole http(s) address (at most 2,000 characters), or null.
 * @param {Element} el
 * @returns {string | null}
 */
function linkUrl(el) {
  const raw = el.getAttribute("href");
  if (raw === null) return null;
  try {
    const u = new URL(raw, el.baseURI);
    return (u.protocol === "http:" || u.protocol === "https:") && u.href.length <= 2000 ? u.href : null;
  } catch (_e) {
    return null;
  }
}

/**
 * @param {URL} u
 * @param {URL} top
 * @returns {string}
 */
function hrefFrom(u, top) {
  if (u.origin !== top.origin || u.username || u.password) return u.href;
  const tail = u.search + u.hash;
  if (u.pathname === top.pathname && (u.search || (u.hash && !top.search))) return tail;
  const folder = top.pathname.slice(0, top.pathname.lastIndexOf("/") + 1);
  if (u.pathname.startsWith(folder)) {
    const rest = u.pathname.slice(folder.length);
    // (A first segment with a colon would read as a scheme.)
    if (!/^[^/]*:/.test(rest)) return (rest || "./") + tail;
  }
  // The folder above, when that is shorter ("../" for /admin/travel/ on /admin/travel/trip/).
  const up = folder.slice(0, folder.slice(0, -1).lastIndexOf("/") + 1);
  if (up && u.pathname.startsWith(up)) {
    const rest = `../${u.pathname.slice(up.length)}`;
    if (!/^\.\.\/[^/]*:/.test(rest) && rest.length < u.pathname.length) return rest + tail;
  }
  return u.pathname + tail;
}

/**
 * [x, y, w, h] around the box (left, top, width, height) mapped by m = [a, b, c, d, e, f]:
 * (x, y) -> (a x + b y + c, d x + e y + f).
 * @param {number[]} m
 * @param {number} left
 * @param {number} top
 * @param {number} width
 * @param {number} height
 * @returns {number[]}
 */
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

/**
 * One interactive element: its record, its line in ws.lines (unless it is inside another
 * element's name), and what lies inside it.
 * @param {WalkState} ws
 * @param {any} el
 * @param {string} tag
 * @param {CSSStyleDeclaration} st
 * @param {string} kind interactiveKind()'s answer, or "scroll"
 * @param {WalkContext} cc the context visit() made for the element's children
 * @param {number[]} rect [x, y, w, h] in top-level viewport coordinates
 * @param {WalkContext} c the element's own context
 * @param {string | null} scrollOf the kind a scroll container would have had otherwise
 */
function describe(ws, el, tag, st, kind, cc, rect, c, scrollOf) {
  const index = indexOf(el);
  ws.interactiveSeen++;
  const rec = {
    index, tag: tag.toLowerCase(), role: null, name: "", attrs: {}, line: "",
    rect, inView: cc.dist === 0, isNew: isNew(ws, el, index),
    frame: c.frame, shadow: !!c.shadow, editable: false, disabled: false, inputType: null,
    autocomplete: null, formAction: null, formMethod: null, submits: false,
    focused: el === ws.focusedEl, sensitive: null,
  };
  /** @type {Line} */
  const entry = { s: "", el: rec, dist: cc.dist, above: cc.above };
  if (!c.name) {
    flush(ws);
    ws.lines.push(entry);
  }
  const inside = walkContent(ws, el, tag, kind, cc, scrollOf);
  const content = inside.parts ? clean(inside.parts.join("")) : "";
  const role = el.getAttribute("role");
  let implied = IMPLIED_ROLE[tag] || null;
  if (tag === "INPUT") implied = INPUT_ROLE[el.type] || "textbox";
  if (tag === "SELECT" && isListBox(el)) implied = "listbox";
  if (role && role !== implied) rec.attrs.role = role;
  rec.role = role || implied;
  rec.name = accessibleName(el, kind, content);
  recordFacts(ws, rec, el, tag, kind);
  let scrollNoteText = "";
  if (kind === "scroll") {
    rec.attrs.scrollable = "";
    scrollNoteText = scrollNote(scrollBeyond(el, st), index);
  }
  if (rec.sensitive) signalField(ws, rec.sensitive, el, index, rec.name, c.frame, c.shadow);
  // A control inside a CAPTCHA widget is part of the CAPTCHA (the policy refuses clicks
  // on it); not printed in the line, only carried in the element's facts.
  const widget = el.closest(".g-recaptcha, .h-captcha, .cf-turnstile");
  if (widget) rec.attrs.captcha = widget.className;
  if (ROBOT_TEXT.test(rec.name)) ws.signals.captcha.push({ kind: "generic", where: cut(rec.name, 80) });
  if (tag === "SELECT" && !c.name && isListBox(el)) scrollNoteText = listBoxOptions(ws, el, rec, cc, c);
  rec.line = lineOf(rec) + scrollNoteText + (rec.codeLines || "");
  delete rec.codeLines;
  entry.s = rec.line;
  ws.lastName = rec.name;
  if (inside.group && !c.name) visit(ws, inside.group, inside.groupCtx);
  if (rec.role === "columnheader" && !c.name) headerIcons(ws, el, cc, c);
  return rec;
}

/**
 * A <select multiple> or <select size=N> is drawn as an open list, not a dropdown.
 * @param {HTMLSelectElement} el
 */
function isListBox(el) {
  return el.multiple || el.size > 1;
}

/**
 * The options a list box shows in its rows, each listed after it as an item a person
 * clicks (with its selected state); returns the note on the options scrolled out of its
 * box, which replaces the options count.
 * @param {WalkState} ws
 * @param {HTMLSelectElement} el
 * @param {any} rec
 * @param {WalkContext} cc
 * @param {WalkContext} c
 * @returns {string}
 */
function listBoxOptions(ws, el, rec, cc, c) {
  delete rec.attrs.options;
  const box = rectOf(el);
  const top = box.top + el.clientTop;
  const bottom = top + el.clientHeight;
  const beyond = { above: 0, below: 0, left: 0, right: 0 };
  for (const opt of el.options) {
    const r = rectOf(opt);
    if (r.height < 1) continue; // a hidden option
    if (r.bottom <= top + 1) beyond.above++;
    else if (r.top >= bottom - 1) beyond.below++;
    else {
      const rect = c.m ? mapBox(c.m, r.left, r.top, r.width, r.height) : [r.left + c.ox, r.top + c.oy, r.width, r.height];
      // Its own context: inside a <label>, the label's text is kept out of the page's
      // lines (it names the select), never out of an option's name.
      describe(ws, opt, "OPTION", null, "strong", Object.assign({}, cc, { suppress: false }), rect, c, null);
    }
  }
  return scrollNote(beyond, rec.index);
}

/**
 * Walk what is inside a described element: for a link or a button it becomes the name
 * (returned as `parts`); a container or a list has its children listed; a scroll container's
 * content is listed as the page's own, clipped to the scrollport (cc.clip).
 * @param {WalkState} ws
 * @param {any} el
 * @param {string} tag
 * @param {string} kind
 * @param {WalkContext} cc
 * @param {string | null} scrollOf
 * @returns {{parts: string[] | null, group: Element | null, groupCtx: WalkContext | null}}
 */
function walkContent(ws, el, tag, kind, cc, scrollOf) {
  if (kind === "field" || kind === "editable") {
    // A select's options or an editor's text are its value, not page text.
    return { parts: null, group: null, groupCtx: null };
  }
  if (kind === "container") {
    cc.inInteractive = true;
    walkChildren(ws, rootOf(el) || el, cc);
    return { parts: null, group: null, groupCtx: null };
  }
  if (kind === "weak" && PANEL_ROLES.has((el.getAttribute("role") || "").trim())) {
    // A panel a person may focus (Bootstrap's tab panes have tabindex=0) is named by its
    // label; what it holds is the page's to read, not its name.
    walkChildren(ws, rootOf(el) || el, cc);
    return { parts: null, group: null, groupCtx: null };
  }
  if (kind === "list") {
    cc.inInteractive = true;
    cc.itemsOf = el;
    walkChildren(ws, el, cc);
    return { parts: null, group: null, groupCtx: null };
  }
  if (kind === "scroll") {
    if (scrollOf === "container" || scrollOf === "list") cc.inInteractive = true;
    if (scrollOf === "list") cc.itemsOf = el;
    walkInto(ws, el, cc);
    return { parts: null, group: null, groupCtx: null };
  }
  // A tree item or menu item holding its nested group: named by its own label, and the
  // group's items walked after it as elements of their own.
  const group = tag === "LI" || el.getAttribute("role") === "treeitem" ? nestedGroup(el) : null;
  const groupCtx = group ? Object.assign({}, cc) : null;
  /** @type {string[]} */
  const parts = [];
  cc.name = parts;
  cc.fold = true;
  cc.inInteractive = true;
  walkInto(ws, el, cc, group);
  return { parts, group, groupCtx };
}

/**
 * The record's facts (form, type, sensitivity, editable, disabled) and the attributes its
 * line shows (value, checked, selected, options, widget states, href, focused).
 * @param {WalkState} ws
 * @param {any} rec
 * @param {any} el
 * @param {string} tag
 * @param {string} kind
 */
function recordFacts(ws, rec, el, tag, kind) {
  const a = rec.attrs;
  const isField = tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA";
  const code = kind === "editable" ? codeEditorAt(el) : null;
  if (code) codeEditorFacts(rec, code);
  else if (kind === "editable") a.value = cut(clean(el.innerText || ""), 200);
  let type = null;
  if (tag === "INPUT") {
    type = (el.type || "text").toLowerCase();
    if (type !== "text") a.type = type; // (text is an input's type unless it says otherwise)
    rec.inputType = type;
  } else if (tag === "BUTTON") {
    type = (el.type || "submit").toLowerCase();
    // (Only a form tells a submit button from a plain one: outside, a type says nothing.)
    if (el.form) a.type = type;
  }
  if (isField && el.getAttribute("name")) a.name = el.getAttribute("name");
  const ph = el.getAttribute("placeholder");
  if (ph && isField) a.placeholder = ph;
  formFacts(rec, el, tag, type);
  const ac = el.getAttribute("autocomplete");
  if (ac) rec.autocomplete = ac;
  rec.sensitive = sensitiveOf(el, tag);
  valueAttrs(rec, el, tag, kind, type);
  const range = rangeOf(el, tag);
  if (range) {
    a.value = range.value;
    if (range.min !== "") a.min = range.min;
    if (range.max !== "") a.max = range.max;
  }
  const ariaChecked = el.getAttribute("aria-checked");
  if (ariaChecked === "true") a.checked = "";
  else if (ariaChecked === "mixed") a.checked = "mixed";
  if (el.getAttribute("aria-selected") === "true") a.selected = a.selected || "";
  widgetStates(el, tag, a);
  const sort = sortOf(el);
  if (sort) a.sort = sort;
  if (el.required || el.getAttribute("aria-required") === "true") a.required = "";
  // aria-disabled holds for the subtree (jQuery UI marks the item, its wrapper is the menuitem).
  const disabled = !!el.disabled || !!el.closest("[aria-disabled=true]") || !!el.closest("fieldset:disabled");
  if (disabled) a.disabled = "";
  rec.disabled = disabled;
  if (tag === "A") {
    const href = shortHref(el, ws.topUrl);
    if (href !== null) a.href = href;
    // The whole address, for the gate: the line's href is short and cut.
    rec.link = linkUrl(el);
    if (el.target === "_blank") a.target = "_blank";
  }
  if (rec.focused) a.focused = "";
}

/**
 * Where the element's form goes, and whether the element submits it.
 * @param {any} rec
 * @param {any} el
 * @param {string} tag
 * @param {string | null} type
 */
function formFacts(rec, el, tag, type) {
  const form = el.form || null;
  const submits = form && ((tag === "BUTTON" && type === "submit") || (tag === "INPUT" && (type === "submit" || type === "image")));
  if (form) {
    // Through the form's prototype: its controls may be named "action" or "method".
    const goes = formTarget(form);
    rec.formAction = submits && el.hasAttribute("formaction") ? String(el.formAction) : goes.action;
    rec.formMethod = String((submits && el.getAttribute("formmethod")) || goes.method || "get").toLowerCase();
  }
  rec.submits = !!submits;
}

/**
 * What a field holds: its value (a password's hidden), checked state, selection, options.
 * @param {any} rec
 * @param {any} el
 * @param {string} tag
 * @param {string} kind
 * @param {string | null} type
 */
function valueAttrs(rec, el, tag, kind, type) {
  const a = rec.attrs;
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
  } else if (tag === "OPTION") {
    if (el.selected) a.selected = "";
  } else if (kind === "editable") {
    rec.editable = true;
  } else if (kind === "label") {
    const ctl = el.control;
    if (ctl && ctl.type) a.type = ctl.type;
    if (ctl && ctl.checked) a.checked = "";
  }
}

/**
 * The element's digest line. Attribute values are page strings: escaped and quoted where
 * needed.
 * @param {any} rec
 * @returns {string}
 */
function lineOf(rec) {
  const [tag, roleShown] = shownTag(rec);
  let attrs = "";
  for (const k of LINE_ATTRS) {
    const v = rec.attrs[k];
    if (v === undefined || (roleShown && k === "role")) continue;
    if (v === "") attrs += ` ${k}`;
    else if (k === "placeholder" || k === "value" || k === "selected" || k === "options") attrs += ` ${k}=${quoted(v, k === "options" ? 240 : 100)}`;
    else attrs += ` ${k}=${attrVal(v, 100)}`;
  }
  const mark = (rec.isNew ? "*" : "") + (rec.inView ? "" : "~");
  const nameText = esc(rec.name);
  return `${mark}[${rec.index}]<${tag}${attrs}>${nameText}${nameText ? `</${tag}>` : ""}`;
}
