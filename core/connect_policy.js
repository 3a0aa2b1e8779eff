// Runs in the guard's isolated world at the start of every document of our tabs (strict
// mode). It puts the run's connect policy into the document as a <meta> CSP before any page
// script runs (the parser runs no script before a microtask checkpoint, and the observer
// fires at that checkpoint), so the renderer itself refuses a WebSocket, fetch, beacon or
// EventSource to a host outside --allow-domain. A page cannot lift a CSP once it applies.
// Each violation is reported by loading REPORT?u=BLOCKED as an image (images are outside
// the policy): the guard's Fetch catches that request, so it never leaves the browser, and
// no Runtime domain (which pages can notice) is needed for a binding.
(policy, report) => {
  const put = () => {
    const meta = document.createElement("meta");
    meta.httpEquiv = "Content-Security-Policy";
    meta.content = policy;
    document.head.prepend(meta);
  };
  if (document.head) {
    put();
  } else {
    const watch = new MutationObserver(() => {
      if (!document.head) return;
      watch.disconnect();
      put();
    });
    watch.observe(document, { childList: true, subtree: true });
  }
  document.addEventListener(
    "securitypolicyviolation",
    (event) => {
      if (event.effectiveDirective !== "connect-src") return;
      new Image().src = report + "?u=" + encodeURIComponent(event.blockedURI);
    },
    true,
  );
};
