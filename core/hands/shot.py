"""Where the latest screenshot the model saw was taken, so that its pixels map back to the
page (``click_at``): the tab and document, the image's size, the viewport it showed (CSS
pixels) and how far the page was scrolled."""

from __future__ import annotations

import struct
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ShotGeometry:
    """One screenshot's geometry. ``scale`` is image pixels per CSS pixel (the device
    scale factor, times any zoom): a point of the image is ``(x / scale, y / scale)`` in
    the viewport as it was, which was scrolled to ``(page_x, page_y)``."""

    target_id: str
    url: str
    width: int
    height: int
    view_width: float
    view_height: float
    page_x: float
    page_y: float

    @property
    def scale(self) -> float:
        return self.width / self.view_width if self.view_width > 0 else 1.0

    def to_viewport(self, x: float, y: float, page_x: float, page_y: float) -> tuple[float, float]:
        """The image point (x, y) in the viewport now, scrolled to (``page_x``, ``page_y``):
        top-level viewport CSS pixels (the same spot of the document as in the picture)."""
        scale = self.scale
        return (x / scale + self.page_x - page_x, y / scale + self.page_y - page_y)


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height of a PNG, from its header; (0, 0) when it is not one."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or len(data) < 24:
        return (0, 0)
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


@dataclass(frozen=True, slots=True)
class PointHit:
    """What the browser's hit test found at a point (drag.js ``pointHit``), for the gate:
    the element there (registered: the hands can act on it by ``index``), the indexes of it
    and its ancestors (innermost first: the gate looks for the digest's element among
    them), and what makes it unlike a click on a listed element."""

    x: float
    """The point, top-level viewport CSS pixels (what the hands press)."""
    y: float
    index: int
    chain: tuple[int, ...]
    name: str
    describe: str
    rect: tuple[float, float, float, float]
    invisible: str | None = None
    """Why a person cannot see the element hit (an invisible overlay), None when they can."""
    beneath: str | None = None
    """The visible element under an invisible one: what a picture shows there."""
    frame: str | None = None
    """The host of another site's frame the point falls in, None when it is none."""
    sensitive: str | None = None
    """``password``, ``one-time code`` or ``card`` when the element is such a field."""

    @classmethod
    def of(cls, x: float, y: float, raw: dict[str, object]) -> PointHit:
        """From drag.js ``pointHit``'s answer (``ok`` true); raises ValueError when it is
        not of that shape."""
        rect = raw.get("rect")
        chain = raw.get("chain")
        if not isinstance(rect, dict) or not isinstance(chain, list):
            raise ValueError(f"not a point hit: {raw!r}")
        box = tuple(float(rect.get(k, 0)) for k in ("x", "y", "w", "h"))

        def text(key: str) -> str | None:
            value = raw.get(key)
            return str(value) if isinstance(value, str) and value else None

        return cls(
            x=x,
            y=y,
            index=int(str(raw["index"])),
            chain=tuple(int(i) for i in chain),
            name=str(raw.get("name") or ""),
            describe=str(raw.get("describe") or ""),
            rect=(box[0], box[1], box[2], box[3]),
            invisible=text("invisible"),
            beneath=text("beneath"),
            frame=text("frame"),
            sensitive=text("sensitive"),
        )
