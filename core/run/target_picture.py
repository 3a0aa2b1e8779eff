"""A picture of an action's target for the approval: the viewport around it, masked.

The person decides on a click better when they see the button than when they read its
digest line. :func:`crop_target` takes ``Page.captureScreenshot`` with a clip around the
element's box through :func:`core.hands.screenshot_mask.capture_masked`, so every configured
secret is covered (or there is no picture). The picture goes to the person only: it is
never sent to the model nor written to the audit log.
"""

from __future__ import annotations

import base64
import struct

from core.browser.browser import Browser, Tab
from core.browser.errors import BrowserError
from core.cdp import JSON, CDPError
from core.hands.screenshot_mask import capture_masked
from core.run.events import TargetCrop
from core.world.errors import WorldError

PAD = 8.0
"""CSS pixels of the page shown around the target at least (a quarter of its smaller side
when that is more)."""
ASPECT = 1.5
"""Width over height of the region taken: the approval draws the picture 42 cells wide and
up to 14 tall, two pixels a cell (28), so 42 by 28."""
LEGIBLE_WIDTH = 168.0
"""The widest region taken (CSS pixels). Drawn 42 cells wide, text then keeps at least a
quarter of its height in half-block pixels (16px text: 8 of them, its letters readable); a
wider target is shown from its start, where its label is."""

Rect = tuple[float, float, float, float]


def crop_region(target: Rect, viewport: tuple[float, float]) -> Rect | None:
    """The region to capture around ``target`` (x, y, width, height in viewport CSS
    pixels), at the target's own scale: the target and a little around it, shaped as the
    picture is drawn, at most ``LEGIBLE_WIDTH`` wide (so that its text stays legible in
    half-blocks: the neighbourhood enlarged, not the viewport shrunk), inside the viewport;
    None when the target is not on screen."""
    x, y, width, height = target
    view_w, view_h = viewport
    if width <= 0 or height <= 0 or x >= view_w or y >= view_h or x + width <= 0 or y + height <= 0:
        return None
    pad = max(PAD, 0.25 * min(width, height))
    region_w = min(LEGIBLE_WIDTH, max(width + 2 * pad, (height + 2 * pad) * ASPECT))
    region_h = region_w / ASPECT
    centre_y = y + height / 2
    # The target in the middle; a target wider than the region, from its start.
    centred = width + 2 * pad <= region_w
    left = x + width / 2 - region_w / 2 if centred else x - pad
    top = centre_y - region_h / 2
    # Inside the viewport (shifted, then cut where the viewport is smaller).
    left = min(max(0.0, left), max(0.0, view_w - region_w))
    top = min(max(0.0, top), max(0.0, view_h - region_h))
    return (left, top, min(region_w, view_w - left), min(region_h, view_h - top))


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height of a PNG (from its header)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or len(data) < 24:
        raise ValueError("not a PNG")
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


async def crop_target(browser: Browser, tab: Tab, target: Rect, *, timeout: float) -> TargetCrop:
    """The picture of ``target`` (viewport CSS pixels, as ``ElementInfo.rect``) in ``tab``.

    Never raises for a page problem: a refused mask, an off-screen target or a tab that
    stopped answering gives a :class:`TargetCrop` without a picture, saying why.
    """
    try:
        metrics = await tab.send("Page.getLayoutMetrics", timeout=timeout)
        view = metrics["cssVisualViewport"]
        region = crop_region(target, (float(view["clientWidth"]), float(view["clientHeight"])))
        if region is None:
            return TargetCrop(None, missing="the target is outside the visible part of the page")
        left, top, width, height = region
        # The clip is measured from the document's origin, the box from the viewport's.
        clip: JSON = {
            "x": left + float(view["pageX"]),
            "y": top + float(view["pageY"]),
            "width": width,
            "height": height,
            # Twice the page's pixels: the region is small, and opened full size (``o``) or
            # drawn by a terminal's graphics its text is then sharp.
            "scale": 2,
        }
        shot = await capture_masked(browser, tab, timeout=timeout, options={"clip": clip})
    except WorldError as exc:
        return TargetCrop(None, missing=f"no picture: {exc}")
    except (CDPError, BrowserError, TimeoutError, KeyError) as exc:
        return TargetCrop(None, missing=f"no picture: the page did not answer ({exc})")
    png = base64.b64decode(shot["data"])
    image_w, image_h = png_size(png)
    scale_x, scale_y = image_w / width, image_h / height
    x, y, w, h = target
    outline = (
        round((x - left) * scale_x),
        round((y - top) * scale_y),
        round(w * scale_x),
        round(h * scale_y),
    )
    return TargetCrop(png, outline=outline)
