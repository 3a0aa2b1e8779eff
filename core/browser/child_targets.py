"""Child targets of our tabs: out-of-process frames, workers and service workers.

A tab's own session sees only what runs in its renderer. Under site isolation a
cross-site iframe runs in another process, and workers run on their own threads: each is a
target of its own, with requests, scripts and DOM that the tab's session never sees. This
module attaches to every one of them *before it runs*, so the layers above (the network
guard, the eyes) can put their handlers in place first.

For each tab of ours, and recursively for each child session, :class:`ChildTargets` sends
``Target.setAutoAttach {autoAttach, waitForDebuggerOnStart, flatten}``. Chrome then
reports every new child with ``Target.attachedToTarget`` on the session that owns it, paused.
The registered hooks run in order on a :class:`ChildTarget`; only when all of them succeed
is auto-attach switched on inside the child and ``Runtime.runIfWaitingForDebugger`` sent.
A hook that raises leaves the child unresumed (fail closed): its target is closed when
Chrome allows that, otherwise it stays paused (Chromium releases a paused dedicated worker
as its page unloads), and a notice says why.

Only sessions we install on are touched: another person's tab (connect mode) never is.
See docs/architecture.md, "The network guard".
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import ClassVar

import structlog

from core.browser.browser import Browser, Tab
from core.cdp import JSON, CDPError, CDPSession
from core.result import first_line

log = structlog.get_logger("handrail.targets")

ChildHook = Callable[["ChildTarget"], Awaitable[None]]

_KINDS = {
    "iframe": "iframe",
    "worker": "worker",
    "shared_worker": "shared_worker",
    "service_worker": "service_worker",
}


@dataclass(frozen=True)
class ChildTarget:
    """One attached child of one of our tabs (see the module doc)."""

    session: CDPSession
    """Flattened session to the child: ``send`` / ``on`` as on a tab's session."""
    target_id: str
    """For an iframe, also its frame id in the parent's ``Page`` events."""
    kind: str
    """``iframe``, ``worker``, ``shared_worker``, ``service_worker`` or ``other``."""
    url: str
    """The URL at attach time (often empty or about:blank for a frame not yet navigated)."""
    tab: Tab
    """The top-level tab it belongs to. Compare tabs by ``target_id``: for a popup guarded
    while it was still paused, this is a Tab made for that early session."""
    parent_session_id: str
    """The session that auto-attached it: the tab's, or another child's."""


class ChildTargets:
    """Auto-attach to the children of our tabs; one per :class:`Browser` (see :meth:`of`)."""

    _registry: ClassVar[weakref.WeakKeyDictionary[Browser, ChildTargets]] = (
        weakref.WeakKeyDictionary()
    )

    def __init__(self, browser: Browser) -> None:
        self.browser = browser
        self._hooks: list[ChildHook] = []
        self._installed: dict[str, CDPSession] = {}
        """Tab target id -> the session auto-attach was switched on in."""
        self._children: dict[str, ChildTarget] = {}
        """Child session id -> child, in attach order."""
        self._notices: list[str] = []
        self._tasks: set[asyncio.Task[None]] = set()

    @classmethod
    def of(cls, browser: Browser) -> ChildTargets:
        """The browser's ChildTargets, created on first use."""
        found = cls._registry.get(browser)
        if found is None:
            found = cls._registry[browser] = cls(browser)
        return found

    def add_hook(self, hook: ChildHook, *, first: bool = False) -> None:
        """Run ``hook(child)`` on every child attached from now on, before the child runs.

        Hooks run one after another in the order they were added (``first=True`` puts this
        one before all others: the network guard's). A hook must not wait for the child to
        do anything (it is paused until all hooks return).
        """
        if first:
            self._hooks.insert(0, hook)
        else:
            self._hooks.append(hook)

    def remove_hook(self, hook: ChildHook) -> None:
        """Stop running ``hook`` on children attached from now on (absent: no error)."""
        with contextlib.suppress(ValueError):
            self._hooks.remove(hook)

    async def install(self, tab: Tab) -> None:
        """Attach to the children of ``tab`` (existing ones at once, new ones paused).

        Idempotent per tab and session; after a reconnect, a tab's new session is installed
        anew. Raises :class:`CDPError` when the tab's session refuses auto-attach.
        """
        session = tab.session
        installed = self._installed.get(tab.target_id)
        if (
            installed is not None
            and installed.connection is session.connection
            and not session.connection.closed
        ):
            return
        self._installed[tab.target_id] = session
        await self._auto_attach(session, tab)

    def children(self, tab: Tab) -> list[ChildTarget]:
        """The children of ``tab`` attached now and not detached, in attach order."""
        return [c for c in self._children.values() if c.tab.target_id == tab.target_id]

    async def settled(self) -> None:
        """Return once every child attached so far has been resumed or refused."""
        while self._tasks:
            await asyncio.wait(set(self._tasks))

    def drain_notices(self) -> list[str]:
        """Notices not yet reported (children that could not be made safe)."""
        notices, self._notices = self._notices, []
        return notices

    # -- internals ---------------------------------------------------------------------

    async def _auto_attach(self, session: CDPSession, tab: Tab) -> None:
        session.on("Target.attachedToTarget", lambda p: self._on_attached(session, tab, p))
        session.on("Target.detachedFromTarget", self._on_detached)
        await session.send(
            "Target.setAutoAttach",
            {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True},
        )

    def _on_attached(self, parent: CDPSession, tab: Tab, params: JSON) -> None:
        # Runs in the CDP reader task: the hooks await, so they run in a task of their own.
        info = params.get("targetInfo", {})
        child = ChildTarget(
            session=parent.connection.session(params["sessionId"]),
            target_id=info.get("targetId", ""),
            kind=_KINDS.get(info.get("type", ""), "other"),
            url=info.get("url", ""),
            tab=tab,
            parent_session_id=parent.session_id,
        )
        self._children[child.session.session_id] = child
        task = asyncio.get_running_loop().create_task(
            self._prepare(child, waiting=bool(params.get("waitingForDebugger"))),
            name=f"targets.prepare.{child.kind}",
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _on_detached(self, params: JSON) -> None:
        self._children.pop(params.get("sessionId", ""), None)

    async def _prepare(self, child: ChildTarget, *, waiting: bool) -> None:
        try:
            for hook in list(self._hooks):
                await hook(child)
            await self._auto_attach(child.session, child.tab)
        except Exception as exc:
            if child.session.session_id not in self._children:
                return  # the child went away while we prepared it: nothing to make safe
            await self._fail_closed(child, exc)
            return
        if waiting:
            with contextlib.suppress(CDPError):
                await child.session.send("Runtime.runIfWaitingForDebugger")

    async def _fail_closed(self, child: ChildTarget, exc: Exception) -> None:
        where = child.url or "(no URL yet)"
        try:
            await self.browser.connection.send(
                "Target.closeTarget", {"targetId": child.target_id}, timeout=5
            )
            outcome = "it was closed"
        except CDPError:
            # Chromium cannot close a dedicated worker from here; paused, it runs nothing
            # (until its page unloads: Chromium then releases it as it ends it).
            outcome = "it stays paused while its page is shown"
        log.error("targets.child_refused", kind=child.kind, url=where, error=repr(exc))
        self._notices.append(
            f"a {child.kind.replace('_', ' ')} of the page ({where}) could not be made safe "
            f"before it ran ({first_line(exc)}); {outcome}. Its content is not available."
        )
