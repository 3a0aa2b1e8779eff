"""scripts/bootstrap.sh skips what is done (issue 27, minor 12): run again on an unchanged
checkout it leaves pip alone; a changed pyproject.toml installs again.

The script runs for real in a copy of the checkout's layout whose .venv/bin/python only
writes down how it was called (no package is installed, nothing is downloaded)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "bootstrap.sh", tmp_path / "scripts" / "bootstrap.sh")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "handrail"\n')
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\necho "$*" >> {tmp_path / "pip-calls"}\n')
    python.chmod(0o755)
    return tmp_path


def bootstrap(checkout: Path) -> list[str]:
    """Run the script; the pip calls it made this time."""
    calls = checkout / "pip-calls"
    before = calls.read_text().splitlines() if calls.exists() else []
    chrome = shutil.which("chromium") or shutil.which("google-chrome") or "/usr/bin/chromium"
    done = subprocess.run(
        ["bash", "scripts/bootstrap.sh"],
        cwd=checkout,
        env={**os.environ, "CHROME_PATH": chrome},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    after = calls.read_text().splitlines() if calls.exists() else []
    return after[len(before) :]


def test_a_second_run_leaves_pip_alone_until_pyproject_changes(checkout: Path) -> None:
    first = bootstrap(checkout)
    assert any("pip install" in call and "-e ." in call for call in first), first
    assert bootstrap(checkout) == []
    (checkout / "pyproject.toml").write_text('[project]\nname = "handrail"\nversion = "2"\n')
    assert any("-e ." in call for call in bootstrap(checkout))
