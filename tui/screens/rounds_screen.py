"""The layout the run screen and replay share: header, round timeline, the four panes.

Subclasses say what a row is (``show_row``) and what the header says (``header_facts``);
this class owns selection, following the newest round, pane keys and reflow.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from functools import partial
from typing import ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen

from tui.observatory import PaletteCommand
from tui.screens.help_screen import HelpSection
from tui.widgets.footer import HandrailFooter
from tui.widgets.header import HeaderFacts, RunHeader
from tui.widgets.panes import NARROW_COLUMNS, PANE_IDS, PANE_TITLES, RoundPanes
from tui.widgets.timeline import RoundTimeline, TimelineSource


class RoundsScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "follow", "Follow live", id="rounds.follow"),
        Binding("1", "pane('digest')", "Observation", show=False, id="rounds.pane_digest"),
        Binding("2", "pane('model')", "Model output", show=False, id="rounds.pane_model"),
        Binding("3", "pane('action')", "Action", show=False, id="rounds.pane_action"),
        Binding("4", "pane('result')", "Result", show=False, id="rounds.pane_result"),
        Binding("0", "focus_timeline", "Rounds", show=False, id="rounds.timeline"),
        Binding("z", "zoom", "Zoom pane", show=False, id="rounds.zoom"),
    ]

    AUTO_FOCUS = "#timeline"
    TIMELINE_TITLE = "Rounds"

    def __init__(self, source: TimelineSource) -> None:
        super().__init__()
        self.source = source
        self.following = True

    def compose(self) -> ComposeResult:
        yield RunHeader(id="header")
        with Horizontal(id="rounds-body"):
            yield RoundTimeline(self.source, id="timeline")
            yield self.make_panes()
        yield from self.compose_extra()
        yield HandrailFooter()

    def compose_extra(self) -> ComposeResult:
        yield from ()

    def make_panes(self) -> RoundPanes:
        """The panes widget (id ``panes``); replay adds its screenshot pane."""
        return RoundPanes(id="panes")

    @property
    def timeline(self) -> RoundTimeline:
        return self.query_one("#timeline", RoundTimeline)

    @property
    def panes(self) -> RoundPanes:
        return self.query_one("#panes", RoundPanes)

    @property
    def header(self) -> RunHeader:
        return self.query_one("#header", RunHeader)

    def on_mount(self) -> None:
        # Textual calls this after a subclass's own on_mount (handlers run along the MRO).
        self.timeline.border_title = self.TIMELINE_TITLE
        self._reflow(self.app.size.width)
        self.refresh_header()

    def on_resize(self, event: events.Resize) -> None:
        self._reflow(event.size.width)

    def _reflow(self, width: int) -> None:
        self.panes.set_width(width)
        self.set_class(width < NARROW_COLUMNS, "-narrow")

    # --- to be provided by subclasses ----------------------------------------------------

    def show_row(self, index: int) -> None:
        raise NotImplementedError

    def header_facts(self) -> HeaderFacts:
        return HeaderFacts()

    # --- selection and following ---------------------------------------------------------

    def refresh_header(self) -> None:
        following = self.following if self.follow_allowed() else None
        facts = self.header_facts()
        if facts.following != following:
            facts = replace(facts, following=following)
        self.header.facts = facts
        if following is None:
            self.timeline.border_subtitle = ""
        else:
            self.timeline.border_subtitle = "● following" if following else "f: follow live"

    def rows_changed(self, *, changed: int | None = None) -> None:
        """The source grew or one row changed: follow the newest row, or keep the person's."""
        timeline = self.timeline
        timeline.rows_changed(changed=changed)
        last = len(self.source) - 1
        if last < 0:
            return
        if self.following and self.follow_allowed():
            if timeline.cursor != last or changed in (None, last):
                timeline.select(last)
                self.show_row(last)
        elif changed is not None and changed == timeline.cursor:
            self.show_row(changed)
        self.refresh_header()

    def select_row(self, index: int) -> None:
        """Select and show a row as if the person picked it (following stops unless last)."""
        if not len(self.source):
            return
        self.timeline.select(index)
        self.following = self.timeline.cursor == len(self.source) - 1 and self.follow_allowed()
        self.show_row(self.timeline.cursor)
        self.refresh_header()

    def follow_allowed(self) -> bool:
        """Whether selecting the last row means following new rows (live runs, --follow)."""
        return True

    @on(RoundTimeline.Selected)
    def _picked(self, event: RoundTimeline.Selected) -> None:
        self.select_row(event.index)

    def action_follow(self) -> None:
        self.following = self.follow_allowed()
        last = len(self.source) - 1
        if last >= 0:
            self.timeline.select(last)
            self.show_row(last)
        self.refresh_header()

    def action_pane(self, key: str) -> None:
        self.panes.show_pane(key)

    def action_focus_timeline(self) -> None:
        self.timeline.focus()

    def action_zoom(self) -> None:
        """The focused pane (else the current one) alone on the screen, the timeline hidden;
        again: back."""
        panes = self.panes
        if panes.zoomed:
            panes.zoom(None)
            self.remove_class("-zoomed")
            return
        focused = self.focused
        key = panes.current
        for candidate in panes.keys:
            if focused is not None and focused is panes.pane(candidate):
                key = candidate
        panes.zoom(key)
        self.add_class("-zoomed")

    # --- help and palette ----------------------------------------------------------------

    def help_sections(self) -> Iterable[HelpSection]:
        yield ("Rounds", [*RoundsScreen.BINDINGS, *RoundTimeline.BINDINGS, *_PANE_HELP])

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Nothing to follow in a finished log (replay without --follow): not offered.
        if action == "follow":
            return self.follow_allowed()
        return True

    def on_screen_suspend(self) -> None:
        # A modal is up: its own legend lists its keys, and this footer's (t, ?, f...) do
        # not reach through it.
        self.query_one(HandrailFooter).display = False

    def on_screen_resume(self) -> None:
        self.query_one(HandrailFooter).display = True

    def palette_commands(self) -> Iterable[PaletteCommand]:
        if self.follow_allowed():
            yield (
                "Follow live",
                "Select the newest round and keep following (f)",
                self.action_follow,
            )
        for number, key in enumerate(PANE_IDS, 1):
            yield (
                f"Show {PANE_TITLES[key].lower()}",
                f"Focus the {PANE_TITLES[key].lower()} pane ({number})",
                partial(self.action_pane, key),
            )


_PANE_HELP = [
    Binding("tab", "", "Next pane / timeline"),
    Binding("up,down,pageup,pagedown", "", "Scroll a focused pane"),
]
