"""After the observatory closes: the real ``handrail run`` in a pseudo-terminal, quit with q,
prints what the run came to."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.pty_terminal import ANSI, ROOT, Terminal
from tests.helpers.tui_scenes import (
    run_library_task,
)

# End to end: whole actions or runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow


def test_q_after_the_run_prints_the_summary(tmp_path: Path) -> None:
    term = run_library_task(tmp_path)
    (log,) = (tmp_path / "logs").glob("*.jsonl")
    tail = ANSI.sub(b"", term.seen).decode(errors="replace").split("handrail: success", 1)
    assert len(tail) == 2, term.seen[-1500:]
    lines = ("handrail: success" + tail[1]).splitlines()
    assert lines[0] == "handrail: success (exit code 0)"
    assert lines[1].split() == ["answer:", "Opens", "at", "9."]
    assert lines[2].split() == ["audit", "log:", str(log)]
    # The replay command as printed runs from where the run was started (tui/cli/command.py:
    # the launcher's path when handrail is not on PATH).
    label, program, *rest = lines[3].split()
    assert (label, rest) == ("replay:", ["replay", str(log)])
    done = subprocess.run(
        [program, "--version"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stdout.startswith("handrail "), (program, done.stderr)


def test_a_configuration_error_leaves_the_screen_and_says_what_to_change(tmp_path: Path) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
    } | {"TERM": "xterm-256color", "XDG_CONFIG_HOME": str(tmp_path / "config")}
    term = Terminal(
        [
            sys.executable,
            "-m",
            "tui.cli.main",
            "run",
            "anything",
            "--headless",
            "--model",
            "anthropic:claude-sonnet-5-5",
            "--audit-dir",
            str(tmp_path / "logs"),
            "--profile",
            str(tmp_path / "profile"),
        ],
        env,
    )
    try:
        code = term.wait(timeout=60)
    finally:
        term.close()
    assert code == 2
    shown = ANSI.sub(b"", term.seen).decode(errors="replace")
    assert "handrail: No Anthropic API key: ANTHROPIC_API_KEY is not set." in shown
    assert "exit code" not in shown  # no run, so no summary
    assert not (tmp_path / "profile").exists()  # checked before any browser started


def test_replay_killed_politely_leaves_the_terminal_without_a_traceback(tmp_path: Path) -> None:
    """SIGTERM (a polite kill) or SIGHUP (the terminal closed) ends a replay as q does."""
    import signal

    env = dict(os.environ) | {
        "TERM": "xterm-256color",
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    log = ROOT / "audit_logs" / "sample-demo.jsonl"
    for sig in (signal.SIGTERM, signal.SIGHUP):
        term = Terminal([sys.executable, "-m", "tui.cli.main", "replay", str(log)], env)
        try:
            term.read_until(b"round 1", timeout=120)
            term.proc.send_signal(sig)
            code = term.wait(timeout=60)
        finally:
            term.close()
        shown = ANSI.sub(b"", term.seen).decode(errors="replace")
        assert code == 130, (sig, shown[-1500:])
        assert "Traceback" not in shown, (sig, shown[-3000:])
