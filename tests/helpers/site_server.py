"""The fixture web server: serves tests/site on loopback and records what pages send it.

Two instances on different ports are two origins ("site" and "attacker"), which is what the
cross-origin iframe and hostile-page tests need. Every request is recorded, so a test can
assert what the server received (form posts, which hosts a blocked navigation never reached).

Special paths, for pages that misbehave on purpose:
- ``POST <any path>``: records the form/JSON body and answers with a page that shows it.
- ``/__slow?ms=N&then=/path``: answers after N ms (a late page), redirecting to ``then`` if given.
- ``/__never``: never answers (an endless load) until the server stops.
- ``/__redirect?to=URL``: a 302 to URL (chains of redirects are built from these);
  ``&cookie=NAME=VALUE`` sets a cookie on the way (a sign-in bounce through another host).
- ``/__cached``: a small text the browser may keep for an hour (an HTTP cache entry).
- ``/__download?name=F``: a small file served as an attachment.
"""

from __future__ import annotations

import asyncio
import html
import json
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

SITE_ROOT = Path(__file__).resolve().parents[1] / "site"


@dataclass
class Received:
    method: str
    path: str
    query: dict[str, list[str]]
    form: dict[str, list[str]] = field(default_factory=dict)
    json_body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


class _Handler(SimpleHTTPRequestHandler):
    server: _Server

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # (request, client_address, server): the server says which folder it serves.
        root = getattr(args[2], "root", SITE_ROOT)
        super().__init__(*args, directory=str(root), **kwargs)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def _record(self, body: bytes = b"") -> Received:
        parsed = urllib.parse.urlsplit(self.path)
        item = Received(
            method=self.command,
            path=parsed.path,
            query=urllib.parse.parse_qs(parsed.query),
            headers={k.lower(): v for k, v in self.headers.items()},
        )
        ctype = self.headers.get("Content-Type", "")
        if body:
            if "json" in ctype:
                try:
                    item.json_body = json.loads(body)
                except ValueError:
                    item.json_body = body.decode(errors="replace")
            else:
                item.form = urllib.parse.parse_qs(
                    body.decode(errors="replace"), keep_blank_values=True
                )
        with self.server.lock:
            self.server.received.append(item)
            self.server.arrived.notify_all()
        return item

    def do_GET(self) -> None:
        parsed = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(parsed.query)
        self._record()
        if parsed.path == "/__slow":
            time.sleep(int(query.get("ms", ["1000"])[0]) / 1000)
            then = query.get("then", [None])[0]
            if then:
                self._redirect(then)
            else:
                self._html("<title>Slow</title><h1>Finally here</h1>")
            return
        if parsed.path == "/__never":
            self.server.stopping.wait()
            return
        if parsed.path == "/__redirect":
            cookie = query.get("cookie", [None])[0]
            self._redirect(query["to"][0], cookie=f"{cookie}; Path=/" if cookie else None)
            return
        if parsed.path == "/__cached":
            self._send(200, "text/plain", b"kept for an hour", (("Cache-Control", "max-age=3600"),))
            return
        if parsed.path == "/__ruled":
            # A page whose Speculation-Rules header names a rule set that prefetches a
            # same-origin URL redirecting to ?to= (the page itself has no script).
            rules = "/__rules?" + urllib.parse.urlencode({"to": query["to"][0]})
            self._send(
                200,
                "text/html",
                b"<!doctype html><title>Ruled</title><p>Ruled",
                (("Speculation-Rules", f'"{rules}"'),),
            )
            return
        if parsed.path == "/__rules":
            hop = "/__redirect?" + urllib.parse.urlencode({"to": query["to"][0]})
            body = json.dumps({"prefetch": [{"source": "list", "urls": [hop]}]}).encode()
            self._send(200, "application/speculationrules+json", body)
            return
        if parsed.path == "/__auth":
            # An HTTP authentication challenge (?realm=, ?scheme=Basic|Digest); never accepted.
            realm = query.get("realm", ["Staff area"])[0]
            scheme = query.get("scheme", ["Basic"])[0]
            self._send(
                401,
                "text/html",
                b"<!doctype html><title>Unauthorized</title><p>401",
                (("WWW-Authenticate", f'{scheme} realm="{realm}"'),),
            )
            return
        if parsed.path == "/__download":
            name = query.get("name", ["report.txt"])[0]
            body = b"handrail fixture download\n"
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Disposition", f'attachment; filename="{name}"')
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        item = self._record(self.rfile.read(length) if length else b"")
        if "json" in (self.headers.get("Accept") or "") or item.json_body is not None:
            body = json.dumps({"ok": True, "form": item.form, "json": item.json_body}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        rows = "".join(
            f"<li><span class=key>{html.escape(k)}</span>=<span class=value>{html.escape(', '.join(v))}</span></li>"
            for k, v in item.form.items()
        )
        self._html(f"<title>Received</title><h1>Received</h1><ul id=received>{rows}</ul>")

    def _send(
        self, status: int, kind: str, body: bytes, extra: tuple[tuple[str, str], ...] = ()
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        for name, value in extra:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _redirect(self, to: str, *, cookie: str | None = None) -> None:
        self.send_response(302)
        self.send_header("Location", to)
        if cookie is not None:
            self.send_header("Set-Cookie", cookie)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _html(self, body: str) -> None:
        data = f"<!doctype html><meta charset=utf-8>{body}".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    root: Path
    received: list[Received]
    lock: threading.Lock
    arrived: threading.Condition
    stopping: threading.Event


class FixtureSite:
    """A fixture server on 127.0.0.1 (ephemeral port) serving tests/site (or ``root``)."""

    def __init__(self, host: str = "127.0.0.1", *, root: Path = SITE_ROOT) -> None:
        self._server = _Server((host, 0), _Handler)
        self._server.root = root
        self._server.received = []
        self._server.lock = threading.Lock()
        self._server.arrived = threading.Condition(self._server.lock)
        self._server.stopping = threading.Event()
        self.host = host
        self.port = self._server.server_address[1]
        self.origin = f"http://{host}:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def url(self, path: str = "/") -> str:
        return self.origin + (path if path.startswith("/") else "/" + path)

    @property
    def received(self) -> list[Received]:
        with self._server.lock:
            return list(self._server.received)

    async def until(self, predicate: Callable[[list[Received]], bool], timeout: float = 15) -> None:
        """Return as soon as ``predicate(received)`` holds (checked on every request the
        server records); raise TimeoutError after ``timeout`` seconds."""

        def wait() -> bool:
            with self._server.lock:
                return self._server.arrived.wait_for(
                    lambda: predicate(list(self._server.received)), timeout
                )

        if not await asyncio.to_thread(wait):
            raise TimeoutError(f"{self.origin} did not receive what the test waited for")

    def posts(self, path: str | None = None) -> list[Received]:
        return [r for r in self.received if r.method == "POST" and (path is None or r.path == path)]

    def requested(self, path: str) -> bool:
        return any(r.path == path for r in self.received)

    def clear(self) -> None:
        with self._server.lock:
            self._server.received.clear()

    def stop(self) -> None:
        self._server.stopping.set()
        self._server.shutdown()
        self._server.server_close()
