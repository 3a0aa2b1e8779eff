"""Start-up: what a run loads, and what the observatory shows before the first round.

Speed itself is measured by bench/bench_startup.py (by hand), never here; these tests pin
the structure that makes start-up fast: no textual in console mode, one model SDK only, and
a first frame (the task, the model, "starting Chrome…", Help and Quit) that comes before
the rest of the observatory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.fake_anthropic import FakeAnthropic
from tests.helpers.pty_terminal import ANSI, Terminal
from tests.helpers.tui_scenes import LIBRARY_TASK, quit_after_success, run_library_task

# End to end: whole actions or runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]

_PROBE = """
import json, sys
from tui.cli.main import main
code = main(sys.argv[1:])
heavy = ("textual", "rich", "pygments", "anthropic", "openai")
print("LOADED " + json.dumps(sorted({m.split(".")[0] for m in sys.modules} & set(heavy))))
sys.exit(code)
"""


def test_a_console_run_loads_its_own_sdk_and_no_terminal_toolkit_nor_the_other_sdk(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    # rich and pygments: structlog would load them to draw tracebacks (core/__init__.py),
    # ~0.2 s before the first model request.
    fake.add_tool_use("finish", {"success": True, "answer": "nothing to do", "reason": "test"})
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _PROBE,
            "run",
            "finish at once",
            "--no-tui",
            "--headless",
            "--approve",
            "none",
            "--audit-dir",
            str(tmp_path / "logs"),
            "--profile",
            str(tmp_path / "profile"),
        ],
        cwd=ROOT,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert fake.message_bodies, "the model was never asked"
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("LOADED ")]
    assert json.loads(line.removeprefix("LOADED ")) == ["anthropic"]


def test_the_task_and_starting_chrome_show_first_then_the_observatory_runs(
    tmp_path: Path,
) -> None:
    term = run_library_task(tmp_path)
    shown = ANSI.sub(b"", term.seen).decode(errors="replace")
    # The first frame already says what runs and how to leave; the observatory's panes come
    # after it, and the run itself only once they are up. (The model's label is on the
    # header's second line: one CI run with both cores busy painted a first frame without
    # it, so it is only required before the run's answer.)
    panes_at = shown.index("waiting for the first round")
    first = shown[:panes_at]
    for wanted in (LIBRARY_TASK, "Help", "Quit"):
        assert wanted in first, (wanted, first[-1500:])
    answer_at = shown.index("Opens at 9.")
    assert answer_at > panes_at
    for wanted in ("scripted plan: plan.jsonl", "starting Chrome…"):
        assert wanted in shown[:answer_at], (wanted, shown[:answer_at][-1500:])


def test_help_asked_for_on_the_first_frame_shows_and_the_run_follows_it(tmp_path: Path) -> None:
    plan = tmp_path / "plan.jsonl"
    plan.write_text('{"tool": "finish", "input": {"success": true, "answer": "Opens at 9."}}\n')
    env = dict(os.environ) | {"TERM": "xterm-256color", "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    term = Terminal(
        [
            *(sys.executable, "-m", "tui.cli.main", "run", "say when the library opens"),
            *("--headless", "--model", f"scripted:{plan}"),
            *("--audit-dir", str(tmp_path / "logs"), "--profile", str(tmp_path / "profile")),
        ],
        env,
    )
    try:
        term.read_until("starting Chrome…".encode(), timeout=60)
        term.write(b"?")  # while the rest of the observatory loads
        term.read_until(b"Everywhere", timeout=60)  # the help screen's app-wide keys
        term.write(b"\x1b")
        code = quit_after_success(term)
    finally:
        term.close()
    assert code == 0
