// The eyes, stage: detectors (password, code, card fields; CAPTCHA and payment widgets).
// One part of handrail's page script: core/world/world.py concatenates core/eyes/*.js (in the order
// of world.EYES_PARTS) inside one closure, so these names are shared with the other parts and
// invisible to the page (the script runs in our isolated world).
const INSTR =
  /ignore (all |any |the )?(previous|prior|above|earlier)|disregard|instruction|system prompt|\bsystem\b|\bassistant\b|you must|new task|forget (all|everything|your)/i;

// Password, one-time-code and card fields: one judge with the hands (core/world/sensitive.js, its
// words in core/world/sensitive.json, in six languages), bound by core/world/world.py as judgeSensitive,
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

