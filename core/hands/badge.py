"""The in-page marks of a driven tab: "agent is driving", the pointer, the pending target.

A person watching a headed browser should see at a glance that handrail is at the wheel,
where it is about to click, which element an approval is about, and when it is their turn.
:class:`Badge` draws those marks (core/hands/badge.js: a closed shadow root on ``<body>``, made
in our isolated world, with ``pointer-events: none``); the session makes one only for a
browser with a window. Marking is best effort: a page that gives no place for it (no
``<body>``, a frameset, a body with a shadow root of its own) or a tab that does not answer
simply goes unmarked, and no call here raises.

Every screenshot is taken with the marks hidden (:func:`hidden`, used by
:func:`core.hands.screenshot_mask.capture_masked`). Hit tests need no such step: an element with
``pointer-events: none`` is never what ``elementFromPoint`` or a click finds.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import structlog

from core.browser.browser import Browser, Tab
from core.browser.errors import BrowserError
from core.cdp import CDPError
from core.world.calls import world_call
from core.world.errors import WorldError
from core.world.scripts import beside, script

log = structlog.get_logger("handrail.badge")

TIMEOUT = 2.0
"""Seconds for one mark: a busy page must not hold the run up for a badge."""

Rect = tuple[float, float, float, float]
_active: weakref.WeakSet[Browser] = weakref.WeakSet()


@functools.cache
def _badge_js() -> str:
    return script(beside(__file__, "badge.js"))


async def _call(tab: Tab, name: str, *args: object) -> bool:
    call = (
        "function (name, ...args) {\n"
        '  const api = Object.prototype.hasOwnProperty.call(globalThis, "__handrailBadge")\n'
        f"    ? globalThis.__handrailBadge : (globalThis.__handrailBadge = {_badge_js()});\n"
        "  return api[name](...args);\n"
        "}"
    )
    try:
        return bool(await world_call(tab, call, name, *args, timeout=TIMEOUT))
    except (WorldError, CDPError, BrowserError, TimeoutError, OSError) as exc:
        log.info("badge.unavailable", call=name, error=str(exc)[:200])
        return False


class Badge:
    """The marks in ``browser``'s current tab. Each method returns whether the page shows
    them (False: the page had no place for them, or did not answer)."""

    def __init__(self, browser: Browser) -> None:
        self.browser = browser
        _active.add(browser)

    def _tab(self) -> Tab | None:
        tab = self.browser.current
        return tab if tab is not None and not tab.closed else None

    async def _set(self, mode: str, pointer: list[float] | str, target: Rect | None) -> bool:
        tab = self._tab()
        if tab is None:
            return False
        return await _call(tab, "set", mode, pointer, list(target) if target else None)

    async def driving(self) -> bool:
        """ "agent is driving", the pointer where it last was."""
        return await self._set("driving", KEEP, None)

    async def pointer(self, x: float, y: float) -> bool:
        """The agent's pointer moves to (x, y), viewport CSS pixels."""
        return await self._set("driving", [x, y], None)

    async def pending(self, target: Rect) -> bool:
        """An approval waits: outline ``target`` (x, y, width, height; viewport CSS px)."""
        return await self._set("driving", KEEP, target)

    async def your_turn(self) -> bool:
        """A hand-over: "your turn", without pointer or outline."""
        return await self._set("turn", KEEP, None)

    async def clear(self) -> None:
        """The run is over: the marks go (the browser may stay open, the person's)."""
        _active.discard(self.browser)
        tab = self._tab()
        if tab is not None:
            await _call(tab, "remove")


KEEP = "keep"
"""The pointer stays where it was."""


@asynccontextmanager
async def hidden(browser: Browser, tab: Tab) -> AsyncIterator[None]:
    """The marks are hidden in ``tab`` inside this block (for a screenshot); a no-op for a
    browser without a :class:`Badge`."""
    if browser not in _active:
        yield
        return
    await _call(tab, "hide")
    try:
        yield
    finally:
        await _call(tab, "show")
