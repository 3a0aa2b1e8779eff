"""handrail's own isolated JavaScript world in a tab.

API (used by the hands in core/hands/ and by core/eyes/snapshot.py)::

    await world_eval(tab, "document.title")                    # -> JSON value
    await world_call(tab, "function (i, t) { ... }", 12, "x")  # -> JSON value
    await element_object_id(tab, 12)                           # -> CDP objectId of element [12]
    route = frame_route(tab, 31)           # element [31] lives in a cross-origin frame: how
    await route_call(route, 31, fn, ...)   # to call into our world there (see FrameRoute)

Inside each world, ``globalThis.__handrail`` is the registry installed by the eyes' page
script (core/eyes/*.js, joined by :func:`eyes_script`): ``__handrail.element(12)`` returns the element the digest showed as ``[12]`` or throws; a
``world_call``/``world_eval`` that uses it raises :class:`StaleElement` or
:class:`UnknownIndex` in Python, with a message written for the model. ``__handrail.probe()``
is the cheap before/after reading the hands use (see :func:`core.eyes.snapshot.probe`).

Why an isolated world: page scripts can neither see our globals nor replace the DOM methods
we call (``Element.prototype.getBoundingClientRect`` patched by a page does not exist for us).
The world is created with ``Page.createIsolatedWorld`` on the main frame; the Runtime domain
is never enabled (pages can notice it). A new document needs a new world: we drop ours on
``Page.frameNavigated`` for the main frame and, should we miss that, retry once when the
browser answers "Cannot find context". Each new world's index counter is seeded with the
tab's high-water mark, so an index from an earlier document never names an element of a
later one: it fails instead.

Cross-origin frames get worlds of their own (:class:`FrameWorld`, created through the
frame's own session: the tab's for an in-process frame, the child target's for an
out-of-process one). Their indexes are local; the main world maps them onto the tab's
counter, and :class:`FrameRoute` tells the hands how to reach them. A frame world is never
silently recreated under an old route: a frame that changed document makes its elements
stale. Closed shadow roots are handed to our worlds by :func:`find_closed_roots`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.browser.browser import Tab
from core.cdp import JSON, CDPError, CDPSession, CDPTimeout, ConnectionClosed, SessionClosed
from core.world.sensitive import judge_source

WORLD_NAME = "handrail"
STATE_KEY = "world"
_EYES_DIR = Path(__file__).resolve().parents[1] / "eyes"
EYES_PARTS = (
    "registry",
    "text",
    "visibility",
    "naming",
    "widgets",
    "scrolling",
    "listeners",
    "detectors",
    "walk",
    "frames",
    "serialise",
    "api",
)
"""core/eyes/*.js in the order they are concatenated: each stage may use the names of the
parts before it at load time, and any part's names when called."""

# Thrown by core/eyes/registry.js: "handrail:stale:12" / "handrail:unknown:12".
_INDEX_ERROR = re.compile(r"handrail:(stale|unknown|frame):(\d+)")
_LOST_CONTEXT = ("Cannot find context", "Execution context was destroyed", "Cannot find default")


class WorldError(Exception):
    """Running our JavaScript in the page failed; the message says why (first line only)."""


class StaleElement(WorldError):
    """The element behind an index has left the page (removed, replaced, or a new document)."""

    def __init__(self, index: int) -> None:
        super().__init__(
            f"element [{index}] is no longer on the page (the page changed); "
            "read the new digest and use its indexes"
        )
        self.index = index


class UnknownIndex(WorldError):
    """No element ever had this index in this tab (an index from an earlier document of the
    tab raises :class:`StaleElement`)."""

    def __init__(self, index: int) -> None:
        super().__init__(
            f"there is no element [{index}] in the digest; use an index shown in the latest digest"
        )
        self.index = index


class FrameElement(WorldError):
    """The index names an element inside a cross-origin frame: it is not in the main world."""

    def __init__(self, index: int) -> None:
        super().__init__(
            f"element [{index}] is inside a cross-origin frame, where handrail cannot act yet; "
            "call ask_human so the person can do this step"
        )
        self.index = index


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
class _World:
    """Per-tab state, kept in ``tab.state["world"]``."""

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


def _state(tab: Tab) -> _World:
    world = tab.state.get(STATE_KEY)
    if isinstance(world, _World):
        return world
    world = _World()
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
    return _state(tab).generation


def note_index_high_water(tab: Tab, next_index: int) -> None:
    """Record the next free index reported by the page (snapshot.py calls this)."""
    world = _state(tab)
    world.next_index = max(world.next_index, next_index)


@functools.cache
def eyes_script() -> str:
    """The eyes' page script: core/eyes/*.js in :data:`EYES_PARTS` order inside one closure
    that defines ``globalThis.__handrail`` once per world (evaluating it again is a no-op)."""
    parts = [(_EYES_DIR / f"{name}.js").read_text(encoding="utf-8") for name in EYES_PARTS]
    # The detectors judge fields with the hands' own function (core/world/sensitive.js).
    judge = f"const judgeSensitive = {judge_source()};"
    body = "\n".join([judge, *parts])
    return f'(() => {{\n"use strict";\nif (globalThis.__handrail) return;\n{body}\n}})();'


def _load_script() -> str:
    return eyes_script()


async def install_at_document_start(session: CDPSession) -> None:
    """Have every new top-level document of the tab behind ``session`` start with our world
    and the eyes' script in it, so the first digest after a load finds them ready instead of
    compiling the script then (measured on a 5,000-row table: 20 ms of a cold digest). The
    page sees nothing: the script runs in our isolated world, and in a frame's world it
    returns at once (frames get theirs when a digest first needs it). Page must be enabled
    on the session (Browser._attach does it before the attach hooks)."""
    source = f"if (globalThis.top === globalThis) {{\n{eyes_script()}\n}}"
    await session.send(
        "Page.addScriptToEvaluateOnNewDocument", {"source": source, "worldName": WORLD_NAME}
    )


async def _install(session: CDPSession, frame_id: str, seed: int, timeout: float) -> int:
    """Our world in ``frame_id`` (Chrome makes it once per document and name, so this finds
    the one :func:`install_at_document_start` made) with the eyes' script in it, seeded with
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
            "expression": f"globalThis.__handrail ? globalThis.__handrail.init({int(seed)}) : 0",
            "contextId": context_id,
            "returnByValue": True,
        },
        timeout=timeout,
    )
    if not ready.get("exceptionDetails") and ready.get("result", {}).get("value"):
        return context_id
    install = f"{_load_script()}\n;globalThis.__handrail.init({int(seed)});"
    result = await session.send(
        "Runtime.evaluate",
        {"expression": install, "contextId": context_id, "returnByValue": True},
        timeout=timeout,
    )
    if "exceptionDetails" in result:
        raise WorldError("could not install handrail's page script: " + _exception_text(result))
    return context_id


async def _context(tab: Tab, timeout: float) -> int:
    world = _state(tab)
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


async def main_context(tab: Tab, *, timeout: float = 10.0) -> int:
    """Our world's execution context id in the tab's main frame (created when missing)."""
    return await _context(tab, timeout)


def frame_world(tab: Tab, session: CDPSession, frame_id: str) -> FrameWorld:
    """Our world in one cross-origin frame of ``tab``, reached through ``session`` (the tab's
    own for an in-process frame, the child target's for an out-of-process one). Created on
    first use; :func:`frame_eval` installs the script."""
    frames = _state(tab).frames
    key = (session.session_id, frame_id)
    found = frames.get(key)
    if found is None:
        found = frames[key] = FrameWorld(session=session, frame_id=frame_id)
    return found


async def frame_context(frame: FrameWorld, *, timeout: float = 10.0) -> int:
    if frame.context_id is not None:
        return frame.context_id
    async with frame.lock:
        if frame.context_id is None:
            frame.context_id = await _install(frame.session, frame.frame_id, 1, timeout)
            frame.generation += 1
            frame.load_checked = False
        return frame.context_id


async def frame_eval(
    frame: FrameWorld,
    expression: str,
    *,
    timeout: float = 10.0,
    by_value: bool = True,
    retry: bool = True,
) -> Any:
    """:func:`world_eval` in a frame's world; with ``retry``, recreates the world once when
    the frame's document changed under it (its indexes then start again, under a new
    ``frame.key``); without, the CDP error is raised (see :func:`is_lost_context`)."""
    for attempt in (0, 1) if retry else (1,):
        context_id = await frame_context(frame, timeout=timeout)
        try:
            result = await frame.session.send(
                "Runtime.evaluate",
                {"expression": expression, "contextId": context_id, "returnByValue": by_value},
                timeout=timeout,
            )
        except CDPError as exc:
            if attempt == 0 and any(s in str(exc) for s in _LOST_CONTEXT):
                if frame.context_id == context_id:
                    frame.context_id = None
                continue
            raise
        if not by_value:
            if "exceptionDetails" in result:
                _raise_for(result)
            return result.get("result", {})
        return _value(result)
    raise AssertionError("unreachable")


def known_frame_id(tab: Tab, holder: str, iframe: int) -> str | None:
    return _state(tab).frame_ids.get((holder, iframe))


def remember_frame_id(tab: Tab, holder: str, iframe: int, frame_id: str) -> None:
    _state(tab).frame_ids[(holder, iframe)] = frame_id


def is_lost_context(exc: BaseException) -> bool:
    """The error says our world's context is gone (its document was replaced)."""
    return any(s in str(exc) for s in _LOST_CONTEXT)


def set_frame_routes(tab: Tab, routes: dict[int, FrameRoute]) -> None:
    """Record the latest digest's frame elements (snapshot.py calls this)."""
    _state(tab).routes = dict(routes)


def frame_route(tab: Tab, index: int) -> FrameRoute | None:
    """How to reach element ``index`` when it lives in a cross-origin frame, else None."""
    return _state(tab).routes.get(index)


async def route_call(
    route: FrameRoute,
    index: int,
    function_declaration: str,
    *args: Any,
    timeout: float = 10.0,
    await_promise: bool = False,
) -> Any:
    """:func:`world_call` in the world of ``route``'s frame (``index`` is the tab's index of
    the element, for errors). Never recreates the frame's world: when the frame's document
    changed, its old indexes name nothing, so this raises :class:`StaleElement`."""
    world = route.world
    if world.context_id is None or world.key != route.key:
        raise StaleElement(index)
    params: JSON = {
        "functionDeclaration": function_declaration,
        "arguments": [{"value": json.loads(json.dumps(a))} for a in args],
        "returnByValue": True,
        "awaitPromise": await_promise,
        "executionContextId": world.context_id,
    }
    try:
        result = await world.session.send("Runtime.callFunctionOn", params, timeout=timeout)
    except SessionClosed as exc:
        # The frame's target is gone: the frame was removed, replaced or navigated away.
        raise StaleElement(index) from exc
    except CDPError as exc:
        if any(s in str(exc) for s in (*_LOST_CONTEXT, "Session with given id not found")):
            world.context_id = None
            raise StaleElement(index) from exc
        raise
    try:
        return _value(result)
    except (StaleElement, UnknownIndex) as exc:
        raise StaleElement(index) from exc


# In the world holding an iframe: where the frame's viewport starts inside the iframe's
# border box, and that box's own (untransformed) size, in the iframe's CSS pixels.
_INSET_JS = """function (i) {
  const el = globalThis.__handrail.element(i);
  const st = el.ownerDocument.defaultView.getComputedStyle(el);
  return [el.clientLeft + parseFloat(st.paddingLeft), el.clientTop + parseFloat(st.paddingTop),
          el.offsetWidth, el.offsetHeight];
}"""


# In the world holding an iframe: what receives a click at (x, y) of that world's viewport,
# when it is not the iframe itself (open shadow roots descended like the hands' hit test).
_COVER_JS = """function (i, x, y) {
  const el = globalThis.__handrail.element(i);
  let hit = el.ownerDocument.elementFromPoint(x, y);
  for (let k = 0; hit && hit.shadowRoot && k < 32; k++) {
    const inner = hit.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  if (hit === el) return null;
  if (!hit) return "nothing (the point is outside the frame's parent)";
  const text = (hit.getAttribute("aria-label") || hit.innerText || hit.textContent || "")
    .replace(/\\s+/g, " ").trim().slice(0, 60);
  const id = hit.id ? ` id=${hit.id.slice(0, 40)}` : "";
  return `<${hit.tagName.toLowerCase()}${id}>` + (text ? ` "${text}"` : "");
}"""


@dataclass(frozen=True)
class Affine:
    """A 2-D affine map ``(x, y) -> (a x + b y + c, d x + e y + f)`` (CSS transforms of an
    iframe, translation, scale, rotation and skew, are all of this form)."""

    a: float = 1.0
    b: float = 0.0
    c: float = 0.0
    d: float = 0.0
    e: float = 1.0
    f: float = 0.0

    def __call__(self, x: float, y: float) -> tuple[float, float]:
        return self.a * x + self.b * y + self.c, self.d * x + self.e * y + self.f

    def then(self, outer: Affine) -> Affine:
        """``outer`` applied after this map."""
        o = outer
        return Affine(
            o.a * self.a + o.b * self.d,
            o.a * self.b + o.b * self.e,
            o.a * self.c + o.b * self.f + o.c,
            o.d * self.a + o.e * self.d,
            o.d * self.b + o.e * self.e,
            o.d * self.c + o.e * self.f + o.f,
        )

    def inverse(self) -> Affine:
        det = self.a * self.e - self.b * self.d
        if abs(det) < 1e-9:
            raise WorldError("the frame is transformed to nothing (scaled to zero or edge-on)")
        a, b, d, e = self.e / det, -self.b / det, -self.d / det, self.a / det
        return Affine(a, b, -(a * self.c + b * self.f), d, e, -(d * self.c + e * self.f))


@dataclass(frozen=True)
class FrameMap:
    """How points of a cross-origin frame's viewport land in the top-level viewport, with the
    frames' CSS transforms (scale, rotation, translation...) and nested offsets honoured."""

    steps: tuple[Affine, ...]
    """One per hop of the route, innermost first: the frame's viewport -> the viewport of the
    document holding its iframe."""

    def to_top(self, x: float, y: float) -> tuple[float, float]:
        for step in self.steps:
            x, y = step(x, y)
        return x, y

    def to_frame(self, x: float, y: float) -> tuple[float, float]:
        for step in reversed(self.steps):
            x, y = step.inverse()(x, y)
        return x, y

    def points(self, x: float, y: float) -> list[tuple[float, float]]:
        """A point of the frame's viewport in each holding document's viewport, hop by hop."""
        out = []
        for step in self.steps:
            x, y = step(x, y)
            out.append((x, y))
        return out


async def _hop_quad(
    tab: Tab, holder: FrameWorld | None, iframe: int, index: int, timeout: float
) -> Affine:
    """The iframe's content box as a map: the frame's viewport -> the viewport of the local
    root of the holder's session (CDP gives an element's quads there, transforms applied)."""
    if holder is None:
        session = tab.session
        object_id = await element_object_id(tab, iframe, timeout=timeout)
        left, top, width, height = await world_call(tab, _INSET_JS, iframe, timeout=timeout)
    else:
        session = holder.session
        hop = FrameRoute(world=holder, key=holder.key, local=iframe, hops=())
        left, top, width, height = await route_call(hop, index, _INSET_JS, iframe, timeout=timeout)
        remote = await frame_eval(
            holder, f"globalThis.__handrail.element({int(iframe)})", by_value=False, retry=False
        )
        object_id = str(remote.get("objectId") or "")
    try:
        quads = await session.send("DOM.getContentQuads", {"objectId": object_id}, timeout=timeout)
    except CDPError as exc:
        raise StaleElement(index) from exc
    if not quads.get("quads") or not width or not height:
        raise WorldError(f"the frame holding element [{index}] is not rendered (it has no box)")
    q = [float(v) for v in quads["quads"][0]]
    # Corners clockwise from the border box's top-left: x runs along 0->1, y along 0->3.
    ux, uy = (q[2] - q[0]) / width, (q[3] - q[1]) / width
    vx, vy = (q[6] - q[0]) / height, (q[7] - q[1]) / height
    ox, oy = q[0] + ux * left + vx * top, q[1] + uy * left + vy * top
    return Affine(ux, vx, ox, uy, vy, oy)


async def frame_map(tab: Tab, route: FrameRoute, index: int, *, timeout: float = 10.0) -> FrameMap:
    """The element's frame's viewport mapped to the top-level viewport as things are now.

    Each iframe's quad comes from CDP (``DOM.getContentQuads``), in the viewport of the local
    root of the session that holds it: for an iframe whose holder is itself a frame in the
    same renderer, that is already the viewport of an ancestor, so that hop is expressed in
    its holder's own viewport by undoing the next hop's map. Raises :class:`StaleElement`
    when a frame on the way is gone."""

    return await hops_map(tab, route.hops, index, timeout=timeout)


async def hops_map(
    tab: Tab,
    hops: Sequence[tuple[FrameWorld | None, int]],
    index: int,
    *,
    timeout: float = 10.0,
) -> FrameMap:
    """:func:`frame_map` for a frame held by ``hops`` (as :attr:`FrameRoute.hops`);
    ``index`` names the element or frame in errors."""

    def session_of(holder: FrameWorld | None) -> str:
        return tab.session.session_id if holder is None else holder.session.session_id

    quads = [await _hop_quad(tab, h, i, index, timeout) for h, i in hops]
    steps: list[Affine] = []
    for k, quad in enumerate(quads):
        holder = hops[k][0]
        if k + 1 < len(quads) and session_of(hops[k + 1][0]) == session_of(holder):
            quad = quad.then(quads[k + 1].inverse())
        steps.append(quad)
    return FrameMap(tuple(steps))


async def frame_cover(
    tab: Tab, route: FrameRoute, index: int, x: float, y: float, *, timeout: float = 10.0
) -> str | None:
    """What in a parent document would receive a click at top-level point (x, y) instead
    of the element's frame (an overlay laid over the frame), or None when the frame gets it.
    Each holding document is asked in its own world, with the point in its own viewport."""
    mapping = await frame_map(tab, route, index, timeout=timeout)
    local = mapping.to_frame(x, y)
    for (holder, iframe), (hx, hy) in zip(route.hops, mapping.points(*local), strict=True):
        if holder is None:
            cover = await world_call(tab, _COVER_JS, iframe, hx, hy, timeout=timeout)
        else:
            hop = FrameRoute(world=holder, key=holder.key, local=iframe, hops=())
            cover = await route_call(hop, index, _COVER_JS, iframe, hx, hy, timeout=timeout)
        if cover:
            return str(cover)
    return None


SHADOW_TOP_QUERY = ":host > *"
"""The CSS selector ``DOM.performSearch`` counts the top-level elements of every shadow root
with (open, closed and our marks' root; not user-agent ones). It matches nothing in a
document's own tree, so a page without shadow roots costs the search alone, and the search
collects a handful of answers instead of every element (15 ms against 25-38 ms for a
selector matching all 40,000 elements of the 5,000-row page). Any element in a root lies
under one of the root's top-level elements, so a closed root that holds anything shows.
The text is also searched for as plain text (a text node or attribute that contains it
is counted too, which can only make the count larger and so cost a deeper look, never
hide anything)."""


@dataclass(frozen=True)
class RootAudit:
    """What :func:`find_closed_roots` found in one renderer session's documents."""

    elements: int
    """Top-level elements of shadow roots (any mode) CDP counted in the session's documents."""
    reached: int
    """Those our worlds on that session reach (open and adopted roots, in readable frames)."""
    adopted: int
    """Closed roots newly handed to our worlds (0 when the counts agreed)."""
    pierced: bool
    """The counts differed, so the whole DOM tree was read to find what hid the rest."""
    ms: float


async def find_closed_roots(
    tab: Tab, session: CDPSession | None = None, *, timeout: float = 10.0
) -> RootAudit:
    """Make every closed shadow root in the documents of ``session`` (default: the tab's own;
    else a child session of an out-of-process frame) known to our world of the frame that
    holds it, so the digest, the detectors, the hands (and anyone masking text) read it like
    an open root (``rootOf(el)`` / ``el.shadowRoot`` in our worlds).

    Sound, not a guess: ``DOM.performSearch`` counts the top-level elements of every shadow
    root in the session's documents, closed roots included (:data:`SHADOW_TOP_QUERY`), and
    when there are any, our worlds count those they reach (``reach()`` in
    core/eyes/registry.js). Only when the two differ is the whole tree read
    (``DOM.getDocument`` with ``pierce``, slow on huge pages), every closed root resolved
    into the world of its frame (created for a cross-origin frame that has none yet) and
    adopted there. The page sees nothing: our worlds are isolated, the search is discarded
    and the DOM domain (enabled by ``DOM.getDocument``) is disabled again, so it pushes no
    events afterwards. Raises ``core.cdp`` errors when the tab does not answer."""
    started = asyncio.get_running_loop().time()
    session = session or tab.session
    try:
        # The search goes out first: the renderer runs it while our worlds' contexts are
        # looked up (and, after a load, made), instead of after those round trips.
        counted, worlds = await asyncio.gather(
            _count_shadow_tops(session, timeout), _session_contexts(tab, session, timeout)
        )
        contexts = list(worlds.values())
        # No shadow root at all (the common page): nothing for our worlds to count.
        reached = await _reached(session, contexts, counted, timeout) if counted else 0
        pierced = counted != reached
        adopted = await _adopt_from_tree(tab, session, worlds, timeout) if pierced else 0
    finally:
        with contextlib.suppress(CDPError):
            await session.post("DOM.disable")
    ms = (asyncio.get_running_loop().time() - started) * 1000
    return RootAudit(counted, reached, adopted, pierced, round(ms, 1))


async def _session_contexts(tab: Tab, session: CDPSession, timeout: float) -> dict[str, int]:
    """Frame id -> our world's context in that frame, for the worlds on ``session``."""
    out: dict[str, int] = {}
    if session is tab.session:
        ctx = await main_context(tab, timeout=timeout)
        frame_id = _state(tab).main_frame_id
        if frame_id:
            out[frame_id] = ctx
    for (session_id, frame_id), frame in list(_state(tab).frames.items()):
        if session_id == session.session_id and frame.context_id is not None:
            out[frame_id] = frame.context_id
    return out


async def _count_shadow_tops(session: CDPSession, timeout: float) -> int:
    # Back to back: the search needs the DOM domain that getDocument enables, and the
    # browser runs them in order; no round trip in between.
    _, found = await session.send_in_order(
        [
            ("DOM.getDocument", {"depth": 0}),
            ("DOM.performSearch", {"query": SHADOW_TOP_QUERY, "includeUserAgentShadowDOM": False}),
        ],
        timeout=timeout,
    )
    with contextlib.suppress(CDPError):
        await session.post("DOM.discardSearchResults", {"searchId": found["searchId"]})
    return int(found["resultCount"])


async def _reached(session: CDPSession, contexts: list[int], counted: int, timeout: float) -> int:
    """What our worlds on ``session`` reach of what CDP ``counted``."""
    total = 0
    for ctx in contexts:
        try:
            result = await session.send(
                "Runtime.evaluate",
                {
                    "expression": f"globalThis.__handrail.reach({int(counted)})",
                    "contextId": ctx,
                    "returnByValue": True,
                },
                timeout=timeout,
            )
        except CDPError as exc:
            if is_lost_context(exc):
                continue  # that frame's document is gone: it counts for nothing
            raise
        if "exceptionDetails" not in result:
            total += int(result.get("result", {}).get("value") or 0)
    return total


async def _adopt_from_tree(
    tab: Tab, session: CDPSession, worlds: dict[str, int], timeout: float
) -> int:
    """Read the session's whole DOM tree and adopt each closed root into the world of the
    frame holding it; a frame our worlds cannot reach gets a world of its own (so its
    elements count from the next audit on). Returns how many roots were new."""
    tree = await session.send("DOM.getDocument", {"depth": -1, "pierce": True}, timeout=timeout)
    root = tree["root"]
    first = root.get("frameId") or next(iter(worlds), None)
    pairs: dict[int, list[tuple[int, int]]] = {}
    # (node, frame id, context of the world that reads this document)
    stack: list[tuple[JSON, str | None, int | None]] = [
        (root, first, worlds.get(first) if first else None)
    ]
    while stack:
        node, frame_id, ctx = stack.pop()
        for shadow in node.get("shadowRoots") or []:
            if shadow.get("shadowRootType") == "closed" and ctx is not None:
                pairs.setdefault(ctx, []).append(
                    (int(node["backendNodeId"]), int(shadow["backendNodeId"]))
                )
            stack.append((shadow, frame_id, ctx))
        for child in node.get("children") or []:
            stack.append((child, frame_id, ctx))
        inner = node.get("contentDocument")
        if inner is not None:
            inner_frame = str(node.get("frameId") or "")
            inner_ctx = worlds.get(inner_frame)
            if inner_ctx is None:
                inner_ctx = await _reader_of(tab, session, node, inner_frame, ctx, timeout)
            stack.append((inner, inner_frame, inner_ctx))
    fresh = 0
    for ctx, found in pairs.items():
        fresh += await _adopt(session, ctx, found, timeout)
    return fresh


async def _reader_of(
    tab: Tab, session: CDPSession, owner: JSON, frame_id: str, parent: int | None, timeout: float
) -> int | None:
    """The context of our world that can read the document of the frame ``owner`` (an iframe
    element) shows: the parent's world when the frame is same-origin with it (it can open
    ``contentDocument``), else a world of the frame's own (created here)."""
    if parent is not None:
        with contextlib.suppress(CDPError):
            element = await session.send(
                "DOM.resolveNode",
                {"backendNodeId": int(owner["backendNodeId"]), "executionContextId": parent},
                timeout=timeout,
            )
            object_id = element.get("object", {}).get("objectId")
            if object_id:
                opened = await session.send(
                    "Runtime.callFunctionOn",
                    {
                        "functionDeclaration": "function () { return !!this.contentDocument; }",
                        "objectId": object_id,
                        "returnByValue": True,
                    },
                    timeout=timeout,
                )
                await session.send("Runtime.releaseObject", {"objectId": object_id})
                if opened.get("result", {}).get("value") is True:
                    return parent
    if not frame_id:
        return None
    try:
        return await frame_context(frame_world(tab, session, frame_id), timeout=timeout)
    except (CDPError, WorldError):
        return None


async def _adopt(
    session: CDPSession, ctx: int, pairs: list[tuple[int, int]], timeout: float
) -> int:
    group = "handrail-roots"
    try:
        resolved = await asyncio.gather(
            *(
                session.send(
                    "DOM.resolveNode",
                    {"backendNodeId": b, "executionContextId": ctx, "objectGroup": group},
                    timeout=timeout,
                )
                for pair in pairs
                for b in pair
            ),
            return_exceptions=True,
        )
        args: list[JSON] = []
        for k in range(0, len(resolved), 2):
            host, shadow = resolved[k], resolved[k + 1]
            if isinstance(host, BaseException) or isinstance(shadow, BaseException):
                continue
            host_id, root_id = host["object"].get("objectId"), shadow["object"].get("objectId")
            if host_id and root_id:
                args += [{"objectId": host_id}, {"objectId": root_id}]
        if not args:
            return 0
        result = await session.send(
            "Runtime.callFunctionOn",
            {
                "functionDeclaration": (
                    "function (...p) { return globalThis.__handrail.adoptRoots(...p); }"
                ),
                "executionContextId": ctx,
                "arguments": args,
                "returnByValue": True,
            },
            timeout=timeout,
        )
        return int(result.get("result", {}).get("value") or 0)
    finally:
        with contextlib.suppress(CDPError):
            await session.send("Runtime.releaseObjectGroup", {"objectGroup": group}, timeout=5)


def _exception_text(result: JSON) -> str:
    details = result.get("exceptionDetails", {})
    exception = details.get("exception") or {}
    text = exception.get("description") or details.get("text") or "unknown error"
    if exception.get("type") == "object" and "value" in exception:
        text = str(exception["value"])
    first = str(text).strip().splitlines()[0] if str(text).strip() else "unknown error"
    return first


def _raise_for(result: JSON) -> None:
    text = _exception_text(result)
    match = _INDEX_ERROR.search(text)
    if match:
        index = int(match.group(2))
        if match.group(1) == "stale":
            raise StaleElement(index)
        if match.group(1) == "frame":
            raise FrameElement(index)
        raise UnknownIndex(index)
    raise WorldError(text)


async def _run(tab: Tab, method: str, params: JSON, timeout: float) -> JSON:
    """Send ``method`` with our context id, recreating the world once if it was lost."""
    world = _state(tab)
    for attempt in (0, 1):
        context_id = await _context(tab, timeout)
        key = "contextId" if method == "Runtime.evaluate" else "executionContextId"
        try:
            return await tab.send(method, {**params, key: context_id}, timeout=timeout)
        except CDPError as exc:
            if attempt == 0 and any(s in str(exc) for s in _LOST_CONTEXT):
                if world.context_id == context_id:
                    world.context_id = None
                continue
            raise
    raise AssertionError("unreachable")


def _value(result: JSON) -> Any:
    if "exceptionDetails" in result:
        _raise_for(result)
    remote = result.get("result", {})
    if remote.get("type") == "undefined":
        return None
    return remote.get("value")


async def world_eval(
    tab: Tab, expression: str, *, await_promise: bool = False, timeout: float = 10.0
) -> Any:
    """Evaluate ``expression`` in our isolated world and return its JSON value.

    Raises :class:`StaleElement` / :class:`UnknownIndex` when the expression used
    ``__handrail.element(i)`` on a bad index, :class:`WorldError` (first line of the page
    exception) for any other exception, and ``core.cdp`` errors (``CDPTimeout`` after
    ``timeout`` seconds, ``SessionClosed``...) when the tab does not answer.
    """
    params: JSON = {
        "expression": expression,
        "returnByValue": True,
        "awaitPromise": await_promise,
        "userGesture": False,
    }
    return _value(await _run(tab, "Runtime.evaluate", params, timeout))


async def world_call(
    tab: Tab,
    function_declaration: str,
    *args: Any,
    timeout: float = 10.0,
    await_promise: bool = False,
) -> Any:
    """Call ``function_declaration`` (e.g. ``"function (i) { ... }"``) in our world with
    JSON-serialisable ``args``; returns its JSON value. Errors as :func:`world_eval`."""
    params: JSON = {
        "functionDeclaration": function_declaration,
        "arguments": [{"value": json.loads(json.dumps(a))} for a in args],
        "returnByValue": True,
        "awaitPromise": await_promise,
    }
    return _value(await _run(tab, "Runtime.callFunctionOn", params, timeout))


async def element_object_id(tab: Tab, index: int, *, timeout: float = 10.0) -> str:
    """The CDP remote object id (in our world) of the element with digest index ``index``.

    Usable with DOM.* commands (``DOM.setFileInputFiles``, ``DOM.describeNode``...) and
    ``Runtime.callFunctionOn``. Raises :class:`StaleElement` / :class:`UnknownIndex`.
    """
    params: JSON = {
        "expression": f"globalThis.__handrail.element({int(index)})",
        "returnByValue": False,
        "objectGroup": "handrail",
    }
    result = await _run(tab, "Runtime.evaluate", params, timeout)
    if "exceptionDetails" in result:
        _raise_for(result)
    object_id = result.get("result", {}).get("objectId")
    if not isinstance(object_id, str):
        raise WorldError(f"element [{index}] has no remote object")
    return object_id


async def element_handle(tab: Tab, index: int, *, timeout: float = 10.0) -> tuple[CDPSession, str]:
    """The session and remote object id of element ``index`` wherever it lives: the tab's
    session and our main world, or a cross-origin frame's session and our world there (for
    DOM.* commands, which must go to the session that owns the node). Raises as
    :func:`element_object_id`."""
    route = frame_route(tab, index)
    if route is None:
        return tab.session, await element_object_id(tab, index, timeout=timeout)
    world = route.world
    if world.context_id is None or world.key != route.key:
        raise StaleElement(index)
    params: JSON = {
        "expression": f"globalThis.__handrail.element({int(route.local)})",
        "returnByValue": False,
        "objectGroup": "handrail",
        "contextId": world.context_id,
    }
    try:
        result = await world.session.send("Runtime.evaluate", params, timeout=timeout)
    except CDPError as exc:
        if isinstance(exc, SessionClosed) or is_lost_context(exc):
            raise StaleElement(index) from exc
        raise
    if "exceptionDetails" in result:
        raise StaleElement(index)
    object_id = result.get("result", {}).get("objectId")
    if not isinstance(object_id, str):
        raise WorldError(f"element [{index}] has no remote object")
    return world.session, object_id
