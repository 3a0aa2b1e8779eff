"""The hand-over screen: the agent stopped for a person (password, 2FA, CAPTCHA, payment...).

``r`` resumes (the agent re-observes the page), ``x`` aborts. In a headless run the person
cannot act in the browser: the screen says so and offers abort first; ``r`` still resumes
(the agent looks at the page again, and still refuses to type into sensitive fields).
Nothing happens by timeout.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from core.run.events import HumanRequest, HumanResponse
from core.visible import visible
from tui.screens.interrupt import InterruptibleModal, start_wait_clock

KIND_TITLES = {
    "password": "A password is needed",
    "otp": "A one-time code is needed",
    "captcha": "A CAPTCHA is in the way",
    "payment": "Payment details are needed",
    "ask_human": "The model asks you",
    "dialog": "The page opened a dialog",
    "other": "The agent needs you",
}

KIND_STEPS = {
    "password": "Type the password in the browser window yourself; the agent never sees it.",
    "otp": "Enter the code in the browser window yourself.",
    "captcha": "Solve the CAPTCHA in the browser window.",
    "payment": "Enter or confirm the payment in the browser window yourself, or abort.",
    "ask_human": "Do what is asked in the browser window, or abort.",
    "dialog": "Answer the dialog in the browser window.",
    "other": "Do what is needed in the browser window.",
}


class HumanPauseScreen(InterruptibleModal[HumanResponse]):
    """Dismissed with ``"resume"`` or ``"abort"``; escape does nothing."""

    HELP_TITLE = "Paused for you"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "resume", "Resume", id="human.resume"),
        Binding("x", "abort", "Abort run", id="human.abort"),
    ]

    DEFAULT_CSS = """
    HumanPauseScreen {
        align: center middle;
        & > #human-dialog {
            width: 80%;
            max-width: 90;
            height: auto;
            max-height: 95%;
            border: thick $handrail-paused;
            background: $surface;
            padding: 0 1;
        }
        #human-title { text-style: bold; color: $handrail-paused; }
        #human-steps { margin-top: 1; }
        #human-headless { margin-top: 1; color: $handrail-error; text-style: bold; }
        #human-keys { margin-top: 1; color: $text-muted; }
    }
    """

    def __init__(self, request: HumanRequest, *, headless_cause: str | None = None) -> None:
        """``headless_cause``: why the browser is headless when the person did not pass
        ``--headless`` (e.g. no display); None: they did."""
        super().__init__()
        self.request = request
        self.headless_cause = headless_cause

    def on_mount(self) -> None:
        start_wait_clock(self, "#human-dialog")

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(id="human-dialog") as dialog:
            dialog.border_title = f"Paused for you, round {request.round}"
            yield Static(
                Content(KIND_TITLES.get(request.kind, KIND_TITLES["other"])), id="human-title"
            )
            # The detail, URL and title come from the page: shown, never sent as controls.
            yield Static(Content(visible(request.detail)), id="human-detail")
            page = Content.assemble(("on ", "dim"), visible(request.url))
            if request.title:
                page += Content.assemble(("  ", ""), (visible(request.title), "italic"))
            yield Static(page, id="human-page")
            if request.headless:
                yield Static(
                    Content(self._headless_text()),
                    id="human-headless",
                )
                keys = Content.assemble(
                    ("x", "bold"), " abort run   ", ("r", "bold"), " resume anyway"
                )
            else:
                steps = KIND_STEPS.get(request.kind, KIND_STEPS["other"])
                yield Static(
                    Content(steps + " Then press r: the agent looks at the page again."),
                    id="human-steps",
                )
                keys = Content.assemble(("r", "bold"), " resume   ", ("x", "bold"), " abort run")
            yield Static(keys, id="human-keys")

    def _headless_text(self) -> str:
        if self.headless_cause:
            return (
                f"This browser is headless because {self.headless_cause}: there is no "
                "window to act in. Abort, then run again where a display is available to do "
                "this step yourself (or resume anyway if nothing in the page needs you)."
            )
        return (
            "This browser is headless: there is no window to act in. "
            "Abort, then run again without --headless to do this step yourself "
            "(or resume anyway if nothing in the page needs you)."
        )

    def action_resume(self) -> None:
        self.dismiss("resume")

    def action_abort(self) -> None:
        self.dismiss("abort")
