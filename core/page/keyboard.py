"""Trusted keyboard input: key presses (``Input.dispatchKeyEvent``) and text."""

from __future__ import annotations

from typing import Any

from core.keys import char_events
from core.page.context import Ctx

# Longer texts are inserted in one go, with only the last character typed as a key press
# (enough for fields that react to keyup).
KEY_BY_KEY_LIMIT = 120


async def send_keys(ctx: Ctx, events: list[dict[str, Any]]) -> None:
    """Dispatch key events to the focused element, in order."""
    ctx.mark_dispatched()
    for event in events:
        await ctx.current.send("Input.dispatchKeyEvent", event, timeout=None)


async def enter_text(ctx: Ctx, text: str, *, single_line: bool) -> None:
    """Key presses for what a US keyboard types, ``Input.insertText`` for the rest; a
    long text is inserted at once with only its last character pressed as a key."""
    tab = ctx.current
    if not text:
        return
    head, tail = ("", text) if len(text) <= KEY_BY_KEY_LIMIT else (text[:-1], text[-1])
    if head:
        await tab.send("Input.insertText", {"text": head}, timeout=None)
    pending = ""
    for char in tail:
        events = None if (single_line and char in "\r\n") else char_events(char)
        if char == "\r":
            events = None
        if events is None:
            pending += char
            continue
        if pending:
            await tab.send("Input.insertText", {"text": pending}, timeout=None)
            pending = ""
        for event in events:
            await tab.send("Input.dispatchKeyEvent", event, timeout=None)
    if pending:
        await tab.send("Input.insertText", {"text": pending}, timeout=None)
    ctx.mark_dispatched()
