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
    ) -> None:
        """``run(sink, supervisor)`` starts the run (see ``RunFactory``); it is awaited in a
        worker when the app mounts. ``exit_on_finish``: leave as soon as the run ends
        instead of waiting for ``q``. Other arguments: see ``ObservatoryApp``."""
        super().__init__(
            theme=theme,
            config_dir=config_dir,
            theme_dirs=theme_dirs,
            clock=clock,
            persist_theme=persist_theme,
        )
        self._run_factory = run
        self._exit_on_finish = exit_on_finish
        self.run_screen: RunScreen | None = None

    def on_mount(self) -> None:
        self.run_screen = RunScreen(self._run_factory, exit_on_finish=self._exit_on_finish)
        self.push_screen(self.run_screen)

    @property
    def exit_code(self) -> int | None:
        """The run's exit code once it is over, else None."""
        return self.run_screen.exit_code if self.run_screen is not None else None

    async def request_quit(self) -> None:
        screen = self.run_screen
        if screen is None or not screen.running:
            self.exit(self.exit_code if self.exit_code is not None else 0)
            return
        if isinstance(self.screen, ConfirmScreen):
            return

        def answered(yes: bool | None) -> None:
            if yes and screen.running:
                screen.abort()
                self.exit(EXIT_ABORTED)

        self.push_screen(ConfirmScreen("The run is still going. Abort it and quit?"), answered)


def run_tui(
    run: RunFactory,
    *,
    theme: str | None = None,
    config_dir: Path | None = None,
    exit_on_finish: bool = False,
) -> int:
    """Run the observatory in this terminal until the person quits; returns the exit code.

    ``run(sink, supervisor)`` starts the agent, e.g.
    ``lambda sink, sup: run_session(settings, supervisor=sup, sinks=[sink, audit])``.
    ``theme``: ``--theme NAME`` (None: the saved choice, else ``dark``).
    """
    app = HandrailApp(run, theme=theme, config_dir=config_dir, exit_on_finish=exit_on_finish)
    result = app.run()
    if result is not None:
        return result
    return app.exit_code if app.exit_code is not None else EXIT_ABORTED
