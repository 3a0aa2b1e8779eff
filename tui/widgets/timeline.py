"""The round timeline: one row per round, rendered line by line so 10,000 rows cost nothing.

Rows come from a ``TimelineSource`` (a list for a live run, a lazily read log for replay);
only the visible rows are asked for and rendered, behind a small cache. A row's label names
what a model chose and a page holds (``click [4] Book now``), so it is drawn with its control
characters shown (:func:`core.visible.visible`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol

from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.visual import Visual

from core.visible import visible
from tui.rounds import MARKS
from tui.themes import outcome_style


@dataclass(frozen=True, slots=True)
class TimelineRow:
    number: str
    """Round number (or a short tag such as ``log`` for a non-round row)."""
    label: str
    meaning: str
    """A key of ``MARKS``: approved, denied, error, paused, pending, ok, unknown, skipped, problem."""
    duration: str = ""


class TimelineSource(Protocol):
    def __len__(self) -> int: ...

    def row(self, index: int) -> TimelineRow: ...


class RoundTimeline(ScrollView, can_focus=True):
    """Selectable rows; posts ``Selected`` when the person moves the cursor."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "move(-1)", "Previous", show=False, id="timeline.up"),
        Binding("down,j", "move(1)", "Next", show=False, id="timeline.down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="timeline.page_up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="timeline.page_down"),
        Binding("home", "first", "First", show=False, id="timeline.first"),
        Binding("end", "last", "Last", show=False, id="timeline.last"),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {"round-timeline--cursor"}

    DEFAULT_CSS = """
    RoundTimeline {
        & > .round-timeline--cursor { background: $block-cursor-blurred-background; }
        &:focus > .round-timeline--cursor {
            background: $block-cursor-background;
            color: $block-cursor-foreground;
            text-style: $block-cursor-text-style;
        }
    }
    """

    cursor: reactive[int] = reactive(-1, init=False)

    class Selected(Message):
        """The person picked row ``index`` (keyboard or mouse)."""

        def __init__(self, timeline: RoundTimeline, index: int) -> None:
            super().__init__()
            self.timeline = timeline
            self.index = index

        @property
        def control(self) -> RoundTimeline:
            return self.timeline

    def __init__(
        self,
        source: TimelineSource,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.source = source
        self._cache: LRUCache[tuple[int, bool, int, bool], Strip] = LRUCache(512)

    # --- data ----------------------------------------------------------------------------

    def rows_changed(self, *, changed: int | None = None) -> None:
        """Tell the timeline its source grew or a row changed (``changed``: that row only)."""
        # Rows are cheap to render; dropping the whole cache keeps the bookkeeping simple.
        self._cache.clear()
        self.virtual_size = Size(self.size.width, len(self.source))
        self.refresh()

    def select(self, index: int, *, scroll: bool = True) -> None:
        """Move the cursor without posting ``Selected`` (the program, not the person)."""
        if not len(self.source):
            return
        self.cursor = max(0, min(index, len(self.source) - 1))
        if scroll:
            self.scroll_to_cursor()

    def scroll_to_cursor(self) -> None:
        height = self.scrollable_content_region.height or 1
        top = int(self.scroll_y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)

    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh()

    def on_theme_change(self) -> None:
        self._cache.clear()
        self.refresh()

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.on_theme_change())

    # --- person --------------------------------------------------------------------------

    def _pick(self, index: int) -> None:
        if not len(self.source):
            return
        self.select(index)
        self.post_message(self.Selected(self, self.cursor))

    def action_move(self, delta: int) -> None:
        self._pick(max(self.cursor, 0) + delta if self.cursor >= 0 else 0)

    def action_page(self, direction: int) -> None:
        height = max(1, self.scrollable_content_region.height - 1)
        self._pick(max(self.cursor, 0) + direction * height)

    def action_first(self) -> None:
        self._pick(0)

    def action_last(self) -> None:
        self._pick(len(self.source) - 1)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        index = offset.y + int(self.scroll_y)
        if 0 <= index < len(self.source):
            self.focus()
            self._pick(index)

    # --- rendering -----------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        index = int(self.scroll_y) + y
        width = self.scrollable_content_region.width
        selected = index == self.cursor
        key = (index, selected, width, self.has_focus)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        if selected:
            style = self.get_visual_style("round-timeline--cursor")
        else:
            style = self.get_visual_style()
        if not 0 <= index < len(self.source):
            return Strip.blank(width, style.rich_style)
        content = row_content(self.source.row(index), width)
        strips = Visual.to_strips(self, content, width, 1, style)
        strip = (
            strips[0].extend_cell_length(width, style.rich_style) if strips else Strip.blank(width)
        )
        self._cache[key] = strip
        return strip

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()


NARROW_ROW = 32
"""Below this many cells a row drops its duration and number padding: the action and its
target are what the person reads (``3 ✓ click [13] From`` rather than ``click [1… 900ms``)."""


def row_content(row: TimelineRow, width: int) -> Content:
    """``  12 ✓ click [4] Book now      1.2s``, truncated with an ellipsis, never wrapped."""
    mark = MARKS.get(row.meaning, " ")
    narrow = width < NARROW_ROW
    head = Content.assemble(
        (f"{row.number:>2} " if narrow else f"{row.number:>4} ", "dim"),
        (mark, outcome_style(row.meaning)),
        " ",
    )
    tail = Content(f" {row.duration}" if row.duration and not narrow else "")
    room = max(1, width - head.cell_length - tail.cell_length)
    label = Content(visible(row.label.replace("\n", " "))).truncate(room, ellipsis=True)
    label = label.pad_right(room - label.cell_length)
    return head + label + tail.stylize("dim")
