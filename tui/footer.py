"""The footer: Textual's, with Help and Quit first so no width ever hides them."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

ALWAYS_SHOWN = ("help", "quit")
"""Actions whose keys lead the footer: the two a lost person needs, at any width."""


class HandrailFooter(Footer):
    """Textual's footer lists the screen's keys before the app's, so at 80 columns the
    app's ``? Help`` and ``q Quit`` fell off the end; here they come first."""

    def compose(self) -> ComposeResult:
        widgets = list(super().compose())
        first = [w for w in widgets if _action(w) in ALWAYS_SHOWN]
        first.sort(key=lambda w: ALWAYS_SHOWN.index(_action(w) or ""))
        yield from first
        yield from (w for w in widgets if w not in first)


def _action(widget: object) -> str | None:
    if isinstance(widget, FooterKey) and not widget.has_class("-command-palette"):
        return widget.action.removeprefix("app.")
    return None
