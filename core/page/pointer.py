"""The pointer family: click and scroll."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from core.page.context import Ctx, Refused, js
from core.page.expect import TargetExpectation, check_expect, name_matches
from core.page.messages import element_label, not_actionable, position
from core.page.mouse import click_element
from core.page.navigation import follow_popup
from core.page.settle import Probe, compare, frames, probe, settle
from core.result import ActionResult
from core.world import StaleElement, UnknownIndex, WorldError


async def click(ctx: Ctx, index: int, expect: TargetExpectation | None) -> ActionResult:
    watch = ctx.watch
    # Three independent readings, in one round trip's time.
    readings: tuple[Any, ...] = await asyncio.gather(
        probe(ctx),
        js(ctx, "target", index),
        js(ctx, "toggleState", index),
        return_exceptions=True,
    )
    first, target, toggle_before = readings
    if isinstance(first, BaseException):
        raise first
    before: Probe | None = first
    await check_expect(ctx, index, expect, before, target)
    if isinstance(target, BaseException):
        raise target
    if isinstance(toggle_before, BaseException):
        raise toggle_before
    label = element_label(index, target)
    prep = await js(ctx, "prepareClick", index, {}, await_promise=True)
    if not prep.get("ok"):
        raise Refused(*not_actionable("click", label, prep), code="not_actionable")
    if expect is not None and not name_matches(expect.name, prep.get("names") or []):
        # Re-checked after scrolling and the stability wait, just before the press.
        raise Refused(
            f"click was not done: {label} was relabelled while handrail got ready",
            code="target_changed",
            error=f"target_changed: [{index}] was relabelled just before the click",
        )
    marks = watch.marks()
    popup_mark = ctx.hands.tabs.popups
    download_mark = len(ctx.hands.downloads.order)
    await click_element(ctx, index, float(prep["x"]), float(prep["y"]))
    note = await settle(ctx, marks)
    await ctx.hands.downloads.wait_since(download_mark, min(3.0, max(ctx.remaining() - 1.0, 0.0)))
    origin_tab = ctx.current
    new_tab = await follow_popup(ctx, popup_mark)
    after_origin = await probe(replace(ctx, tab=origin_tab))
    changes = compare(before, after_origin, new_tab=new_tab is not None)
    parts = [f"clicked {label}"]
    if prep.get("scrolled"):
        parts.append("(scrolled it into view first)")
    if new_tab is not None:
        parts.append(
            f"; it opened a new tab, which is now the current tab: {ctx.hands.tabs.ensure(new_tab).where()}"
        )
    if toggle_before is not None and new_tab is None:
        toggle_after = await read_toggle(ctx, index)
        if toggle_after is not None:
            kind = toggle_after.get("kind", "toggle")
            state = toggle_after.get("state")
            if state == toggle_before.get("state"):
                parts.append(f"; the {kind} is still {state}")
            else:
                parts.append(f"; the {kind} is now {state}")
    downloads = ctx.hands.downloads.names_since(download_mark)
    if downloads:
        parts.append(f"; it started a download: {', '.join(downloads)}")
    message = " ".join(parts).replace(" ;", ";")
    if note:
        message += f". Note: {note}"
    dialog_opened = len(ctx.hands.dialogs.records) > ctx.dialog_mark
    if not changes.any() and not downloads and toggle_before is None and not dialog_opened:
        message += (
            ". Nothing changed on the page: the element may not react to clicks (try another "
            "element, e.g. its parent link or button), or the page may need more time (wait)"
        )
    return ActionResult.success(message, changes)


async def read_toggle(ctx: Ctx, index: int) -> dict[str, Any] | None:
    try:
        state = await js(ctx, "toggleState", index)
    except (StaleElement, UnknownIndex, WorldError):
        return None
    return state if isinstance(state, dict) else None


async def scroll(ctx: Ctx, direction: str | None, pages: float, index: int | None) -> ActionResult:
    before = await probe(ctx)
    if index is not None:
        res = await js(ctx, "scrollToElement", index)
        state = res.get("after") or {}
        await frames(ctx)
        after = await probe(ctx)
        where = position(state)
        message = f"scrolled to [{index}] {res.get('describe', '')}; {where}"
        if not res.get("visible"):
            message += ". It is still not visible (it may be clipped by its container)"
        return ActionResult.success(message, compare(before, after))
    if direction not in (None, "up", "down"):
        raise Refused(
            f"scroll direction must be 'up' or 'down', not {direction!r}", code="bad_parameters"
        )
    pages = min(max(float(pages), 0.1), 20.0)
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
            f"nothing moved: {where} is already at the {end} ({position(a)})",
            compare(before, after),
        )
    return ActionResult.success(
        f"scrolled {where} {direction or 'down'} {pages:g} {word}; {position(a)}",
        compare(before, after),
    )
