// @ts-check
// Runs in the guard's isolated world at the start of every document of our tabs. Two jobs:
//
// 1. (strict mode: `policy` given) It puts the run's connect policy into the document as a
//    <meta> CSP before any page script runs (the parser runs no script before a microtask
//    checkpoint, and the observer fires at that checkpoint), so the renderer itself refuses
//    a WebSocket, fetch, beacon or EventSource to a host outside --allow-domain. A page
//    cannot lift a CSP once it applies. Each violation is reported by loading
//    REPORT?u=BLOCKED as an image (images are outside the policy): the guard's Fetch catches
//    that request, so it never leaves the browser, and no Runtime domain (which pages can
//    notice) is needed for a binding.
//
// 2. (both modes) It removes every <script type=speculationrules> as it is inserted or
//    filled. A speculation-rules prefetch is made by the browser outside every DevTools
//    Fetch (even the browser-wide one), and a browser we connect to may have "Preload pages"
//    on. Removing the script removes its rule set; the candidates are only considered after
//    the microtask checkpoint at which this observer runs first (it was queued by the very
//    insertion), so nothing is fetched (measured with Chromium 156, tests/guard/test_allowlist.py).
(policy, report) => {
  const SPECULATION = "speculationrules";
  const isRules = (node) =>
    node.nodeType === Node.ELEMENT_NODE &&
    node.localName === "script" &&
    String(node.getAttribute("type") || "").trim().toLowerCase() === SPECULATION;
  const sweep = (node) => {
    if (isRules(node)) node.remove();
    else if (node.nodeType === Node.ELEMENT_NODE && node.getElementsByTagName) {
      for (const script of [...node.getElementsByTagName("script")]) if (isRules(script)) script.remove();
    }
  };
  let meta = null;
  const put = () => {
    if (policy === null || meta || !document.head) return;
    meta = document.createElement("meta");
    meta.httpEquiv = "Content-Security-Policy";
    meta.content = policy;
    document.head.prepend(meta);
  };
  put();
  new MutationObserver((records) => {
    put();
    for (const record of records) {
      // An inserted script or subtree, a script filled in afterwards, or its type changed.
      if (record.type === "childList") {
        if (isRules(record.target)) /** @type {Element} */ (record.target).remove();
        for (const node of record.addedNodes) sweep(node);
      } else if (isRules(record.target)) {
        /** @type {Element} */ (record.target).remove();
      }
    }
  }).observe(document, { childList: true, subtree: true, attributes: true, attributeFilter: ["type"] });
  if (policy === null) return;
  document.addEventListener(
    "securitypolicyviolation",
    (event) => {
      if (event.effectiveDirective !== "connect-src") return;
      new Image().src = report + "?u=" + encodeURIComponent(event.blockedURI);
    },
    true,
  );
};
