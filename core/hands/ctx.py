"""What every action body works with: the hands' settings and services, the action in
progress (:class:`Ctx`, with its deadline) and calls into the hands' page script in our
world."""

from __future__ import annotations

import asyncio
import functools
import json
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.browser.browser import Browser, Tab
from core.hands.dialogs import Dialogs
from core.hands.downloads import Downloads
from core.hands.shot import ShotGeometry
from core.hands.tab_watch import TabWatch, TabWatcher
from core.result import ErrorCode
from core.world.calls import route_call, world_call
from core.world.contexts import frame_route
from core.world.geometry import frame_cover, frame_map
from core.world.scripts import parts
from core.world.sensitive import judge_source

# The hands' page script: core/hands/NAME.js for each NAME, joined in this order inside one
# closure (each stage declares top-level names the later ones use; api.js, last, builds the
# one `api` object the closure returns).
PAGE_PARTS = (
    "geometry",
    "describe",
    "actionability",
    "guards",
    "press",
    "keys",
    "fields",
    "dates",
    "settle",
    "motion",
    "hover",
    "scroll",
    "drag",
    "api",
)
_HANDS_DIR = Path(__file__).parent


@dataclass(frozen=True, slots=True)
class Options:
    """How the person set up the hands for this run."""

    action_timeout: float = 45.0
    allow_file_urls: bool = False
    upload_dir: Path | None = None
    downloads_dir: Path | None = None
    screenshots_dir: Path | None = None
    mac: bool = sys.platform == "darwin"


@dataclass
class Hands:
    """The state the hands keep between actions."""

    browser: Browser
    options: Options
    dialogs: Dialogs
    downloads: Downloads
    tabs: TabWatcher
    screens: int = 0
    """Screenshots taken so far (numbers their files)."""
    last_shot: ShotGeometry | None = None
    """The geometry of the latest screenshot action (what ``click_at`` coordinates are in)."""


@dataclass
class Ctx:
    """One action in progress."""

    name: str
    deadline: float
    hands: Hands
    tab: Tab | None = None
    dispatched: bool = False
    """Input that may change the page has been sent (an error after this is 'unknown')."""
    dialog_mark: int = 0
    download_mark: int = 0
    notices: list[str] = field(default_factory=list)

    dispatched_at: float = 0.0
    """time.monotonic() of the latest input sent."""

    def remaining(self) -> float:
        return self.deadline - asyncio.get_running_loop().time()

    def mark_dispatched(self) -> None:
        self.dispatched = True
        self.dispatched_at = time.monotonic()

    @property
    def current(self) -> Tab:
        """The tab the action works in (set by the runner before the body runs)."""
        assert self.tab is not None
        return self.tab

    @property
    def watch(self) -> TabWatch:
        return self.hands.tabs.ensure(self.current)


class Refused(Exception):
    """An action refused before anything was sent to the page (becomes a failure result)."""

    def __init__(
        self,
        message: str,
        error: str | None = None,
        *,
        code: ErrorCode = "refused",
        data: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.error = error or message
        self.code: ErrorCode = code
        self.data = data


# What a call answers when our world has no page script yet (a new document, a new frame).
_NOT_INSTALLED = "\u0000handrail: page script not installed"

# The call sent every time: a few bytes, where the page script with the sensitivity words
# is ~77 kB that Python encodes, the browser parses and forwards, and V8 looks up (~4 ms per
# call).
_CALL = (
    "function (name, args) {\n"
    '  const api = Object.prototype.hasOwnProperty.call(globalThis, "__handrailPage")\n'
    "    ? globalThis.__handrailPage : undefined;\n"
    f"  return api ? api[name](...args) : {json.dumps(_NOT_INSTALLED)};\n"
    "}"
)


@functools.cache
def _install_source() -> str:
    """The call that defines the page script in our world first (once per world), then
    calls: the :data:`PAGE_PARTS` inside one closure, with ``judgeSensitive`` in scope, that
    returns their ``api``."""
    return (
        "function (name, args) {\n"
        '  const api = Object.prototype.hasOwnProperty.call(globalThis, "__handrailPage")\n'
        "    ? globalThis.__handrailPage : (globalThis.__handrailPage = ((judgeSensitive) => {\n"
        '"use strict";\n'
        f"{parts(_HANDS_DIR, PAGE_PARTS)}\n"
        "return api;\n"
        f"  }})({judge_source()}));\n"
        "  return api[name](...args);\n"
        "}"
    )


# Page script calls whose answer holds coordinates in the element's own frame's viewport.
_POINT_RESULTS = frozenset({"prepareClick"})
_RECT_RESULTS = frozenset({"target"})


async def js(
    ctx: Ctx, name: str, *args: Any, await_promise: bool = False, limit: float = 15.0
) -> Any:
    """Call ``name`` of the page script's ``api`` (core/hands/api.js) in our isolated world
    with JSON ``args``, waiting at most ``limit`` seconds (and never past the action's
    deadline).

    When the first argument is the index of an element inside a cross-origin frame, the
    call runs in our world in that frame (through the frame's own session) with the
    element's index there, and coordinates in the answer are mapped to the top-level
    viewport, so the hands act on it as on any other element."""
    timeout = max(min(ctx.remaining(), limit), 0.5)
    index = args[0] if args and isinstance(args[0], int) and not isinstance(args[0], bool) else None
    route = frame_route(ctx.current, index) if index is not None else None
    if route is not None and index is not None:
        local = [route.local, *args[1:]]
        value = await _by_name(
            lambda source: route_call(
                route, index, source, name, local, timeout=timeout, await_promise=await_promise
            )
        )
        if isinstance(value, dict) and (name in _POINT_RESULTS or name in _RECT_RESULTS):
            mapping = await frame_map(ctx.current, route, index, timeout=timeout)
            if name in _POINT_RESULTS and "x" in value and "y" in value:
                top_x, top_y = mapping.to_top(float(value["x"]), float(value["y"]))
                value = {**value, "x": top_x, "y": top_y}
                # The frame's own hit test cannot see an overlay its parent lays over it.
                cover = await frame_cover(
                    ctx.current, route, index, value["x"], value["y"], timeout=timeout
                )
                if cover is not None:
                    reason = f"it is covered by {cover}, which would receive the click instead"
                    value = {"ok": False, "code": "covered", "reason": reason, "covering": cover}
            rect = value.get("rect")
            if name in _RECT_RESULTS and isinstance(rect, dict):
                # A transformed frame turns a box into a quad: keep the box around it.
                x0, y0 = float(rect.get("x", 0)), float(rect.get("y", 0))
                w, h = float(rect.get("w", 0)), float(rect.get("h", 0))
                corners = [mapping.to_top(cx, cy) for cx in (x0, x0 + w) for cy in (y0, y0 + h)]
                xs, ys = [c[0] for c in corners], [c[1] for c in corners]
                moved = {
                    **rect,
                    "x": min(xs),
                    "y": min(ys),
                    "w": max(xs) - min(xs),
                    "h": max(ys) - min(ys),
                }
                value = {**value, "rect": moved}
        return value
    tab = ctx.current
    return await _by_name(
        lambda source: world_call(
            tab, source, name, list(args), timeout=timeout, await_promise=await_promise
        )
    )


async def _by_name(call: Callable[[str], Awaitable[Any]]) -> Any:
    """``call(source)`` with the short call by name; again with the call that installs
    the page script first when the world has none yet."""
    value = await call(_CALL)
    return await call(_install_source()) if value == _NOT_INSTALLED else value
