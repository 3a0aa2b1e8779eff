"""Trusted mouse input (``Input.dispatchMouseEvent``): never ``element.click()``.

A press is checked at the moment it happens, not only before: the pointer moves onto the
target, the page reacts (its hover handlers, a frame), the element's box is compared with
its box before the move when the stability check was deferred to this moment (actionability.js
``prepareClick``), the point is hit-tested again, and after the button goes down a
listener in our world confirms that the approved element received it, and holds the
release to the element pressed (a pointer capture the page asked for is replaced by ours).
If anything else got the press, the button is released somewhere neutral so that no click
fires, and the action is refused as ``target_changed``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any

from core.cdp import CDPError
from core.hands.ctx import Ctx, Refused, js
from core.world.contexts import frame_route
from core.world.errors import WorldError
from core.world.geometry import FrameMap, frame_map

# How long after Chrome's answer to an input a check sent behind it may still be waiting
# for the input's dispatch before the hands tell it that the dispatch is over (its frame
# and a task normally take a few milliseconds; a page that stopped the input's events before
# our listeners costs this long).
TELL_AFTER = 0.02


@dataclass(frozen=True, slots=True)
class Clicks:
    """What one click action presses: ``count`` 2 is a double click (two presses, the second
    with clickCount 2, so the page gets click, click and dblclick), ``button`` "right" a
    context click (the page gets contextmenu and auxclick, no click)."""

    count: int = 1
    button: str = "left"

    def __post_init__(self) -> None:
        if self.count not in (1, 2) or self.button not in ("left", "right"):
            raise ValueError(f"a click is 1 or 2 presses of left or right, not {self!r}")

    @property
    def buttons(self) -> int:
        """The buttons held down during a press (the DOM's ``buttons`` mask)."""
        return 2 if self.button == "right" else 1

    @property
    def verb(self) -> str:
        if self.button == "right":
            return "right-clicked" if self.count == 1 else "right-double-clicked"
        return "double-clicked" if self.count == 2 else "clicked"


class Unsettled(Exception):
    """The element's box changed between the deferred stability check's first reading
    (actionability.js ``prepareClick`` with ``deferStable``) and the hover check, or no frame came
    between them: the pointer moved, nothing was pressed. Prepare again with the full
    stability wait."""


async def click_element(
    ctx: Ctx,
    index: int,
    x: float,
    y: float,
    *,
    check_release: bool = True,
    clicks: Clicks = Clicks(),
) -> None:
    """Click element ``[index]`` at (x, y), top-level viewport CSS pixels, with the checks
    above. Raises :class:`Refused` (``target_changed``) naming what was under the pointer,
    and :class:`Unsettled` before pressing when a deferred stability check failed. With
    ``check_release`` false the caller asks :func:`release_check` itself (a click does, while
    the page settles)."""
    # Inside a cross-origin frame the checks run in our world in that frame (js() routes a
    # call whose first argument is the index), in the frame's own coordinates.
    # (a frame may be scaled or rotated: its points map through its transforms, both ways).
    mapping = FrameMap(())
    route = frame_route(ctx.current, index)
    if route is not None:
        mapping = await frame_map(ctx.current, route, index, timeout=max(ctx.remaining(), 0.5))
    # The hover check goes right behind the move: it waits in the page for the move's frame
    # (press.js ``hoverCheck`` with ``withMove``), so no round trip separates the two.
    hover = await _behind(
        ctx,
        index,
        _move(ctx, x, y),
        js(
            ctx,
            "hoverCheck",
            index,
            *mapping.to_frame(x, y),
            {"withMove": True},
            await_promise=True,
        ),
        "moveAnswered",
    )
    if hover.get("moved"):
        raise Unsettled()
    if not hover.get("ok"):
        raise Refused(
            f"{ctx.name} was not done: the target changed under the pointer: when the pointer "
            f"reached [{index}], {hover.get('what')} was there instead (nothing was pressed)",
            error=f"the target changed under the pointer: {hover.get('what')} was there",
            code="target_changed",
        )
    ctx.mark_dispatched()
    for n in range(1, clicks.count + 1):
        if n > 1:
            # A double click's second press: the first release went to the target (checked
            # by the first _press_once, which always checks its release when more follow),
            # and the target is still the topmost element at the point.
            again = await js(ctx, "pressAgain", index, *mapping.to_frame(x, y))
            if not again.get("ok"):
                raise Refused(
                    f"{ctx.name} was not done: the target changed between the two clicks: "
                    f"{again.get('what')} was under the pointer for the second one",
                    error=f"the target changed under the pointer: {again.get('what')} was there",
                    code="target_changed",
                )
        last = n == clicks.count
        await _press_once(ctx, index, x, y, mapping, clicks, n, check_release or not last)


async def _press_once(
    ctx: Ctx,
    index: int,
    x: float,
    y: float,
    mapping: FrameMap,
    clicks: Clicks,
    n: int,
    check_release: bool,
) -> None:
    """Press number ``n`` of ``clicks`` at (x, y), armed by the hover check (or pressAgain)."""
    # The press; then our world checks who got it, and holds the release to that element:
    # a pointer capture the page asked for in its pointerdown handler (to send the release,
    # and so the click, elsewhere) has not taken effect yet, and is replaced (press.js
    # ``holdRelease``). A dialog opened by the page blocks the press until it is answered
    # (by our dialog task), so it waits as long as the action may. The check goes right
    # behind the press and waits in the page for the press's events to be over.
    press = await _behind(
        ctx,
        index,
        _button(ctx, "mousePressed", x, y, clicks, n),
        js(ctx, "pressCheck", index, {"withPress": True}, await_promise=True, limit=3600.0),
        "pressAnswered",
    )
    if press.get("ok"):
        await _button(ctx, "mouseReleased", x, y, clicks, n)
        if check_release:
            strayed = await release_check(ctx, index)
            if clicks.button != "right":  # a right release clicks nothing (pointer.py)
                refuse_strayed(ctx, index, strayed)
        return
    neutral = press.get("neutral") or {}
    nx, ny = mapping.to_top(float(neutral.get("x", -10)), float(neutral.get("y", -10)))
    try:
        await _move(ctx, nx, ny, buttons=clicks.buttons)
        await _button(ctx, "mouseReleased", nx, ny, clicks, n)
    finally:
        await js(ctx, "pressDone", index)
    landed = "the release was captured by" if press.get("captured") else "the press landed on"
    raise Refused(
        f"{ctx.name} was not done: the target changed under the pointer: {landed} "
        f"{press.get('what')}, not [{index}]; handrail released the button elsewhere so no "
        "click happened",
        error=f"the target changed under the pointer: {landed} {press.get('what')}",
        code="target_changed",
    )


async def _behind(
    ctx: Ctx, index: int, dispatch: Awaitable[None], check: Awaitable[Any], answered: str
) -> Any:
    """Run ``check`` (a call of our world that waits in the page for an input's dispatch to
    be over) sent right behind ``dispatch`` (that input). When Chrome has answered the input
    and the check is still waiting, press.js ``answered`` tells it that the dispatch is over
    (the page stopped the input's events before our listeners). Returns the check's answer;
    a failed dispatch cancels the check."""
    checking = asyncio.ensure_future(check)
    await asyncio.sleep(0)  # the check's call leaves right behind the input's
    try:
        await dispatch
    except BaseException:
        checking.cancel()
        with contextlib.suppress(WorldError, CDPError):
            await js(ctx, answered, index)
        raise
    # The check normally answers a moment after Chrome answers the input (it waits for the
    # input's frame, or for the end of the page's handlers): only a check still waiting
    # after that moment is told, so most inputs cost no call of their own for it.
    await asyncio.wait({checking}, timeout=TELL_AFTER)
    if not checking.done():
        # Its answer is not waited for: the check answers as soon as it runs.
        telling = asyncio.ensure_future(js(ctx, answered, index))
        telling.add_done_callback(_consumed)
    return await checking


def _consumed(future: asyncio.Future[Any]) -> None:
    """Retrieve a finished call's outcome nobody waits for (so asyncio does not warn)."""
    if not future.cancelled():
        future.exception()


async def release_check(ctx: Ctx, index: int) -> str | None:
    """What the release's events reached outside ``[index]``, where our world stopped them
    (press.js ``guardRelease``: a capture the page took after the press check); None when
    nothing did, or when the document is gone (the click navigated)."""
    with contextlib.suppress(WorldError, CDPError):
        verdict = await js(ctx, "releaseCheck", index)
        strayed = verdict.get("strayed") if isinstance(verdict, dict) else None
        return str(strayed) if strayed else None
    return None


def refuse_strayed(ctx: Ctx, index: int, strayed: str | None) -> None:
    """Raise :class:`Refused` when :func:`release_check` found the release elsewhere."""
    if strayed:
        raise Refused(
            f"{ctx.name} was not done: the target changed under the pointer: the release was "
            f"captured by {strayed}, not [{index}]; handrail stopped the click there",
            error=f"the target changed under the pointer: the release was captured by {strayed}",
            code="target_changed",
        )


async def move_pointer(ctx: Ctx, x: float, y: float) -> None:
    """A trusted pointer move to (x, y), top-level viewport CSS pixels, no button down: the
    page sees mouseover/mouseenter/mousemove there (hover). Nothing is checked here; the
    caller hit-tests first (:func:`core.hands.pointer.aim`)."""
    await _move(ctx, x, y)


async def _move(ctx: Ctx, x: float, y: float, *, buttons: int = 0) -> None:
    params = _move_params(x, y, buttons=buttons)
    await ctx.current.send("Input.dispatchMouseEvent", params, timeout=max(ctx.remaining(), 0.5))


async def _button(
    ctx: Ctx, kind: str, x: float, y: float, clicks: Clicks = Clicks(), n: int = 1
) -> None:
    params = _button_params(kind, x, y, clicks, n)
    await ctx.current.send("Input.dispatchMouseEvent", params, timeout=None)


def _move_params(x: float, y: float, *, buttons: int = 0) -> dict[str, Any]:
    return {
        "type": "mouseMoved",
        "x": x,
        "y": y,
        "modifiers": 0,
        "pointerType": "mouse",
        "button": "left" if buttons else "none",
        "buttons": buttons,
    }


def _button_params(
    kind: str, x: float, y: float, clicks: Clicks = Clicks(), n: int = 1
) -> dict[str, Any]:
    return {
        "type": kind,
        "x": x,
        "y": y,
        "modifiers": 0,
        "pointerType": "mouse",
        "button": clicks.button,
        "clickCount": n,
        "buttons": clicks.buttons if kind == "mousePressed" else 0,
    }


async def press_to_drag(ctx: Ctx, index: int, x: float, y: float) -> None:
    """The press that starts a drag of ``[index]`` at (x, y), top-level viewport CSS pixels,
    with the click's checks (the pointer reaches the element, then the press lands on it),
    and the button left down. Raises :class:`Refused` (``target_changed``) as a click does,
    the button released somewhere neutral; :class:`Unsettled` when the element moved."""
    hover = await _behind(
        ctx,
        index,
        _move(ctx, x, y),
        js(ctx, "hoverCheck", index, x, y, {"withMove": True}, await_promise=True),
        "moveAnswered",
    )
    if hover.get("moved"):
        raise Unsettled()
    if not hover.get("ok"):
        raise Refused(
            f"{ctx.name} was not done: the target changed under the pointer: when the pointer "
            f"reached [{index}], {hover.get('what')} was there instead (nothing was pressed)",
            error=f"the target changed under the pointer: {hover.get('what')} was there",
            code="target_changed",
        )
    ctx.mark_dispatched()
    press = await _behind(
        ctx,
        index,
        _button(ctx, "mousePressed", x, y),
        js(
            ctx,
            "pressCheck",
            index,
            {"withPress": True, "drag": True},
            await_promise=True,
            limit=3600.0,
        ),
        "pressAnswered",
    )
    if press.get("ok"):
        return
    neutral = press.get("neutral") or {}
    nx, ny = float(neutral.get("x", -10)), float(neutral.get("y", -10))
    try:
        await _move(ctx, nx, ny, buttons=1)
        await _button(ctx, "mouseReleased", nx, ny)
    finally:
        await js(ctx, "pressDone", index)
    raise Refused(
        f"{ctx.name} was not done: the press landed on {press.get('what')}, not [{index}]; "
        "handrail released the button elsewhere so nothing was dragged",
        error=f"the target changed under the pointer: the press landed on {press.get('what')}",
        code="target_changed",
    )


async def move_held(ctx: Ctx, x: float, y: float) -> None:
    """A trusted move to (x, y) with the left button held (a drag in progress)."""
    await _move(ctx, x, y, buttons=1)


async def release_at(ctx: Ctx, x: float, y: float) -> None:
    """Release the left button at (x, y), ending a drag."""
    await _button(ctx, "mouseReleased", x, y)
