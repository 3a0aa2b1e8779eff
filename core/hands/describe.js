// @ts-check
// The hands' page script, stage: the eyes' registry (__handrail.element) and their names,
// and elements described for messages (describe) and for the approval check (target).
//
// core/hands/ctx.py joins the stages in the order of its PAGE_PARTS inside one closure,
// with `judgeSensitive` (core/world/sensitive.js) in scope, and runs it in handrail's
// isolated world (core/world/), where the eyes' script (core/eyes/*.js) has defined
// globalThis.__handrail: the stages share their top-level names, and the page sees none
// of them.

const registry = () => globalThis.__handrail;
const element = (index) => registry().element(index);

function clip(text, n) {
  const t = String(text || "").replace(/\s+/g, " ").trim();
  return t.length > n ? t.slice(0, n - 1) + "…" : t;
}

// "<div id=overlay class="modal open"> "Subscribe to our newsletter"": enough for the
// model (and the person) to recognise what is in the way.
function describe(el) {
  if (!el || el.nodeType !== 1) return "nothing";
  const tag = el.tagName.toLowerCase();
  const parts = [tag];
  if (el.id) parts.push(`id=${clip(el.id, 40)}`);
  const cls = typeof el.className === "string" ? clip(el.className, 60) : "";
  if (cls) parts.push(`class="${cls}"`);
  const role = el.getAttribute("role");
  if (role) parts.push(`role=${clip(role, 20)}`);
  const label = el.getAttribute("aria-label");
  const field = el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT";
  // A field, or an element labelled by another (a slider's handle), goes by its digest name.
  const named = field || el.hasAttribute("aria-labelledby");
  const text = clip(label || (named ? accessibleName(el) : el.innerText || el.textContent) || "", 60);
  return `<${parts.join(" ")}>` + (text ? ` "${text}"` : "");
}

// The element's name is the eyes' (core/eyes/naming.js): the one the digest printed, so
// what the person approved is compared with the same naming, never a second one.
const accessibleName = (el) => registry().accessibleName(el);

function targetOf(el) {
  return {
    name: accessibleName(el),
    rect: topRect(el),
    tag: el.tagName.toLowerCase(),
    describe: describe(el),
  };
}

function focusDescription() {
  const active = deepActiveElement();
  if (!active || active === document.body || active === document.documentElement) return null;
  return describe(active);
}
