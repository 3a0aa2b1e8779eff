"""The domain allowlist, enforced where the browser makes requests.

Checking URLs before a navigate is not enough: a link click, a redirect chain, a form post,
``window.open``, a frame or a page script can all reach another host. :class:`DomainGuard`
turns on ``Fetch`` interception in every tab we attach to, in every popup our tabs open
(while it is still paused) and, through :mod:`core.browser.child_targets`, in every out-of-process frame
and service worker of those, before they run. A request to a host outside
``--allow-domain`` is failed before any byte is sent to that host.

Two modes (``--network``):

- ``documents``: document requests only, in every frame at any depth (page loads, a
  frame's own navigation, form posts, redirects, popups). Subresources are let through.
- ``strict``: every request of every frame, dedicated worker (its requests pause in its
  frame's ``Fetch``) and service worker. WebSocket handshakes never reach ``Fetch`` in
  Chromium, so strict also adds a ``Content-Security-Policy: connect-src`` naming the
  allowed hosts to every document and worker script response: the renderer then refuses
  a WebSocket (and any fetch, beacon or EventSource) to another host itself. That policy's
  violation reports go to a host that does not exist, are caught here and turned into the
  same notices.

Each blocked host is reported once (a notice for the model and the person, and one line in
the operational log), however many requests went to it. See docs/architecture.md, "The
network guard", for what Chromium does and does not let us see.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import json
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

import structlog

from core.browser.browser import Browser, Tab
from core.browser.child_targets import ChildTarget, ChildTargets
from core.cdp import JSON, CDPError, CDPSession
from core.guard.policy import AllowPattern, host_of, parse_allow_pattern, url_allowed
from core.world.scripts import beside, script

log = structlog.get_logger("handrail.allowlist")

NetworkMode = Literal["strict", "documents"]
NETWORK_MODES: tuple[NetworkMode, ...] = ("strict", "documents")


def default_network_mode(secrets_configured: bool) -> NetworkMode:
    """``strict`` whenever a secret could be sent somewhere, ``documents`` otherwise."""
    return "strict" if secrets_configured else "documents"


# Only http(s) documents are checked: about:blank, data: and blob: documents have no host
# and cannot reach the network by themselves.
_DOCUMENT_PATTERNS = [
    {"urlPattern": "http://*", "resourceType": "Document", "requestStage": "Request"},
    {"urlPattern": "https://*", "resourceType": "Document", "requestStage": "Request"},
]
# Every request. The responses that get the connect policy (see _wants_policy) are asked
# for request by request: a Response-stage *pattern* for documents makes Chromium 156 fail
# every cross-site frame's navigation (net::ERR_FAILED).
_STRICT_PATTERNS = [{"urlPattern": "*", "requestStage": "Request"}]
# Where the strict policy's violation reports go: a reserved name that cannot resolve.
# They are intercepted (and failed) here, never sent.
REPORT_URL = "http://csp-report.handrail.invalid/"
_WORLD = "handrail-guard"


@functools.cache
def _connect_policy_js() -> str:
    # The file holds one arrow function (an expression; a trailing ";" would end it).
    return script(beside(__file__, "connect_policy.js")).rstrip(";")


class DomainGuard:
    """Blocks requests to hosts outside ``patterns`` in all our tabs (see the module doc)."""

    def __init__(
        self, browser: Browser, patterns: Sequence[str], mode: NetworkMode = "documents"
    ) -> None:
        self.browser = browser
        self.patterns = tuple(patterns)
        self.mode: NetworkMode = mode
        self.blocked: Counter[str] = Counter()
        """Requests blocked so far, by host."""
        self.block_listeners: list[Callable[[str, str], None]] = []
        """Called with ``(host, url)`` on every block (in the CDP reader's task: no waiting)."""
        self._reported: set[str] = set()
        self._unreported: list[str] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._first_documents: set[str] = set()
        """Popup sessions (strict) whose first document has not arrived yet."""
        self._installing = False
        self._fetch_patterns = _STRICT_PATTERNS if mode == "strict" else _DOCUMENT_PATTERNS
        self._policy = connect_policy(self.patterns) if mode == "strict" else None
        self.children = ChildTargets.of(browser)

    @property
    def active(self) -> bool:
        return bool(self.patterns)

    async def install(self) -> None:
        """Guard every tab we have now and every tab, popup and child we attach to later."""
        if not self.active:
            return
        # First, so that nothing a child loads escapes, whatever other hooks do.
        self.children.add_hook(self._guard_child, first=True)
        self.browser.attach_hooks.append(self._guard_tab)
        for tab in list(self.browser.tabs.values()):
            if not tab.closed:
                await self._guard_tab(tab)
        # A tab a page opens (target=_blank, window.open) starts loading before handrail
        # adopts it. Have the browser attach every new page paused; guard it if it was
        # opened by one of ours, then resume it (anyone else's is released untouched).
        self.browser.connection.on("Target.attachedToTarget", self._on_attached)
        self._installing = True
        try:
            await self.browser.connection.send(
                "Target.setAutoAttach",
                {
                    "autoAttach": True,
                    "waitForDebuggerOnStart": True,
                    "flatten": True,
                    "filter": [{"type": "page"}],
                },
            )
        finally:
            self._installing = False

    def drain(self) -> list[str]:
        """Blocks (one per host) and unguardable children not yet reported, as notices for
        the model and the person."""
        notices, self._unreported = self._unreported, []
        return notices + self.children.drain_notices()

    # -- attaching ---------------------------------------------------------------------

    async def _guard_tab(self, tab: Tab, *, paused: bool = False) -> None:
        """Guard one tab. ``paused``: a popup held at its start by auto-attach, whose Page
        commands wait until it runs; its document script is then left to :meth:`_release`."""
        await self._guard_session(tab.session, tab.target_id, documents=not paused)
        # A prerendered page loads in a frame tree of its own, out of the tab's Fetch
        # (the launch flags switch prerendering off; a browser we connect to may not).
        with contextlib.suppress(CDPError):
            await tab.session.send("Page.setPrerenderingAllowed", {"isAllowed": False})
        await self.children.install(tab)

    async def _guard_child(self, child: ChildTarget) -> None:
        if child.kind == "worker":
            return  # a dedicated worker has no Fetch: its requests pause in its frame's
        # Anything else (frames, service and shared workers, what Chromium adds later) must
        # take the guard, or it does not run at all (ChildTargets fails it closed).
        await self._guard_session(child.session, child.target_id, documents=child.kind == "iframe")

    async def _guard_session(
        self, session: CDPSession, frame_id: str, *, documents: bool = True
    ) -> None:
        """Fetch on one session; ``frame_id`` is its own frame (a tab's or an out-of-process
        frame's target id). With ``documents``, the session's documents get
        connect_policy.js as they start (the connect policy in strict mode; the removal of
        speculation rules in both)."""
        session.on("Fetch.requestPaused", lambda params: self._on_paused(session, frame_id, params))
        await session.send("Fetch.enable", {"patterns": self._fetch_patterns})
        if documents:
            await self._document_script(session)

    async def _popup_script(self, session: CDPSession) -> None:
        # Without Page enabled on a session, its new-document scripts are silently not run.
        await session.send("Page.enable")
        await self._document_script(session)

    def _document_script(self, session: CDPSession) -> Awaitable[JSON]:
        # A <meta> policy cannot name a report-uri: connect_policy.js reports to REPORT_URL.
        meta_policy = self._policy.split("; report-uri", 1)[0] if self._policy else None
        source = f"({_connect_policy_js()})({json.dumps(meta_policy)}, {json.dumps(REPORT_URL)})"
        return session.send(
            "Page.addScriptToEvaluateOnNewDocument", {"source": source, "worldName": _WORLD}
        )

    def _on_attached(self, params: JSON) -> None:
        # Three kinds of attachment show up here: targets that existed when auto-attach was
        # switched on (released at once), new pages created paused by auto-attach (judged
        # below), and handrail's own explicit attaches (not ours to touch: ignored).
        if not params.get("waitingForDebugger") and not self._installing:
            return
        self._spawn(self._guard_new(params))

    async def _guard_new(self, params: JSON) -> None:
        session_id = params["sessionId"]
        session = self.browser.connection.session(session_id)
        info = params.get("targetInfo", {})
        waiting = bool(params.get("waitingForDebugger"))
        ours = (
            waiting
            and info.get("type") == "page"
            and (
                info.get("targetId") in self.browser.tabs
                or info.get("openerId") in self.browser.tabs
            )
        )
        try:
            if ours:
                # The popup's own frames and workers must be guarded before it runs, too;
                # handrail adopts it as a tab later, over another session.
                early = Tab(target_id=info["targetId"], session=session, url=info.get("url", ""))
                await self._guard_tab(early, paused=True)
                # Its Page commands are answered only once it runs (measured, Chromium 156:
                # they wait for ever while it is held), so its document script can only be
                # added after the resume.
                # And Chrome answers them only once that first document has committed
                # (holding its request or response in Fetch deadlocks). So in strict mode
                # the first document gets the connect policy as a response header instead,
                # and the script covers the popup's later documents.
                if self._policy is not None:
                    self._first_documents.add(session_id)
                await session.send("Runtime.runIfWaitingForDebugger")
                waiting = False
                await self._popup_script(session)
        except CDPError as exc:
            log.error("allowlist.popup_unguarded", url=info.get("url", ""), error=str(exc))
            with contextlib.suppress(CDPError):
                await self.browser.connection.send(
                    "Target.closeTarget", {"targetId": info.get("targetId", "")}
                )
            self._unreported.append(
                f"a window the page opened ({info.get('url', '')}) could not be guarded and "
                "was closed."
            )
            return
        with contextlib.suppress(CDPError):
            if waiting:
                await session.send("Runtime.runIfWaitingForDebugger")
            if not ours:
                # Someone else's tab, or one we guard through our own session already.
                await self.browser.connection.send(
                    "Target.detachFromTarget", {"sessionId": session_id}
                )

    # -- deciding ----------------------------------------------------------------------

    def _on_paused(self, session: CDPSession, frame_id: str, params: JSON) -> None:
        # Runs in the CDP reader task: answer in a task of its own.
        self._spawn(self._decide(session, frame_id, params))

    async def _decide(self, session: CDPSession, frame_id: str, params: JSON) -> None:
        request_id = params["requestId"]
        request = params.get("request", {})
        url = str(request.get("url", ""))
        if (
            session.session_id in self._first_documents
            and params.get("resourceType") == "Document"
            and "responseStatusCode" not in params
            and "responseErrorReason" not in params
            and host_of(url)
            and url_allowed(url, self.patterns)
        ):
            # A popup's first document: its policy comes as a header (see _guard_new).
            with contextlib.suppress(CDPError):
                await session.send(
                    "Fetch.continueRequest", {"requestId": request_id, "interceptResponse": True}
                )
            return
        with contextlib.suppress(CDPError):
            if url.startswith(REPORT_URL):
                self._violation(request)
                await session.send(
                    "Fetch.failRequest", {"requestId": request_id, "errorReason": "BlockedByClient"}
                )
            elif "responseStatusCode" in params or "responseErrorReason" in params:
                await self._continue_response(session, params)
            elif host_of(url) and not url_allowed(url, self.patterns):
                self._block(url, str(params.get("resourceType", "")))
                await session.send(
                    "Fetch.failRequest", {"requestId": request_id, "errorReason": "BlockedByClient"}
                )
            elif self._policy is not None and _wants_policy(params, frame_id):
                await session.send(
                    "Fetch.continueRequest", {"requestId": request_id, "interceptResponse": True}
                )
            else:
                await session.send("Fetch.continueRequest", {"requestId": request_id})

    async def _continue_response(self, session: CDPSession, params: JSON) -> None:
        request_id = params["requestId"]
        headers = list(params.get("responseHeaders") or [])
        status = int(params.get("responseStatusCode") or 0)
        if params.get("resourceType") == "Document" and not 300 <= status < 400:
            # A popup's first document (the only documents intercepted here) is answered.
            self._first_documents.discard(session.session_id)
        if _speculation_rules(headers):
            # A Speculation-Rules header's rule set: its prefetches would be made by the
            # browser, outside every Fetch (connect_policy.js removes inline rules).
            log.warning("allowlist.speculation_rules_refused", url=_short(params["request"]["url"]))
            await session.send(
                "Fetch.failRequest", {"requestId": request_id, "errorReason": "BlockedByClient"}
            )
            return
        if self._policy is None or "responseErrorReason" in params or not _active(params, headers):
            await session.send("Fetch.continueResponse", {"requestId": request_id})
            return
        headers.append({"name": "Content-Security-Policy", "value": self._policy})
        try:
            # Fulfil, not continueResponse: Chromium parses a fulfilled response's headers
            # anew, but keeps the policy it parsed before an override of headers alone.
            body = await session.send("Fetch.getResponseBody", {"requestId": request_id})
            data = body["body"] if body.get("base64Encoded") else _b64(body["body"])
            await session.send(
                "Fetch.fulfillRequest",
                {
                    "requestId": request_id,
                    "responseCode": params["responseStatusCode"],
                    "responseHeaders": headers,
                    "body": data,
                },
            )
        except CDPError as exc:
            # A document we cannot put the policy on would run unguarded: refuse it.
            log.error(
                "allowlist.policy_failed", url=_short(params["request"]["url"]), error=str(exc)
            )
            await session.send(
                "Fetch.failRequest", {"requestId": request_id, "errorReason": "BlockedByClient"}
            )

    def _violation(self, request: JSON) -> None:
        # A worker's header policy posts a CSP report; a document's <meta> policy cannot,
        # so connect_policy.js loads REPORT_URL?u=BLOCKED as an image instead.
        query = parse_qs(urlsplit(str(request.get("url", ""))).query)
        try:
            report = json.loads(str(request.get("postData") or "{}")).get("csp-report", {})
        except (ValueError, AttributeError):
            report = {}
        blocked = str(report.get("blocked-uri") or query.get("u", [""])[0])
        if blocked and host_of(blocked):
            self._block(blocked, "connection (WebSocket, fetch, beacon or EventSource)")

    def _block(self, url: str, what: str) -> None:
        host = host_of(url)
        self.blocked[host] += 1
        for listener in self.block_listeners:
            listener(host, url)
        if host in self._reported:
            return
        self._reported.add(host)
        kind = f"{what.lower()}: " if what and what != "Other" else ""
        self._unreported.append(
            f"blocked a request to {host} ({kind}{_short(url)}): it is outside the hosts this "
            f"run may reach ({', '.join(self.patterns)}). Further requests to {host} are "
            "blocked without another notice. Do not try to go there."
        )
        log.warning("allowlist.blocked", host=host, url=_short(url), what=what, mode=self.mode)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def connect_policy(patterns: Sequence[str]) -> str:
    """The ``Content-Security-Policy`` strict mode adds to documents and worker scripts.

    ``connect-src`` names each allowed host for http, https, ws and wss (with its
    subdomains, for a glob-free name). Entries CSP cannot express (an IPv6 address, a glob
    other than a leading ``*.``) are left out: connections to them are refused, which is
    the safe side. Violations are reported to :data:`REPORT_URL`.
    """
    sources = ["'self'", "blob:", "data:"]
    for text in patterns:
        try:
            pattern = parse_allow_pattern(text)
        except ValueError:
            continue
        sources += _csp_sources(pattern)
    return f"connect-src {' '.join(sources)}; report-uri {REPORT_URL}"


def webrtc_direct_hosts(patterns: Sequence[str]) -> tuple[str, ...]:
    """Chrome proxy-bypass rules for :attr:`core.browser.browser.LaunchOptions.direct_hosts`: the
    hosts of ``patterns`` (with subdomains for a glob-free name, as the allowlist admits
    them, and the port when the entry names one). Chrome's rules know ``*`` and ``?`` but
    not ``[...]``: a class becomes ``?``, which admits a little more; only WebRTC over TCP
    relies on this list (every request of a page is also checked by ``Fetch``)."""
    rules: list[str] = []
    for text in patterns:
        try:
            pattern = parse_allow_pattern(text)
        except ValueError:
            continue
        host = re.sub(r"\[[^]]*\]", "?", pattern.host)
        hosts = [f"[{host}]"] if ":" in host else [host]
        if not pattern.is_glob and ":" not in host:
            hosts.append(f"*.{host}")
        port = f":{pattern.port}" if pattern.port is not None else ""
        rules += [h + port for h in hosts]
    return tuple(rules)


def _csp_sources(pattern: AllowPattern) -> list[str]:
    host = pattern.host
    wildcard = host.startswith("*.") and not any(c in host[2:] for c in "*?[")
    if ":" in host or (pattern.is_glob and not wildcard):
        return []
    hosts = [host] if pattern.is_glob else [host, f"*.{host}"]
    port = str(pattern.port) if pattern.port is not None else "*"
    return [f"{scheme}://{h}:{port}" for h in hosts for scheme in ("http", "https", "ws", "wss")]


def _wants_policy(params: JSON, frame_id: str) -> bool:
    """Whether strict mode puts its connect policy on this request's response, as a
    header: worker scripts (typed "Other"). Documents get it as a <meta> at their start
    (connect_policy.js): fulfilling a document's response from here makes Chromium 156 fail
    every cross-site frame inside it (net::ERR_FAILED)."""
    return params.get("resourceType") == "Other"


def _speculation_rules(headers: list[JSON]) -> bool:
    """A rule set fetched for a ``Speculation-Rules`` header (Chromium accepts one only with
    this type; the request itself looks like any other in ``Fetch``: no Sec-Fetch-Dest)."""
    return any(
        str(h.get("name", "")).lower() == "content-type"
        and str(h.get("value", "")).lower().startswith("application/speculationrules+json")
        for h in headers
    )


_ACTIVE_TYPES = ("html", "xml", "svg", "javascript", "ecmascript")


def _active(params: JSON, headers: list[JSON]) -> bool:
    """Whether a response may become a document or a worker (which the policy must cover).

    Redirects, downloads and content that is plainly something else (images, CSS, JSON)
    are not; a response without a Content-Type may be sniffed as HTML, so it is."""
    status = int(params.get("responseStatusCode") or 0)
    if 300 <= status < 400:
        return False
    values = {str(h.get("name", "")).lower(): str(h.get("value", "")).lower() for h in headers}
    if values.get("content-disposition", "").startswith("attachment"):
        return False
    kind = values.get("content-type")
    return kind is None or any(t in kind for t in _ACTIVE_TYPES)


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _short(url: str, limit: int = 120) -> str:
    return url if len(url) <= limit else url[: limit - 1] + "…"
