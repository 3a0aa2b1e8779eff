"""The hand-over screen: resume and abort reach the run; headless says there is no window."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.tui_driver import UiTestDriver, still_clock, wait_until
from tests.helpers.tui_scenes import (
    login_driver,
)
from tui.app import HandrailApp
from tui.screens.human_pause import HumanPauseScreen


def make_app(driver: UiTestDriver, tmp_path: Path) -> HandrailApp:
    return HandrailApp(driver, config_dir=tmp_path, clock=still_clock, persist_theme=False)


async def test_r_resumes(tmp_path: Path) -> None:
    driver = login_driver()
    app = make_app(driver, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "human")
        assert isinstance(app.screen, HumanPauseScreen)
        await wait_until(
            pilot, lambda: app.run_screen is not None and app.run_screen.run_view.state == "paused"
        )
        await pilot.press("r")
        await wait_until(pilot, lambda: app.exit_code is not None)
        assert driver.human_responses == ["resume"]
        assert app.exit_code == 0
        assert app.run_screen is not None
        assert app.run_screen.run_view.rounds[0].pauses[0]["response"] == "resume"


async def test_x_aborts(tmp_path: Path) -> None:
    driver = login_driver()
    app = make_app(driver, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "human")
        await pilot.press("x")
        await wait_until(pilot, lambda: app.exit_code is not None)
        assert driver.human_responses == ["abort"]
        assert app.exit_code == 130


async def test_headless_says_there_is_no_window_and_offers_abort_first(tmp_path: Path) -> None:
    driver = login_driver(headless=True)
    app = make_app(driver, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "human")
        screen = app.screen
        assert isinstance(screen, HumanPauseScreen)
        assert "no window" in str(screen.query_one("#human-headless").render())
        keys = str(screen.query_one("#human-keys").render())
        assert keys.index("abort") < keys.index("resume anyway")
        await pilot.press("x")
        await wait_until(pilot, lambda: driver.human_responses == ["abort"])


async def test_headless_can_still_resume(tmp_path: Path) -> None:
    driver = login_driver(headless=True)
    app = make_app(driver, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "human")
        await pilot.press("r")
        await wait_until(pilot, lambda: driver.human_responses == ["resume"])


async def test_escape_does_not_dismiss(tmp_path: Path) -> None:
    driver = login_driver()
    app = make_app(driver, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "human")
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert isinstance(app.screen, HumanPauseScreen)
        assert driver.human_responses == []
