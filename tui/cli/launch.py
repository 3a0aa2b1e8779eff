"""Starting one run, in the observatory or in the console, and what is printed after it.

Shared by ``handrail run`` and ``handrail demo`` (tui/cli/main.py and tui/cli/demo.py both import
this module; neither imports the other).

Start-up is ordered for the person: the observatory is on screen before ``core.run.session``
(and the model's SDK, and Chrome) have loaded; those load in the run's worker while the
screen says "starting Chrome…". The console path never imports textual.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from core.browser.display import NO_DISPLAY
from core.browser.display import has_display as display_here
from core.visible import visible
from tui.cli.command import handrail_command, typed_commands
from tui.exit_codes import EXIT_INTERRUPTED, EXIT_POOL_FULL, EXIT_USAGE

__all__ = ["NO_DISPLAY", "has_display", "run_console", "run_observatory", "summary_text"]

if TYPE_CHECKING:
    from core.run.events import EventSink, RunFinished, Supervisor
    from core.run.session import RunSettings
    from tui.app import HandrailApp

SettingsFactory = Callable[[], "RunSettings"]
"""Builds the run's settings. Called in a thread: it may import ``core.run.session``."""


class Runner(Protocol):
    """What runs the session: :func:`core.run.session.run_session` unless a command brings its
    own (``rerun``). Raises ``core.run.session.ConfigError`` when the run cannot start."""

    async def __call__(
        self,
        settings: RunSettings,
        *,
        supervisor: Supervisor,
        sinks: Sequence[EventSink],
        on_phase: Callable[[str], None] | None = None,
    ) -> RunFinished: ...


def has_display(env: Mapping[str, str] | None = None) -> bool:
    """Whether a launched Chrome can open a window here (see :mod:`core.browser.display`)."""
    return display_here(os.environ if env is None else env)


def headless_notice() -> str:
    """Said when handrail chooses headless for the person (there is no display)."""
    return (
        f"handrail: {NO_DISPLAY}, so Chrome runs headless: there will be no window for "
        "hand-overs (passwords, CAPTCHAs, payments). Run where a display is available to "
        "act in the browser yourself; pass --headless to choose this and silence this notice."
    )


def run_observatory(
    make_settings: SettingsFactory,
    *,
    task: str,
    theme: str | None,
    model: str = "",
    phase: str | None = None,
    headless_cause: str | None = None,
    runner: Runner | None = None,
) -> int:
    """Run in the Textual observatory; returns the exit code and prints the summary.

    The screen shows at once with ``task``, ``model`` (its label, ``core.model.spec.
    spec_label``) and ``phase`` (``core.run.phases.first_phase``) in its header;
    ``make_settings`` runs in the run's worker. A configuration error closes the screen and
    is printed (exit 2).
    ``headless_cause``: why the run is headless though the person did not ask (said on
    screen at start and on the hand-over screen).
    """
    from tui.app import HandrailApp

    problems: list[tuple[int, str]] = []

    async def start(sink: EventSink, supervisor: Supervisor) -> RunFinished:
        # Off the UI thread: importing core.run.session (and building settings) takes a while.
        settings = await asyncio.to_thread(make_settings)
        from core.pool.state import PoolFull
        from core.run.session import ConfigError, run_session

        run = runner or run_session
        try:
            return await run(settings, supervisor=supervisor, sinks=[sink], on_phase=app.show_phase)
        except (ConfigError, PoolFull) as exc:
            # Not a crash of the run: a setting to change. Leave the screen and say which.
            code = EXIT_POOL_FULL if isinstance(exc, PoolFull) else EXIT_USAGE
            problems.append((code, str(exc)))
            app.exit(code)
            raise

    app = HandrailApp(
        start, theme=theme, task=task, model=model, phase=phase, headless_cause=headless_cause
    )
    result = app.run()
    if problems:
        failed, problem = problems[0]
        _say(visible(f"handrail: {problem}"), sys.stderr)
        return failed
    code = result if result is not None else app.exit_code
    if code is None:
        code = EXIT_INTERRUPTED
    _say(summary_of(app, code), sys.stdout)
    return code


def summary_of(app: HandrailApp, code: int) -> str:
    """What the observatory's run came to, for the terminal once the screen has closed."""
    screen = app.run_screen
    view = screen.run_view if screen is not None else None
    finished = view.finished if view is not None else None
    outcome: str
    if finished is not None:
        outcome = finished.outcome
        answer = finished.answer
    elif screen is not None and screen.crash is not None:
        outcome, answer = "crashed", f"{type(screen.crash).__name__}: {screen.crash}"
    elif code == EXIT_INTERRUPTED:
        outcome, answer = "aborted", "stopped by you before it finished"
    else:
        outcome, answer = "not started", ""
    if app.ended_by is not None and code == EXIT_INTERRUPTED:
        outcome = f"{outcome} by {app.ended_by}"
    return summary_text(
        outcome=outcome,
        answer=answer,
        exit_code=code,
        audit_path=view.audit_path if view is not None else None,
        spent=finished.spent if finished is not None else None,
    )


def summary_text(
    *,
    outcome: str,
    answer: str,
    exit_code: int,
    audit_path: str | None,
    spent: Mapping[str, Any] | None = None,
) -> str:
    """The lines printed after a run: outcome and exit code, the answer, the audit log and
    the command that replays it. The answer is the model's (or a crash's) text, so its control
    characters are shown, not sent to the terminal (:func:`core.visible.visible`)."""
    lines = [f"handrail: {outcome} (exit code {exit_code})"]
    if answer:
        # Only "\n" breaks the answer's lines: a "\r" in it is shown (␍), not obeyed.
        first, *rest = answer.strip().split("\n")
        lines.append(f"  answer:    {first}")
        lines.extend(f"             {line}" for line in rest)
    if spent is not None:
        from core.run.budget import spent_line

        lines.append(f"  spent:     {spent_line(spent)}")
    if audit_path:
        lines.append(f"  audit log: {audit_path}")
        lines.append(f"  replay:    {handrail_command()} replay {shlex.quote(audit_path)}")
    else:
        lines.append("  audit log: none (the run stopped before its log was opened)")
    return visible("\n".join(lines))


def run_console(
    settings: RunSettings,
    *,
    runner: Runner | None = None,
    notice: str | None = None,
    check_model: bool = True,
) -> int:
    """Run with the console supervisor; returns the exit code. Never imports textual.

    ``notice`` (the headless notice) is printed once the settings have passed their checks:
    a configuration error comes first, alone (exit 2). ``check_model=False``: the settings
    have no model to check (a rerun without ``--model``).

    SIGTERM, SIGHUP and SIGINT cancel the run inside the loop: its log gets ``run_end``, the
    browser is stopped, and the summary says where the log is (exit 130)."""
    from core.pool.state import PoolFull
    from core.run.events import RunStarted
    from core.run.session import ConfigError, check_settings, run_session
    from tui.console import ConsoleReporter, ConsoleSupervisor
    from tui.signals import ENDING_SIGNALS, ending

    if notice is not None:
        try:
            check_settings(settings, os.environ, with_model=check_model)
        except ConfigError as exc:
            print(visible(typed_commands(f"handrail: {exc}")), file=sys.stderr)
            return EXIT_USAGE
        print(visible(notice), file=sys.stderr)

    audit_path: list[str] = []

    def remember_log(event: object) -> None:
        if isinstance(event, RunStarted) and event.audit_path:
            audit_path.append(event.audit_path)

    async def go() -> int:
        main = asyncio.current_task()
        assert main is not None
        loop = asyncio.get_running_loop()

        def stop(sig: int) -> None:
            ending(sig)
            main.cancel()

        for sig in ENDING_SIGNALS:
            loop.add_signal_handler(sig, stop, sig)
        run = runner or run_session
        try:
            finished = await run(
                settings,
                supervisor=ConsoleSupervisor(),
                sinks=[ConsoleReporter(), remember_log],
            )
        except ConfigError as exc:
            print(visible(typed_commands(f"handrail: {exc}")), file=sys.stderr)
            return EXIT_USAGE
        except PoolFull as exc:
            print(visible(typed_commands(f"handrail: {exc}")), file=sys.stderr)
            return EXIT_POOL_FULL
        return finished.exit_code

    try:
        return asyncio.run(go())
    except (KeyboardInterrupt, asyncio.CancelledError):
        summary = summary_text(
            outcome="aborted",
            answer="the run was interrupted",
            exit_code=EXIT_INTERRUPTED,
            audit_path=audit_path[0] if audit_path else None,
        )
        _say(f"\n{summary}", sys.stderr)
        return EXIT_INTERRUPTED


def _say(text: str, out: TextIO) -> None:
    """Print, unless the terminal is gone (then there is no one to tell)."""
    with contextlib.suppress(OSError, ValueError):
        print(visible(text), file=out, flush=True)
