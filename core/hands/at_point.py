"""click_at: a click on a point of the latest screenshot, for what has no element in the
digest (a canvas app, a map, an unnamed icon).

The point is in the screenshot's own pixels: it maps to the viewport through the
screenshot's scale (device pixels per CSS pixel) and the scroll position then and now
(:class:`core.hands.shot.ShotGeometry`), in the same tab and document only. What is there
is named by the browser's hit test through shadow roots and same-origin frames (drag.js
``pointHit``), and the gate treats the action as a click on that element (or on the
digest's element around it). The click itself is a click's: the element hit as approved,
visible, enabled and still, the one hit at the point when the pointer gets there, the
press landing on it and the release too. Never into another site's frame (our world
cannot see what is there), never through an invisible element (what the picture shows is
not what would get the click).
"""

from __future__ import annotations

import asyncio
import time

from core.hands.ctx import Ctx, Refused, js
from core.hands.expect import TargetExpectation, check_expect
from core.hands.messages import clip, not_actionable
from core.hands.mouse import Unsettled, click_element, refuse_strayed, release_check
from core.hands.navigation import follow_popup
from core.hands.settle import compare, probe, settle_and_probe
from core.hands.shot import PointHit
from core.result import ActionResult


async def locate(ctx: Ctx, x: float, y: float) -> PointHit:
    """What is at (x, y) of the latest screenshot now. Raises :class:`Refused` when there
    is no screenshot of this page, the point is off it, or no longer in the viewport."""
    shot = ctx.hands.last_shot
    if shot is None:
        raise Refused(
            f"{ctx.name} was not done: there is no screenshot yet; click_at takes a point of "
            "the latest screenshot: take one with `screenshot` first",
            code="refused",
            error="refused: no screenshot yet",
        )
    if shot.target_id != ctx.current.target_id or shot.url != ctx.current.url:
        raise Refused(
            f"{ctx.name} was not done: the latest screenshot shows another page or tab "
            f"({shot.url}); take a new screenshot of this one first",
            code="refused",
            error="refused: the screenshot is of another page",
        )
    if not (0 <= x < shot.width and 0 <= y < shot.height):
        raise Refused(
            f"{ctx.name} was not done: ({x:g}, {y:g}) is outside the screenshot, which is "
            f"{shot.width}x{shot.height} pixels",
            code="bad_parameters",
            error="bad_parameters: outside the screenshot",
        )
    metrics = await ctx.current.send(
        "Page.getLayoutMetrics", timeout=max(min(ctx.remaining(), 10.0), 0.5)
    )
    view = metrics["cssVisualViewport"]
    vx, vy = shot.to_viewport(x, y, float(view["pageX"]), float(view["pageY"]))
    raw = await js(ctx, "pointHit", float(vx), float(vy))
    if not raw.get("ok"):
        raise Refused(
            f"{ctx.name} was not done: the page scrolled since the screenshot and that point "
            f"is no longer in view ({raw.get('reason')}); take a new screenshot",
            code="not_actionable",
            error=f"not_actionable: outside: {raw.get('reason')}",
        )
    return PointHit.of(vx, vy, raw)


def refuse_hit(ctx: Ctx, hit: PointHit) -> None:
    """What click_at never clicks, whoever approved it: another site's frame, and an
    element a person cannot see (an invisible overlay over what the picture shows)."""
    if hit.frame:
        raise Refused(
            f"{ctx.name} was not done: that point is inside a frame from {hit.frame}, whose "
            "content handrail cannot check; use `click` with an index the digest lists in "
            "that frame",
            code="refused",
            error=f"refused: the point is in another site's frame ({hit.frame})",
        )
    if hit.invisible:
        seen = f" over {hit.beneath}" if hit.beneath else ""
        raise Refused(
            f"{ctx.name} was not done: at that point an invisible element ({hit.describe}: "
            f"{hit.invisible}) lies{seen} and would get the click instead of what the "
            "screenshot shows",
            code="not_actionable",
            error=f"not_actionable: an invisible element covers the point: {hit.describe}",
        )


async def click_at(ctx: Ctx, x: float, y: float, expect: TargetExpectation | None) -> ActionResult:
    hit = await locate(ctx, x, y)
    refuse_hit(ctx, hit)
    before = await probe(ctx)
    if expect is not None and expect.index not in hit.chain:
        raise Refused(
            f"{ctx.name} was not done: the point now holds {hit.describe}, not what was "
            "approved there",
            code="target_changed",
            error=f"target_changed: the point now holds {hit.describe}",
        )
    index = expect.index if expect is not None else hit.index
    await check_expect(ctx, index, expect, before)
    label = f"{hit.describe}" + (f" named {clip(hit.name, 60)!r}" if hit.name else "")
    marks = ctx.watch.marks()
    popup_mark = ctx.hands.tabs.popups
    since = time.monotonic()
    for attempt in range(2):
        prep = await js(ctx, "prepareAt", index, float(hit.x), float(hit.y), await_promise=True)
        if not prep.get("ok"):
            message, error = not_actionable(ctx.name, label, prep)
            raise Refused(message, error, code="not_actionable")
        try:
            await click_element(ctx, index, hit.x, hit.y, check_release=False)
            break
        except Unsettled:
            if attempt:
                raise Refused(
                    f"{ctx.name} was not done: {label} kept moving",
                    code="not_actionable",
                    error="not_actionable: moving",
                ) from None
    checked = asyncio.create_task(release_check(ctx, index))
    try:
        note, after = await settle_and_probe(ctx, marks, since=since)
    finally:
        strayed = await checked
    refuse_strayed(ctx, index, strayed)
    new_tab = await follow_popup(ctx, popup_mark)
    if after is None or new_tab is not None:
        after = await probe(ctx)
    changes = compare(before, after, new_tab=new_tab is not None)
    message = f"clicked at ({x:g}, {y:g}) of the screenshot, on {label}"
    if new_tab is not None:
        message += f"; it opened a new tab, which is now the current tab: {ctx.hands.tabs.ensure(new_tab).where()}"
    if note:
        message += f". Note: {note}"
    if not changes.any():
        message += ". Nothing changed that handrail could read (a canvas may have redrawn: take a screenshot to see)"
    return ActionResult.success(message, changes)
