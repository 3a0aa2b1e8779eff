"""The supervised-run app and its entry point for the command line.

``HandrailApp`` is constructed with a coroutine factory that starts one run; it knows
nothing of settings, browsers or models, so tests can drive it with any coroutine that
emits events and calls the supervisor.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from tui.confirm import ConfirmScreen
from tui.observatory import ObservatoryApp
from tui.run_screen import EXIT_ABORTED, RunFactory, RunScreen


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
        headless_cause: str | None = None,
    ) -> None:
        """``run(sink, supervisor)`` starts the run (see ``RunFactory``); it is awaited in a
        worker when the app mounts. ``exit_on_finish``: leave as soon as the run ends
        instead of waiting for ``q``. ``task``: shown in the header until the run starts.
        ``headless_cause``: why the browser is headless though the person did not ask (no
        display): said at start and on the hand-over screen. Other arguments: see ``ObservatoryApp``."""
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
        self.headless_cause = headless_cause
        if headless_cause:
            self.note(
                f"Chrome runs headless: {headless_cause}. Hand-overs will have no window.",
                "warning",
            )
        self.run_screen: RunScreen | None = None

    def on_mount(self) -> None:
        self.run_screen = RunScreen(
            self._run_factory, exit_on_finish=self._exit_on_finish, task=self._header_task
        )
        self.push_screen(self.run_screen)

    @property
    def exit_code(self) -> int | None:
        """The run's exit code once it is over, else None."""
        return self.run_screen.exit_code if self.run_screen is not None else None

    def show_phase(self, text: str) -> None:
        """A ``core.session.PhaseSink``: ``starting Chrome…`` and the like, in the header."""
        if self.run_screen is not None:
            self.run_screen.phase_sink(text)

    async def request_quit(self, *, interrupt: bool = False) -> None:
        screen = self.run_screen
        if screen is None:
            self.exit(EXIT_ABORTED if interrupt else 0)
            return
        if not screen.running:
            screen.leave_when_closed()
            return
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
