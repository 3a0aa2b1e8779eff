"""Trusted mouse input (``Input.dispatchMouseEvent``): never ``element.click()``."""

from __future__ import annotations

import asyncio

from core.page.context import Ctx

# Pointer rests on the target before pressing, as a person's does (hover menus, tooltips).
HOVER = 0.015


async def click_at(ctx: Ctx, x: float, y: float) -> None:
    """Move the pointer to (x, y) in top-level viewport CSS pixels, rest, press, release."""
    tab = ctx.current
    base = {"x": x, "y": y, "modifiers": 0, "pointerType": "mouse"}
    await tab.send(
        "Input.dispatchMouseEvent",
        {**base, "type": "mouseMoved", "button": "none", "buttons": 0},
        timeout=max(ctx.remaining(), 0.5),
    )
    # A short hover first, as a person's pointer would (hover menus, tooltips).
    await asyncio.sleep(HOVER)
    ctx.mark_dispatched()
    # A dialog opened by the page blocks these calls until it is answered (by our
    # dialog task), so they wait as long as the action may.
    press = {**base, "button": "left", "clickCount": 1}
    await tab.send(
        "Input.dispatchMouseEvent",
        {**press, "type": "mousePressed", "buttons": 1},
        timeout=None,
    )
    await tab.send(
        "Input.dispatchMouseEvent",
        {**press, "type": "mouseReleased", "buttons": 0},
        timeout=None,
    )
