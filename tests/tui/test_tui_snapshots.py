"""Snapshots of the observatory (pytest-textual-snapshot). Cursor blinking is off (the
approval inputs are hidden until used), the clock is still, and the config folder is a
temporary one. Update only after looking at the report: pytest --snapshot-update."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.tui.test_tui_driver import (
    UiTestDriver,
    booking_rounds,
    still_clock,
    wait_until,
    write_fixed_log,
)
from tests.tui.test_tui_human_pause import login_driver
from tui.app import HandrailApp
from tui.screens.replay import ReplayApp

WIDE = (160, 40)
MEDIUM = (120, 36)
NARROW = (80, 24)


def thinking_driver() -> UiTestDriver:
    """Three rounds that needed no approval, then the run keeps thinking."""
    return UiTestDriver(rounds=[replace(r, ask=None) for r in booking_rounds()[:2]], hold=True)


def run_app(driver: UiTestDriver, tmp_path: Path, theme: str | None = None) -> HandrailApp:
    return HandrailApp(
        driver, theme=theme, config_dir=tmp_path, clock=still_clock, persist_theme=False
    )


def waiting_for(driver: UiTestDriver, what: str) -> Any:
    async def run_before(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: driver.waiting == what)
        await pilot.pause(0.1)

    return run_before


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
