"""Each round's screenshot: a small JPEG of the viewport in the run folder.

Replay shows the page as the round observed it. :class:`RoundShots` takes the picture
through :func:`core.hands.screenshot_mask.capture_masked` (every configured secret covered, or no
picture), scaled down to at most ``MAX_WIDTH`` pixels wide and kept under ``MAX_BYTES``,
and returns the :class:`~core.audit.records.ScreenshotRef` the round record keeps. The
pictures are for the person: the model never gets them from here.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

from core.audit.records import ScreenshotRef
from core.browser.browser import Browser
from core.browser.errors import BrowserError
from core.cdp import JSON, CDPError
from core.hands.screenshot_mask import capture_masked
from core.world.errors import WorldError

MAX_WIDTH = 800
"""Pixels: wide enough to read a page's headings, small enough for a long run's folder."""
MAX_BYTES = 150_000
QUALITIES = (60, 35)
"""JPEG qualities tried in turn until the picture fits ``MAX_BYTES``."""
FOLDER = "rounds"
SENSITIVE_ON_SCREEN = (
    "not kept: a password, one-time code or card field is on screen, and what is typed "
    "there never goes into a file"
)


class RoundShots:
    """Takes each round's screenshot for the log at ``log_path`` (files go to the run
    folder, ``<log without .jsonl>/rounds/round-NNN.jpg``)."""

    def __init__(self, browser: Browser, log_path: Path, *, timeout: float = 10.0) -> None:
        self.browser = browser
        self.base = log_path.parent
        self.folder = log_path.with_suffix("") / FOLDER
        self.timeout = timeout

    async def take(self, round: int) -> ScreenshotRef:
        """Save round ``round``'s picture of the current tab. Never raises for a page
        problem: without a picture the reference says why (a refused mask, no tab...)."""
        tab = self.browser.current
        if tab is None or tab.closed:
            return ScreenshotRef(missing="no tab to take a picture of")
        try:
            metrics = await tab.send("Page.getLayoutMetrics", timeout=self.timeout)
            view = metrics["cssVisualViewport"]
            width, height = float(view["clientWidth"]), float(view["clientHeight"])
            clip: JSON = {
                "x": float(view["pageX"]),
                "y": float(view["pageY"]),
                "width": width,
                "height": height,
                "scale": min(1.0, MAX_WIDTH / width) if width > 0 else 1.0,
            }
            data = b""
            for quality in QUALITIES:
                options: JSON = {"format": "jpeg", "quality": quality, "clip": clip}
                shot = await capture_masked(
                    self.browser, tab, timeout=self.timeout, options=options
                )
                data = base64.b64decode(shot["data"])
                if len(data) <= MAX_BYTES:
                    break
            else:
                return ScreenshotRef(
                    missing=f"the picture was over {MAX_BYTES // 1000} kB even at low quality"
                )
        except WorldError as exc:
            return ScreenshotRef(missing=f"no screenshot: {exc}")
        except (CDPError, BrowserError, TimeoutError, KeyError) as exc:
            return ScreenshotRef(missing=f"no screenshot: the page did not answer ({exc})")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            path = self.folder / f"round-{round:03d}.jpg"
            path.write_bytes(data)
        except OSError as exc:
            return ScreenshotRef(missing=f"no screenshot: cannot write it ({exc.strerror})")
        return ScreenshotRef(
            file=path.relative_to(self.base).as_posix(),
            sha256=hashlib.sha256(data).hexdigest(),
        )
