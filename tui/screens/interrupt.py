"""ctrl+c on the observatory's modal screens.

Textual looks no further than the top modal screen for a key's (non-priority) binding, so
the app's ctrl+c (quit; during a live run it asks first, then aborts with 130) never came
while the approval, the hand-over pause or the help was up: ctrl+c did nothing at exactly
the moments a person is most likely to press it. :class:`InterruptibleModal` binds it on
the modal itself, and keeps Textual's meaning of ctrl+c where there is one: with text
selected on the screen, ctrl+c copies it (a focused text field copies its own selection
before any screen binding is asked).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, ClassVar, TypeVar

from textual.binding import Binding, BindingType
from textual.screen import ModalScreen

T = TypeVar("T")


class InterruptibleModal(ModalScreen[T]):
    """A modal screen on which ctrl+c does what it does everywhere else in the app."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "interrupt", "Quit (asks first)", show=False, id="modal.interrupt"),
        # The app's ? does not reach a modal: it is bound here (help lists this modal's keys).
        Binding("question_mark", "app.help", "Help", key_display="?", show=False, id="modal.help"),
    ]
    HELP_TITLE: ClassVar[str] = "Keys here"

    def help_sections(self) -> Iterable[tuple[str, Sequence[BindingType]]]:
        """``?`` on this modal: its own keys, then ctrl+c and ?."""
        own = [b for b in type(self).BINDINGS if b not in InterruptibleModal.BINDINGS]
        yield (self.HELP_TITLE, [*own, *InterruptibleModal.BINDINGS])

    def action_interrupt(self) -> None:
        selected = self.get_selected_text()
        if selected:
            self.app.copy_to_clipboard(selected)
            return
        self.app.action_help_quit()


def start_wait_clock(screen: ModalScreen[Any], dialog: str) -> None:
    """A decision modal's own clock: "waiting 00:42" on the border of its ``dialog`` (a
    selector), every second. The run's header does not move while a modal covers it (see
    RunScreen._tick): the person still sees how long the run has waited for them."""
    from tui.labels import elapsed_text

    clock = getattr(screen.app, "clock", None)
    if not callable(clock):
        return
    opened = clock()

    def tick() -> None:
        found = screen.query(dialog)
        if found:
            found.first().border_subtitle = f"waiting {elapsed_text(clock() - opened)}"

    tick()
    screen.set_interval(1.0, tick)
