"""Start-up: what a run loads, and what the observatory shows before the first round.

Speed itself is measured by bench/bench_startup.py (by hand), never here; these tests pin
the structure that makes start-up fast: no textual in console mode, one model SDK only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.fake_anthropic import FakeAnthropic

ROOT = Path(__file__).resolve().parent.parent

_PROBE = """
import json, sys
from tui.cli import main
code = main(sys.argv[1:])
heavy = ("textual", "anthropic", "openai")
print("LOADED " + json.dumps(sorted({m.split(".")[0] for m in sys.modules} & set(heavy))))
sys.exit(code)
"""


def test_a_console_run_loads_its_own_sdk_and_neither_textual_nor_the_other(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
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
