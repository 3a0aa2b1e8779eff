"""Our isolated world's execution contexts: one in each tab's main frame, one in each
cross-origin frame a digest reads, and the per-tab state that keeps them.

Why an isolated world: page scripts can neither see our globals nor replace the DOM methods
we call (``Element.prototype.getBoundingClientRect`` patched by a page does not exist for us).
The world is created with ``Page.createIsolatedWorld`` on the main frame; the Runtime domain
is never enabled (pages can notice it). A new document needs a new world: we drop ours on
``Page.frameNavigated`` for the main frame and, should we miss that, retry once when the
browser answers "Cannot find context" (:func:`is_lost_context`; core/world/calls.py does
the retry). Each new world's index counter is seeded with the tab's high-water mark, so an
index from an earlier document never names an element of a later one: it fails instead.

Cross-origin frames get worlds of their own (:class:`FrameWorld`, created through the
frame's own session: the tab's for an in-process frame, the child target's for an
out-of-process one). Their indexes are local; the main world maps them onto the tab's
counter, and :class:`FrameRoute` tells the hands how to reach them. A frame world is never
silently recreated under an old route: a frame that changed document makes its elements
stale.

Which script a world starts with is not this layer's to know: it is the eyes' page script
(core/eyes/script.py), which defines ``globalThis.__handrail`` (the index registry, with
``init(seed)``). The world layer sits below the eyes and never imports them, so the eyes
hand it over: importing :mod:`core.eyes.script` calls :func:`use_page_script` once per
process, and every world made from then on, for any tab, gets that script. Nothing here
reads another folder's files. A world needed before any script was given raises
:class:`~core.world.errors.WorldError` saying so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.browser.browser import Tab
from core.cdp import JSON, CDPError, CDPSession, CDPTimeout, ConnectionClosed, SessionClosed
from core.world.errors import WorldError, exception_line

WORLD_NAME = "handrail"
STATE_KEY = "world"

_INSTALLED = 'Object.prototype.hasOwnProperty.call(globalThis, "__handrail")'
"""Whether our world has the page script: an own property of its global, never a page
element named ``__handrail`` (window's named properties reach isolated worlds too)."""

LOST_CONTEXT = ("Cannot find context", "Execution context was destroyed", "Cannot find default")
"""What the browser says when our context's document was replaced under a call."""

PageScript = Callable[[], str]
"""Gives the text of the page script every new world is started with (called per world;
cache it)."""

_page_script: PageScript | None = None


def use_page_script(source: PageScript) -> None:
    """Start every world made from now on with ``source()``: a script that defines
    ``globalThis.__handrail`` once per world (evaluating it again is a no-op) with
    ``init(seed)``. core/eyes/script.py calls this when it is imported."""
    global _page_script
    _page_script = source


def page_script() -> str:
    """The script given to :func:`use_page_script`; :class:`WorldError` when none was."""
    if _page_script is None:
        raise WorldError(
            "handrail's page script was not given to the world (import core.eyes.script first)"
        )
    return _page_script()


@dataclass
class FrameWorld:
    """Our isolated world in one frame the main world cannot reach (a cross-origin frame,
    in the tab's own renderer or out of process). Its indexes are local to the frame; the
    main world maps them onto the tab's one counter (see core/eyes/snapshot.py)."""

    session: CDPSession
    frame_id: str
    context_id: int | None = None
    generation: int = 0
    """Bumped when the world is recreated (the frame loaded a new document)."""
    load_checked: bool = False
    """The digest checked that this document is the frame's own, not an error page."""
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def key(self) -> str:
        """Names this frame's document: changes when the frame's world is recreated, and
        differs between two sessions to the same frame (a frame that changed process)."""
        return f"{self.frame_id}:{self.session.session_id}:{self.generation}"


@dataclass(frozen=True)
class FrameRoute:
    """How to reach an element of a cross-origin frame: the world of its frame, its index
    there, and the iframe elements that hold that frame, from its own up to the top."""

    world: FrameWorld
    key: str
    """``world.key`` when the digest listed it: another key means the frame's document
    changed and the element is gone."""
    local: int
    hops: tuple[tuple[FrameWorld | None, int], ...]
    """(world holding the iframe element, None for the main world; its index there)."""


@dataclass
class TabWorld:
    """Per-tab state, kept in ``tab.state["world"]`` (read it through :func:`tab_world`)."""

    context_id: int | None = None
    main_frame_id: str | None = None
    next_index: int = 1
    """High-water mark of indexes handed out in this tab (seed for the next world)."""
    generation: int = 0
    """Bumped whenever a new world is created (a new document, or a lost context)."""
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    unsubscribe: list[Any] = field(default_factory=list)
    frames: dict[tuple[str, str], FrameWorld] = field(default_factory=dict)
    """Our worlds in the tab's cross-origin frames, by (session id, frame id)."""
    routes: dict[int, FrameRoute] = field(default_factory=dict)
    """The latest digest's cross-origin frame elements, by index."""
    frame_ids: dict[tuple[str, int], str] = field(default_factory=dict)
    """(world holding an iframe element: "main" or its key, the iframe's index there) -> the
    id of the frame it shows (a frame keeps its id across its navigations)."""


def tab_world(tab: Tab) -> TabWorld:
    """The tab's world state, made (and subscribed to main-frame navigations) on first use."""
    world = tab.state.get(STATE_KEY)
    if isinstance(world, TabWorld):
        return world
    world = TabWorld()
    tab.state[STATE_KEY] = world

    def on_navigated(params: JSON) -> None:
        frame = params.get("frame", {})
        if frame.get("parentId"):
            return
        world.main_frame_id = frame.get("id", world.main_frame_id)
        world.context_id = None

    world.unsubscribe.append(tab.session.on("Page.frameNavigated", on_navigated))
    return world


def world_generation(tab: Tab) -> int:
    """A number that changes whenever our world (and so the index registry) was recreated."""
    return tab_world(tab).generation


def note_index_high_water(tab: Tab, next_index: int) -> None:
    """Record the next free index reported by the page (snapshot.py calls this)."""
    world = tab_world(tab)
    world.next_index = max(world.next_index, next_index)


def is_lost_context(exc: BaseException) -> bool:
    """The error says our world's context is gone (its document was replaced)."""
    return any(s in str(exc) for s in LOST_CONTEXT)


async def add_world_script(session: CDPSession, source: str) -> None:
    """Have every new document of the tab behind ``session`` start with our world and
    ``source`` evaluated in it (``Page.addScriptToEvaluateOnNewDocument``), so a world this
    module makes there later finds the script ready. Page must be enabled on the session
    (Browser._attach does it before the attach hooks)."""
    await session.send(
        "Page.addScriptToEvaluateOnNewDocument", {"source": source, "worldName": WORLD_NAME}
    )


async def _install(session: CDPSession, frame_id: str, seed: int, timeout: float) -> int:
    """Our world in ``frame_id`` (Chrome makes it once per document and name, so this finds
    the one :func:`add_world_script` made) with the page script in it, seeded with
    ``seed``; its context id."""
    created = await session.send(
        "Page.createIsolatedWorld",
        {"frameId": frame_id, "worldName": WORLD_NAME, "grantUniveralAccess": False},
        timeout=timeout,
    )
    context_id = int(created["executionContextId"])
    ready = await session.send(
        "Runtime.evaluate",
        {
            "expression": (f"{_INSTALLED} ? globalThis.__handrail.init({int(seed)}) : 0"),
            "contextId": context_id,
            "returnByValue": True,
        },
        timeout=timeout,
    )
    if not ready.get("exceptionDetails") and ready.get("result", {}).get("value"):
        return context_id
    install = f"{page_script()}\n;globalThis.__handrail.init({int(seed)});"
    result = await session.send(
        "Runtime.evaluate",
        {"expression": install, "contextId": context_id, "returnByValue": True},
        timeout=timeout,
    )
    if "exceptionDetails" in result:
        raise WorldError(
            "could not install handrail's page script: "
            + exception_line(result.get("exceptionDetails", {}))
        )
    return context_id


async def main_context(tab: Tab, *, timeout: float = 10.0) -> int:
    """Our world's execution context id in the tab's main frame (created when missing)."""
    world = tab_world(tab)
    if world.context_id is not None:
        return world.context_id
    async with world.lock:
        if world.context_id is not None:
            return world.context_id
        # A tab's main frame has the id of its target (as long as the target lives), so the
        # frame tree is asked only when that fails.
        frame_id = world.main_frame_id or tab.target_id
        try:
            context_id = await _install(tab.session, frame_id, world.next_index, timeout)
        except (SessionClosed, ConnectionClosed, CDPTimeout):
            raise
        except CDPError:
            tree = await tab.send("Page.getFrameTree", timeout=timeout)
            frame_id = tree["frameTree"]["frame"]["id"]
            context_id = await _install(tab.session, frame_id, world.next_index, timeout)
        world.context_id = context_id
        world.main_frame_id = frame_id
        world.generation += 1
        # The frames' worlds belonged to the previous document.
        world.frames.clear()
        world.routes.clear()
        world.frame_ids.clear()
        return context_id


def forget_main_context(tab: Tab, context_id: int) -> None:
    """The browser said ``context_id`` is gone: the next :func:`main_context` makes a new
    world (unless another call already did)."""
    world = tab_world(tab)
    if world.context_id == context_id:
        world.context_id = None


def frame_world(tab: Tab, session: CDPSession, frame_id: str) -> FrameWorld:
    """Our world in one cross-origin frame of ``tab``, reached through ``session`` (the tab's
    own for an in-process frame, the child target's for an out-of-process one). Created on
    first use; :func:`frame_context` installs the script."""
    frames = tab_world(tab).frames
    key = (session.session_id, frame_id)
    found = frames.get(key)
    if found is None:
        found = frames[key] = FrameWorld(session=session, frame_id=frame_id)
    return found


async def frame_context(frame: FrameWorld, *, timeout: float = 10.0) -> int:
    """The frame world's execution context id (created, with a new key, when missing)."""
    if frame.context_id is not None:
        return frame.context_id
    async with frame.lock:
        if frame.context_id is None:
            frame.context_id = await _install(frame.session, frame.frame_id, 1, timeout)
            frame.generation += 1
            frame.load_checked = False
        return frame.context_id


def known_frame_id(tab: Tab, holder: str, iframe: int) -> str | None:
    return tab_world(tab).frame_ids.get((holder, iframe))


def remember_frame_id(tab: Tab, holder: str, iframe: int, frame_id: str) -> None:
    tab_world(tab).frame_ids[(holder, iframe)] = frame_id


def set_frame_routes(tab: Tab, routes: dict[int, FrameRoute]) -> None:
    """Record the latest digest's frame elements (snapshot.py calls this)."""
    tab_world(tab).routes = dict(routes)


def frame_route(tab: Tab, index: int) -> FrameRoute | None:
    """How to reach element ``index`` when it lives in a cross-origin frame, else None."""
    return tab_world(tab).routes.get(index)
