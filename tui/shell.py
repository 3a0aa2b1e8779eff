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
from textual.widgets import Footer

from tui.footer import HandrailFooter
from tui.header import HeaderFacts, RunHeader


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
        yield Widget(id="shell-body")
        footer = HandrailFooter()
        # Textual's footer draws its keys only a refresh after it is mounted (it waits for
        # the screen to announce its bindings); the shell's must be on its first frame.
        footer.set_reactive(Footer._bindings_ready, True)
        yield footer

    def on_screen_resume(self) -> None:
        self._on_resume()
