"""A pool over a grid: slots in several browsers, claims by free capacity, a dead browser's
slots lost while the rest go on, and isolation on every browser as on one.

The browsers here are stand-ins for a grid's hosts: Chromium processes of the test's own,
each started detached with a DevTools endpoint of its own (tests/pool/test_browserless.py
holds browserless itself)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from core.pool import pool
from core.pool.detached import Started, kill_group, launch_detached, wait_gone
from core.pool.pool import PoolRun
from core.pool.state import PoolFull
from core.run.fleet import load_fleet
from tests.helpers.cli import handrail
from tests.helpers.site_server import FixtureSite
from tests.helpers.tui_driver import wait_until
from tests.pool.test_fleet import WAIT, asked, tasks_file
from tests.pool.test_pool import load
from tests.pool.test_pool_isolation import NOTHING, found, leased
from tui.screens.fleet import FleetApp, FleetApproval

pytestmark = pytest.mark.slow


@pytest.fixture
async def hosts(tmp_path: Path) -> AsyncIterator[list[Started]]:
    """Two browsers of their own, as two hosts of a grid would be."""
    started = []
    try:
        for n in (1, 2):
            folder = tmp_path / f"host{n}"
            folder.mkdir()
            started.append(await launch_detached(folder, profile=folder / "profile", headless=True))
        yield started
    finally:
        for host in started:
            assert host.pid is not None
            kill_group(host.pid)
            await wait_gone(host.pid, host.pid_started, 10)


def pool_command(*args: str) -> subprocess.CompletedProcess[str]:
    return handrail("pool", *args, timeout=180)


async def test_claims_go_to_the_browser_with_most_free_slots(
    name: str, hosts: list[Started]
) -> None:
    a, b = (h.endpoint for h in hosts)
    info = await pool.start(name, slots=3, endpoints=[a, b])
    assert info.kind == "grid"
    leases = []
    try:
        for n in range(4):
            lease = PoolRun(name, f"run-{n}", "a task")
            leases.append((lease, await lease.open()))
        used = [lease.endpoint for lease, _ in leases]
        assert sorted(used) == sorted([a, a, b, b])  # 2 and 2, not 3 and 1
        slots = pool.status(name).slots
        assert [s.endpoint for s in slots] == [a, a, a, b, b, b]  # each slot knows its browser
        for lease, browser in leases:  # each run's tab is in the browser its slot names
            assert browser.current is not None
            assert slots[lease.slot_of[browser.current.target_id] - 1].endpoint == lease.endpoint
    finally:
        for lease, browser in leases:
            await lease.end(browser)
            await browser.close()
    status = pool_command("status", "--name", name, "--json")
    assert status.returncode == 0, status.stderr
    shown = json.loads(status.stdout)
    assert [e["answers"] for e in shown["endpoints"]] == [True, True]
    text = pool_command("status", "--name", name).stdout
    assert text.count("answers; 3 of 3 slots free") == 2


async def test_a_dead_browser_loses_its_slots_and_the_rest_go_on(
    name: str, hosts: list[Started]
) -> None:
    a, b = (h.endpoint for h in hosts)
    await pool.start(name, slots=2, endpoints=[a, b])
    first = PoolRun(name, "run-on-a", "a task")
    browser = await first.open()
    assert first.endpoint == a
    dead = hosts[0]
    assert dead.pid is not None
    cut = asyncio.Event()
    browser.connection.on_close(lambda _reason: cut.set())
    kill_group(dead.pid)
    await wait_gone(dead.pid, dead.pid_started, 10)
    async with asyncio.timeout(10):
        await cut.wait()  # the run's connection saw its browser go
    lost = await first.end(browser)
    await browser.close()
    by_slot = {s.slot: s for s in pool.status(name).slots}
    assert by_slot[lost[0]].state == "lost" and by_slot[lost[0]].lost_reason
    # The dead browser's other slot is lost as well; claims go to the live one until it is
    # full, then the pool is full (never a slot in a browser that does not answer).
    assert [s.state for s in by_slot.values() if s.endpoint == a] == ["lost", "lost"]
    runs = []
    for n in range(2):
        lease = PoolRun(name, f"after-{n}", "a task")
        runs.append((lease, await lease.open()))
        assert lease.endpoint == b
    with pytest.raises(PoolFull):
        PoolRun(name, "one-too-many", "a task").claim_first()
    for lease, other in runs:
        await lease.end(other)
        await other.close()
    text = pool_command("status", "--name", name).stdout
    assert "DOES NOT ANSWER" in text and "lost:" in text


async def test_a_claim_on_a_browser_that_died_unseen_moves_to_a_live_one(
    name: str, hosts: list[Started]
) -> None:
    a, b = (h.endpoint for h in hosts)
    await pool.start(name, slots=2, endpoints=[a, b])
    dead = hosts[0]
    assert dead.pid is not None
    kill_group(dead.pid)
    await wait_gone(dead.pid, dead.pid_started, 10)
    lease = PoolRun(name, "unaware", "a task")
    browser = await lease.open()  # its first claim was on the dead browser (a tie: the first)
    try:
        assert lease.endpoint == b
    finally:
        await lease.end(browser)
        await browser.close()


async def test_a_reclaimed_slot_on_either_browser_holds_nothing_of_the_last_run(
    name: str, hosts: list[Started], site: FixtureSite
) -> None:
    a, b = (h.endpoint for h in hosts)
    await pool.start(name, slots=1, endpoints=[a, b])
    for n in range(2):  # one run in each browser, leaving its cookie and storage behind
        async with leased(name, f"first-{n}") as (lease, browser):
            assert browser.current is not None
            target = browser.current.target_id
            await load(lease.endpoint or "", target, site.url("/pool/trace.html"))
            assert (await found(lease.endpoint or "", target, site))["cookie"] == "session=ada-4411"
    seen = set()
    for n in range(2):
        async with leased(name, f"second-{n}") as (lease, browser):
            assert browser.current is not None
            seen.add(lease.endpoint)
            assert await found(lease.endpoint or "", browser.current.target_id, site) == NOTHING
    assert seen == {a, b}


SIX = ("kettle", "teapot", "mug", "jug", "tray", "spoon")


async def grid_fleet(
    name: str, hosts: list[Started], tmp_path: Path, site: FixtureSite
) -> tuple[FleetApp, str, str]:
    """A pool of 2 slots in each of the two browsers, and a fleet of six orders over it
    (tests/pool/test_fleet.py's tasks: a click that waits for approval, then finish)."""
    a, b = (h.endpoint for h in hosts)
    await pool.start(name, slots=2, endpoints=[a, b])
    site.clear()
    tasks = tasks_file(tmp_path, site, SIX)
    fleet = load_fleet(tasks, pool=name, default_model="scripted:none")
    app = FleetApp(
        fleet.runs, pool=name, config_dir=tmp_path / "config", persist_theme=False,
        poll_interval=0.1,
    )  # fmt: skip
    return app, a, b


async def test_a_six_task_fleet_over_the_grid_queues_what_does_not_fit_and_asks_in_one_queue(
    name: str, hosts: list[Started], tmp_path: Path, site: FixtureSite
) -> None:
    app, a, b = await grid_fleet(name, hosts, tmp_path, site)
    async with app.run_test(size=(140, 44)) as pilot:
        # Four slots: four runs ask, two wait their turn, each shown with its place.
        await wait_until(pilot, lambda: asked(app) == 4, timeout=WAIT)
        assert [r.number for r in app.queued] == [5, 6]
        _title, rows = app.pool_rows()
        assert sorted(r.state for r in rows if r.state.startswith("queued")) == [
            "queued #1",
            "queued #2",
        ]
        for _ in SIX:
            await wait_until(pilot, lambda: isinstance(app.screen, FleetApproval), timeout=WAIT)
            screen = app.screen
            assert isinstance(screen, FleetApproval)
            await pilot.pause(0.05)
            await pilot.press("a")
            await wait_until(pilot, lambda s=screen: app.screen is not s, timeout=WAIT)
        await wait_until(pilot, lambda: app.done, timeout=WAIT)
    assert [r.exit_code for r in app.runs] == [0] * 6
    assert sorted(p.form["item"][0] for p in site.posts("/fleet/order")) == sorted(SIX)
    used = {s.endpoint for s in pool.status(name).slots if s.run_id}
    assert used == {a, b}  # the fleet's runs went to both browsers


async def test_a_browser_lost_mid_fleet_ends_its_runs_clearly_and_the_fleet_finishes_the_rest(
    name: str, hosts: list[Started], tmp_path: Path, site: FixtureSite
) -> None:
    app, a, b = await grid_fleet(name, hosts, tmp_path, site)
    async with app.run_test(size=(140, 44)) as pilot:
        await wait_until(pilot, lambda: asked(app) == 4, timeout=WAIT)
        on_a = {s.run_id for s in pool.status(name).slots if s.endpoint == a and s.run_id}
        assert len(on_a) == 2
        dead = hosts[0]
        assert dead.pid is not None
        kill_group(dead.pid)
        await wait_gone(dead.pid, dead.pid_started, 10)
        while not app.done:
            await wait_until(
                pilot, lambda: app.done or isinstance(app.screen, FleetApproval), timeout=WAIT
            )
            if isinstance(app.screen, FleetApproval):
                shown = app.screen
                await pilot.pause(0.05)
                await pilot.press("a")
                await wait_until(pilot, lambda s=shown: app.screen is not s, timeout=WAIT)
    lost = [r for r in app.runs if r.run_id in on_a]
    rest = [r for r in app.runs if r.run_id not in on_a]
    assert [r.exit_code for r in rest] == [0] * 4, [(r.exit_code, r.problem) for r in rest]
    for run in lost:
        assert run.exit_code != 0
        said = f"{run.problem or ''} {run.view.finished.reason if run.view.finished else ''}"
        assert "browser" in said.lower(), said
    slots = pool.status(name).slots
    assert [s.state for s in slots if s.endpoint == a] == ["lost", "lost"]
    assert {s.state for s in slots if s.endpoint == b} == {"completed"}
