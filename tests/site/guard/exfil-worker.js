// Run as a dedicated or a service worker by exfil.js: sends to ?to= as soon as it starts.
const params = new URLSearchParams(location.search);
const target = params.get("to");
if (params.get("ws")) new WebSocket(target.replace(/^http/, "ws"));
else fetch(target, { method: "POST", mode: "no-cors", body: "from a worker" });
