"""Replay's fifth pane: the page as the selected round observed it.

The round record names a JPEG in the run folder (``core.audit.records.ScreenshotRef``).
The file is shown only if it lies inside that run folder and its SHA-256 is the one the
(chained) record holds; otherwise the pane says what is wrong instead of showing a picture
that may not be the one the run took.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from PIL import Image as PILImage
from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Static

from core.audit.records import ScreenshotRef
from tui.widgets.panes import Pane, dim
from tui.widgets.target_crop import picture

KEY = "screenshot"
COLUMNS = 42


@dataclass(frozen=True, slots=True)
class Shown:
    """What the pane shows: an image, or a note saying why there is none."""

    image: PILImage.Image | None
    note: Content
    absent: bool = False
    """The round has no screenshot entry at all (screenshots off, an older log)."""


def load_screenshot(log: Path, ref: ScreenshotRef | None) -> Shown:
    """The picture ``ref`` (from a round of the log at ``log``) names, checked."""
    if ref is None:
        return Shown(
            None,
            dim("no screenshot for this round (taken with --no-screenshots, or an older log)"),
            absent=True,
        )
    if ref.file is None:
        return Shown(None, Content(f"no screenshot for this round: {ref.missing}"))
    run_folder = log.with_suffix("").resolve()
    path = (log.parent / ref.file).resolve()
    if not path.is_relative_to(run_folder):
        return Shown(None, Content(f"not shown: {ref.file} lies outside this run's folder"))
    try:
        data = path.read_bytes()
    except OSError as exc:
        return Shown(None, Content(f"the screenshot file is missing: {path} ({exc.strerror})"))
    if hashlib.sha256(data).hexdigest() != ref.sha256:
        return Shown(
            None,
            Content(f"not shown: {path} is not the file the log recorded (its SHA-256 differs)"),
        )
    try:
        image = PILImage.open(path)
        image.load()
    except (OSError, ValueError) as exc:
        return Shown(None, Content(f"the screenshot file cannot be read: {exc}"))
    return Shown(image.convert("RGB"), Content(ref.file))


class ScreenshotPane(Pane):
    """A :class:`~tui.widgets.panes.Pane` holding a picture instead of text."""

    DEFAULT_CSS = """
    ScreenshotPane {
        & > #screenshot-note { width: 1fr; }
    }
    """

    def __init__(self) -> None:
        super().__init__(KEY, id=f"pane-{KEY}")

    def compose(self) -> ComposeResult:
        yield Static(dim("nothing selected"), id="screenshot-note")

    shown: Shown | None = None
    _drawn_at = 0

    def show_screenshot(self, shown: Shown) -> None:
        self.shown = shown
        for old in self.query(".screenshot-image"):
            old.remove()
        self.query_one("#screenshot-note", Static).update(shown.note)
        self.set_class(shown.absent, "-absent")
        if shown.image is not None:
            # As wide as the pane is now (a share of the screen, or all of it zoomed).
            width = self.content_size.width
            columns = width if width >= 16 else COLUMNS
            self._drawn_at = columns
            widget = picture(
                shown.image, columns=columns, max_rows=max(12, self.content_size.height - 2)
            )
            widget.add_class("screenshot-image")
            self.mount(widget, before=0)

    def on_resize(self) -> None:
        # Drawn again at the new width (zoomed, or the terminal resized).
        width = self.content_size.width
        shown = self.shown
        if shown is not None and shown.image is not None and 16 <= width != self._drawn_at:
            self.show_screenshot(shown)

    def show_note(self, note: Content) -> None:
        self.show_screenshot(Shown(None, note))
