"""handrail's command line in a child process, as a person types it (tests that check what a
command prints and how it exits)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def handrail(
    *args: str, timeout: float = 120, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``handrail ARGS`` from the checkout, its output captured as text; ``env`` is added to
    this process's environment. Never raises for the exit code: the tests read it."""
    return subprocess.run(
        [sys.executable, "-m", "tui.cli.main", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, **(env or {})},
    )
