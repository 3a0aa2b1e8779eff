"""A very long text in a pane, rendered a screenful at a time.

A ``Static`` lays out its whole text on every refresh: a 5 MB model reply was wrapped about
a hundred times while replay opened (over a minute, ~1 GB). This view finds the line
offsets once, counts the rows each line takes at the current width, and cuts and renders
only the rows on screen, behind a small cache (the way ``RoundTimeline`` renders
rows, and toolong renders log lines).

Rows are cut by characters, so a line of wide characters may be cropped rather than wrapped
exactly: acceptable for the very long texts this view is for.
"""

from __future__ import annotations

import bisect

from textual import events
from textual.cache import LRUCache
from textual.content import Content
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.visual import Visual

LAZY_CHARS = 100_000
"""Texts longer than this many characters are shown by :class:`LazyText`."""


class LazyText(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    LazyText { width: 1fr; height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._bounds: list[tuple[int, int]] = []
        """Each line's (start, end) offsets in the text, newline excluded."""
        self._starts: list[int] = [0]
        """Row at which each line starts at ``_width``; the last item is the row count."""
        self._width = 0
        self._cache: LRUCache[tuple[int, int], list[Strip]] = LRUCache(128)
        self.text = Content("")

    def show(self, text: Content) -> None:
        self.text = text
        plain = text.plain
        bounds = []
        start = 0
        while (end := plain.find("\n", start)) != -1:
            bounds.append((start, end))
            start = end + 1
        bounds.append((start, len(plain)))
        self._bounds = bounds
        self._layout()
        self.scroll_home(animate=False)
        self.refresh()

    @property
    def plain(self) -> str:
        return self.text.plain

    def on_resize(self, event: events.Resize) -> None:
        self._layout()

    def _layout(self) -> None:
        width = max(1, self.scrollable_content_region.width)
        self._width = width
        starts = [0]
        total = 0
        for start, end in self._bounds:
            total += max(1, -(-(end - start) // width))
            starts.append(total)
        self._starts = starts
        self._cache.clear()
        self.virtual_size = Size(width, total)

    def render_line(self, y: int) -> Strip:
        row = int(self.scroll_y) + y
        width = self._width
        style = self.get_visual_style()
        if not 0 <= row < self._starts[-1]:
            return Strip.blank(width, style.rich_style)
        index = bisect.bisect_right(self._starts, row) - 1
        strips = self._cache.get((index, width))
        if strips is None:
            line_start, line_end = self._bounds[index]
            strips = []
            for start in range(line_start, max(line_start + 1, line_end), width):
                piece = self.text[start : min(start + width, line_end)]
                rendered = Visual.to_strips(self, piece, width, 1, style)
                strip = rendered[0] if rendered else Strip.blank(width)
                strips.append(strip.crop_extend(0, width, style.rich_style))
            self._cache[(index, width)] = strips
        return strips[min(row - self._starts[index], len(strips) - 1)]
