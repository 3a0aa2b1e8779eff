"""What the run's pages fetched: every HTTP(S) request, for the audit log and for HAR.

:class:`NetworkLog` listens to ``Network.*`` on every tab of the run and on every child
target (out-of-process frames, workers, service workers: core/browser/child_targets.py),
in both guard modes: ``Fetch`` (the guard's) sees a request before it is sent but not its
response, its timing or its size, and in ``documents`` mode it sees documents only. The
guard's part is read from its rules: a request to a host outside ``--allow-domain`` that
failed was blocked by it; one it checks (every request in strict mode, documents in both)
and that went out was allowed; the others were not checked.

Each finished request becomes an entry (core/audit/har.py has the shape), made safe as it
is made: the URL's credential-named query values, user info and fragment removed, the
credential headers' values replaced, and the run's secrets and withheld text scrubbed (the
``scrub`` given, the audit writer's). The recorder takes the entries finished so far after
each round and writes them as a ``requests`` record. With ``keep_full`` (``run --har``)
the headers, request bodies and, with ``embed``, response bodies are kept too, and
:meth:`write_har` writes them to ``network.har`` in the run folder at the end, its sha256
going into ``run_end``. Nothing sent while the page is handed to the person keeps a body:
the person may be typing a password the run does not know.

A page decides how many requests it makes: entries past :data:`MAX_ENTRIES`, and requests
opened while that many are still open, are counted, not kept.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import structlog

from core.audit.har import handrail_version, har_log, redact_form, redact_headers, redact_url
from core.browser.browser import Browser, Tab
from core.browser.child_targets import ChildTarget, ChildTargets
from core.cdp import JSON, CDPError, CDPSession
from core.guard.allowlist import REPORT_URL, DomainGuard
from core.guard.policy import host_of, url_allowed

log = structlog.get_logger("handrail.netlog")

HarContent = Literal["omit", "embed"]
HAR_NAME = "network.har"
MAX_ENTRIES = 20_000
"""Entries a run keeps; later ones are counted in ``dropped``."""
MAX_BODY = 2 * 1024 * 1024
"""A response body larger than this is not embedded (its size is still given)."""
_TEXT_TYPES = ("text/", "json", "xml", "javascript", "ecmascript", "x-www-form-urlencoded")
_BLOCKED_ERRORS = ("net::ERR_BLOCKED_BY_CLIENT", "net::ERR_BLOCKED_BY_RESPONSE")


@dataclass
class _Request:
    rid: str
    tab: str
    round: int
    start_wall: float
    start_ts: float
    method: str
    url: str
    type: str
    page: str | None
    handover: bool
    request_headers: list[list[str]]
    post_data: dict[str, str] | None
    response: JSON = field(default_factory=dict)
    end_ts: float | None = None
    size: int | None = None
    body_size: int = 0
    error: str | None = None
    redirect: str = ""
    content: dict[str, str] | None = None
    done: bool = False


class NetworkLog:
    """Records the requests of one run's browser (see the module doc)."""

    def __init__(
        self,
        browser: Browser,
        guard: DomainGuard | None,
        *,
        scrub: Callable[[Any], Any],
        keep_full: bool = False,
        content: HarContent = "omit",
    ) -> None:
        self.browser = browser
        self.guard = guard
        self.scrub = scrub
        self.keep_full = keep_full
        self.embed = keep_full and content == "embed"
        self.round = 0
        self.handover = False
        self.dropped = 0
        self._live: dict[str, _Request] = {}
        """Open requests by request id. Ids are unique across the browser's processes, and
        must be matched across sessions: a frame that moves to a process of its own reports
        the end of its document's request on its own session, not on the one that saw it
        start."""
        self._finished: list[dict[str, Any]] = []
        """Short entries not yet taken by the recorder."""
        self._new_pages: list[dict[str, Any]] = []
        self._pages: list[dict[str, Any]] = []
        self._full: list[dict[str, Any]] = []
        """Every entry with its headers and bodies (``keep_full`` only)."""
        self._kept = 0
        self._page_of_loader: dict[str, str] = {}
        self._page_of_tab: dict[str, str] = {}
        self._sessions: set[str] = set()
        self._unsubscribe: list[Callable[[], None]] = []
        self._tasks: set[asyncio.Task[None]] = set()

    async def install(self) -> None:
        """Listen on every tab of the browser, now and later, and on their children."""
        self.browser.attach_hooks.append(self._on_tab)
        for tab in list(self.browser.tabs.values()):
            if not tab.closed:
                self._on_tab(tab)
        ChildTargets.of(self.browser).add_hook(self._on_child)

    def close(self) -> None:
        """Stop listening (the entries stay)."""
        with contextlib.suppress(ValueError):
            self.browser.attach_hooks.remove(self._on_tab)
        ChildTargets.of(self.browser).remove_hook(self._on_child)
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []
        for task in self._tasks:
            task.cancel()

    def take(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The pages and short entries finished since the last call (for ``requests``)."""
        pages, self._new_pages = self._new_pages, []
        entries, self._finished = self._finished, []
        return pages, entries

    def end(self) -> None:
        """The run is over: requests still open (a long poll, a stream) end here, with no
        response of their own."""
        for req in list(self._live.values()):
            if req.end_ts is not None and req.error is None:
                req.content = {"comment": "not kept: the run ended while it was being read"}
            else:
                req.error = req.error or "still open when the run ended"
            self._done(req)

    def write_har(self, run_dir: Path, version: str | None = None) -> dict[str, Any]:
        """Write ``network.har`` (new, 0600) in ``run_dir``; return its ``run_end`` entry:
        ``{"file", "sha256", "entries"}`` (``file`` relative to the log's folder)."""
        comment = f"{self.dropped} requests past the first {MAX_ENTRIES} not kept"
        doc = har_log(
            self._pages,
            self._full,
            version=version or handrail_version(),
            comment=comment * bool(self.dropped),
        )
        data = (json.dumps(self.scrub(doc), ensure_ascii=False) + "\n").encode()
        path = run_dir / HAR_NAME
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        return {
            "file": f"{run_dir.name}/{HAR_NAME}",
            "sha256": hashlib.sha256(data).hexdigest(),
            "entries": len(self._full),
        }

    async def settled(self) -> None:
        """Return once every body being read has been read (or given up)."""
        while self._tasks:
            await asyncio.wait(set(self._tasks))

    # -- listening -----------------------------------------------------------------------

    def _on_tab(self, tab: Tab) -> None:
        self._listen(tab.session, tab.target_id)

    async def _on_child(self, child: ChildTarget) -> None:
        # Never fails the child: a target without a Network domain is simply not recorded.
        with contextlib.suppress(CDPError):
            await child.session.send("Network.enable")
            self._listen(child.session, child.tab.target_id)

    def _listen(self, session: CDPSession, tab: str) -> None:
        key = session.session_id or ""
        if key in self._sessions:
            return
        self._sessions.add(key)
        self._unsubscribe += [
            session.on("Network.requestWillBeSent", lambda p: self._sent(session, tab, p)),
            session.on("Network.responseReceived", self._response),
            session.on("Network.dataReceived", self._data),
            session.on("Network.loadingFinished", lambda p: self._finished_loading(session, p)),
            session.on("Network.loadingFailed", self._failed),
        ]

    # -- events (in the CDP reader's task: no waiting) ------------------------------------

    def _sent(self, session: CDPSession, tab: str, p: JSON) -> None:
        request = p.get("request") or {}
        url = str(request.get("url", ""))
        if not url.startswith(("http://", "https://")) or url.startswith(REPORT_URL):
            return
        rid = str(p.get("requestId", ""))
        previous = self._live.get(rid)
        if previous is None and len(self._live) >= MAX_ENTRIES:
            self.dropped += 1  # a page holding that many requests open: counted, not kept
            return
        if previous is not None:
            if not isinstance(p.get("redirectResponse"), dict):
                return  # the same request, seen again from another session
            previous.response = p["redirectResponse"]
            previous.redirect = url
            previous.end_ts = _number(p.get("timestamp"))
            self._done(previous)
        kind = str(p.get("type", "Other"))
        if kind == "Document" and p.get("frameId") == tab:
            page = f"page_{len(self._pages) + 1}"
            record = {
                "id": page,
                "round": self.round,
                "url": redact_url(url),
                "start": _iso(_number(p.get("wallTime"))),
            }
            self._pages.append(record)
            self._new_pages.append(self.scrub(record))
            self._page_of_tab[tab] = page
            if p.get("loaderId"):
                self._page_of_loader[str(p["loaderId"])] = page
        page_id = self._page_of_loader.get(str(p.get("loaderId", ""))) or self._page_of_tab.get(tab)
        post = None
        if self.keep_full and isinstance(request.get("postData"), str) and not self.handover:
            mime = _header(request.get("headers"), "content-type")
            post = {"mime": mime, "text": redact_form(request["postData"], mime)}
        self._live[rid] = _Request(
            rid=rid,
            tab=tab,
            round=self.round,
            start_wall=_number(p.get("wallTime")),
            start_ts=_number(p.get("timestamp")),
            method=str(request.get("method", "GET")),
            url=url,
            type=kind,
            page=page_id,
            handover=self.handover,
            request_headers=redact_headers(request.get("headers") or {}) if self.keep_full else [],
            post_data=post,
        )

    def _response(self, p: JSON) -> None:
        req = self._live.get(str(p.get("requestId", "")))
        if req is not None and isinstance(p.get("response"), dict):
            req.response = p["response"]

    def _data(self, p: JSON) -> None:
        req = self._live.get(str(p.get("requestId", "")))
        if req is not None:
            req.body_size += int(p.get("dataLength") or 0)

    def _finished_loading(self, session: CDPSession, p: JSON) -> None:
        req = self._live.get(str(p.get("requestId", "")))
        if req is None or req.end_ts is not None:
            return
        req.end_ts = _number(p.get("timestamp"))
        req.size = int(p.get("encodedDataLength") or 0)
        if not self.embed:
            self._done(req)
            return
        task = asyncio.get_running_loop().create_task(self._read_body(session, req))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _failed(self, p: JSON) -> None:
        req = self._live.get(str(p.get("requestId", "")))
        if req is None:
            return
        req.end_ts = _number(p.get("timestamp"))
        req.error = str(p.get("errorText") or p.get("blockedReason") or "failed")
        if p.get("blockedReason"):
            req.error += f" ({p['blockedReason']})"
        self._done(req)

    async def _read_body(self, session: CDPSession, req: _Request) -> None:
        try:
            req.content = await self._body(session, req)
        finally:
            self._done(req)

    async def _body(self, session: CDPSession, req: _Request) -> dict[str, str]:
        if req.handover:
            return {"comment": "not kept: received while the page was handed to the person"}
        if req.body_size > MAX_BODY:
            return {"comment": f"not kept: larger than {MAX_BODY} bytes"}
        try:
            got = await session.send("Network.getResponseBody", {"requestId": req.rid}, timeout=10)
        except CDPError as exc:
            return {"comment": f"not kept: the browser no longer had it ({exc})"}
        text = str(got.get("body", ""))
        mime = str(req.response.get("mimeType", "")).lower()
        if not got.get("base64Encoded"):
            return {"text": text}
        raw = base64.b64decode(text)
        if any(t in mime for t in _TEXT_TYPES):
            with contextlib.suppress(UnicodeDecodeError):
                return {"text": raw.decode("utf-8")}
        # Binary: kept only when no secret shows in it (the scrubbing cannot edit bytes).
        shown = raw.decode("latin-1")
        if self.scrub(shown) != shown:
            return {"comment": "not kept: it held a secret"}
        return {"text": text, "encoding": "base64"}

    # -- entries -------------------------------------------------------------------------

    def _done(self, req: _Request) -> None:
        if req.done:
            return
        req.done = True
        if self._live.get(req.rid) is req:
            del self._live[req.rid]
        if self._kept >= MAX_ENTRIES:
            self.dropped += 1
            return
        self._kept += 1
        short = self._short(req)
        self._finished.append(self.scrub(short))
        if self.keep_full:
            full = dict(short)
            full["request_headers"] = req.request_headers
            full["response_headers"] = redact_headers(req.response.get("headers") or {})
            if req.post_data is not None:
                full["post_data"] = req.post_data
            if req.content is not None:
                full["content"] = req.content
            self._full.append(self.scrub(full))

    def _short(self, req: _Request) -> dict[str, Any]:
        r = req.response
        out: dict[str, Any] = {
            "round": req.round,
            "page": req.page,
            "method": req.method,
            "url": redact_url(req.url),
            "type": req.type,
            "start": _iso(req.start_wall),
        }
        if r:
            out |= {
                "status": int(r.get("status") or 0),
                "status_text": str(r.get("statusText", "")),
                "http": str(r.get("protocol", "")),
                "mime": str(r.get("mimeType", "")),
            }
            if r.get("remoteIPAddress"):
                out["ip"] = str(r["remoteIPAddress"])
            if r.get("fromDiskCache") or r.get("fromServiceWorker") or r.get("fromPrefetchCache"):
                out["from_cache"] = True
        if req.redirect:
            out["redirect"] = redact_url(req.redirect)
        timings, total = _timings(req)
        out["time_ms"] = total
        if timings:
            out["timings"] = timings
        if req.size is not None:
            out["size"] = req.size
        out["body_size"] = req.body_size
        out["guard"] = self._guard_word(req)
        if req.error:
            out["error"] = req.error
        if req.handover:
            out["handover"] = True
        return out

    def _guard_word(self, req: _Request) -> str:
        guard = self.guard
        if guard is None or not guard.active:
            return "not checked"
        allowed = not host_of(req.url) or url_allowed(req.url, guard.patterns)
        if not allowed and req.error and any(e in req.error for e in (*_BLOCKED_ERRORS, "csp")):
            return "blocked"
        if guard.mode == "strict" or req.type == "Document":
            return "allowed" if allowed else "blocked"
        return "not checked"


def _timings(req: _Request) -> tuple[dict[str, float], float]:
    """HAR's timings from Chromium's ResourceTiming (ms after its ``requestTime``), and
    the request's whole time in ms."""
    total = max(0.0, ((req.end_ts or req.start_ts) - req.start_ts) * 1000)
    t = req.response.get("timing")
    if not isinstance(t, dict) or not req.response:
        return {}, round(total, 1)

    def at(name: str) -> float:
        return float(t.get(name, -1) if isinstance(t.get(name), int | float) else -1)

    def span(start: str, end: str) -> float:
        return round(at(end) - at(start), 1) if at(start) >= 0 and at(end) >= 0 else -1.0

    before = (float(t.get("requestTime") or req.start_ts) - req.start_ts) * 1000
    first = next((at(n) for n in ("dnsStart", "connectStart", "sendStart") if at(n) >= 0), 0.0)
    out = {
        "blocked": round(max(0.0, before + first), 1),
        "dns": span("dnsStart", "dnsEnd"),
        "connect": span("connectStart", "connectEnd"),
        "ssl": span("sslStart", "sslEnd"),
        "send": max(0.0, span("sendStart", "sendEnd")),
        "wait": round(max(0.0, at("receiveHeadersEnd") - at("sendEnd")), 1),
    }
    spent = sum(v for k, v in out.items() if v > 0 and k != "ssl")
    out["receive"] = round(max(0.0, total - spent), 1)
    return out, round(spent + out["receive"], 1)


def _header(headers: object, name: str) -> str:
    if not isinstance(headers, dict):
        return ""
    return next((str(v) for k, v in headers.items() if str(k).lower() == name), "")


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _iso(wall: float) -> str:
    when = datetime.fromtimestamp(wall, UTC) if wall > 0 else datetime.now(UTC)
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")
