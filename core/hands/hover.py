"""The hover action: the pointer rests on an element, and the result says what appeared.

The pointer reaches the element only after the same checks a click makes
(:func:`core.hands.pointer.aim`: the approved element, in view, still, and the one hit at
its centre); no button is pressed. What the page shows because of it (a menu, a tooltip)
is found by comparing the elements shown before and after, in the element's neighbourhood
and in what the page inserted after the move (hover.js ``hoverBaseline``/``hoverAppeared``).
A hover never commits to anything, but it does change the page, so it is gated like a click.
"""

from __future__ import annotations

from typing import Any

from core.hands.ctx import Ctx, js
from core.hands.expect import TargetExpectation
from core.hands.messages import clip
from core.hands.mouse import move_pointer
from core.hands.pointer import aim
from core.hands.settle import compare, probe, settle
from core.result import ActionResult
from core.world.errors import StaleElement, UnknownIndex, WorldError

# Menus that open on hover often wait a moment first (jQuery UI's menus 300 ms), so the
# page's clock runs this long past the move before the page is read again.
HOVER_QUIET = 0.5

_ROLES = {
    "menu": "a menu",
    "menubar": "a menu",
    "listbox": "a list",
    "tooltip": "a tooltip",
    "dialog": "a dialog",
    "alertdialog": "a dialog",
    "tree": "a tree",
    "grid": "a grid",
}
_TAGS = {"ul": "a list", "ol": "a list", "menu": "a menu", "dialog": "a dialog", "table": "a table"}


async def hover(ctx: Ctx, index: int, expect: TargetExpectation | None) -> ActionResult:
    # A disabled button's tooltip often says why it is disabled: hovering it is allowed.
    aimed = await aim(ctx, index, expect, require_enabled=False)
    baseline = await js(ctx, "hoverBaseline", index)
    marks = ctx.watch.marks()
    ctx.mark_dispatched()
    await move_pointer(ctx, aimed.x, aimed.y)
    note = await settle(ctx, marks, quiet=HOVER_QUIET)
    appeared: list[dict[str, Any]] = []
    replaced = False
    try:
        appeared = list(await js(ctx, "hoverAppeared", index))
        await js(ctx, "target", index)
    except (StaleElement, UnknownIndex):
        replaced = True
    except WorldError:
        pass  # a new document: the URL change says so
    after = await probe(ctx)
    changes = compare(aimed.before, after)
    parts = [f"hovered {aimed.label}"]
    if aimed.scrolled:
        parts.append(" (scrolled it into view first)")
    if appeared:
        parts.append("; it showed " + "; ".join(_appeared(item) for item in appeared))
        parts.append(" (the pointer stays there; moving it away may close what opened)")
    title = str(baseline.get("title") or "")
    if title and not any(title in str(item.get("text") or "") for item in appeared):
        parts.append(f"; its tooltip (title) reads {title!r}")
    if replaced and not changes.url_changed:
        parts.append(
            f"; the page replaced [{index}] when the pointer reached it: use the indexes of "
            "the new page state"
        )
    message = "".join(parts)
    if note:
        message += f". Note: {note}"
    if not appeared and not title and not changes.any():
        message += (
            ". Nothing appeared and nothing changed: this element does not react to hover "
            "(try clicking it, or hover its parent menu item)"
        )
    return ActionResult.success(message, changes)


def _appeared(item: dict[str, Any]) -> str:
    """``a menu with 'PDF', 'HTML'`` or ``<div> 'Saved 2 minutes ago'``."""
    role, tag = str(item.get("role") or ""), str(item.get("tag") or "element")
    what = _ROLES.get(role) or _TAGS.get(tag) or f"<{tag}>"
    items = [clip(str(t), 40) for t in item.get("items") or []]
    if len(items) > 1 or (items and what != f"<{tag}>"):
        more = int(item.get("more") or 0)
        listed = ", ".join(repr(t) for t in items) + (f" and {more} more" if more else "")
        return f"{what} with {listed}"
    text = clip(str(item.get("text") or ""), 100)
    return f"{what} {text!r}" if text else what
