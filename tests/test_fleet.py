"""``handrail fleet``: several scripted runs in one small pool (real headless Chromium) under
one observatory; the tasks file's checks; the pool screen."""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.fleet import load_fleet
from core.pool import pool
from tests.site_server import FixtureSite
from tests.test_tui_driver import wait_until
from tui.cli import dispatch
from tui.fleet import FleetApp, FleetApproval, FleetRunScreen

WAIT = 90.0  # three runs and a pool browser on a loaded two-core machine
_names = itertools.count(1)
ITEMS = ("kettle", "teapot", "mug")


@pytest.fixture
def name() -> Iterator[str]:
    """A 3-slot headless pool of this test's own, stopped after the test."""
    pool_name = f"f{os.getpid() % 1000}-{next(_names)}"
    assert dispatch(["pool", "start", "--headless", "--slots", "3", "--name", pool_name]) == 0
    yield pool_name
    dispatch(["pool", "stop", "--force", "--name", pool_name])


def tasks_file(tmp_path: Path, site: FixtureSite) -> Path:
    """Three tasks, each ordering its own item: a click that waits for approval, then finish."""
    plan = tmp_path / "order.jsonl"
    steps = [
        {"tool": "click", "target": "Order", "reason": "place the order"},
        {"tool": "finish", "input": {"success": True, "answer": "ordered"}},
    ]
    plan.write_text("".join(json.dumps(s) + "\n" for s in steps))
    tasks = [
        f'[[task]]\ntask = "order a {item}"\nstart_url = "{site.url(f"/fleet/order.html?item={item}")}"\n'
        for item in ITEMS
    ]
    path = tmp_path / "TASKS.toml"
    path.write_text(
        'model = "scripted:order.jsonl"\napprove = "ask"\naudit_dir = "logs"\n'
        'allow_domain = ["127.0.0.1"]\nmax_rounds = 5\n\n' + "\n".join(tasks)
    )
    return path


def fleet_app(tmp_path: Path, site: FixtureSite, name: str) -> FleetApp:
    fleet = load_fleet(tasks_file(tmp_path, site), pool=name, default_model="scripted:none")
    return FleetApp(
        fleet.runs,
        pool=name,
        config_dir=tmp_path / "config",
        persist_theme=False,
        poll_interval=0.1,
    )


def asked(app: FleetApp) -> int:
    return len(app.queue) + (app.showing is not None)


async def test_approvals_of_three_runs_share_one_queue_and_approving_them_completes_all(
    tmp_path: Path, site: FixtureSite, name: str
) -> None:
    app = fleet_app(tmp_path, site, name)
    async with app.run_test(size=(140, 44)) as pilot:
        # All three reach their approval though nobody has answered any: one waiting run
        # holds up no other.
        await wait_until(pilot, lambda: asked(app) == 3, timeout=WAIT)
        assert site.posts("/fleet/order") == []
        askers = []
        for _ in ITEMS:
            await wait_until(pilot, lambda: isinstance(app.screen, FleetApproval), timeout=WAIT)
            screen = app.screen
            assert isinstance(screen, FleetApproval)
            title = str(screen.query_one("#approval-dialog").border_title)
            assert f"slot {screen.asker.slot}" in title and screen.asker.run_id[:8] in title
            askers.append(screen.asker.number)
            await pilot.pause(0.05)
            await pilot.press("a")
            await wait_until(pilot, lambda s=screen: app.screen is not s, timeout=WAIT)
        await wait_until(pilot, lambda: app.done, timeout=WAIT)
    assert sorted(askers) == [1, 2, 3]
    assert [r.exit_code for r in app.runs] == [0, 0, 0]
    assert sorted(p.form["item"][0] for p in site.posts("/fleet/order")) == sorted(ITEMS)
    slots = pool.status(name).slots
    assert sorted(s.state for s in slots) == ["completed"] * 3
    assert {s.run_id for s in slots} == {r.run_id for r in app.runs}


async def test_the_pool_screen_shows_each_runs_slot_round_and_wait_and_opens_it(
    tmp_path: Path, site: FixtureSite, name: str
) -> None:
    app = fleet_app(tmp_path, site, name)
    async with app.run_test(size=(140, 44)) as pilot:
        await wait_until(pilot, lambda: asked(app) == 3, timeout=WAIT)
        screen = app.pool_screen
        assert screen is not None
        await wait_until(
            pilot, lambda: sum(bool(r.waiting) for r in screen.rows) == 3, timeout=WAIT
        )
        rows = {r.key: r for r in screen.rows}
        for run in app.runs:
            row = rows[run.run_id]
            assert (row.state, row.round, row.waiting) == ("running", "1/5", "approve click")
            assert row.slot == str(run.slot) and f"item={ITEMS[run.number - 1]}" in row.url
        # Under the approval modal: the oldest question is on screen.
        assert isinstance(app.screen, FleetApproval)
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, FleetApproval), timeout=WAIT)
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, FleetApproval), timeout=WAIT)
        await pilot.press("a")
        await wait_until(pilot, lambda: app.done, timeout=WAIT)
        await wait_until(pilot, lambda: app.screen is screen, timeout=WAIT)
        screen.table.move_cursor(row=[r.key for r in screen.rows].index(app.runs[1].run_id))
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, FleetRunScreen), timeout=WAIT)
        opened = app.screen
        assert isinstance(opened, FleetRunScreen) and opened.run is app.runs[1]
        assert len(opened.timeline.source) == 2
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen, timeout=WAIT)


def test_an_unknown_key_in_the_tasks_file_exits_2_naming_it_and_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "TASKS.toml"
    path.write_text(
        'model = "scripted:plan.jsonl"\n\n[[task]]\ntask = "a"\n\n[[task]]\ntask = "b"\n'
        'alow_domain = ["shop.example"]\n'
    )
    assert dispatch(["fleet", str(path), "--pool", "nowhere"]) == 2
    err = capsys.readouterr().err
    assert "unknown key 'alow_domain' in [[task]] 2" in err
    assert f"{path} line 8" in err


def test_an_unknown_default_key_is_refused_too(tmp_path: Path) -> None:
    path = tmp_path / "TASKS.toml"
    path.write_text('aprove = "none"\n[[task]]\ntask = "a"\n')
    with pytest.raises(Exception, match=r"line 1: unknown key 'aprove' at the top"):
        load_fleet(path, pool="p", default_model="scripted:x")


def test_a_value_of_the_wrong_kind_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "TASKS.toml"
    path.write_text('[[task]]\ntask = "a"\nallow_domain = "shop.example"\n')
    with pytest.raises(Exception, match=r"line 3: allow_domain must be a list of strings"):
        load_fleet(path, pool="p", default_model="scripted:x")
