"""The domain allowlist, enforced where the browser fetches documents.

Checking URLs before a navigate is not enough: a link click, a redirect chain, a form post,
``window.open`` or a page script can all take a tab elsewhere. :class:`DomainGuard` turns on
``Fetch`` interception of document requests (top-level pages and frames) in every tab we
attach to, and fails those whose host is outside ``--allow-domain`` before any byte is
sent to that host. Each block is reported once to the caller, so the model can be told it
may not go there.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

import structlog

from core.browser import Browser, Tab
from core.cdp import JSON, CDPError, CDPSession
from core.policy import host_allowed, host_of

log = structlog.get_logger("handrail.allowlist")

# Only http(s) documents are checked: about:blank, data: and blob: documents have no host
# and cannot reach the network by themselves.
_PATTERNS = [
    {"urlPattern": "http://*", "resourceType": "Document", "requestStage": "Request"},
    {"urlPattern": "https://*", "resourceType": "Document", "requestStage": "Request"},
]


class DomainGuard:
    """Blocks document requests to hosts outside ``patterns`` in all our tabs."""

    def __init__(self, browser: Browser, patterns: Sequence[str]) -> None:
        self.browser = browser
        self.patterns = tuple(patterns)
        self.blocked: list[str] = []
        self._unreported: list[str] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._installing = False

    @property
    def active(self) -> bool:
        return bool(self.patterns)

    async def install(self) -> None:
        """Guard every tab we have now and every tab we attach to later."""
        if not self.active:
            return
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

    def _on_attached(self, params: JSON) -> None:
        # Three kinds of attachment show up here: targets that existed when auto-attach was
        # switched on (released at once), new pages created paused by auto-attach (judged
        # below), and handrail's own explicit attaches (not ours to touch: ignored).
        if not params.get("waitingForDebugger") and not self._installing:
            return
        task = asyncio.get_running_loop().create_task(self._guard_new(params))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

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
        with contextlib.suppress(CDPError):
            if ours:
                session.on("Fetch.requestPaused", lambda p: self._on_paused(session, p))
                await session.send("Fetch.enable", {"patterns": _PATTERNS})
            if waiting:
                await session.send("Runtime.runIfWaitingForDebugger")
            if not ours:
                # Someone else's tab, or one we guard through our own session already.
                await self.browser.connection.send(
                    "Target.detachFromTarget", {"sessionId": session_id}
                )

    async def _guard_tab(self, tab: Tab) -> None:
        tab.session.on("Fetch.requestPaused", lambda params: self._on_paused(tab, params))
        await tab.send("Fetch.enable", {"patterns": _PATTERNS})

    def _on_paused(self, tab: Tab | CDPSession, params: JSON) -> None:
        # Runs in the CDP reader task: answer in a task of its own.
        task = asyncio.get_running_loop().create_task(self._decide(tab, params))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _decide(self, tab: Tab | CDPSession, params: JSON) -> None:
        request_id = params["requestId"]
        url = params.get("request", {}).get("url", "")
        host = host_of(url)
        with contextlib.suppress(CDPError):
            if host and not host_allowed(host, self.patterns):
                self.blocked.append(url)
                self._unreported.append(
                    f"blocked a request to {host} ({_short(url)}): it is outside the domains this run "
                    f"may visit ({', '.join(self.patterns)}). Do not try to go there."
                )
                log.warning("allowlist.blocked", url=url)
                await tab.send(
                    "Fetch.failRequest", {"requestId": request_id, "errorReason": "BlockedByClient"}
                )
            else:
                await tab.send("Fetch.continueRequest", {"requestId": request_id})

    def drain(self) -> list[str]:
        """Blocks not yet reported, as notices for the model and the person."""
        notices, self._unreported = self._unreported, []
        return notices


def _short(url: str, limit: int = 120) -> str:
    return url if len(url) <= limit else url[: limit - 1] + "…"
