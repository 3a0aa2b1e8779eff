"""Snapshots of the observatory (pytest-textual-snapshot). Cursor blinking is off (the
approval inputs are hidden until used), the clock is still, and the config folder is a
temporary one. Update only after looking at the report: pytest --snapshot-update."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.helpers.tui_driver import (
    UiTestDriver,
    booking_rounds,
    still_clock,
)
from tests.helpers.tui_scenes import (
    login_driver,
    replay_app,
    replay_ready,
    thinking_driver,
    waiting_for,
)
from tui.app import HandrailApp

WIDE = (160, 40)
MEDIUM = (120, 36)
NARROW = (80, 24)


def run_app(driver: UiTestDriver, tmp_path: Path, theme: str | None = None) -> HandrailApp:
    return HandrailApp(
        driver, theme=theme, config_dir=tmp_path, clock=still_clock, persist_theme=False
    )


def test_run_screen_wide(snap_compare: Any, tmp_path: Path) -> None:
    driver = thinking_driver()
    assert snap_compare(
        run_app(driver, tmp_path), terminal_size=WIDE, run_before=waiting_for(driver, "hold")
    )


def test_run_screen_grid(snap_compare: Any, tmp_path: Path) -> None:
    driver = thinking_driver()
    assert snap_compare(
        run_app(driver, tmp_path), terminal_size=MEDIUM, run_before=waiting_for(driver, "hold")
    )


def test_run_screen_80x24_tabs(snap_compare: Any, tmp_path: Path) -> None:
    driver = thinking_driver()
    assert snap_compare(
        run_app(driver, tmp_path), terminal_size=NARROW, run_before=waiting_for(driver, "hold")
    )


def test_run_screen_80x24_model_tab(snap_compare: Any, tmp_path: Path) -> None:
    driver = thinking_driver()

    async def run_before(pilot: Pilot[Any]) -> None:
        await waiting_for(driver, "hold")(pilot)
        await pilot.press("2")

    assert snap_compare(run_app(driver, tmp_path), terminal_size=NARROW, run_before=run_before)


def test_run_screen_older_round_not_following(snap_compare: Any, tmp_path: Path) -> None:
    driver = thinking_driver()

    async def run_before(pilot: Pilot[Any]) -> None:
        await waiting_for(driver, "hold")(pilot)
        await pilot.press("up")

    assert snap_compare(run_app(driver, tmp_path), terminal_size=WIDE, run_before=run_before)


def test_approval_modal(snap_compare: Any, tmp_path: Path) -> None:
    driver = UiTestDriver()
    assert snap_compare(
        run_app(driver, tmp_path), terminal_size=MEDIUM, run_before=waiting_for(driver, "approval")
    )


def test_approval_modal_risky(snap_compare: Any, tmp_path: Path) -> None:
    driver = UiTestDriver(rounds=booking_rounds()[1:2])
    assert snap_compare(
        run_app(driver, tmp_path), terminal_size=MEDIUM, run_before=waiting_for(driver, "approval")
    )


def test_approval_modal_80x24(snap_compare: Any, tmp_path: Path) -> None:
    driver = UiTestDriver()
    assert snap_compare(
        run_app(driver, tmp_path), terminal_size=NARROW, run_before=waiting_for(driver, "approval")
    )


def test_human_pause(snap_compare: Any, tmp_path: Path) -> None:
    driver = login_driver()
    assert snap_compare(
        run_app(driver, tmp_path), terminal_size=MEDIUM, run_before=waiting_for(driver, "human")
    )


def test_human_pause_headless(snap_compare: Any, tmp_path: Path) -> None:
    driver = login_driver(headless=True)
    assert snap_compare(
        run_app(driver, tmp_path), terminal_size=MEDIUM, run_before=waiting_for(driver, "human")
    )


def test_help_screen(snap_compare: Any, tmp_path: Path) -> None:
    driver = thinking_driver()

    async def run_before(pilot: Pilot[Any]) -> None:
        await waiting_for(driver, "hold")(pilot)
        await pilot.press("question_mark")

    assert snap_compare(run_app(driver, tmp_path), terminal_size=MEDIUM, run_before=run_before)


@pytest.mark.parametrize("theme", ["dark", "light", "high-contrast"])
def test_each_theme(snap_compare: Any, tmp_path: Path, theme: str) -> None:
    driver = UiTestDriver(rounds=booking_rounds()[:1])  # waiting for approval over one round
    assert snap_compare(
        run_app(driver, tmp_path, theme=theme),
        terminal_size=WIDE,
        run_before=waiting_for(driver, "approval"),
    )


def test_replay(snap_compare: Any, tmp_path: Path) -> None:
    app = replay_app(tmp_path)
    assert snap_compare(app, terminal_size=WIDE, run_before=replay_ready(app))


def test_replay_with_junk_and_torn_lines(snap_compare: Any, tmp_path: Path) -> None:
    app = replay_app(tmp_path, junk=True)

    async def run_before(pilot: Pilot[Any]) -> None:
        await replay_ready(app)(pilot)
        await pilot.press("e")  # the first error: the junk line

    assert snap_compare(app, terminal_size=WIDE, run_before=run_before)


def test_replay_80x24(snap_compare: Any, tmp_path: Path) -> None:
    app = replay_app(tmp_path)
    assert snap_compare(app, terminal_size=NARROW, run_before=replay_ready(app))
