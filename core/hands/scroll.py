"""The scroll action: the page by pages, an element into view, or a scrolling area's content.

A scrolling area is an element whose own content overflows and that a person could scroll
(overflow auto or scroll): a results list, a chat pane. The digest lists it with how much
lies beyond its edges; ``scroll{index}`` moves its content, so the next digest shows what
came into view. Scrolling changes what is seen, never what the page holds: it is not gated.
"""

from __future__ import annotations

from typing import Any

from core.eyes.snapshot import describe_scroll
from core.hands.ctx import Ctx, Refused, js
from core.hands.settle import compare, frames, probe
from core.result import ActionResult

# Where what lies beyond an area's edge is, for each direction scrolled toward.
_BEYOND = {"up": "above", "down": "below", "left": "to the left", "right": "to the right"}


async def scroll(ctx: Ctx, direction: str | None, pages: float, index: int | None) -> ActionResult:
    """``index``: that scrolling area's content (``direction`` and ``pages`` relative to its
    visible size; with no direction, toward where it has more, down first), or else the
    element into view. No ``index``: the page (or its main scrolling container) by viewports."""
    pages = min(max(float(pages), 0.1), 20.0)
    if index is not None:
        return await _by_index(ctx, index, direction, pages)
    if direction not in (None, "up", "down"):
        raise Refused(
            f"scroll was not done: the page scrolls up or down; {direction!r} needs the index "
            "of the scrolling area to move (scroll with index and direction)",
            code="bad_parameters",
        )
    before = await probe(ctx)
    res = await js(ctx, "scrollBy", direction or "down", pages)
    await frames(ctx)
    after = await probe(ctx)
    b, a = res.get("before") or {}, res.get("after") or {}
    moved = abs(float(a.get("top", 0)) - float(b.get("top", 0)))
    where = "the page" if res.get("container") is None else f"the scrolling area {res['container']}"
    word = "page" if pages == 1 else "pages"
    if moved < 1:
        end = "top" if (direction or "down") == "up" else "bottom"
        return ActionResult.success(
            f"nothing moved: {where} is already at the {end} (scroll: {position(a)})",
            compare(before, after),
        )
    return ActionResult.success(
        f"scrolled {where} {direction or 'down'} {pages:g} {word}; scroll: {position(a)}",
        compare(before, after),
    )


async def _by_index(ctx: Ctx, index: int, direction: str | None, pages: float) -> ActionResult:
    before = await probe(ctx)
    area: dict[str, Any] = await js(ctx, "scrollArea", index, direction, pages)
    if area.get("scrolled"):
        await frames(ctx)
        after = await probe(ctx)
        return ActionResult.success(area_message(index, area), compare(before, after))
    if direction is not None:
        raise Refused(
            f"scroll was not done: [{index}] is not a scrolling area that scrolls {direction}, "
            "nor inside one. To bring it into view, scroll with its index alone; to scroll "
            "the page, scroll with a direction and no index",
            code="not_actionable",
            error=f"not_actionable: [{index}] has no scrolling area that scrolls {direction}",
        )
    res = await js(ctx, "scrollToElement", index)
    await frames(ctx)
    after = await probe(ctx)
    where = position(res.get("after") or {})
    message = f"scrolled to [{index}] {res.get('describe', '')}; scroll: {where}"
    if not res.get("visible"):
        message += ". It is still not visible (it may be clipped by its container)"
    return ActionResult.success(message, compare(before, after))


def position(state: dict[str, Any]) -> str:
    """Where the page (or its main scrolling container) now is, in the digest's own words
    (its ``Scroll:`` line)."""
    top, height, view = (float(state.get(k, 0)) for k in ("top", "height", "view"))
    return describe_scroll((0.0, top, 0.0, height, 0.0, view))


def area_message(index: int, res: dict[str, Any]) -> str:
    """E.g. ``scrolled the scrolling area [12] <div ...> down by 140 px; now 1 more above,
    2 more below``."""
    after = res.get("after") or {}
    direction = str(res.get("direction", "down"))
    where = f"[{index}]" if res.get("itself") else f"around [{index}],"
    what = f"{where} {after.get('describe', '')}".strip()
    first = " (brought it into view first)" if res.get("intoView") else ""
    moved = float(res.get("moved", 0))
    if moved < 1:
        return (
            f"nothing moved: the scrolling area {what} is already as far {direction} as it "
            f"goes{first}; {where_now(after)}"
        )
    message = f"scrolled the scrolling area {what} {direction} by {moved:.0f} px{first}; now {where_now(after)}"
    if float((after.get("room") or {}).get(direction, 0)) > 1:
        message += f"; scroll it {direction} again to see more"
    return message


def where_now(state: dict[str, Any]) -> str:
    """How much of an area lies beyond each edge it scrolls along, in the digest's words:
    ``1 more above, nothing more below``; ``more below`` when only part of a box is there."""
    room = state.get("room") or {}
    items = state.get("items") or {}
    directions = [
        *(("up", "down") if room.get("y") else ()),
        *(("left", "right") if room.get("x") else ()),
    ]
    plus = "+" if items.get("capped") else ""
    parts = []
    for d in directions:
        count = int(items.get(d, 0))
        if float(room.get(d, 0)) <= 1:
            parts.append(f"nothing more {_BEYOND[d]}")
        elif count > 0:
            parts.append(f"{count}{plus} more {_BEYOND[d]}")
        else:
            parts.append(f"more {_BEYOND[d]}")
    return ", ".join(parts) or "nothing beyond its edges"
