// @ts-check
// The eyes, stage: reading a form whatever its controls are named (DOM clobbering).
// One part of handrail's page script: core/eyes/script.py joins core/eyes/*.js (in the order
// of its EYES_PARTS) inside one closure, so these names are shared with the other parts and
// invisible to the page (the script runs in our isolated world).
//
// A form's named controls shadow the form's own properties and methods, in our isolated
// world too (HTMLFormElement is [LegacyOverrideBuiltIns]): in Django's changelist,
// <select name="action"> makes form.action that select; <input name="parentElement"> makes
// form.parentElement that input, and a climb up the tree loops. So whatever is read from a
// form, or from an element that may be one (a parent, an ancestor), is read through the
// prototype's own getter or method, captured here before any page could matter.

/**
 * @param {object} proto
 * @param {string} name
 * @returns {(this: any) => any}
 */
function protoGetter(proto, name) {
  const desc = Object.getOwnPropertyDescriptor(proto, name);
  if (!desc || !desc.get) throw new Error(`handrail: no getter ${name}`);
  return desc.get;
}

const PARENT_ELEMENT = protoGetter(Node.prototype, "parentElement");
const FIRST_CHILD = protoGetter(Node.prototype, "firstChild");
const CHILDREN = protoGetter(Element.prototype, "children");
const NEXT_SIBLING = protoGetter(Node.prototype, "nextSibling");
const NODE_TYPE = protoGetter(Node.prototype, "nodeType");
const IS_CONTENT_EDITABLE = protoGetter(HTMLElement.prototype, "isContentEditable");
const FORM_ACTION = protoGetter(HTMLFormElement.prototype, "action");
const FORM_METHOD = protoGetter(HTMLFormElement.prototype, "method");
const FORM_ELEMENTS = protoGetter(HTMLFormElement.prototype, "elements");
const GET_ATTRIBUTE = Element.prototype.getAttribute;
const CLOSEST = Element.prototype.closest;
const GET_RECT = Element.prototype.getBoundingClientRect;
const QUERY_ALL = Element.prototype.querySelectorAll;
const TO_STRING = Object.prototype.toString;

/** @param {any} n */
function isForm(n) {
  return TO_STRING.call(n) === "[object HTMLFormElement]";
}

// The walk's own steps through the tree: any node it steps over may be a form.
/**
 * @param {Node} n
 * @returns {number}
 */
function nodeTypeOf(n) {
  return NODE_TYPE.call(n);
}

/**
 * @param {Node} n
 * @returns {any} a ChildNode or null (the walk's callers narrow it by its nodeType)
 */
function firstChildOf(n) {
  return FIRST_CHILD.call(n);
}

/**
 * @param {Node} n
 * @returns {any} a ChildNode or null (the walk's callers narrow it by its nodeType)
 */
function nextSiblingOf(n) {
  return NEXT_SIBLING.call(n);
}

/**
 * An element's parent element, even when it is (or its parent is) a form.
 * @param {Node} n
 * @returns {Element | null}
 */
function parentOf(n) {
  return PARENT_ELEMENT.call(n);
}

/**
 * @param {Element} el
 * @param {string} selector
 * @returns {Element | null}
 */
function closestOf(el, selector) {
  return CLOSEST.call(el, selector);
}

/** @param {Element} el */
function isEditableNode(el) {
  return el instanceof HTMLElement ? IS_CONTENT_EDITABLE.call(el) === true : false;
}

/** @param {Element} el */
function rectOf(el) {
  return /** @type {DOMRect} */ (GET_RECT.call(el));
}

// An element's box, read once per walk: nothing a walk does moves a box, and the walk asks
// for some twice (a grid's rows to order them, then to place them; a scroll container's
// content to place it, then to count what lies beyond).
/** @type {Map<Element, DOMRect> | null} */
let walkRects = null; // while a walk runs (walk.js walk())
/** @param {Element} el */
function boxOf(el) {
  if (walkRects === null) return rectOf(el);
  let r = walkRects.get(el);
  if (!r) {
    r = rectOf(el);
    walkRects.set(el, r);
  }
  return r;
}

/**
 * Where a form submits and how: the resolved action URL and the method, as the browser
 * would use them, whatever its controls are named.
 * @param {HTMLFormElement} form
 * @returns {{action: string, method: string}}
 */
function formTarget(form) {
  return { action: String(FORM_ACTION.call(form)), method: String(FORM_METHOD.call(form)) };
}

/**
 * Whether a control (or image) of `form` is named like a property of the form's prototype
 * chain, and so hides it.
 * @param {HTMLFormElement} form
 */
function isClobbered(form) {
  const named = [...FORM_ELEMENTS.call(form), ...QUERY_ALL.call(form, "img")];
  for (const el of named) {
    for (const key of [GET_ATTRIBUTE.call(el, "name"), GET_ATTRIBUTE.call(el, "id")]) {
      if (key && key in HTMLFormElement.prototype) return true;
    }
  }
  return false;
}

/**
 * A form's children, one after the other, read without its own properties.
 * @param {Element} form
 * @returns {Generator<ChildNode>}
 */
function* formChildren(form) {
  for (let n = firstChildOf(form); n; n = nextSiblingOf(n)) yield n;
}
