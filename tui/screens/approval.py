"""The approval gate: one action, everything needed to decide on it, and the person's answer.

Nothing happens by timeout and escape does not dismiss it: the screen returns only an
``ApprovalDecision`` the person chose (approve, deny with a note, edit, approve the kind
for the run, or abort).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Literal

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Input, Label, Static

from core.guard.decision import ApprovalDecision
from core.run.events import ApprovalRequest
from core.visible import visible
from tui.screens.interrupt import InterruptibleModal, start_wait_clock
from tui.widgets.panes import NARROW_COLUMNS, digest_content, json_content

Mode = Literal["choose", "deny", "edit"]


def param_text(value: Any) -> str:
    """How a parameter is shown for editing: strings as they are, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def parse_param(original: Any, text: str) -> Any:
    """The edited value, of the original's kind. Raises ``ValueError`` saying what to fix."""
    if isinstance(original, str):
        return text
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise ValueError(
            f"{text!r} is not a JSON value; the original was {json.dumps(original)}"
        ) from None


class ApprovalScreen(InterruptibleModal[ApprovalDecision]):
    """Ask the person about one action; dismissed with their ``ApprovalDecision``."""

    HELP_TITLE = "Approval"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a,y", "approve", "Approve", id="approval.approve"),
        Binding("d,n", "deny", "Deny (note)", id="approval.deny"),
        Binding("e", "edit", "Edit, then approve", id="approval.edit"),
        Binding(
            "A", "approve_kind", "Approve all of kind", key_display="A", id="approval.approve_kind"
        ),
        Binding("s", "allow_site", "Allow on this site", id="approval.allow_site"),
        Binding("x", "abort", "Abort run", id="approval.abort"),
        Binding("o", "open_picture", "Open the picture", id="approval.open_picture"),
        Binding("escape", "back", "Back", show=False, id="approval.back"),
        Binding("ctrl+s", "submit", "Send", show=False, id="approval.submit"),
    ]

    DEFAULT_CSS = """
    ApprovalScreen {
        align: center middle;
        & > #approval-dialog {
            width: 90%;
            max-width: 110;
            height: auto;
            max-height: 100%;
            border: thick $primary;
            background: $surface;
            padding: 0 1;
        }
        &.-risky > #approval-dialog { border: thick $handrail-denied; }
        /* The details scroll inside a bound height; the keys below always stay in view. */
        #approval-body { height: auto; max-height: 65vh; }
        #approval-controls { height: auto; }
        #approval-summary { height: auto; }
        #approval-facts { width: 1fr; height: auto; }
        #approval-crop { margin-left: 2; }
        /* Narrow: the facts keep the full width and the picture follows them. */
        &.-narrow #approval-summary { layout: vertical; }
        &.-narrow #approval-crop { margin-left: 0; }
        .approval-heading { text-style: bold; color: $text-secondary; margin-top: 1; }
        #approval-risky { color: $handrail-denied; text-style: bold; }
        #approval-error { color: $handrail-error; display: none; }
        &.-error #approval-error { display: block; }
        #approval-keys { margin-top: 1; color: $text-muted; }
        #approval-note, #approval-edit { display: none; height: auto; }
        &.-deny #approval-note { display: block; }
        &.-edit #approval-edit { display: block; }
        &.-deny #approval-keys, &.-edit #approval-keys { display: none; }
        #approval-edit Input, #approval-note Input { margin: 0; }
    }
    """

    AUTO_FOCUS = None

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__()
        self.request = request
        self.mode: Mode = "choose"

    def compose(self) -> ComposeResult:
        request = self.request
        action = request.action
        with Vertical(id="approval-dialog") as dialog:
            dialog.border_title = f"Approve round {request.round}?"
            with VerticalScroll(id="approval-body"):
                shown = {"name": action.name, "params": action.params}
                yield Static(json_content(shown), id="approval-action")
                with Horizontal(id="approval-summary"):
                    with Vertical(id="approval-facts"):
                        yield from self._facts()
                    if request.crop is not None:
                        # Loaded with the first picture (PIL, textual-image): not on the
                        # way to the first screen.
                        from tui.widgets.target_crop import TargetPicture

                        yield TargetPicture(request.crop, id="approval-crop")
                if request.risky:
                    yield Static(
                        Content(
                            "RISKY: a commitment, new host, sensitive field or script. "
                            "It asks every time: approving all of its kind does not apply."
                        ),
                        id="approval-risky",
                    )
                if request.details:
                    yield Static(
                        Content("\n").join(
                            Content(f"• {visible(detail)}") for detail in request.details
                        ),
                        id="approval-details",
                    )
            with Vertical(id="approval-controls"):
                with Vertical(id="approval-note"):
                    yield Label(
                        "Deny. Note for the model (optional), enter to send, escape to go back:"
                    )
                    yield Input(
                        placeholder="why not, or what to do instead", id="approval-note-input"
                    )
                with Vertical(id="approval-edit"):
                    yield Label(
                        "Edit the parameters, enter to approve the edited action, escape to go back:"
                    )
                    for i, (key, value) in enumerate(action.params.items()):
                        yield Label(Content(visible(key)), classes="approval-param-name")
                        yield Input(param_text(value), id=f"edit-{i}", classes="approval-param")
                yield Static("", id="approval-error")
                yield Static(self._key_hint(), id="approval-keys")

    def _facts(self) -> ComposeResult:
        """The reason, the target's digest line, the page and why it asks."""
        request = self.request
        if request.action.reason:
            yield Label(f"Reason ({request.reason_by})", classes="approval-heading")
            yield Static(Content(visible(request.action.reason)), id="approval-reason")
        if request.element_line:
            yield Label("Target", classes="approval-heading")
            yield Static(digest_content(request.element_line), id="approval-target")
        yield Label("Page", classes="approval-heading")
        # Page, model and policy text is data: its control characters are shown, never sent.
        page = Content(visible(request.url))
        if request.title:
            page += Content.assemble("\n", (visible(request.title), "italic"))
        yield Static(page, id="approval-page")
        yield Label("Why it asks", classes="approval-heading")
        why = visible(request.why)
        if request.asked_by:
            why += f"\nasked by {visible(request.asked_by)}"
        if request.once:
            why += "\nonce: approving lets this same action through for the rest of the run"
        if request.remembered:
            why += f"\n{visible(request.remembered)}"
        yield Static(Content(why), id="approval-why")

    def _key_hint(self) -> Content:
        kind = self.request.action.name
        # A risky action asks every time, so A (approve all of its kind) is not offered.
        every: tuple[str | tuple[str, str], ...] = (
            () if self.request.risky else (("A", "bold"), f" approve every {kind} this run   ")
        )
        crop = self.request.crop
        picture: tuple[str | tuple[str, str], ...] = (
            (("o", "bold"), " open the picture   ") if crop is not None and crop.png else ()
        )
        site = self.request.site
        remember: tuple[str | tuple[str, str], ...] = (
            (("s", "bold"), f" allow {kind} on {visible(site)} from now on   ") if site else ()
        )
        return Content.assemble(
            ("a", "bold"), "/", ("y", "bold"), " approve   ",
            ("d", "bold"), "/", ("n", "bold"), " deny   ",
            ("e", "bold"), " edit   ",
            *every,
            *remember,
            *picture,
            ("x", "bold"), " abort run",
        )  # fmt: skip

    def on_mount(self) -> None:
        self.set_class(self.request.risky, "-risky")
        self._fit(self.app.size.width)
        start_wait_clock(self, "#approval-dialog")

    def on_resize(self, event: events.Resize) -> None:
        self._fit(event.size.width)

    def _fit(self, columns: int) -> None:
        self.set_class(columns < NARROW_COLUMNS, "-narrow")

    # --- modes ---------------------------------------------------------------------------

    def _set_mode(self, mode: Mode) -> None:
        self.mode = mode
        self.set_class(mode == "deny", "-deny")
        self.set_class(mode == "edit", "-edit")
        self._show_error(None)
        if mode == "deny":
            self.query_one("#approval-note-input", Input).focus()
        elif mode == "edit":
            inputs = list(self.query(".approval-param").results(Input))
            if inputs:
                inputs[0].focus()
        else:
            self.set_focus(None)

    def _show_error(self, text: str | None) -> None:
        self.query_one("#approval-error", Static).update(Content(text or ""))
        self.set_class(bool(text), "-error")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # While a note or an edit is being typed, letters belong to the input.
        if self.mode != "choose" and action in (
            "approve",
            "deny",
            "edit",
            "approve_kind",
            "allow_site",
            "abort",
            "open_picture",
        ):
            return False
        if action == "allow_site" and not self.request.site:
            return False  # risky, or never remembered: not offered, and not taken
        if action == "open_picture" and (self.request.crop is None or not self.request.crop.png):
            return False
        if action == "approve_kind" and self.request.risky:
            return False  # a risky action asks every time: not offered, and not taken
        return not (action == "submit" and self.mode == "choose")

    def action_open_picture(self) -> None:
        """``o``: the target's picture full size, in the picture viewer (tui/viewer.py)."""
        import io

        from PIL import Image as PILImage

        from tui.viewer import open_picture

        crop = self.request.crop
        if crop is None or not crop.png:
            return
        try:
            image = PILImage.open(io.BytesIO(crop.png))
            image.load()
        except (OSError, ValueError) as exc:
            self.app.notify(visible(f"The picture cannot be read: {exc}"), markup=False)
            return
        said = open_picture(self.app, image, f"round-{self.request.round}-target")
        self.app.notify(visible(said), markup=False)

    # --- decisions -----------------------------------------------------------------------

    def action_approve(self) -> None:
        self.dismiss(ApprovalDecision("approved"))

    def action_approve_kind(self) -> None:
        self.dismiss(ApprovalDecision("approved", approve_kind_for_run=True))

    def action_allow_site(self) -> None:
        """``s``: approve, and allow this kind of action on this site from now on."""
        self.dismiss(ApprovalDecision("approved", remember_for_site=True))

    def action_abort(self) -> None:
        self.dismiss(ApprovalDecision("abort"))

    def action_deny(self) -> None:
        self._set_mode("deny")

    def action_edit(self) -> None:
        if not self.request.action.params:
            self._show_error("This action has no parameters to edit.")
            return
        self._set_mode("edit")

    def action_back(self) -> None:
        if self.mode != "choose":
            self._set_mode("choose")

    def action_submit(self) -> None:
        if self.mode == "deny":
            self._send_denial()
        elif self.mode == "edit":
            self._send_edit()

    @on(Input.Submitted)
    def _input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_submit()

    def _send_denial(self) -> None:
        note = self.query_one("#approval-note-input", Input).value.strip()
        self.dismiss(ApprovalDecision("denied", note=note or None))

    def _send_edit(self) -> None:
        params = self.request.action.params
        edited: dict[str, Any] = {}
        for i, (key, original) in enumerate(params.items()):
            text = self.query_one(f"#edit-{i}", Input).value
            try:
                edited[key] = parse_param(original, text)
            except ValueError as exc:
                self._show_error(f"{key}: {exc}")
                return
        if edited == params:
            self.dismiss(ApprovalDecision("approved"))
        else:
            self.dismiss(ApprovalDecision("edited", edited_params=edited))
