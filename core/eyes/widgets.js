// @ts-check
// The eyes, stage: widgets (the states a person reads off menus, trees, toggles and tabs).
// One part of handrail's page script: core/eyes/script.py joins core/eyes/*.js (in the order
// of its EYES_PARTS) inside one closure, so these names are shared with the other parts and
// invisible to the page (the script runs in our isolated world).

// A list item's nested group: the submenu or the folder's contents a person opens.
const GROUP_TAGS = new Set(["UL", "OL"]);
function nestedGroup(item) {
  for (let ch = item.firstElementChild; ch; ch = ch.nextElementSibling) {
    const role = ch.getAttribute("role");
    if (GROUP_TAGS.has(ch.tagName) || role === "group" || role === "menu" || role === "tree") return ch;
  }
  return null;
}

function groupShown(group) {
  if (group.checkVisibility && !group.checkVisibility({ opacityProperty: true, visibilityProperty: true })) return false;
  const r = rectOf(group);
  return r.width >= 1 && r.height >= 1;
}

// The tree or menu item `el` stands for, with its nested group: a role=treeitem, or an <li>
// whose first child (the label a person clicks: a span, a link, jQuery UI's wrapper div) is
// `el` or holds it. null when `el` is no such item's label.
function itemOf(el, tag) {
  const role = el.getAttribute("role");
  if (role === "treeitem" || tag === "LI") return el;
  const li = el.closest("li");
  if (!li) return null;
  const head = li.firstElementChild;
  if (!head || head === nestedGroup(li) || !(head === el || head.contains(el))) return null;
  return li;
}

// Depth of an item in nested lists or a tree (1: top level).
function itemLevel(item) {
  const own = parseInt(item.getAttribute("aria-level") || "", 10);
  if (own > 0) return own;
  const sel = item.getAttribute("role") === "treeitem" ? "[role=treeitem]" : "li";
  let level = 1;
  const above = (/** @type {Element} */ n) => {
    const up = parentOf(n);
    return up && closestOf(up, sel);
  };
  for (let p = above(item); p && level < 50; p = above(p)) {
    level++;
  }
  return level;
}

// haspopup, pressed, current, expanded and level, into the line's attributes `a`.
// A folder or submenu whose nested group is hidden is collapsed even when the page says
// nothing in ARIA: a person sees it closed.
function widgetStates(el, tag, a) {
  const popup = el.getAttribute("aria-haspopup");
  if (popup && popup !== "false") a.haspopup = popup === "true" ? "menu" : popup;
  const pressed = el.getAttribute("aria-pressed");
  if (pressed === "true") a.pressed = "";
  else if (pressed === "mixed") a.pressed = "mixed";
  const current = el.getAttribute("aria-current");
  if (current && current !== "false") a.current = current === "true" ? "" : current;
  const expanded = el.getAttribute("aria-expanded");
  if (expanded === "true" || expanded === "false") a.expanded = expanded;
  if (tag === "SUMMARY" && el.parentElement && el.parentElement.tagName === "DETAILS") {
    a.expanded = el.parentElement.open ? "true" : "false";
  }
  const item = itemOf(el, tag);
  if (!item) return;
  const group = nestedGroup(item);
  const level = itemLevel(item);
  const isTree = item.getAttribute("role") === "treeitem" || !!item.closest("[role=tree]");
  if (!group && level === 1 && !isTree) return; // an item of a flat list: nothing to say
  if (group) {
    if (a.expanded === undefined) {
      const ownAria = item !== el ? item.getAttribute("aria-expanded") : null;
      a.expanded = ownAria === "true" || ownAria === "false" ? ownAria : groupShown(group) ? "true" : "false";
    }
    const inMenu = el.getAttribute("role") === "menuitem" || !!item.closest("[role=menu], [role=menubar]");
    if (inMenu && a.haspopup === undefined) a.haspopup = "menu";
  }
  if (!inMenuOnly(item)) a.level = String(level);
}

// Menus show their submenus by haspopup; a level there says nothing more.
function inMenuOnly(item) {
  return !!item.closest("[role=menu], [role=menubar]") && !item.closest("[role=tree]");
}

// ---- lists of items ------------------------------------------------------------------------
// A clickable list (an autocomplete's suggestions, a menu, a listbox) is not one target: a
// person clicks one of its items. The walk lists each item on its own, named by its own
// text, and the list by its label only.
const LIST_ROLES = new Set(["listbox", "menu", "menubar"]);
function isItemList(el) {
  if (el.childElementCount < 1) return false;
  const tag = el.tagName;
  return tag === "UL" || tag === "OL" || LIST_ROLES.has(el.getAttribute("role"));
}

// An item of such a list: a child the person can click as a whole (nothing inside it is a
// control of its own), and not a separator.
const NOT_ITEM_ROLES = new Set(["separator", "presentation", "none"]);
function isListItem(el, list) {
  if (el.parentElement !== list) return false;
  if (NOT_ITEM_ROLES.has(el.getAttribute("role"))) return false;
  return !el.querySelector(SELECTOR);
}

// ---- sorted columns ------------------------------------------------------------------------
const SORTED = new Set(["ascending", "descending", "other"]);
const HEADER_CELL = "th, [role=columnheader], [role=rowheader]";

/**
 * The direction a column (or row) is sorted in, for its header cell or a control inside
 * it: aria-sort ascending, descending or other; null when it is not sorted.
 * @param {Element} el
 * @returns {string | null}
 */
function sortOf(el) {
  const header = el.closest(HEADER_CELL);
  const sort = header ? (header.getAttribute("aria-sort") || "").trim() : "";
  return SORTED.has(sort) ? sort : null;
}

// ---- ranges --------------------------------------------------------------------------------
// A number a person reads off a widget: a slider's position (or the text its handle shows),
// a star rating, a spin button, a progress bar, a meter.
const RANGE_ROLES = new Set(["slider", "spinbutton", "progressbar", "meter", "scrollbar"]);

/**
 * The range `el` shows, or null: its value as a person reads it (aria-valuetext, else
 * aria-valuenow, else the visible text the handle carries) and its bounds when known.
 * @param {any} el
 * @param {string} tag
 * @returns {{value: string, min: string, max: string} | null}
 */
function rangeOf(el, tag) {
  if (tag === "INPUT" && String(el.type).toLowerCase() === "range") {
    return { value: String(el.value), min: el.min || "0", max: el.max || "100" };
  }
  if (tag === "PROGRESS") {
    return el.hasAttribute("value") ? { value: String(el.value), min: "0", max: String(el.max) } : null;
  }
  if (tag === "METER") return { value: String(el.value), min: String(el.min), max: String(el.max) };
  const role = (el.getAttribute("role") || "").trim().split(/\s+/)[0];
  if (!RANGE_ROLES.has(role)) return null;
  // A text field playing a spin button shows what was typed in it (jQuery UI's spinner
  // moves aria-valuenow only when it loses the focus).
  const value =
    (tag === "INPUT" ? clean(String(el.value)) : "") ||
    clean(el.getAttribute("aria-valuetext") || "") ||
    clean(el.getAttribute("aria-valuenow") || "") ||
    cut(clean(el.innerText || ""), 40);
  if (!value) return null;
  return {
    value,
    min: clean(el.getAttribute("aria-valuemin") || ""),
    max: clean(el.getAttribute("aria-valuemax") || ""),
  };
}

/**
 * How a progress bar or meter reads: "40%" on a 0–100 (or 0–1) scale, else "10 of 0–50".
 * @param {{value: string, min: string, max: string}} range
 */
function rangeText(range) {
  const { value, min, max } = range;
  const n = Number(value);
  if (!Number.isFinite(n) || value.trim() === "") return value;
  if ((min === "" || Number(min) === 0) && Number(max) === 100) return `${n}%`;
  if ((min === "" || Number(min) === 0) && Number(max) === 1) return `${Math.round(n * 100)}%`;
  if (min !== "" && max !== "") return `${value} of ${min}–${max}`;
  return max !== "" ? `${value} of ${max}` : value;
}

/**
 * A spin button's arrows, hidden from assistive technology because the spin button takes
 * the same steps from its keys (jQuery UI's spinner: `<a role=button aria-hidden=true>` on
 * either side of its `role=spinbutton` input); a person sees and clicks them. Such an arrow,
 * drawn, beside a spin button that is not hidden, is read as a control.
 * @param {Element} el
 * @param {CSSStyleDeclaration} st
 * @param {string} display
 */
function stepperArrow(el, st, display) {
  if (display === "none" || st.opacity === "0" || el.hasAttribute("inert")) return false;
  if (el.getAttribute("aria-hidden") !== "true") return false;
  if (el.tagName !== "BUTTON" && (el.getAttribute("role") || "").trim() !== "button") return false;
  // The parent may be a form whose fields shadow its members: read it through the prototypes.
  const parent = parentOf(el);
  if (!parent || closestOf(parent, "[aria-hidden=true], [inert]")) return false;
  let spin = false;
  for (let n = firstChildOf(parent); n && !spin; n = nextSiblingOf(n)) {
    if (nodeTypeOf(n) !== 1 || n === el) continue;
    const e = /** @type {Element} */ (n);
    const role = (GET_ATTRIBUTE.call(e, "role") || "").trim();
    const number = e instanceof HTMLInputElement && GET_ATTRIBUTE.call(e, "type") === "number";
    spin = (role === "spinbutton" || number) && GET_ATTRIBUTE.call(e, "aria-hidden") !== "true";
  }
  if (!spin) return false;
  const r = rectOf(el);
  return r.width >= 4 && r.height >= 4;
}
