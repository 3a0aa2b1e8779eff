// @ts-check
// The eyes, stage: detectors (password, code, card fields; CAPTCHA and payment widgets;
// hidden instruction-like text).
// One part of handrail's page script: core/eyes/script.py joins core/eyes/*.js (in the order
// of its EYES_PARTS) inside one closure, so these names are shared with the other parts and
// invisible to the page (the script runs in our isolated world).
//
// This stage owns what the walk's WalkState.signals and WalkState.hidden hold (walk.js):
// core/eyes/snapshot.py reads them as the page's signals, and core/guard hands the run over
// to the person on a password, code or card field, a CAPTCHA or a payment frame.
const INSTR =
  /ignore (all |any |the )?(previous|prior|above|earlier)|disregard|instruction|system prompt|\bsystem\b|\bassistant\b|you must|new task|forget (all|everything|your)/i;

// Password, one-time-code and card fields: one judge with the hands (core/world/sensitive.js, its
// words in core/world/sensitive.json, in six languages), bound by core/eyes/script.py as judgeSensitive,
// so the digest hands over for exactly the fields the dispatch would refuse to type into.
const SENSITIVE_KIND = { password: "password", "one-time code": "otp", card: "payment" };
const NOT_TYPED = new Set([
  "checkbox", "radio", "submit", "button", "reset", "image", "file", "range", "color", "hidden",
]);
const TYPED_ROLES = new Set(["textbox", "searchbox", "combobox", "spinbutton"]);
// The element's kind of secret ("password", "otp", "payment") when someone could type into
// it (a text field, an editor, a role=textbox wrapper) and the judge says it is one.
function sensitiveOf(el, tag) {
  if (tag === "INPUT") {
    if (NOT_TYPED.has((el.type || "").toLowerCase())) return null;
  } else if (tag !== "TEXTAREA" && !el.isContentEditable) {
    const role = (el.getAttribute("role") || "").trim().split(/\s+/)[0];
    if (!TYPED_ROLES.has(role)) return null;
  }
  const found = judgeSensitive(el);
  return found ? SENSITIVE_KIND[found.kind] || "password" : null;
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

// A sensitive field found by the walk (listed or beyond the margin): at most 50 per kind.
/**
 * @param {WalkState} ws
 * @param {string} kind "password", "otp" or "payment" (sensitiveOf)
 * @param {Element} el
 * @param {number} index
 * @param {string} name its accessible name
 * @param {string | null} frame the URL of the frame it is in, null in the top document
 * @param {boolean} shadow it is inside a shadow root
 */
function signalField(ws, kind, el, index, name, frame, shadow) {
  const signals = ws.signals;
  const list = kind === "password" ? signals.password : kind === "otp" ? signals.otp : signals.payment;
  if (list.length < 50) {
    list.push({ index, name: cut(name, 80), where: frame ? `frame ${frame}` : shadow ? "shadow root" : "page" });
  }
}

// CAPTCHA widgets announced by class, visible ones only.
/** @param {WalkState} ws */
function captchaWidgets(ws) {
  for (const [sel, kind] of CAPTCHA_CLASS) {
    for (const el of /** @type {Iterable<Element>} */ (/** @type {unknown} */ (ws.doc.querySelectorAll(sel)))) {
      if (el.checkVisibility && el.checkVisibility({ opacityProperty: true, visibilityProperty: true })) {
        ws.signals.captcha.push({ kind, where: sel });
        break;
      }
    }
  }
}

// Instruction-like fragments a person cannot see, in a subtree the walk found hidden
// (they never reach the digest; the count does).
/**
 * @param {WalkState} ws
 * @param {Element} root
 */
function hiddenScan(ws, root) {
  const tw = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = /** @type {Text} */ (tw.nextNode()); n; n = /** @type {Text} */ (tw.nextNode())) {
    const p = /** @type {Element} */ (n.parentNode);
    if (p && (p.tagName === "SCRIPT" || p.tagName === "STYLE")) continue;
    if (n.data.length > 8 && INSTR.test(n.data)) ws.hidden++;
  }
}

// ... and in the comments of a document.
/**
 * @param {WalkState} ws
 * @param {Document} d
 */
function countComments(ws, d) {
  const tw = d.createTreeWalker(d, NodeFilter.SHOW_COMMENT);
  for (let n = /** @type {Comment} */ (tw.nextNode()); n; n = /** @type {Comment} */ (tw.nextNode())) {
    if (INSTR.test(n.data)) ws.hidden++;
  }
}
