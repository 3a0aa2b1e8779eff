// A service worker a finished run leaves registered (it serves nothing of its own).
self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));
