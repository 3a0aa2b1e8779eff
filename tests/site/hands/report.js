// Shared by the hands' fixture pages: tell the test server what happened to the page.
"use strict";
window.report = (what, data) =>
  fetch("/hands/report", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ page: location.pathname + location.search, what, data }),
    keepalive: true,
  });
