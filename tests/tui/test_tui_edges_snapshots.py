"""Snapshots of the observatory's edges at 80x24 and 120x40: before the first round, the
finish notice, the ctrl+c question, the footer of a live run and of replay, the hand-over
without a display. Update only after looking at the report: pytest --snapshot-update."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from core.browser.display import NO_DISPLAY
from core.run.events import EventSink, RunFinished, Supervisor
from tests.helpers.tui_driver import (
    UiTestDriver,
    booking_rounds,
    shown_run_screen,
    still_clock,
    wait_until,
)
from tests.helpers.tui_scenes import (
    login_driver,
    replay_app,
    replay_ready,
    thinking_driver,
    waiting_for,
)
from tui import observatory
from tui.app import HandrailApp
from tui.observatory import ObservatoryApp
from tui.screens.confirm import ConfirmScreen
from tui.widgets.header import HeaderFacts
from tui.widgets.shell import ShellScreen

SIZES = pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])


def app_for(run: Any, tmp_path: Path, **kw: Any) -> HandrailApp:
    return HandrailApp(run, config_dir=tmp_path, clock=still_clock, persist_theme=False, **kw)


class FirstFrame(ObservatoryApp):
    """The observatory's first frame alone: ``HandrailApp`` paints it, then replaces it with
    the run screen within a moment (tests/tui/test_tui_startup.py sees that in a terminal)."""

    CSS_PATH = Path(observatory.__file__).with_name("observatory.tcss")

    def get_default_screen(self) -> ShellScreen:
        facts = HeaderFacts(
            task="Book one seat from Lyon to Paris",
            model="scripted plan: rail-and-co-plan.jsonl",
            state="starting Chrome…",
            elapsed_s=0.0,
        )
        return ShellScreen(facts, on_resume=lambda: None)


@SIZES
def test_the_first_frame(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    app = FirstFrame(config_dir=tmp_path, clock=still_clock, persist_theme=False)
    assert snap_compare(app, terminal_size=size)


@SIZES
def test_starting_chrome(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    async def starting(sink: EventSink, supervisor: Supervisor) -> RunFinished:
        app.show_phase("starting Chrome…")
        await asyncio.Event().wait()
        raise AssertionError("never reached")

    app = app_for(starting, tmp_path, task="Book one seat from Lyon to Paris")

    async def run_before(pilot: Pilot[Any]) -> None:
        screen = await shown_run_screen(pilot, app)
        await wait_until(pilot, lambda: screen.header_facts().state == "starting Chrome…")
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@SIZES
def test_finished_with_its_notice(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    driver = UiTestDriver(rounds=[replace(r, ask=None) for r in booking_rounds()])
    app = app_for(driver, tmp_path)

    async def run_before(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: app.exit_code is not None)
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@SIZES
def test_ctrl_c_asks_while_live(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    driver = thinking_driver()
    app = app_for(driver, tmp_path)

    async def run_before(pilot: Pilot[Any]) -> None:
        await waiting_for(driver, "hold")(pilot)
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@SIZES
def test_live_footer(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    driver = thinking_driver()
    assert snap_compare(
        app_for(driver, tmp_path), terminal_size=size, run_before=waiting_for(driver, "hold")
    )


@SIZES
def test_replay_footer(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    app = replay_app(tmp_path)
    assert snap_compare(app, terminal_size=size, run_before=replay_ready(app))


@SIZES
def test_hand_over_without_a_display(
    snap_compare: Any, tmp_path: Path, size: tuple[int, int]
) -> None:
    driver = login_driver(headless=True)
    app = app_for(driver, tmp_path, headless_cause=NO_DISPLAY)
    assert snap_compare(app, terminal_size=size, run_before=waiting_for(driver, "human"))
