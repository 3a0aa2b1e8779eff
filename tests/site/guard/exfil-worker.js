// Run as a dedicated or a service worker by exfil.js: sends to ?to= as soon as it starts.
const target = new URLSearchParams(location.search).get("to");
fetch(target, { method: "POST", mode: "no-cors", body: "from a worker" });
