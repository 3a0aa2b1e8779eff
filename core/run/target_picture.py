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

MARGIN = 48.0
"""CSS pixels of the page shown around the target on each side."""
MAX_WIDTH = 640.0
MAX_HEIGHT = 320.0
"""The largest region taken (CSS pixels); a bigger target is shown from its top-left."""

Rect = tuple[float, float, float, float]


def crop_region(target: Rect, viewport: tuple[float, float]) -> Rect | None:
    """The region to capture around ``target`` (x, y, width, height in viewport CSS
    pixels), inside the viewport and at most ``MAX_WIDTH`` x ``MAX_HEIGHT``; None when
    the target is not on screen."""
    x, y, width, height = target
    view_w, view_h = viewport
    if width <= 0 or height <= 0 or x >= view_w or y >= view_h or x + width <= 0 or y + height <= 0:
        return None
    left = max(0.0, x - MARGIN)
    top = max(0.0, y - MARGIN)
    right = min(view_w, x + width + MARGIN, left + MAX_WIDTH)
    bottom = min(view_h, y + height + MARGIN, top + MAX_HEIGHT)
    return (left, top, right - left, bottom - top)


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
            "scale": 1,
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
