"""The observatory's first frame: the run's header and the footer, nothing else.

Few and cheap widgets (textual's own, the header, the footer) so the person sees the
task, the model and "starting Chrome…" with Help and Quit within a fraction of a second;
``tui.app.HandrailApp`` imports the rest of the observatory (rounds, panes, timeline,
approval) only after this is painted, then shows the run screen over it.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widget import Widget

from tui.widgets.footer import KeysLine
from tui.widgets.header import HeaderFacts, RunHeader


class Blank(Widget):
    """Room the run screen's timeline and panes will take (a bare ``Widget`` draws its name)."""

    def render(self) -> str:
        return ""


class ShellScreen(Screen[None]):
    """The header with ``facts`` above an empty body, and the footer (the app's keys)."""

    DEFAULT_CSS = """
    ShellScreen { layout: vertical; }
    ShellScreen > #shell-body { height: 1fr; }
    """

    def __init__(self, facts: HeaderFacts, *, on_resume: Callable[[], None]) -> None:
        """``on_resume``: called whenever this screen is on top again (a help or theme
        screen the person opened meanwhile has closed)."""
        super().__init__()
        self._facts = facts
        self._on_resume = on_resume

    def compose(self) -> ComposeResult:
        header = RunHeader(id="header")
        header.set_reactive(RunHeader.facts, self._facts)
        yield header
        yield Blank(id="shell-body")
        yield KeysLine()

    def on_screen_resume(self) -> None:
        self._on_resume()
