// @ts-check
// Is this form field sensitive: a password, a one-time code or a payment card field?
//
// One pure function of (element, words): it reads the element as it is now and returns
// { kind, why } (kind is "password", "one-time code" or "card"; why names the evidence) or
// null. `words` is core/world/sensitive.json as loaded by core/world/sensitive.py. The hands call it
// just before typing; the digest's detectors can call the very same function.
//
// Evidence, in order: the type and autocomplete of the field (or of a field hidden inside a
// wrapper such as role=textbox); its accessible name, labels, aria-labelledby and
// aria-describedby text, placeholder, title, name and id; the legend or label of the group
// it is in (a fieldset, role=group); and the shape of that group (a run of sibling inputs
// that together hold a card number or a one-time code).
(function judgeSensitivity(el, words) {
  "use strict";
  if (!el || el.nodeType !== 1) return null;

  function fold(text) {
    // Lowercase, accents off, camelCase and punctuation to spaces: "cardNumber" and
    // "card_number" both read "card number"; "Contraseña" reads "contrasena".
    return String(text || "")
      .replace(/([a-z])([A-Z])/g, "$1 $2")
      .normalize("NFKD")
      .replace(/[\u0300-\u036f]/g, "")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, " ")
      .trim();
  }

  const CJK = /[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]/;

  function phraseIn(hay, padded, p, cjk) {
    if (!p) return false;
    if (cjk) return hay.includes(p);
    return padded.includes(" " + p + " ");
  }

  // The phrases folded once per words object, not once per field and text: the digest asks
  // about every field of a page (a non-enumerable property, so the words read the same).
  // `any` is one expression for all of them: most texts name no phrase at all, and one
  // search says so where a loop over every phrase of six languages took a dozen times longer.
  function foldedPhrases() {
    if (!Object.prototype.hasOwnProperty.call(words, "_folded")) {
      const list = [];
      for (const [kind, byLanguage] of Object.entries(words.phrases)) {
        for (const [language, phrases] of Object.entries(byLanguage)) {
          for (const phrase of phrases) {
            const p = fold(phrase);
            if (p) list.push({ kind, phrase, language, p, cjk: CJK.test(p) });
          }
        }
      }
      const quote = (p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      const spaced = list.filter((x) => !x.cjk).map((x) => quote(x.p));
      const bare = list.filter((x) => x.cjk).map((x) => quote(x.p));
      const parts = [];
      if (spaced.length) parts.push(`(?<= )(?:${spaced.join("|")})(?= )`);
      if (bare.length) parts.push(`(?:${bare.join("|")})`);
      const any = parts.length ? new RegExp(parts.join("|"), "u") : null;
      Object.defineProperty(words, "_folded", { value: { list, any } });
    }
    return words._folded;
  }

  function matchWords(text) {
    const hay = fold(text);
    if (!hay) return null;
    const padded = " " + hay + " ";
    const { list, any } = foldedPhrases();
    if (!any || !any.test(padded)) return null;
    // Some phrase is there: the first in the words' order decides, as it always did.
    for (const { kind, phrase, language, p, cjk } of list) {
      if (phraseIn(hay, padded, p, cjk)) return { kind, phrase, language };
    }
    return null;
  }

  function isField(node) {
    if (node.tagName === "INPUT") {
      const type = (node.getAttribute("type") || "text").toLowerCase();
      return !["hidden", "submit", "button", "reset", "image", "checkbox", "radio", "file", "range", "color"].includes(type);
    }
    return node.tagName === "TEXTAREA" || node.isContentEditable === true;
  }

  function textOfIds(node, attr) {
    const doc = node.ownerDocument;
    return (node.getAttribute(attr) || "")
      .split(/\s+/)
      .map((id) => id && doc.getElementById(id))
      .filter(Boolean)
      .map((n) => n.textContent)
      .join(" ");
  }

  function ownTexts(node) {
    const texts = [];
    const add = (what, value) => {
      if (value && String(value).trim()) texts.push([what, String(value)]);
    };
    add("aria-label", node.getAttribute("aria-label"));
    add("aria-labelledby", textOfIds(node, "aria-labelledby"));
    add("aria-describedby", textOfIds(node, "aria-describedby"));
    // Only a field with an id can have a label other than the one wrapping it (read below);
    // node.labels costs a walk of the whole document the first time it is asked.
    if (node.id && node.labels) add("label", Array.from(node.labels, (l) => l.textContent).join(" "));
    const wrappingLabel = node.closest ? node.closest("label") : null;
    if (wrappingLabel) add("label", wrappingLabel.textContent);
    add("placeholder", node.getAttribute("placeholder"));
    add("title", node.getAttribute("title"));
    add("name", node.getAttribute("name"));
    add("id", node.id);
    return texts;
  }

  function groupTexts(node) {
    const texts = [];
    const fieldset = node.closest ? node.closest("fieldset") : null;
    if (fieldset) {
      const legend = fieldset.querySelector(":scope > legend");
      if (legend) texts.push(["legend", legend.textContent]);
    }
    const group = node.closest ? node.closest("[role=group], [role=radiogroup]") : null;
    if (group) {
      const label = group.getAttribute("aria-label") || textOfIds(group, "aria-labelledby");
      if (label) texts.push(["group label", label]);
    }
    return texts;
  }

  function byType(node) {
    const type = (node.getAttribute("type") || "").toLowerCase();
    if (node.tagName === "INPUT" && type === "password") return { kind: "password", why: "it is a password input (type=password)" };
    const tokens = (node.getAttribute("autocomplete") || "").toLowerCase().split(/\s+/);
    for (const [kind, values] of Object.entries(words.autocomplete)) {
      for (const value of values) {
        if (tokens.includes(value)) return { kind, why: `its autocomplete is ${value}` };
      }
    }
    return null;
  }

  function byText(texts) {
    for (const [what, text] of texts) {
      const found = matchWords(text);
      if (found) return { kind: found.kind, why: `its ${what} says ${JSON.stringify(found.phrase)} (${found.language})` };
    }
    return null;
  }

  // A run of short sibling inputs that together hold a card number or a code.
  // The container may be a form whose controls hide its members (DOM clobbering): it is
  // climbed and searched through Node's and Element's own.
  const parentOf = /** @type {(this: Node) => (Element | null)} */ (
    /** @type {PropertyDescriptor} */ (Object.getOwnPropertyDescriptor(Node.prototype, "parentElement")).get
  );
  const inputsIn = (/** @type {Element} */ box) => Array.from(Element.prototype.querySelectorAll.call(box, "input")).filter(isField);

  function byShape(node) {
    if (node.tagName !== "INPUT" || !parentOf.call(node)) return null;
    let container = /** @type {Element} */ (parentOf.call(node));
    let run = inputsIn(container);
    // Each box is often wrapped in its own element: look one level up.
    if (run.length < 2 && parentOf.call(container)) {
      container = /** @type {Element} */ (parentOf.call(container));
      run = inputsIn(container);
    }
    const lengths = run.map((input) => input.maxLength);
    if (lengths.some((n) => !(n > 0))) return null;
    const total = lengths.reduce((a, b) => a + b, 0);
    for (const [kind, shape] of Object.entries(words.groups)) {
      if (
        run.length >= shape.min_inputs &&
        lengths.every((n) => n <= shape.each_max) &&
        total >= shape.total_min &&
        total <= shape.total_max
      ) {
        return { kind, why: `it is one of ${run.length} short inputs that together hold ${total} characters, like a ${kind}` };
      }
    }
    return null;
  }

  function judgeField(node) {
    return byType(node) || byText(ownTexts(node)) || byText(groupTexts(node)) || byShape(node);
  }

  // The element itself, then any field a wrapper hides inside it.
  const inner = Array.from(el.querySelectorAll("input, textarea, [contenteditable]")).filter(isField);
  for (const node of [el, ...inner]) {
    if (node !== el && !isField(node)) continue;
    const found = node === el && !isField(el) ? byText(ownTexts(el)) || byText(groupTexts(el)) : judgeField(node);
    if (found) {
      if (node !== el) found.why += ` (a field inside ${el.tagName.toLowerCase()}${el.getAttribute("role") ? " role=" + el.getAttribute("role") : ""})`;
      return found;
    }
  }
  return null;
})
