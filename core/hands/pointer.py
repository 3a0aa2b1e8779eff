"""The pointer family: click, and the hit test every pointer action runs first (:func:`aim`)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, replace
from typing import Any

from core.cdp import CDPError
from core.hands.ctx import Ctx, Refused, js
from core.hands.expect import TargetExpectation, check_expect, name_matches
from core.hands.messages import element_label, not_actionable
from core.hands.mouse import Clicks, Unsettled, click_element, refuse_strayed, release_check
from core.hands.navigation import follow_popup
from core.hands.settle import Probe, compare, probe, probe_of, settle_and_probe
from core.result import ActionResult
from core.world.contexts import frame_route
from core.world.errors import StaleElement, UnknownIndex, WorldError


@dataclass(frozen=True, slots=True)
class Aim:
    """Where a pointer action may land: the element checked as approved, scrolled into view,
    visible, still, and hit-tested at ``(x, y)`` (top-level viewport CSS pixels)."""

    before: Probe | None
    label: str
    x: float
    y: float
    scrolled: bool
    toggle: dict[str, Any] | None
    """The element's toggle state before (checkbox, switch...), None when it has none."""


async def aim(
    ctx: Ctx,
    index: int,
    expect: TargetExpectation | None,
    *,
    require_enabled: bool = True,
    defer_stable: bool = False,
) -> Aim:
    """The checks a click makes before the pointer moves, for any pointer action (``ctx.name``
    words the refusals). Raises :class:`Refused`: ``target_changed`` when the element is not
    the approved one, ``not_actionable`` when it is hidden, disabled (unless
    ``require_enabled`` is false), moving, or covered at its centre. With ``defer_stable``
    the element is not yet known to be still: the caller clicks it with :func:`press`."""
    # Four readings at once: the probe, the target and its toggle state for the approval
    # check, and the click's own preparation, which moves nothing (an element outside the
    # view is scrolled to only once the check passed).
    options = _prepare_options(require_enabled=require_enabled, defer_stable=defer_stable)
    early_options = {**options, "noScroll": True}
    readings: tuple[Any, ...] | None = await _one_call_readings(ctx, index, early_options)
    if readings is None:
        readings = await asyncio.gather(
            probe(ctx),
            js(ctx, "target", index),
            js(ctx, "toggleState", index),
            js(ctx, "prepareClick", index, early_options, await_promise=True),
            return_exceptions=True,
        )
    first, target, toggle_before, early = readings
    if isinstance(first, BaseException):
        raise first
    before: Probe | None = first
    await check_expect(ctx, index, expect, before, target)
    if isinstance(target, BaseException):
        raise target
    if isinstance(toggle_before, BaseException):
        raise toggle_before
    if isinstance(early, BaseException):
        raise early
    label = element_label(index, target)
    if early.get("needsScroll"):
        prep = await prepare(
            ctx, index, label, expect, require_enabled=require_enabled, defer_stable=defer_stable
        )
    else:
        prep = _prepared(ctx, index, label, expect, early)
    return Aim(
        before=before,
        label=label,
        x=float(prep["x"]),
        y=float(prep["y"]),
        scrolled=bool(prep.get("scrolled")),
        toggle=toggle_before if isinstance(toggle_before, dict) else None,
    )


async def _one_call_readings(
    ctx: Ctx, index: int, options: dict[str, Any]
) -> tuple[Probe | None, Any, Any, Any] | None:
    """:func:`aim`'s four readings in one call of our world (actionability.js ``aimReadings``), for
    an element of the top document; None for one inside a cross-origin frame (whose world
    is not the probe's) or when the call failed: the caller reads them one by one, which
    words each failure as its own."""
    if frame_route(ctx.current, index) is not None:
        return None
    try:
        raw = await js(ctx, "aimReadings", index, options, await_promise=True)
        return probe_of(ctx, raw["probe"]), raw["target"], raw["toggle"], raw["prep"]
    except (StaleElement, UnknownIndex, WorldError, CDPError, KeyError, TypeError, ValueError):
        return None


async def prepare(
    ctx: Ctx,
    index: int,
    label: str,
    expect: TargetExpectation | None,
    *,
    require_enabled: bool = True,
    defer_stable: bool = False,
) -> dict[str, Any]:
    """actionability.js ``prepareClick`` (scrolled into view, visible, enabled, still, hit at its
    centre): its answer, with ``x``/``y`` top-level viewport CSS pixels. ``defer_stable``
    leaves the second stability reading to the hover check (:func:`press`). Raises
    :class:`Refused` as :func:`aim`."""
    options = _prepare_options(require_enabled=require_enabled, defer_stable=defer_stable)
    prep: dict[str, Any] = await js(ctx, "prepareClick", index, options, await_promise=True)
    return _prepared(ctx, index, label, expect, prep)


def _prepare_options(*, require_enabled: bool, defer_stable: bool) -> dict[str, Any]:
    options: dict[str, Any] = {} if require_enabled else {"requireEnabled": False}
    if defer_stable:
        options["deferStable"] = True
    return options


def _prepared(
    ctx: Ctx, index: int, label: str, expect: TargetExpectation | None, prep: dict[str, Any]
) -> dict[str, Any]:
    """``prepareClick``'s answer, or :class:`Refused` as :func:`prepare` says."""
    if not prep.get("ok"):
        raise Refused(*not_actionable(ctx.name, label, prep), code="not_actionable")
    if expect is not None and not name_matches(expect.name, str(prep.get("name", ""))):
        # Re-checked after scrolling and the stability wait, just before the pointer moves.
        raise Refused(
            f"{ctx.name} was not done: {label} was relabelled while handrail got ready",
            code="target_changed",
            error=f"target_changed: [{index}] was relabelled just before the {ctx.name}",
        )
    return prep


async def press(
    ctx: Ctx,
    index: int,
    label: str,
    x: float,
    y: float,
    expect: TargetExpectation | None,
    *,
    check_release: bool = True,
    clicks: Clicks = Clicks(),  # noqa: B008 (frozen)
) -> None:
    """Click ``[index]`` at (x, y) as prepared with ``defer_stable`` (:func:`prepare`): the
    hover check a frame after the move completes the stability check. When the element
    moved, or no frame came in between, it is prepared again with the whole stability wait
    (refused if it keeps moving) and the pointer goes to its new centre. ``check_release``:
    as :func:`core.hands.mouse.click_element`."""
    try:
        await click_element(ctx, index, x, y, check_release=check_release, clicks=clicks)
    except Unsettled:
        prep = await prepare(ctx, index, label, expect)
        x, y = float(prep["x"]), float(prep["y"])
        await click_element(ctx, index, x, y, check_release=check_release, clicks=clicks)


async def click(
    ctx: Ctx,
    index: int,
    expect: TargetExpectation | None,
    clicks: Clicks = Clicks(),  # noqa: B008 (frozen)
) -> ActionResult:
    watch = ctx.watch
    aimed = await aim(ctx, index, expect, defer_stable=True)
    before, label, toggle_before = aimed.before, aimed.label, aimed.toggle
    marks = watch.marks()
    popup_mark = ctx.hands.tabs.popups
    download_mark = len(ctx.hands.downloads.order)
    since = time.monotonic()
    await press(ctx, index, label, aimed.x, aimed.y, expect, check_release=False, clicks=clicks)
    # Where the release went is read while the page settles (the answer is ready at once).
    checked = asyncio.create_task(release_check(ctx, index))
    try:
        note, after_settle = await settle_and_probe(ctx, marks, since=since)
    finally:
        strayed = await checked
    # A right click's release clicks nothing: the menu its press opened under the pointer
    # gets the release (our world stopped it there), which is what a person sees happen.
    if clicks.button != "right":
        refuse_strayed(ctx, index, strayed)
    await ctx.hands.downloads.wait_since(download_mark, min(3.0, max(ctx.remaining() - 1.0, 0.0)))
    origin_tab = ctx.current
    new_tab = await follow_popup(ctx, popup_mark)
    if (
        after_settle is not None
        and new_tab is None
        and len(ctx.hands.downloads.order) == download_mark
    ):
        after_origin: Probe | None = after_settle
    else:
        after_origin = await probe(replace(ctx, tab=origin_tab))
    changes = compare(before, after_origin, new_tab=new_tab is not None)
    parts = [f"{clicks.verb} {label}"]
    if aimed.scrolled:
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
