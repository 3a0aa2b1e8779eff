"""``?``: every key of the observatory, grouped by where it works, read from the bindings."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar

from textual.actions import parse
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.dom import DOMNode
from textual.widgets import Static

from tui.screens.interrupt import InterruptibleModal

HelpSection = tuple[str, Sequence[BindingType]]


def _keys(binding: Binding) -> str:
    if binding.key_display:
        return binding.key_display
    return "/".join(key.strip() for key in binding.key.split(","))


def enabled(node: DOMNode, bindings: Iterable[BindingType]) -> list[BindingType]:
    """The bindings that do something on ``node`` now: its ``check_action`` (the app's, for
    an ``app.`` action) does not refuse them. The footer hides the same ones, so the footer
    and the help read from one table per context. A binding with no action describes keys
    (scrolling) and is kept."""
    kept: list[BindingType] = []
    for binding in bindings:
        if isinstance(binding, Binding) and binding.action:
            namespace, name, params = parse(binding.action)
            target = node.app if namespace == "app" else node
            if target.check_action(name, params) is False:
                continue
        kept.append(binding)
    return kept


def help_content(sections: Iterable[HelpSection]) -> Content:
    """Sections of ``keys  description`` lines; bindings without a description are skipped.
    The key column is as wide as its widest keys."""
    described: list[tuple[str, list[Binding]]] = [
        (title, [b for b in bindings if isinstance(b, Binding) and b.description])
        for title, bindings in sections
    ]
    width = max((len(_keys(b)) for _, bs in described for b in bs), default=8) + 2
    parts: list[Content] = []
    for title, bindings in described:
        lines = [
            Content.assemble((f"  {_keys(b):<{width}}", "bold $accent"), b.description)
            for b in bindings
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
