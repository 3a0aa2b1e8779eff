"""Frame geometry: where a point of a cross-origin frame's viewport lands in the top-level
viewport, through every iframe that holds it (CSS transforms and nested offsets honoured),
and what in a parent document would take a click meant for the frame.

The hands aim their trusted clicks with :func:`frame_map` and check for covers with
:func:`frame_cover`; the eyes place a frame's boxes with :func:`hops_map`. The page-side
halves are ``frame_inset.js`` and ``frame_cover.js`` beside this file, run in the world
that holds each iframe.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.browser.browser import Tab
from core.cdp import CDPError
from core.world.calls import element_object_id, frame_eval, route_call, world_call
from core.world.contexts import FrameRoute, FrameWorld
from core.world.errors import StaleElement, WorldError
from core.world.scripts import beside, script

_INSET_JS = script(beside(__file__, "frame_inset.js"))
_COVER_JS = script(beside(__file__, "frame_cover.js"))


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
