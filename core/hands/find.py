"""find_text: where a text appears on the whole page, beyond what the digest lists.

Read-only: one digest of the current tab with no listing margin (the whole page, every
frame the eyes read), searched line by line with case and spacing ignored. A match is
named by the element that holds it (its index, which the model can act on) or by the text
line it is in.
"""

from __future__ import annotations

import re

from core.eyes.snapshot import SnapshotOptions, take_snapshot, unescape_page_text
from core.hands.ctx import Ctx, Refused
from core.hands.messages import clip
from core.result import ActionResult

MAX_SHOWN = 10
"""Matches listed in the result; more are counted."""

_WHOLE_PAGE = SnapshotOptions(offscreen_margin=1_000.0, max_chars=400_000)


_CLOSE_AT_END = re.compile(r"</[a-z][a-z0-9-]*>$")


def _folded(text: str) -> str:
    return " ".join(unescape_page_text(text).split()).casefold()


async def find_text(ctx: Ctx, text: str) -> ActionResult:
    needle = " ".join(text.split()).casefold()
    if not needle:
        raise Refused("find_text was not done: the text to find is empty", code="bad_parameters")
    snapshot = await take_snapshot(ctx.current, options=_WHOLE_PAGE)
    # (A line that is an element's alone shows it without the closing tag.)
    by_line = {_CLOSE_AT_END.sub("", e.line): e for e in snapshot.elements.values()}
    found: list[str] = []
    for line in snapshot.text.splitlines():
        if needle not in _folded(line):
            continue
        element = by_line.get(line)
        if element is not None:
            where = "in view" if element.in_viewport else "out of view: click scrolls to it"
            found.append(f"{clip(line, 160)} (element [{element.index}], {where})")
        else:
            found.append(f"{clip(line, 160)!r} (page text)")
    shown = f"{text!r}"
    if not found:
        return ActionResult.success(f"{shown} is not on this page (its frames included)")
    more = f"; and {len(found) - MAX_SHOWN} more" if len(found) > MAX_SHOWN else ""
    return ActionResult.success(
        f"found {shown} {len(found)} time{'s' if len(found) != 1 else ''}: "
        + "; ".join(found[:MAX_SHOWN])
        + more
    )
