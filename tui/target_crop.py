"""The approval's picture of the target: the crop with the element outlined.

Rendered with textual-image: Kitty graphics or Sixel where the terminal answers that it
supports them, coloured half-blocks otherwise (also under ``handrail serve`` and in tests,
where stdout is no terminal and textual-image would fall back to plain characters).
textual-image asks the terminal at import, so this module must be imported before the app
starts (the approval screen imports it).
"""

from __future__ import annotations

import io
import logging
from collections.abc import Callable

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
from textual_image.renderable.unicode import Image as UnicodeRenderable

from core.events import TargetCrop

# A terminal that does not answer textual-image's size query (many do not) made it print a
# warning with a traceback over the screen; its fallback size is fine, and nobody can act on it.
logging.getLogger("textual_image").setLevel(logging.ERROR)

CropImage: Callable[..., Widget] | None
try:
    from textual_image.widget import HalfcellImage
    from textual_image.widget import Image as BestImage
except ZeroDivisionError:
    # textual-image divides by the terminal's size in cells when its widgets are imported;
    # a pseudo-terminal nobody sized reports 0x0 (and every textual-image renderer divides by
    # it again). The pictures are drawn with :class:`HalfBlocks` then.
    CropImage = None
else:
    # textual-image's choice for a non-terminal is plain characters; half-blocks look better
    # and draw the same anywhere (the web view included).
    CropImage = (
        HalfcellImage if getattr(BestImage, "_Renderable", None) is UnicodeRenderable else BestImage
    )

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
    widget: Widget = (
        CropImage(image, id=id)
        if CropImage is not None
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
