// Shared by the hostile pages. A page learns where "the attacker" lives from its own query
// (?a=http://localhost:PORT) and tells the test what happened to it by posting to its own
// origin (/hostile/report): the test asserts on what the server received, the page's state.
"use strict";
window.attacker = () => new URLSearchParams(location.search).get("a") || "http://attacker.invalid";
window.report = (what, data) =>
  fetch("/hostile/report", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ page: location.pathname, what, data }),
    keepalive: true,
  });
// Fill [data-attacker] templates: "{A}" becomes the attacker's origin, "{O}" this origin.
window.fillTemplates = () => {
  for (const el of document.querySelectorAll("[data-template]")) {
    el.textContent = el.dataset.template.replaceAll("{A}", attacker()).replaceAll("{O}", location.origin);
  }
};
document.addEventListener("DOMContentLoaded", () => window.fillTemplates());
