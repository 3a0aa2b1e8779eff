"""Watching our tabs: network requests in flight, navigation and lifecycle events, the
latest URL and title, popups the pages opened, and the wait for a navigation to load."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from core.browser.browser import Browser, Tab
from core.cdp import JSON, ConnectionClosed, SessionClosed
from core.hands.dialogs import Dialogs
from core.hands.downloads import Downloads
from core.hands.messages import clip

STATE_KEY = "page"
_REALM = re.compile(r'realm\s*=\s*"([^"]*)"', re.IGNORECASE)

NavigationEnd = Literal["loaded", "same_document", "stopped", "not_started", "timeout"]
# Requests that never finish by design must not hold "network quiet" hostage.
_LONG_LIVED_TYPES = {"EventSource", "WebSocket"}


@dataclass
class Marks:
    """Counters of a tab's navigation events, taken before an action to compare after."""

    requested: int
    started: int
    stopped: int
    commits: int
    same_doc: int


@dataclass(frozen=True, slots=True)
class AuthChallenge:
    """A site that answered the tab's document with an HTTP authentication challenge (401,
    or 407 from a proxy). Chrome shows no page for it (a blank chrome-error:// one, headless),
    so it is a hand-over: the person signs in, handrail never asks for the credentials."""

    url: str
    status: int
    scheme: str
    """``Basic``, ``Digest``, ``NTLM``...: the challenge's first word, as the server sent it."""
    realm: str
    """The realm the server named (its own words: page text), or ``""``."""


def auth_challenge(response: JSON) -> AuthChallenge | None:
    """The challenge in a CDP ``Network.Response``, if it is one."""
    status = int(response.get("status", 0))
    if status not in (401, 407):
        return None
    headers = {str(k).lower(): str(v) for k, v in (response.get("headers") or {}).items()}
    header = headers.get("www-authenticate" if status == 401 else "proxy-authenticate", "")
    if not header.strip():
        return None
    found = _REALM.search(header)
    return AuthChallenge(
        url=str(response.get("url", "")),
        status=status,
        scheme=header.strip().split()[0],
        realm=found.group(1) if found else "",
    )


@dataclass
class TabWatch:
    """Network and navigation bookkeeping for one tab, kept in ``tab.state["page"]``."""

    tab: Tab
    owner: object
    inflight: dict[str, float] = field(default_factory=dict)
    frame_documents: dict[str, str] = field(default_factory=dict)
    """Request id → frame id of the documents loading in child frames: the request of one
    that goes out of process is reported here, but its end on the frame's own session."""
    own_process_frames: set[str] = field(default_factory=set)
    """Frame ids of the child frames attached as targets of their own (out of process)."""
    last_activity: float = 0.0
    lifecycle: dict[str, set[str]] = field(default_factory=dict)
    """Main-frame loaderId → lifecycle event names seen (init, DOMContentLoaded, load...)."""
    committed_loader: str | None = None
    doc_status: dict[str, int] = field(default_factory=dict)
    requested: int = 0
    started: int = 0
    stopped: int = 0
    commits: int = 0
    same_doc: int = 0
    pulse: asyncio.Event = field(default_factory=asyncio.Event)
    unsubscribe: list[Callable[[], None]] = field(default_factory=list)
    url: str | None = None
    title: str | None = None
    """The latest URL and title read from the page (Chrome's target info lags behind)."""
    auth: AuthChallenge | None = None
    """The authentication challenge the tab's last document met, until it is handed over."""

    def marks(self) -> Marks:
        return Marks(self.requested, self.started, self.stopped, self.commits, self.same_doc)

    def bump(self) -> None:
        self.pulse.set()

    async def changed(self, timeout: float) -> None:
        """Wait until any watched event arrives, or ``timeout`` seconds (at most 0.25 s, so
        a closed tab or a dead connection is noticed). Raises SessionClosed /
        ConnectionClosed when the tab or the browser went away."""
        self.pulse.clear()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(min(max(timeout, 0.0), 0.25)):
                await self.pulse.wait()
        self.check_alive()

    def check_alive(self) -> None:
        connection = self.tab.session.connection
        if connection.closed:
            raise ConnectionClosed(
                f"connection to the browser is closed ({connection.closed_reason})"
            )
        if self.tab.crashed:
            raise SessionClosed("the tab's renderer crashed")
        if self.tab.closed:
            raise SessionClosed("the tab was closed")

    async def wait_for_navigation(
        self,
        marks: Marks,
        *,
        until: float,
        loader: str | None = None,
        start_by: float | None = None,
    ) -> NavigationEnd:
        """The one navigation wait of the hands, until the loop time ``until``.

        With ``loader`` (a navigation we started): ``"loaded"`` once that document's load
        event fired. Without (one the page or the history started since ``marks``):
        ``"loaded"`` once a new document committed and loaded (or its loading stopped, as
        a page restored from the back/forward cache does), ``"same_document"`` for a
        fragment or history.pushState change, ``"stopped"`` when loading stopped without a
        new document (a download, a 204), ``"not_started"`` when nothing started by the
        loop time ``start_by``. ``"timeout"`` otherwise. Raises SessionClosed /
        ConnectionClosed when the tab or the browser went away.
        """
        loop = asyncio.get_running_loop()
        while True:
            if loader is not None:
                if "load" in self.lifecycle.get(loader, set()):
                    return "loaded"
            else:
                committed = self.commits > marks.commits
                started = self.started > marks.started
                stopped = self.stopped >= self.started
                loaded = "load" in self.lifecycle.get(self.committed_loader or "", set())
                if committed and (loaded or stopped):
                    return "loaded"
                if self.same_doc > marks.same_doc and not committed and stopped:
                    return "same_document"
                if started and stopped:
                    return "stopped"
                if start_by is not None and not started and loop.time() > start_by:
                    return "not_started"
            left = until - loop.time()
            if left <= 0:
                return "timeout"
            await self.changed(min(left, 0.25))

    def where(self) -> str:
        """``url ('title')`` as last read from the page."""
        url = self.url or self.tab.url
        title = self.title if self.title is not None else self.tab.title
        return f"{url} ({clip(title, 80)!r})" if title else url


class TabWatcher:
    """One :class:`TabWatch` per tab of ``browser`` (one pair of hands per tab), plus the
    browser-level listeners: downloads and popups, re-installed after a reconnect."""

    def __init__(
        self,
        browser: Browser,
        dialogs: Dialogs,
        downloads: Downloads,
        downloads_dir: Path | None,
    ) -> None:
        self.browser = browser
        self.dialogs = dialogs
        self.downloads = downloads
        self.downloads_dir = downloads_dir
        self.popups = 0
        self._conn_seen: object | None = None
        self._conn_unsubscribe: list[Callable[[], None]] = []
        browser.attach_hooks.append(self._on_attach)
        for tab in list(browser.tabs.values()):
            if not tab.closed:
                self.ensure(tab)

    def close(self) -> None:
        with contextlib.suppress(ValueError):
            self.browser.attach_hooks.remove(self._on_attach)
        for unsubscribe in self._conn_unsubscribe:
            unsubscribe()
        self._conn_unsubscribe = []
        self._conn_seen = None
        for tab in self.browser.tabs.values():
            watch = tab.state.get(STATE_KEY)
            if isinstance(watch, TabWatch) and watch.owner is self:
                for unsubscribe in watch.unsubscribe:
                    unsubscribe()
                del tab.state[STATE_KEY]

    def _on_attach(self, tab: Tab) -> None:
        self.ensure(tab)

    def ensure(self, tab: Tab) -> TabWatch:
        """The watch of ``tab``, started on first use."""
        existing = tab.state.get(STATE_KEY)
        if isinstance(existing, TabWatch):
            if existing.owner is self:
                return existing
            # Another (older) Page watched this tab: one pair of hands per tab.
            for unsubscribe in existing.unsubscribe:
                unsubscribe()
        watch = TabWatch(tab=tab, owner=self, last_activity=time.monotonic())
        tab.state[STATE_KEY] = watch
        main = tab.target_id
        on = tab.session.on

        def request_sent(p: JSON) -> None:
            if p.get("type") in _LONG_LIVED_TYPES:
                return
            if p.get("type") == "Document" and p.get("frameId") not in (None, main):
                if p["frameId"] in watch.own_process_frames:
                    return  # its end is reported on the frame's own session
                watch.frame_documents[p["requestId"]] = p["frameId"]
            watch.inflight[p["requestId"]] = time.monotonic()
            watch.last_activity = time.monotonic()
            watch.bump()

        def request_done(p: JSON) -> None:
            watch.frame_documents.pop(p.get("requestId", ""), None)
            if watch.inflight.pop(p.get("requestId", ""), None) is not None:
                watch.last_activity = time.monotonic()
                watch.bump()

        def child_attached(p: JSON) -> None:
            # A frame now in a process of its own: the end of its document's request (and
            # of any later one it makes) is reported on the frame's session, not here.
            info = p.get("targetInfo", {})
            if info.get("type") != "iframe" or not p.get("sessionId"):
                return
            frame = str(info.get("targetId", ""))
            watch.own_process_frames.add(frame)
            for request_id, owner in list(watch.frame_documents.items()):
                if owner == frame:
                    del watch.frame_documents[request_id]
                    watch.inflight.pop(request_id, None)
            child = tab.session.connection.session(p["sessionId"])
            watch.unsubscribe += [
                child.on("Network.loadingFinished", request_done),
                child.on("Network.loadingFailed", request_done),
            ]
            watch.last_activity = time.monotonic()
            watch.bump()

        def response(p: JSON) -> None:
            if p.get("type") == "Document" and p.get("frameId") == main and p.get("loaderId"):
                watch.doc_status[p["loaderId"]] = int(p.get("response", {}).get("status", 0))
                watch.auth = auth_challenge(p.get("response") or {}) or watch.auth

        def lifecycle(p: JSON) -> None:
            if p.get("frameId") != main:
                return
            loader = p.get("loaderId", "")
            if p.get("name") == "init":
                # A new document: requests of the old one will not be answered to us.
                watch.inflight.clear()
                watch.frame_documents.clear()
                watch.own_process_frames.clear()
            watch.lifecycle.setdefault(loader, set()).add(p.get("name", ""))
            watch.bump()

        def navigated(p: JSON) -> None:
            frame = p.get("frame", {})
            if frame.get("parentId"):
                return
            watch.committed_loader = frame.get("loaderId")
            watch.commits += 1
            if frame.get("url"):
                watch.url, watch.title = frame["url"], None
            watch.bump()

        def load_fired(_p: JSON) -> None:
            if watch.committed_loader:
                watch.lifecycle.setdefault(watch.committed_loader, set()).add("load")
            watch.bump()

        def counter(attr: str) -> Callable[[JSON], None]:
            def handler(p: JSON) -> None:
                if p.get("frameId") == main:
                    setattr(watch, attr, getattr(watch, attr) + 1)
                    watch.bump()

            return handler

        def dialog_opening(p: JSON) -> None:
            self.dialogs.on_opening(tab, p)
            watch.bump()

        def dialog_closed(_p: JSON) -> None:
            self.dialogs.on_closed()
            watch.bump()

        watch.unsubscribe += [
            on("Network.requestWillBeSent", request_sent),
            on("Network.loadingFinished", request_done),
            on("Network.loadingFailed", request_done),
            on("Network.responseReceived", response),
            on("Target.attachedToTarget", child_attached),
            on("Page.lifecycleEvent", lifecycle),
            on("Page.frameNavigated", navigated),
            on("Page.loadEventFired", load_fired),
            on("Page.frameRequestedNavigation", counter("requested")),
            on("Page.frameStartedLoading", counter("started")),
            on("Page.frameStoppedLoading", counter("stopped")),
            on("Page.navigatedWithinDocument", counter("same_doc")),
            on("Page.javascriptDialogOpening", dialog_opening),
            on("Page.javascriptDialogClosed", dialog_closed),
        ]
        return watch

    async def ensure_connection_listeners(self) -> None:
        """Browser-level listeners (downloads, popups), re-installed after a reconnect."""
        conn = self.browser.connection
        if self._conn_seen is conn:
            return
        self._conn_seen = conn
        self._conn_unsubscribe = [
            conn.on("Browser.downloadWillBegin", self.downloads.on_begin),
            conn.on("Browser.downloadProgress", self.downloads.on_progress),
            conn.on("Target.targetCreated", self._on_target_created),
        ]
        if self.downloads_dir is not None:
            await self.browser.set_downloads_dir(self.downloads_dir)

    def _on_target_created(self, p: JSON) -> None:
        info = p.get("targetInfo", {})
        if info.get("type") == "page" and info.get("openerId") in self.browser.tabs:
            self.popups += 1

    def descriptions(self) -> list[str]:
        """``[N] * Title — url`` for each of our tabs (``*`` marks the current one)."""
        out = []
        for n, tab in enumerate(self.browser.our_tabs()):
            mark = "* " if tab is self.browser.current else ""
            url, title = tab.url, tab.title
            watch = tab.state.get(STATE_KEY)
            if isinstance(watch, TabWatch) and watch.url:
                url = watch.url
                title = watch.title if watch.title is not None else title
            out.append(f"[{n}] {mark}{clip(title or '(untitled)', 80)} — {clip(url, 200)}")
        return out
