"""The approval's picture of the target: the crop with the element outlined.

Rendered with textual-image in the graphics :mod:`tui.widgets.graphics` chooses for the terminal
(Kitty graphics, Sixel or coloured half-blocks; half-blocks under ``handrail serve`` and in
tests, where stdout is no terminal). textual-image loads with the first picture.
"""

from __future__ import annotations

import io

from PIL import Image as PILImage
from PIL import ImageDraw
from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.style import Style
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Label, Static

from core.run.events import TargetCrop
from tui.widgets import graphics

OUTLINE = (255, 64, 160)
"""A magenta no page theme uses for its own buttons; visible on light and dark pages."""


def outlined(crop: TargetCrop) -> PILImage.Image | None:
    """The crop as an image with the target's box drawn on it (None without a picture)."""
    if crop.png is None:
        return None
    image = PILImage.open(io.BytesIO(crop.png)).convert("RGB")
    x, y, w, h = crop.outline
    # Thick enough to survive the terminal's downscaling (a half-block is many pixels).
    width = max(3, image.width // 80)
    ImageDraw.Draw(image).rectangle(
        (x - width, y - width, x + w + width - 1, y + h + width - 1), outline=OUTLINE, width=width
    )
    return image


class HalfBlocks:
    """``image`` scaled to ``columns`` x ``rows`` cells, two pixels a cell (upper half block:
    the top pixel as its colour, the bottom one as its background)."""

    def __init__(self, image: PILImage.Image, columns: int, rows: int) -> None:
        self.image = image.convert("RGB").resize((columns, rows * 2))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width, height = self.image.size
        pixel = self.image.getpixel
        for y in range(0, height, 2):
            for x in range(width):
                top, bottom = pixel((x, y)), pixel((x, y + 1))
                yield Segment("▀", Style(color=_rgb(top), bgcolor=_rgb(bottom)))
            yield Segment.line()


def _rgb(value: object) -> str:
    r, g, b = value if isinstance(value, tuple) else (0, 0, 0)
    return f"rgb({r},{g},{b})"


PICTURE_COLUMNS = 42
MAX_PICTURE_ROWS = 14


def picture_rows(
    width: int, height: int, *, columns: int = PICTURE_COLUMNS, max_rows: int = MAX_PICTURE_ROWS
) -> int:
    """Rows for an image ``width`` x ``height`` shown ``columns`` wide: a cell is about
    twice as tall as it is wide (textual-image's own auto height needs a laid-out parent,
    which an auto-height modal does not give it)."""
    return max(3, min(max_rows, round(columns * height / width / 2)))


def picture(
    image: PILImage.Image,
    *,
    columns: int = PICTURE_COLUMNS,
    max_rows: int = MAX_PICTURE_ROWS,
    id: str | None = None,
) -> Widget:
    """``image`` as a widget ``columns`` wide, in the best graphics the terminal has."""
    rows = picture_rows(image.width, image.height, columns=columns, max_rows=max_rows)
    drawn = graphics.image_widget()
    widget: Widget = (
        drawn(image, id=id)
        if drawn is not None
        else Static(HalfBlocks(image, columns, rows), id=id)
    )
    widget.styles.width = columns
    widget.styles.height = rows
    return widget


class TargetPicture(Vertical):
    """The picture, or one line saying why there is none."""

    DEFAULT_CSS = """
    TargetPicture {
        width: 44;
        height: auto;
        & > .approval-heading { text-style: bold; color: $text-secondary; margin-top: 1; }
        & > #approval-crop-missing { color: $text-muted; }
    }
    """

    def __init__(self, crop: TargetCrop, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.crop = crop

    def compose(self) -> ComposeResult:
        yield Label("As it looks", classes="approval-heading")
        image = outlined(self.crop)
        if image is None:
            yield Static(Content(self.crop.missing or "no picture"), id="approval-crop-missing")
        else:
            yield picture(image, id="approval-crop-image")
