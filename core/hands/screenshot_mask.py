"""Screenshots with every secret covered, or refused.

:func:`capture_masked` is the one entry point (the hands' screenshot action calls it in
place of ``Page.captureScreenshot``). With secrets configured, it first pauses the page's
scripts and CSS animations, so nothing moves until the image is taken. Then, in handrail's
isolated world (core/hands/screenshot_mask.js), it reads every document on screen: this one, its
shadow roots (closed ones found by :func:`core.world.closed_roots.find_closed_roots`) and its
same-origin frames, at any depth. :meth:`core.secrets.Secrets.spans` finds the secrets, in
any of their forms, in the documents' text, in fields (values, placeholders, option
texts) and in ``::before``/``::after``/``::marker`` content. What is drawn:

- a secret in text: an opaque box over the rectangles of those characters (offsets are
  handed to JavaScript in UTF-16 code units: after an emoji, code points would land the box
  on the wrong characters). Rendered forms that differ from the DOM text (CSS uppercase,
  letter spacing, rotation) are found and covered: the match ignores case, and the
  rectangles are the rendered ones;
- a field holding one: a box over the whole field;
- a pseudo element showing one (its content strings, ``attr()``, quotes, a string list
  marker): that pseudo element is hidden in place (it has no rectangle of its own, and may
  be drawn anywhere), with the layout unchanged;
- copies of what is covered (``text-shadow``, a ``filter`` such as a drop shadow,
  ``-webkit-box-reflect``, on the element or an ancestor): switched off for the capture;
- every graphic on screen, whether or not a secret was found in text: canvas, img, svg,
  video (its poster), object/embed and CSS images (backgrounds, border/mask images, list
  markers, ``url()`` content, counters in a page's own ``@counter-style``). Our world
  cannot read their pixels, and a page that holds a
  secret can draw it there, so they are covered whole. This keeps the screenshot useful
  (text, layout and controls stay visible); refusing every page with an image would not.

The boxes live in the top layer (a popover: above the page's dialogs, outside its filters
and opacity). Before the capture they are checked to be in place, opaque and on top, with
what they cover where it was, and the page is read again (its CSS could react to the boxes
and reveal something); after the capture they are checked again, then removed. The image
returned (and so saved, and shown to a vision model) is the masked one.

It refuses (:class:`ScreenshotRefused`, a :class:`~core.world.errors.WorldError`, which the hands
turn into a failed action) when a mask cannot be guaranteed: a frame on screen that our
world cannot read (another site), or boxes the page moved, hid, restyled or covered.
Without configured secrets it is a plain capture.

Not covered: a page that draws the secret with pixels of plain elements (a grid of
coloured divs, box shadows, gradients) or with a web font whose glyphs are other letters.
Native tooltips (``title``) and closed ``<details>`` are not drawn in a screenshot.
"""

from __future__ import annotations

import contextlib
import functools
import weakref
from typing import Any

from core.browser.browser import Browser, Tab
from core.cdp import JSON, CDPError
from core.hands import badge
from core.secrets import Secrets
from core.world.calls import world_call
from core.world.closed_roots import find_closed_roots
from core.world.errors import WorldError
from core.world.scripts import beside, script

_registry: weakref.WeakKeyDictionary[Browser, Secrets] = weakref.WeakKeyDictionary()


class ScreenshotRefused(WorldError):
    """No screenshot was taken: a secret on screen could not be masked for sure."""


def register(browser: Browser, secrets: Secrets) -> None:
    """Mask ``secrets`` in every screenshot taken through ``browser`` from now on."""
    _registry[browser] = secrets


@functools.cache
def _mask_js() -> str:
    return script(beside(__file__, "screenshot_mask.js"))


async def _mask(tab: Tab, name: str, *args: Any, timeout: float) -> Any:
    call = (
        "function (name, ...args) {\n"
        '  const api = Object.prototype.hasOwnProperty.call(globalThis, "__handrailMask")\n'
        f"    ? globalThis.__handrailMask : (globalThis.__handrailMask = {_mask_js()});\n"
        "  return api[name](...args);\n"
        "}"
    )
    return await world_call(tab, call, name, *args, timeout=timeout)


async def capture_masked(
    browser: Browser, tab: Tab, *, timeout: float, options: JSON | None = None
) -> JSON:
    """``Page.captureScreenshot`` (PNG of the viewport) with every secret covered, and
    without handrail's own in-page marks (core/hands/badge.py).

    ``options``: more ``Page.captureScreenshot`` parameters (``clip``: a region in CSS
    pixels from the document's origin, with ``scale``; ``format``; ``quality``); the mask
    is the same as for the whole viewport.

    Returns the CDP result (``{"data": base64 PNG}``) and ``masked``: how many boxes cover
    a secret in the image (0: none showed), so the model and the log can say the picture was
    masked. Raises :class:`ScreenshotRefused` with a message for the model, and CDP/world
    errors as the hands' other calls do.
    """
    async with badge.hidden(browser, tab):
        return await _capture(browser, tab, timeout=timeout, options=options)


async def _capture(browser: Browser, tab: Tab, *, timeout: float, options: JSON | None) -> JSON:
    capture: JSON = {"format": "png", **(options or {})}
    secrets = _registry.get(browser)
    if not secrets:
        return {**await tab.send("Page.captureScreenshot", capture, timeout=timeout), "masked": 0}
    # The page's own scripts must not move, hide or restyle anything from the moment we
    # read the page until the boxes are gone; its CSS animations are held still too.
    await tab.send("Emulation.setScriptExecutionDisabled", {"value": True}, timeout=timeout)
    with contextlib.suppress(CDPError):
        await tab.send("Animation.setPlaybackRate", {"playbackRate": 0}, timeout=timeout)
    try:
        await find_closed_roots(tab, timeout=timeout)
        found = await _mask(tab, "collect", True, timeout=timeout)
        if found["unreadable"]:
            frames = ", ".join(str(f) for f in found["unreadable"][:3])
            raise ScreenshotRefused(
                f"the screenshot was refused: the page shows a frame from another site ({frames}) "
                "that handrail cannot read, so a secret in it could not be masked. Use the page "
                "text instead, or scroll the frame out of view."
            )
        spans = _spans(secrets, found["items"]) + [[g, 0, 0] for g in found["graphics"]]
        if not spans:
            shot = await tab.send("Page.captureScreenshot", capture, timeout=timeout)
            return {**shot, "masked": 0}
        await _mask(tab, "cover", spans, timeout=timeout)
        try:
            if not await _mask(tab, "verify", timeout=timeout):
                raise _moved()
            # The page's CSS may react to the boxes (an added element, an attribute) and
            # show something it hid: read the page again, it must find the same.
            again = await _mask(tab, "collect", True, timeout=timeout)
            redone = _spans(secrets, again["items"]) + [[g, 0, 0] for g in again["graphics"]]
            if again["unreadable"] or not {tuple(r) for r in redone} <= {tuple(r) for r in spans}:
                raise ScreenshotRefused(
                    "the screenshot was refused: the page showed more of a secret once the "
                    "masking boxes were drawn, so the image could have shown it. Use the "
                    "page text instead."
                )
            shot = await tab.send("Page.captureScreenshot", capture, timeout=timeout)
            if not await _mask(tab, "verify", timeout=timeout):
                raise _moved()
        finally:
            await _mask(tab, "uncover", timeout=timeout)
        return {**shot, "masked": len(spans)}  # one [id, start, end] per box drawn
    finally:
        with contextlib.suppress(CDPError):  # a closed tab has no scripts to resume
            await tab.send("Animation.setPlaybackRate", {"playbackRate": 1})
            await tab.send("Emulation.setScriptExecutionDisabled", {"value": False})


def _spans(secrets: Secrets, items: list[JSON]) -> list[list[int]]:
    """``[id, start, end]`` for each secret found in the collected texts; offsets in UTF-16
    code units, as JavaScript counts them (an emoji is one character here, two there)."""
    out: list[list[int]] = []
    for item in items:
        text = str(item["text"])
        found = _merged(secrets.spans(text))
        if not found:
            continue
        if item.get("whole"):  # a field or a pseudo element: covered or hidden whole
            out.append([int(item["id"]), 0, 0])
            continue
        units = _utf16_offsets(text)
        out += [[int(item["id"]), units[start], units[end]] for start, end in found]
    return out


def _utf16_offsets(text: str) -> list[int]:
    """For each code point offset 0..len(text), the UTF-16 offset of the same place."""
    offsets = [0]
    for char in text:
        offsets.append(offsets[-1] + (2 if ord(char) > 0xFFFF else 1))
    return offsets


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
