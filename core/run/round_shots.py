"""Each round's screenshot: a small JPEG of the viewport in the run folder.

Replay shows the page as the round observed it. :class:`RoundShots` takes the picture
through :func:`core.hands.screenshot_mask.capture_masked` (every configured secret covered, or no
picture), scaled down to at most ``MAX_WIDTH`` pixels wide and kept under ``MAX_BYTES``,
and returns the :class:`~core.audit.records.ScreenshotRef` the round record keeps. The
pictures are for the person: the model never gets them from here.

Each picture is a new file in a folder of this user's, reached without following a link
(:meth:`RoundShots.keep`): the names are predictable, and a link planted at ``rounds/`` or
at ``round-001.jpg`` must not put the picture, or overwrite a file, outside the run folder.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import hashlib
import os
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
            masked = 0
            for quality in QUALITIES:
                options: JSON = {"format": "jpeg", "quality": quality, "clip": clip}
                shot = await capture_masked(
                    self.browser, tab, timeout=self.timeout, options=options
                )
                data = base64.b64decode(shot["data"])
                masked = int(shot.get("masked") or 0)
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
        return self.keep(round, data, masked=masked)

    def keep(self, round: int, data: bytes, *, masked: int = 0) -> ScreenshotRef:
        """Write round ``round``'s picture ``data`` as ``rounds/round-NNN.jpg``, a new file.

        Never follows a link at the run folder, ``rounds/`` or the file, and never writes
        into a file that was already there: the reference then says why there is no
        picture. Never raises for the disk."""
        name = f"round-{round:03d}.jpg"
        try:
            self._write(name, data)
        except FileExistsError:
            return ScreenshotRef(
                missing=f"no screenshot: {FOLDER}/{name} was already there, and a round's "
                "picture is only written to a new file"
            )
        except OSError as exc:
            return ScreenshotRef(missing=f"no screenshot: cannot write it ({exc.strerror})")
        return ScreenshotRef(
            file=(self.folder / name).relative_to(self.base).as_posix(),
            sha256=hashlib.sha256(data).hexdigest(),
            masked=masked,
        )

    def _write(self, name: str, data: bytes) -> None:
        # The session made the run folder; used alone (tests, tools) it is made here.
        with contextlib.suppress(FileExistsError):
            self.folder.parent.mkdir(mode=0o700, parents=True)
        run_fd = _own_folder(self.folder.parent)
        try:
            with contextlib.suppress(FileExistsError):
                os.mkdir(FOLDER, 0o700, dir_fd=run_fd)
            rounds_fd = _own_folder(FOLDER, dir_fd=run_fd)
        finally:
            os.close(run_fd)
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
            fd = os.open(name, flags, 0o600, dir_fd=rounds_fd)
        finally:
            os.close(rounds_fd)
        with open(fd, "wb") as file:
            file.write(data)


def _own_folder(path: str | Path, *, dir_fd: int | None = None) -> int:
    """An open descriptor of the folder at ``path``, which must be a real folder (not a
    link to one) owned by this user. Raises OSError saying which it is not."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise OSError(exc.errno, f"{path} is a link or not a folder") from exc
        raise
    if os.fstat(fd).st_uid != os.geteuid():
        os.close(fd)
        raise OSError(errno.EPERM, f"{path} belongs to another user")
    return fd
