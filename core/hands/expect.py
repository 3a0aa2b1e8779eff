"""What the person approved, and the check that the target is still that before acting."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.eyes.snapshot import unescape_page_text
from core.hands.ctx import Ctx, Refused, js
from core.hands.messages import clip, fmt_rect
from core.hands.settle import Probe
from core.world.errors import StaleElement, UnknownIndex

# How far a target may have moved since approval before it counts as a different target.
RECT_TOLERANCE_PX = 4.0


@dataclass(frozen=True, slots=True)
class TargetExpectation:
    """What the person approved: the tab's URL and the element's index, accessible name and
    rectangle (x, y, width, height in top-level viewport CSS pixels) as the digest showed."""

    url: str
    index: int
    name: str
    rect: tuple[float, float, float, float]


async def check_expect(
    ctx: Ctx,
    index: int,
    expect: TargetExpectation | None,
    before: Probe | None,
    target: dict[str, Any] | BaseException | None = None,
) -> None:
    """Raise Refused (code ``target_changed``) when the target is not what was approved.

    ``target``: what ``js(ctx, "target", index)`` gave (or raised), when the caller already
    read it; otherwise it is read here."""
    if expect is None:
        return
    url = before.url if before is not None else (ctx.tab.url if ctx.tab else "")
    if url != expect.url:
        raise Refused(
            f"{ctx.name} was not done: the page changed since it was approved "
            f"(it is now at {url}, approved at {expect.url})",
            code="target_changed",
            error=f"target_changed: the tab is now at {url} (approved at {expect.url})",
        )
    if index != expect.index:
        raise Refused(
            f"{ctx.name} was not done: element [{index}] is not the approved [{expect.index}]",
            code="target_changed",
            error=f"target_changed: index {index} differs from the approved [{expect.index}]",
        )
    try:
        info = await js(ctx, "target", index) if target is None else target
        if isinstance(info, BaseException):
            raise info
    except (StaleElement, UnknownIndex) as exc:
        raise Refused(
            f"{ctx.name} was not done: {exc}",
            code="target_changed",
            error=f"target_changed: element [{index}] is no longer on the page",
        ) from exc
    if not name_matches(expect.name, str(info.get("name", ""))):
        now = clip(str(info.get("name", "")), 80)
        raise Refused(
            f"{ctx.name} was not done: element [{index}] was relabelled: it is now named {now!r} "
            f"(approved as {clip(expect.name, 80)!r})",
            code="target_changed",
            error=f"target_changed: [{index}] was relabelled from {clip(expect.name, 80)!r} to {now!r}",
        )
    rect = info.get("rect") or {}
    got = (
        float(rect.get("x", 0)),
        float(rect.get("y", 0)),
        float(rect.get("w", 0)),
        float(rect.get("h", 0)),
    )
    if any(abs(a - b) > RECT_TOLERANCE_PX for a, b in zip(got, expect.rect, strict=True)):
        raise Refused(
            f"{ctx.name} was not done: element [{index}] moved or changed size since approval "
            f"(was at {fmt_rect(expect.rect)}, now at {fmt_rect(got)})",
            code="target_changed",
            error=f"target_changed: [{index}] moved from {fmt_rect(expect.rect)} to {fmt_rect(got)}",
        )


def normalise_name(name: str) -> str:
    # The digest escapes what could open a tag or an index (&lt; &#91; &amp;), marks role
    # words (꞉) and cuts long names; logs from before issue 26 used ‹ › ［ ］.
    table = str.maketrans({"‹": "<", "›": ">", "［": "[", "］": "]", "꞉": ":"})
    text = " ".join(unescape_page_text(name).translate(table).split()).lower()
    return text.removesuffix("…").strip()


def name_matches(expected: str, name: str) -> bool:
    """Whether the element's name now (the eyes' one naming, core/eyes/naming.js) is the
    name the person approved: the same once the digest's escaping is undone, or the digest
    cut it short, or it differs by little more than its ending."""
    want = normalise_name(expected)
    if not want:
        return True
    got = normalise_name(name)
    if got == want or (got.startswith(want) and expected.rstrip().endswith("…")):
        return True
    return bool(
        got
        and (got.startswith(want) or want.startswith(got))
        and min(len(got), len(want)) >= 0.9 * max(len(got), len(want))
    )
