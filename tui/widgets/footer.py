"""The footer: Textual's, with Help and Quit first so no width ever hides them; and the
first frame's one-line picture of it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.content import Content
from textual.widget import Widget
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


class KeysLine(Widget):
    """The first frame's footer: the screen's keys (Help and Quit first) drawn as one line
    in the footer's colours. Textual's footer is a widget per key and costs a good part of
    a first frame; it is not clickable, and the run screen's real footer replaces it."""

    DEFAULT_CSS = """
    KeysLine {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
    }
    """

    def render(self) -> Content:
        shown = [
            binding
            for (_, binding, enabled, _) in self.screen.active_bindings.values()
            if binding.show and enabled
        ]
        shown.sort(key=lambda b: _lead(b.action))
        parts: list[Content] = []
        for binding in shown:
            parts.append(
                Content.assemble(
                    (f" {self.app.get_key_display(binding)} ", "bold $footer-key-foreground"),
                    (f"{binding.description} ", "$footer-description-foreground"),
                )
            )
        return Content("").join(parts)


def _lead(action: str) -> int:
    name = action.removeprefix("app.")
    return ALWAYS_SHOWN.index(name) if name in ALWAYS_SHOWN else len(ALWAYS_SHOWN)
