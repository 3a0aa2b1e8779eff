"""The pool screen's row keys (issue 27, item 14), against a real pool's Chromium: `s` shows
the slot's tab, `c` clears a slot and `X` stops the pool, each after a confirmation and
refused with the pool's own words for a running slot; `r` gives the command that resumes a
completed slot, as it can be typed here."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from core.pool import pool
from core.pool.state import PoolError, PoolState
from tests.helpers.tui_driver import wait_until
from tests.pool.test_pool import dead_pid, start
from tui.cli.command import handrail_command
from tui.screens.confirm import ConfirmScreen
from tui.screens.pool_screen import PoolScreen, PoolWatchApp

pytestmark = pytest.mark.slow

WAIT = 60.0


def busy_and_done(name: str) -> tuple[int, int]:
    """Slot numbers of a running claim (this process) and a completed one (its run gone)."""
    state = PoolState.open(name)
    try:
        busy = state.claim("busy-run")
        done = state.claim("done-run", pid=dead_pid()[0], pid_started=1)
    finally:
        state.close()
    return busy.slot, done.slot


def said(app: Any, words: str) -> bool:
    return any(words in n.message for n in app._notifications)


def watching(name: str, tmp_path: Path) -> PoolWatchApp:
    return PoolWatchApp(name, poll_interval=0.1, config_dir=tmp_path, persist_theme=False)


async def asked(pilot: Any, app: PoolWatchApp, key: str, answer: str) -> None:
    """Press ``key``, see the question, answer it."""
    await pilot.press(key)
    await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
    await pilot.press(answer)


async def on_slot(pilot: Any, screen: PoolScreen, slot: int) -> None:
    await wait_until(pilot, lambda: any(r.slot == str(slot) for r in screen.rows), timeout=WAIT)
    screen.table.move_cursor(row=[r.slot for r in screen.rows].index(str(slot)))
    await pilot.pause()


async def test_clear_asks_then_wipes_a_completed_slot_and_never_a_running_one(
    name: str, tmp_path: Path
) -> None:
    await asyncio.to_thread(start, name, 3)
    busy, done = busy_and_done(name)
    app = watching(name, tmp_path)
    async with app.run_test(size=(140, 44)) as pilot:
        screen = app.pool_screen
        assert screen is not None
        # Asked first; "no" leaves it as it was.
        await on_slot(pilot, screen, done)
        await asked(pilot, app, "c", "n")
        await wait_until(pilot, lambda: app.screen is screen)
        assert pool.status(name).slots[done - 1].state == "completed"
        # "yes" clears it: idle again, a fresh context.
        before = pool.status(name).slots[done - 1].context_id
        await asked(pilot, app, "c", "y")
        await wait_until(pilot, lambda: said(app, f"slot {done} cleared"), timeout=WAIT)
        after = pool.status(name).slots[done - 1]
        assert after.state == "idle" and after.context_id != before
        # A running slot: refused in the pool's own words, and left running.
        await on_slot(pilot, screen, busy)
        await asked(pilot, app, "c", "y")
        await wait_until(pilot, lambda: said(app, "never cleared"), timeout=WAIT)
        assert pool.status(name).slots[busy - 1].state == "running"


async def test_resume_gives_the_command_and_show_brings_the_tab_forward(
    name: str, tmp_path: Path
) -> None:
    await asyncio.to_thread(start, name, 3)
    busy, done = busy_and_done(name)
    app = watching(name, tmp_path)
    async with app.run_test(size=(140, 44)) as pilot:
        screen = app.pool_screen
        assert screen is not None
        await on_slot(pilot, screen, done)
        await pilot.press("r")
        command = f"{handrail_command()} run TASK --pool {name} --resume-slot {done}"
        await wait_until(pilot, lambda: said(app, command))
        await on_slot(pilot, screen, busy)
        await pilot.press("r")
        await wait_until(pilot, lambda: said(app, f"slot {busy} is not completed"))
        await pilot.press("s")
        await wait_until(pilot, lambda: said(app, "at the front"), timeout=WAIT)


async def test_stop_asks_is_refused_while_a_slot_runs_then_stops(name: str, tmp_path: Path) -> None:
    await asyncio.to_thread(start, name, 2)
    busy_and_done(name)
    app = watching(name, tmp_path)
    async with app.run_test(size=(140, 44)) as pilot:
        screen = app.pool_screen
        assert screen is not None
        await wait_until(pilot, lambda: bool(screen.rows), timeout=WAIT)
        await asked(pilot, app, "X", "y")
        await wait_until(pilot, lambda: said(app, "running"), timeout=WAIT)
        assert pool.status(name).browser_alive
        state = PoolState.open(name)
        try:
            state.finish("busy-run")
        finally:
            state.close()
        await asked(pilot, app, "X", "y")
        await wait_until(pilot, lambda: said(app, "browser stopped"), timeout=WAIT)
    with pytest.raises(PoolError):  # the pool is gone with its browser
        pool.status(name)
