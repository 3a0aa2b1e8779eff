"""Running without a display: the run goes headless and says so, and the hand-over screen
names the missing display as the cause (not a --headless the person never passed)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.browser.display import NO_DISPLAY
from core.run.events import HumanRequest
from tests.helpers.fake_anthropic import FakeAnthropic
from tests.helpers.tui_driver import wait_until
from tests.helpers.tui_scenes import login_driver
from tui.app import HandrailApp
from tui.screens.human_pause import HumanPauseScreen

ROOT = Path(__file__).resolve().parents[2]


def test_a_run_without_a_display_goes_headless_and_says_so(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    fake.add_tool_use("finish", {"success": True, "answer": "done", "reason": "test"})
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tui.cli.main",
            "run",
            "finish at once",
            "--no-tui",
            "--approve",
            "none",
            "--audit-dir",
            str(tmp_path / "logs"),
            "--profile",
            str(tmp_path / "profile"),
        ],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"{NO_DISPLAY}, so Chrome runs headless" in done.stderr
    assert "--headless" in done.stderr


def _request(app: HandrailApp) -> HumanRequest:
    screen = app.screen
    assert isinstance(screen, HumanPauseScreen)
    return screen.request


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_hand_over_names_the_missing_display(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    driver = login_driver(headless=True)
    app = HandrailApp(driver, config_dir=tmp_path, persist_theme=False, headless_cause=NO_DISPLAY)
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HumanPauseScreen))
        assert _request(app).headless
        text = str(app.screen.query_one("#human-headless").render())
        assert "because there is no display" in text
        assert "without --headless" not in text


async def test_the_hand_over_after_headless_by_choice_still_names_the_flag(
    tmp_path: Path,
) -> None:
    driver = login_driver(headless=True)
    app = HandrailApp(driver, config_dir=tmp_path, persist_theme=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HumanPauseScreen))
        text = str(app.screen.query_one("#human-headless").render())
        assert "without --headless" in text


@pytest.mark.parametrize("decision", ["approval", "hand-over"])
async def test_the_headless_toast_never_covers_a_decisions_keys_at_80x24(
    tmp_path: Path, decision: str
) -> None:
    from tests.helpers.tui_driver import UiTestDriver, booking_rounds
    from tui.screens.approval import ApprovalScreen

    driver = (
        UiTestDriver(rounds=[booking_rounds()[0]], headless=True)
        if decision == "approval"
        else login_driver(headless=True)
    )
    shown = ApprovalScreen if decision == "approval" else HumanPauseScreen
    app = HandrailApp(driver, config_dir=tmp_path, persist_theme=False, headless_cause=NO_DISPLAY)
    async with app.run_test(size=(80, 24)) as pilot:
        assert any("Chrome runs headless" in n.message for n in app._notifications)
        await wait_until(pilot, lambda: isinstance(app.screen, shown))
        await pilot.pause()
        # No toast over the dialog: its key legend (the last lines) is what the person reads.
        assert list(app._notifications) == []
        assert not app.screen.query("Toast")
