"""``?``: every key of the observatory, grouped by where it works, read from the bindings."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from tui.screens.interrupt import InterruptibleModal

HelpSection = tuple[str, Sequence[BindingType]]


def _keys(binding: Binding) -> str:
    if binding.key_display:
        return binding.key_display
    return "/".join(key.strip() for key in binding.key.split(","))


def help_content(sections: Iterable[HelpSection]) -> Content:
    """Sections of ``keys  description`` lines; bindings without a description are skipped."""
    parts: list[Content] = []
    for title, bindings in sections:
        lines = [
            Content.assemble((f"  {_keys(b):<16}", "bold $accent"), b.description)
            for b in bindings
            if isinstance(b, Binding) and b.description
        ]
        if lines:
            parts.append(Content.styled(title, "bold $text-primary"))
            parts.extend(lines)
            parts.append(Content(""))
    return Content("\n").join(parts)


class HelpScreen(InterruptibleModal[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss", "Close help", id="help.close"),
    ]

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
        & > #help-body {
            width: 80%;
            max-width: 90;
            height: 90%;
            border: thick $primary;
            background: $surface;
            padding: 0 1;
        }
    }
    """

    def __init__(self, sections: Sequence[HelpSection]) -> None:
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body") as body:
            body.border_title = "Keys"
            body.border_subtitle = "escape closes"
            yield Static(help_content(self.sections))

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(None)
