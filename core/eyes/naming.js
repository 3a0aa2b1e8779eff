// The eyes, stage: naming (roles and accessible names).
// One part of handrail's page script: core/world.py concatenates core/eyes/*.js (in the order
// of world.EYES_PARTS) inside one closure, so these names are shared with the other parts and
// invisible to the page (the script runs in our isolated world).
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
