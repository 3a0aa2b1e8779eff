"""The supervised-run app and its entry point for the command line.

``HandrailApp`` is constructed with a coroutine factory that starts one run; it knows
nothing of settings, browsers or models, so tests can drive it with any coroutine that
emits events and calls the supervisor.

Start-up order: the first frame is :class:`tui.widgets.shell.ShellScreen` (header and footer),
painted before the rest of the observatory is even imported; then ``tui.screens.run_screen``
(rounds, panes, timeline, approval...) is imported and its screen shown over the shell,
and that screen starts the run once it is painted in turn.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from textual.screen import Screen

from tui.exit_codes import EXIT_INTERRUPTED
from tui.observatory import ObservatoryApp
from tui.widgets.header import HeaderFacts
from tui.widgets.shell import ShellScreen

if TYPE_CHECKING:
    from tui.screens.run_screen import RunFactory, RunScreen


class HandrailApp(ObservatoryApp):
    """The observatory for one live run. ``run()`` returns the run's exit code:
    the one in ``RunFinished``, 130 when the person aborted, 1 when the run crashed."""

    def __init__(
        self,
        run: RunFactory,
        *,
        theme: str | None = None,
        config_dir: Path | None = None,
        theme_dirs: Sequence[Path] | None = None,
        clock: Callable[[], float] = time.monotonic,
        persist_theme: bool = True,
        exit_on_finish: bool = False,
        task: str = "",
        model: str = "",
        phase: str | None = None,
        headless_cause: str | None = None,
    ) -> None:
        """``run(sink, supervisor)`` starts the run (see ``RunFactory``); it is awaited in a
        worker once the run screen is painted. ``exit_on_finish``: leave as soon as the run
        ends instead of waiting for ``q``. ``task``, ``model``: shown in the header from the
        first frame, until the run says its own. ``phase``: the header's state until the
        run reports one (``starting Chrome…``, see ``core.run.phases``). ``headless_cause``: why
        the browser is headless though the person did not ask (no display): said at start
        and on the hand-over screen. Other arguments: see ``ObservatoryApp``."""
        super().__init__(
            theme=theme,
            config_dir=config_dir,
            theme_dirs=theme_dirs,
            clock=clock,
            persist_theme=persist_theme,
        )
        self._run_factory = run
        self._exit_on_finish = exit_on_finish
        self._header_task = task
        self._header_model = model
        self._first_phase = phase
        self.headless_cause = headless_cause
        if headless_cause:
            self.note(
                f"Chrome runs headless: {headless_cause}. Hand-overs will have no window.",
                "warning",
            )
        self.run_screen: RunScreen | None = None
        """The run's screen once it is shown (None while the first frame is up)."""
        self._loaded: RunScreen | None = None
        self._leaving = False

    def get_default_screen(self) -> Screen[None]:
        facts = HeaderFacts(
            task=self._header_task,
            model=self._header_model,
            state=self._first_phase or "starting",
            elapsed_s=0.0,
        )
        return ShellScreen(facts, on_resume=self._show_loaded)

    def on_mount(self) -> None:
        # Once the shell is painted: importing the rest holds the loop for a moment, and
        # keys pressed meanwhile wait in the queue for it.
        self.call_after_refresh(self._load_observatory)

    def _load_observatory(self) -> None:
        if self._leaving:
            return
        from tui.screens.run_screen import RunScreen

        self._loaded = RunScreen(
            self._run_factory,
            exit_on_finish=self._exit_on_finish,
            task=self._header_task,
            model=self._header_model,
            phase=self._first_phase,
        )
        self._show_loaded()

    def _show_loaded(self) -> None:
        # Over the shell only: a help or theme screen the person opened during the first
        # frame stays on top, and the run screen comes when it closes.
        if self._loaded is None or self._leaving or not isinstance(self.screen, ShellScreen):
            return
        self.run_screen, self._loaded = self._loaded, None
        self.push_screen(self.run_screen)

    @property
    def exit_code(self) -> int | None:
        """The run's exit code once it is over, else None."""
        return self.run_screen.exit_code if self.run_screen is not None else None

    def show_phase(self, text: str) -> None:
        """A ``core.run.session.PhaseSink``: ``starting Chrome…`` and the like, in the header."""
        if self.run_screen is not None:
            self.run_screen.phase_sink(text)

    def terminate(self) -> None:
        """A signal: abort the run without asking, and leave once its browser is closed (its
        log has ``run_end`` by then). A second signal leaves at once."""
        screen = self.run_screen
        if screen is None:
            self._leaving = True
            self.exit(EXIT_INTERRUPTED)
            return
        screen.abort()
        screen.leave_when_closed()

    async def request_quit(self, *, interrupt: bool = False) -> None:
        screen = self.run_screen
        if screen is None:
            # Still the first frame: nothing has started, so there is nothing to abort.
            self._leaving = True
            self.exit(EXIT_INTERRUPTED if interrupt else 0)
            return
        if not screen.running:
            screen.leave_when_closed()
            return
        from tui.screens.confirm import ConfirmScreen  # loaded with the run screen already

        if isinstance(self.screen, ConfirmScreen):
            return

        def answered(yes: bool | None) -> None:
            if yes and screen.running:
                screen.abort()
                screen.leave_when_closed()

        key = "ctrl+c" if interrupt else "q"
        question = (
            f"The run is still going ({key}). Abort it and quit? Its audit log is closed "
            "and handrail exits with code 130."
        )
        self.push_screen(ConfirmScreen(question), answered)
