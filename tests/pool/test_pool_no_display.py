"""``handrail pool start`` where there is no display, and when Chrome cannot start.

As the person runs them: ``python -m tui.cli.main`` in a subprocess, DISPLAY and
WAYLAND_DISPLAY unset, real Chromium. The hints these commands print are followed as
printed, to show that they lead somewhere.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.browser.errors import BrowserError
from core.pool import pool
from core.pool.detached import kill_group, launch_detached
from tests.helpers.waiting import until

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
NAME = "nodisplay"


def handrail(*args: str) -> subprocess.CompletedProcess[str]:
    """``handrail ARGS`` with no display, as a person in an SSH session would run it."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    return subprocess.run(
        [sys.executable, "-m", "tui.cli.main", *args],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def hinted(text: str) -> list[list[str]]:
    """The handrail commands a message tells the person to run, as argv lists, the program
    as printed (``handrail`` on PATH, else the launcher's path: tui/cli/command.py)."""
    return [found.split() for found in re.findall(r"`((?:\S*/)?handrail [^`]+)`", text)]


def as_typed(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """A hinted command run exactly as printed, from where it was printed, no display."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    return subprocess.run(
        argv,
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def stopped() -> Iterator[None]:
    yield
    handrail("pool", "stop", "--force", "--name", NAME)


def test_pool_start_without_a_display_goes_headless_and_its_hints_work(stopped: None) -> None:
    # Before any pool: the hint names the command that starts it.
    missing = handrail("pool", "status", "--name", NAME)
    assert missing.returncode == 2
    (start,) = hinted(missing.stderr)
    assert start[1:3] == ["pool", "start"]

    started = as_typed([*start, "--slots", "2"])
    assert started.returncode == 0, started.stderr
    assert "there is no display" in started.stderr and "runs headless" in started.stderr
    assert "may be in use" not in started.stderr
    status = json.loads(handrail("pool", "status", "--json", "--name", NAME).stdout)
    assert [slot["state"] for slot in status["slots"]] == ["idle", "idle"]

    # Its browser dies under it: the status says so, and the hint it prints works.
    kill_group(pool.status(NAME).info.browser_pid)
    until(lambda: not pool.status(NAME).browser_alive, 30, "the pool's browser gone")
    dead = handrail("pool", "status", "--name", NAME)
    assert "browser not running" in dead.stdout, dead.stdout
    commands = hinted(dead.stdout + dead.stderr)
    assert commands, dead.stdout
    for command in commands:
        followed = as_typed(command)
        assert followed.returncode == 0, (command, followed.stderr)
    again = json.loads(handrail("pool", "status", "--json", "--name", NAME).stdout)
    assert again["browser_alive"] is True


def test_a_chrome_that_cannot_start_is_told_by_its_own_cause(stopped: None, tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    first = handrail("pool", "start", "--slots", "1", "--name", NAME, "--profile", str(profile))
    assert first.returncode == 0, first.stderr
    # A second pool on the same profile: Chrome refuses it (its profile lock), and says so.
    second = handrail(
        "pool", "start", "--slots", "1", "--name", f"{NAME}2", "--profile", str(profile)
    )
    handrail("pool", "stop", "--force", "--name", f"{NAME}2")
    assert second.returncode == 2
    assert f"the profile {profile} is in use by another Chrome" in second.stderr
    assert "SingletonLock" in second.stderr or "ProcessSingleton" in second.stderr


async def test_chrome_asked_for_a_window_without_a_display_is_told_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with pytest.raises(BrowserError) as failed:
        started = await launch_detached(tmp_path, profile=tmp_path / "profile", headless=False)
        assert started.pid is not None
        kill_group(started.pid)  # not reached where there is no display
    told = str(failed.value)
    assert "Chrome found no display" in told and "Missing X server or $DISPLAY" in told, told
    assert "in use" not in told


def test_the_hint_of_a_fleet_without_its_pool_starts_it(stopped: None, tmp_path: Path) -> None:
    plan = tmp_path / "plan.jsonl"
    plan.write_text('{"tool": "finish", "input": {"success": true, "answer": "done"}}\n')
    tasks = tmp_path / "tasks.toml"
    tasks.write_text(f'model = "scripted:{plan}"\n\n[[task]]\ntask = "nothing to do"\n')
    refused = handrail("fleet", str(tasks), "--pool", NAME)
    assert refused.returncode == 2
    (start,) = hinted(refused.stderr)
    started = as_typed([*start, "--slots", "1"])
    assert started.returncode == 0, started.stderr
    assert "runs headless" in started.stderr
    assert pool.status(NAME).browser_alive
