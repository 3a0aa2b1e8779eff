"""Screenshots with every secret covered, or refused.

:func:`capture_masked` is the one entry point (the hands' screenshot action calls it in
place of ``Page.captureScreenshot``). In handrail's isolated world it reads each document's
text and its fields' values (this document and its same-origin frames);
:meth:`core.secrets.Secrets.spans` finds every secret in them, in any of its forms; opaque
boxes are drawn over the on-screen rectangles of those characters, page scripts are paused, the boxes are checked to be on
top, the screenshot is taken, checked again, and the boxes are removed. The image returned
(and so saved, and shown to a vision model) is the masked one.

It refuses (:class:`ScreenshotRefused`, a :class:`~core.world.WorldError`, which the hands
turn into a failed action) when a mask cannot be guaranteed: a frame on screen that our
world cannot read (another site), or boxes the page moved, hid or covered.
Without configured secrets it is a plain capture.
"""

from __future__ import annotations

import contextlib
import functools
import weakref
from pathlib import Path
from typing import Any

from core.browser import Browser, Tab
from core.cdp import JSON, CDPError
from core.secrets import Secrets
from core.world import WorldError, world_call

_registry: weakref.WeakKeyDictionary[Browser, Secrets] = weakref.WeakKeyDictionary()


class ScreenshotRefused(WorldError):
    """No screenshot was taken: a secret on screen could not be masked for sure."""


def register(browser: Browser, secrets: Secrets) -> None:
    """Mask ``secrets`` in every screenshot taken through ``browser`` from now on."""
    _registry[browser] = secrets


@functools.cache
def _mask_js() -> str:
    return (Path(__file__).parent / "screenshot_mask.js").read_text(encoding="utf-8").strip()


async def _mask(tab: Tab, name: str, *args: Any, timeout: float) -> Any:
    call = (
        "function (name, ...args) {\n"
        f"  const api = globalThis.__handrailMask || (globalThis.__handrailMask = {_mask_js()});\n"
        "  return api[name](...args);\n"
        "}"
    )
    return await world_call(tab, call, name, *args, timeout=timeout)


async def capture_masked(browser: Browser, tab: Tab, *, timeout: float) -> JSON:
    """``Page.captureScreenshot`` (PNG of the viewport) with every secret covered.

    Returns the CDP result (``{"data": base64 PNG}``). Raises :class:`ScreenshotRefused`
    with a message for the model, and CDP/world errors as the hands' other calls do.
    """
    capture: JSON = {"format": "png"}
    secrets = _registry.get(browser)
    if not secrets:
        return await tab.send("Page.captureScreenshot", capture, timeout=timeout)
    found = await _mask(tab, "collect", timeout=timeout)
    if found["unreadable"]:
        frames = ", ".join(str(f) for f in found["unreadable"][:3])
        raise ScreenshotRefused(
            f"the screenshot was refused: the page shows a frame from another site ({frames}) "
            "that handrail cannot read, so a secret in it could not be masked. Use the page "
            "text instead, or scroll the frame out of view."
        )
    spans = [
        [item["id"], start, end]
        for item in found["items"]
        for start, end in _merged(secrets.spans(str(item["text"])))
    ]
    if not spans:
        return await tab.send("Page.captureScreenshot", capture, timeout=timeout)
    await _mask(tab, "cover", spans, timeout=timeout)
    try:
        # The page's own scripts must not move or hide the boxes while the image is taken.
        await tab.send("Emulation.setScriptExecutionDisabled", {"value": True}, timeout=timeout)
        try:
            if not await _mask(tab, "verify", timeout=timeout):
                raise _moved()
            shot = await tab.send("Page.captureScreenshot", capture, timeout=timeout)
            if not await _mask(tab, "verify", timeout=timeout):
                raise _moved()
        finally:
            with contextlib.suppress(CDPError):  # a closed tab has no scripts to resume
                await tab.send("Emulation.setScriptExecutionDisabled", {"value": False})
    finally:
        await _mask(tab, "uncover", timeout=timeout)
    return shot


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _moved() -> ScreenshotRefused:
    return ScreenshotRefused(
        "the screenshot was refused: the page moved, hid or covered the boxes that mask a "
        "secret on it, so the image could have shown it. Use the page text instead."
    )
