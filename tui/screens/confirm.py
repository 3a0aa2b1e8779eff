"""A yes/no question, for the few commands that cannot be undone (aborting a run)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static


class ConfirmScreen(ModalScreen[bool]):
    """Dismissed with True for ``y``, False for ``n`` or escape."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    DEFAULT_CSS = """
    ConfirmScreen {
        align: center middle;
        & > #confirm-dialog {
            /* auto collapsed to the border alone (its Statics fill their parent) */
            width: 70;
            max-width: 90%;
            height: auto;
            border: thick $handrail-error;
            background: $surface;
            padding: 0 1;
        }
        #confirm-keys { color: $text-muted; margin-top: 1; }
    }
    """

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog"):
            yield Static(Content(self.question), id="confirm-question")
            yield Static(
                Content.assemble(("y", "bold"), " yes   ", ("n", "bold"), " no"), id="confirm-keys"
            )

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
