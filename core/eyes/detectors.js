// The eyes, stage: detectors (password, code, card fields; CAPTCHA and payment widgets).
// One part of handrail's page script: core/world.py concatenates core/eyes/*.js (in the order
// of world.EYES_PARTS) inside one closure, so these names are shared with the other parts and
// invisible to the page (the script runs in our isolated world).
const INSTR =
  /ignore (all |any |the )?(previous|prior|above|earlier)|disregard|instruction|system prompt|\bsystem\b|\bassistant\b|you must|new task|forget (all|everything|your)/i;

const CARD =
  /card.?num|cardnumber|credit.?card|\bcc.?(num|number|no)\b|\bcvc\b|\bcvv\b|\bcsc\b|security code|expir|exp.?date|\bmm\s*\/\s*yy|name on card|cardholder/i;
const OTP =
  /\botp\b|one.?time|\b2fa\b|two.?factor|verification code|auth(entication)? code|\btotp\b|passcode|sms code|\d.digit code/i;
function sensitiveOf(el, tag, name) {
  if (tag !== "INPUT" && tag !== "TEXTAREA") return null;
  const type = (el.type || "").toLowerCase();
  if (["checkbox", "radio", "submit", "button", "reset", "image", "file", "range", "color"].includes(type)) return null;
  const ac = (el.getAttribute("autocomplete") || "").toLowerCase();
  if (type === "password" || /current-password|new-password/.test(ac)) return "password";
  if (/\bcc-/.test(ac)) return "payment";
  if (/one-time-code/.test(ac)) return "otp";
  const hay = [el.name, el.id, name, el.placeholder, el.getAttribute("aria-label")].join(" ");
  if (CARD.test(hay)) return "payment";
  if (OTP.test(hay)) return "otp";
  return null;
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

