"""The drag action: press on one element, move, release on another (or by an offset), and
drop a file from the upload folder onto an element.

The input is the person's: ``Input.dispatchMouseEvent`` presses, moves in steps (a frame
of the page's between each, so a library's pointer or mouse listeners follow) and
releases. While it moves, Chrome's drag interception is on (``Input.setInterceptDrags``):
when the page starts an HTML5 drag (a ``draggable`` element, SortableJS), Chrome hands
the drag's data to us (``Input.dragIntercepted``) and the rest goes through
``Input.dispatchDragEvent`` (dragenter, dragover, drop), so the page's ``dragstart`` /
``dragover`` / ``drop`` handlers get a real DataTransfer. A file drop is that second half
alone, with the file in the drag data.

The checks are a click's, at both ends: the source as approved, in view, still, hit at its
centre, and pressed (:func:`core.hands.mouse.press_to_drag`); the destination as approved
(name and box), visible and hit at its centre (or, for an offset, the element at the end
point as approved). Just before the release (or the drop) the end point is hit-tested
again (drag.js ``dropCheck``): when the page put something else there during the drag,
nothing is dropped: the HTML5 drag is cancelled, or the pointer goes back to where it
started and is released there, and the action is refused as ``target_changed``. No end may
lie inside another site's frame, and a file drop takes only files of the upload folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.cdp import JSON, CDPError
from core.hands.ctx import Ctx, Refused, js
from core.hands.expect import TargetExpectation, check_expect
from core.hands.messages import clip, element_label, not_actionable
from core.hands.mouse import Unsettled, move_held, press_to_drag, release_at
from core.hands.pointer import aim
from core.hands.settle import compare, probe, settle_and_probe
from core.result import ActionResult
from core.world.contexts import frame_route

STEPS = 8
"""Moves between the press and the release (a frame of the page's after each)."""
START_NUDGE = 6.0
"""CSS pixels of the first move: past Chrome's drag threshold (and most libraries')."""


@dataclass(frozen=True, slots=True)
class DragSpec:
    """One drag: from element ``index`` (or the file ``path``) to element ``to``, or by
    (``dx``, ``dy``) CSS pixels. ``at`` is the element that was at the end point when an
    offset drag was approved (the gate names it; the hands check it is still there)."""

    index: int | None = None
    path: str | None = None
    to: int | None = None
    dx: float = 0.0
    dy: float = 0.0
    at: int | None = None


async def drag(
    ctx: Ctx,
    spec: DragSpec,
    expect: TargetExpectation | None,
    expect_to: TargetExpectation | None,
) -> ActionResult:
    for index in (spec.index, spec.to):
        if index is not None and frame_route(ctx.current, index) is not None:
            raise Refused(
                f"drag was not done: [{index}] is inside a frame from another site; handrail "
                "does not drag into or out of another site's frame (the data would cross sites)",
                code="refused",
                error="refused: an end of the drag is in another site's frame",
            )
    if spec.path is not None:
        return await _drop_file(ctx, spec, expect_to)
    assert spec.index is not None
    return await _drag_element(ctx, spec.index, spec, expect, expect_to)


async def _drag_element(
    ctx: Ctx,
    index: int,
    spec: DragSpec,
    expect: TargetExpectation | None,
    expect_to: TargetExpectation | None,
) -> ActionResult:
    aimed = await aim(ctx, index, expect)
    x0, y0 = aimed.x, aimed.y
    dest, dest_label, (x1, y1) = await _destination(ctx, spec, x0, y0, expect_to)
    await js(ctx, "dragBaseline", index, dest)
    marks = ctx.watch.marks()
    since = time.monotonic()
    intercepted: asyncio.Future[JSON] = ctx.current.session.expect("Input.dragIntercepted")
    await ctx.current.send("Input.setInterceptDrags", {"enabled": True})
    try:
        try:
            await press_to_drag(ctx, index, x0, y0)
        except Unsettled:
            raise Refused(
                f"drag was not done: {aimed.label} moved just before the press; try again",
                code="not_actionable",
                error="not_actionable: moving",
            ) from None
        how = await _carry(ctx, index, dest, (x0, y0), (x1, y1), intercepted)
    finally:
        intercepted.cancel()
        with contextlib.suppress(CDPError):
            await ctx.current.send("Input.setInterceptDrags", {"enabled": False})
    note, after = await settle_and_probe(ctx, marks, since=since)
    if after is None:
        after = await probe(ctx)
    effect = await _effect(ctx)
    where = f"onto {dest_label}" if spec.to is not None else f"by ({spec.dx:g}, {spec.dy:g})"
    if spec.to is None:
        where += f", to {dest_label}"
    message = f"dragged {aimed.label} {where} ({how})"
    if aimed.scrolled:
        message += " (scrolled it into view first)"
    said = _said(effect)
    changes = compare(aimed.before, after)
    if said:
        message += "; " + said
    elif not changes.any():
        message += (
            "; nothing changed on the page: the element may not be draggable (try its drag "
            "handle), or the page may want another destination"
        )
    if note:
        message += f". Note: {note}"
    return ActionResult.success(message, changes)


async def _destination(
    ctx: Ctx, spec: DragSpec, x0: float, y0: float, expect_to: TargetExpectation | None
) -> tuple[int, str, tuple[float, float]]:
    """The element the drag ends on, its label and the end point (viewport CSS pixels)."""
    if spec.to is not None:
        before = await probe(ctx)
        await check_expect(ctx, spec.to, expect_to, before)
        target = await js(ctx, "target", spec.to)
        label = element_label(spec.to, target)
        point = await js(ctx, "dropPoint", spec.to)
        if not point.get("ok"):
            message, error = not_actionable("drag", f"the destination {label}", point)
            raise Refused(message, error, code="not_actionable")
        return spec.to, label, (float(point["x"]), float(point["y"]))
    x1, y1 = x0 + spec.dx, y0 + spec.dy
    hit = await js(ctx, "pointHit", float(x1), float(y1))
    if not hit.get("ok"):
        raise Refused(
            f"drag was not done: {hit.get('reason')}; drag a shorter way, or scroll first",
            code="not_actionable",
            error=f"not_actionable: outside: {hit.get('reason')}",
        )
    chain = [int(i) for i in hit.get("chain") or []]
    if spec.at is not None and spec.at not in chain:
        raise Refused(
            f"drag was not done: the end point now holds {hit.get('describe')}, not what "
            "was approved there",
            code="target_changed",
            error=f"target_changed: the end point now holds {hit.get('describe')}",
        )
    if hit.get("sensitive"):
        raise Refused(
            f"drag was not done: it would end on a {hit.get('sensitive')} field "
            f"({hit.get('describe')}); handrail never drops anything into such a field",
            code="refused",
            error="refused: the drag ends on a sensitive field",
        )
    return (
        int(spec.at if spec.at is not None else hit["index"]),
        str(hit.get("describe")),
        (
            x1,
            y1,
        ),
    )


async def _carry(
    ctx: Ctx,
    index: int,
    dest: int,
    start: tuple[float, float],
    end: tuple[float, float],
    intercepted: asyncio.Future[JSON],
) -> str:
    """Move from ``start`` to ``end`` with the button down, and end the drag there: by a
    drop when the page started an HTML5 drag, else by the release. Returns how."""
    (x0, y0), (x1, y1) = start, end
    # A first short move toward the end starts a drag past the thresholds; then the path.
    length = max(((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5, 1.0)
    nudge = min(START_NUDGE, length)
    points = [(x0 + (x1 - x0) * nudge / length, y0 + (y1 - y0) * nudge / length)]
    points += [
        (x0 + (x1 - x0) * k / STEPS, y0 + (y1 - y0) * k / STEPS) for k in range(1, STEPS + 1)
    ]
    for n, (x, y) in enumerate(points):
        await move_held(ctx, x, y)
        await js(ctx, "dragFrame", await_promise=True)
        if intercepted.done():
            data = intercepted.result().get("data") or {}
            try:
                await _html5_drop(ctx, index, dest, (x, y), points[n + 1 :] or [(x1, y1)], data)
            finally:
                # The page still holds the button down after an intercepted drag.
                await release_at(ctx, x1, y1)
            return "an HTML5 drag and drop"
    verdict = await js(ctx, "dropCheck", index, dest, float(x1), float(y1))
    if not verdict.get("ok"):
        # Nothing is dropped there: back to the start, released where the drag began.
        for x, y in reversed(points[:-1]):
            await move_held(ctx, x, y)
        await move_held(ctx, x0, y0)
        await release_at(ctx, x0, y0)
        _changed_during(verdict)
    await release_at(ctx, x1, y1)
    return "pointer events"


async def _html5_drop(
    ctx: Ctx,
    index: int | None,
    dest: int,
    at: tuple[float, float],
    rest: list[tuple[float, float]],
    data: JSON,
) -> None:
    """dragenter where the drag is, dragover along ``rest``, then the drop on its last point
    after the end point is checked again (else the drag is cancelled and refused)."""
    await _drag_event(ctx, "dragEnter", *at, data)
    for x, y in [at, *rest, rest[-1]]:
        await _drag_event(ctx, "dragOver", x, y, data)
        await js(ctx, "dragFrame", await_promise=True)
    x1, y1 = rest[-1]
    verdict = await js(ctx, "dropCheck", index, dest, float(x1), float(y1))
    if not verdict.get("ok"):
        await _drag_event(ctx, "dragCancel", x1, y1, data)
        _changed_during(verdict)
    await _drag_event(ctx, "drop", x1, y1, data)


async def _drag_event(ctx: Ctx, kind: str, x: float, y: float, data: JSON) -> None:
    await ctx.current.send(
        "Input.dispatchDragEvent",
        {"type": kind, "x": x, "y": y, "data": data, "modifiers": 0},
        timeout=max(ctx.remaining(), 0.5),
    )


def _changed_during(verdict: dict[str, Any]) -> None:
    raise Refused(
        f"drag was not done: while it moved, the page put {verdict.get('what')} under the "
        "drop point, which is not what was approved; handrail did not drop there (the drag "
        "was cancelled)",
        code="target_changed",
        error=f"target_changed: {verdict.get('what')} came under the drop point during the drag",
    )


async def _drop_file(ctx: Ctx, spec: DragSpec, expect_to: TargetExpectation | None) -> ActionResult:
    assert spec.path is not None and spec.to is not None
    file = upload_path(ctx, spec.path)
    before = await probe(ctx)
    dest, label, (x, y) = await _destination(ctx, spec, 0.0, 0.0, expect_to)
    await js(ctx, "dragBaseline", None, dest)
    marks = ctx.watch.marks()
    since = time.monotonic()
    data: JSON = {"items": [], "files": [str(file)], "dragOperationsMask": 1}
    ctx.mark_dispatched()
    await _html5_drop(ctx, None, dest, (x, y), [(x, y)], data)
    note, after = await settle_and_probe(ctx, marks, since=since)
    if after is None:
        after = await probe(ctx)
    effect = await _effect(ctx)
    message = f"dropped the file {file.name!r} onto {label}"
    said = _said(effect)
    changes = compare(before, after)
    if said:
        message += "; " + said
    elif not changes.any():
        message += "; nothing changed on the page: it may not accept dropped files"
    if note:
        message += f". Note: {note}"
    return ActionResult.success(message, changes)


def upload_path(ctx: Ctx, path: str) -> Path:
    """``path`` resolved inside the upload folder (what ``upload_file`` may send too), or
    :class:`Refused`."""
    if ctx.hands.options.upload_dir is None:
        raise Refused(
            "drag was not done: dropping files is off in this run, as uploads are (the person "
            "can allow them with --upload-dir FOLDER)",
            code="refused",
            error="refused: no upload folder",
        )
    root = ctx.hands.options.upload_dir.resolve()
    candidate = Path(path).expanduser()
    if not candidate.is_absolute():
        candidate = root / candidate
    try:
        resolved = candidate.resolve(strict=True)
    except (OSError, RuntimeError):
        raise Refused(
            f"drag was not done: there is no file {path!r} in the upload folder",
            code="refused",
            error="refused: no such file",
        ) from None
    if not resolved.is_relative_to(root) or not resolved.is_file():
        raise Refused(
            f"drag was not done: {path!r} is not a file inside the upload folder; only files "
            "the person put there can be dropped",
            code="refused",
            error="refused: outside the upload folder",
        )
    return resolved


async def _effect(ctx: Ctx) -> dict[str, Any]:
    with contextlib.suppress(Exception):
        effect = await js(ctx, "dragEffect")
        if isinstance(effect, dict):
            return effect
    return {}


def _said(effect: dict[str, Any]) -> str:
    """What the drag moved, in words: a value, an order, a container, the drop zone's text."""
    parts: list[str] = []
    name = clip(str(effect.get("name") or ""), 40)
    if "value" in effect:
        parts.append(
            f"its value is now {effect.get('value')!r} (was {effect.get('valueBefore')!r})"
        )
    if effect.get("movedInto"):
        origin = effect.get("movedFrom")
        parts.append(
            f"{name!r} moved into {clip(str(effect['movedInto']), 60)!r}"
            + (f" (from {clip(str(origin), 60)!r})" if origin else "")
        )
    if "order" in effect:
        order = ", ".join(repr(clip(str(x), 30)) for x in effect["order"][:12])
        parts.append(f"the order there is now {order}")
    if effect.get("replaced"):
        parts.append("the page replaced the dragged element (read the new digest)")
    if "destValue" in effect:
        parts.append(
            f"the destination's value is now {effect.get('destValue')!r} "
            f"(was {effect.get('destValueBefore')!r})"
        )
    if effect.get("destText"):
        parts.append(f"the destination now reads {clip(str(effect['destText']), 120)!r}")
    return "; ".join(parts)
