"""Trusted keyboard input: key presses (``Input.dispatchKeyEvent``) and text."""

from __future__ import annotations

from typing import Any

from core.hands.ctx import Ctx
from core.keys import char_events

# Longer texts are inserted in one go, with only the last character typed as a key press
# (enough for fields that react to keyup).
KEY_BY_KEY_LIMIT = 120


async def send_keys(ctx: Ctx, events: list[dict[str, Any]]) -> None:
    """Dispatch key events to the focused element, in order."""
    ctx.mark_dispatched()
    await ctx.current.session.send_in_order(
        [("Input.dispatchKeyEvent", event) for event in events], timeout=None
    )


async def enter_text(ctx: Ctx, text: str, *, single_line: bool, whole: bool = False) -> None:
    """Key presses for what a US keyboard types, ``Input.insertText`` for the rest; a
    long text is inserted at once with only its last character pressed as a key. The
    commands go back to back (the page gets them in order): a text costs about one round
    trip, not one per key. ``whole``: all of it inserted at once (no key presses)."""
    if not text:
        return
    if whole:
        await ctx.current.session.send_in_order(
            [("Input.insertText", {"text": text})], timeout=None
        )
        ctx.mark_dispatched()
        return
    head, tail = ("", text) if len(text) <= KEY_BY_KEY_LIMIT else (text[:-1], text[-1])
    calls: list[tuple[str, dict[str, Any]]] = []
    if head:
        calls.append(("Input.insertText", {"text": head}))
    pending = ""
    for char in tail:
        events = None if (single_line and char in "\r\n") else char_events(char)
        if char == "\r":
            events = None
        if events is None:
            pending += char
            continue
        if pending:
            calls.append(("Input.insertText", {"text": pending}))
            pending = ""
        calls += [("Input.dispatchKeyEvent", event) for event in events]
    if pending:
        calls.append(("Input.insertText", {"text": pending}))
    await ctx.current.session.send_in_order(calls, timeout=None)
    ctx.mark_dispatched()
