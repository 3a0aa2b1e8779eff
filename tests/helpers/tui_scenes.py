"""Scenes the observatory's tests share: a run that reaches a sign-in page, a replay made
ready, a model that keeps thinking, the library task run end to end.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from core.actions import Action
from tests.helpers.pty_terminal import Terminal
from tests.helpers.tui_driver import (
    RoundScript,
    UiTestDriver,
    booking_rounds,
    wait_until,
    write_fixed_log,
)
from tui.screens.replay import ReplayApp

LOGIN_DIGEST = """<browser_state>
URL: http://127.0.0.1:8765/login
Title: Sign in
Tabs:
  tab 0 (current): Sign in — http://127.0.0.1:8765/login
Scroll: the whole page fits in the viewport

[2]<input type=email name=user>Email</input>
*[3]<input type=password name=pass>Password</input>
[4]<button type=submit>Sign in</button>
</browser_state>"""


def login_driver(*, headless: bool = False) -> UiTestDriver:
    return UiTestDriver(
        rounds=[
            RoundScript(
                digest=LOGIN_DIGEST,
                url="http://127.0.0.1:8765/login",
                title="Sign in",
                action=Action("click", {"index": 4}, "Sign in", "tu_9"),
                element_line="[4]<button type=submit>Sign in</button>",
                human="password",
                human_detail="a password field [3] is on the page",
            )
        ],
        headless=headless,
    )


def thinking_driver() -> UiTestDriver:
    """Three rounds that needed no approval, then the run keeps thinking."""
    return UiTestDriver(rounds=[replace(r, ask=None) for r in booking_rounds()[:2]], hold=True)


def waiting_for(driver: UiTestDriver, what: str) -> Any:
    async def run_before(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: driver.waiting == what)
        await pilot.pause(0.1)

    return run_before


def replay_app(tmp_path: Path, *, junk: bool = False) -> ReplayApp:
    log = write_fixed_log(tmp_path / "run.jsonl")
    if junk:
        lines = log.read_bytes().splitlines(keepends=True)
        log.write_bytes(
            b"".join([*lines[:2], b"<html>[/oops] not a record\n", *lines[2:-1]]) + lines[-1][:30]
        )
    return ReplayApp(log, config_dir=tmp_path / "config", persist_theme=False)


def replay_ready(app: ReplayApp) -> Any:
    async def run_before(pilot: Pilot[Any]) -> None:
        await wait_until(
            pilot,
            lambda: (
                app.replay_screen is not None
                and app.replay_screen.scan_done
                and app.replay_screen.verify_report is not None
            ),
        )
        await pilot.pause(0.1)

    return run_before


LIBRARY_TASK = "say when the library opens"


def quit_after_success(term: Terminal) -> int:
    """Wait for the run in ``term`` to finish with success, press q; the exit code."""
    term.read_until(b"Run finished: success", timeout=120)
    term.write(b"q")
    return term.wait(timeout=60)


def run_library_task(tmp_path: Path) -> Terminal:
    """``handrail run`` of a one-round scripted plan (the answer "Opens at 9.") on a
    pseudo-terminal, its audit log in ``tmp_path/logs``, quit with q once it succeeded: the
    terminal, with everything it showed. Asserts exit code 0."""
    plan = tmp_path / "plan.jsonl"
    plan.write_text(
        '{"tool": "finish", "input": {"success": true, "answer": "Opens at 9."}, '
        '"reason": "Nothing to do."}\n'
    )
    env = dict(os.environ) | {
        "TERM": "xterm-256color",
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    term = Terminal(
        [
            sys.executable,
            "-m",
            "tui.cli.main",
            "run",
            LIBRARY_TASK,
            "--headless",
            "--model",
            f"scripted:{plan}",
            "--audit-dir",
            str(tmp_path / "logs"),
            "--profile",
            str(tmp_path / "profile"),
        ],
        env,
    )
    try:
        code = quit_after_success(term)
    finally:
        term.close()
    assert code == 0
    return term
