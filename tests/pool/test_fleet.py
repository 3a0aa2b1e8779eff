"""``handrail fleet``: several scripted runs in one small pool (real headless Chromium) under
one observatory; the tasks file's checks; the pool screen."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from core.pool import pool
from core.run.fleet import FleetSecrets, load_fleet
from core.run.session import RunSettings, run_session
from core.secrets import Secrets
from tests.helpers.site_server import FixtureSite
from tests.helpers.tui_driver import wait_until
from tui.cli.main import dispatch
from tui.console import ConsoleSupervisor
from tui.observatory import ObservatoryApp
from tui.screens.fleet import FLEET_HINT, FleetApp, FleetApproval, FleetHandOver, FleetRunScreen
from tui.screens.pool_screen import PoolRow, PoolScreen, PoolWatchApp, SlotLogScreen

# End to end: whole actions or runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow

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


def tasks_file(tmp_path: Path, site: FixtureSite, items: Sequence[str] = ITEMS) -> Path:
    """A task per item (three by default), each ordering it: a click that waits for
    approval, then finish."""
    plan = tmp_path / "order.jsonl"
    steps = [
        {"tool": "click", "target": "Order", "reason": "place the order"},
        {"tool": "finish", "input": {"success": True, "answer": "ordered"}},
    ]
    plan.write_text("".join(json.dumps(s) + "\n" for s in steps))
    tasks = [
        f'[[task]]\ntask = "order a {item}"\nstart_url = "{site.url(f"/fleet/order.html?item={item}")}"\n'
        for item in items
    ]
    path = tmp_path / "TASKS.toml"
    path.write_text(
        'model = "scripted:order.jsonl"\napprove = "ask"\naudit_dir = "logs"\n'
        'allow_domain = ["127.0.0.1"]\nmax_rounds = 5\n\n' + "\n".join(tasks)
    )
    return path


def fleet_app(tmp_path: Path, site: FixtureSite, name: str) -> FleetApp:
    site.clear()
    fleet = load_fleet(tasks_file(tmp_path, site), pool=name, default_model="scripted:none")
    return FleetApp(
        fleet.runs,
        pool=name,
        config_dir=tmp_path / "config",
        persist_theme=False,
        poll_interval=0.1,
    )


async def modal_title(pilot: Any, modal: FleetApproval | FleetHandOver) -> str:
    """The modal's title once mounted (it names the asker from then on)."""

    def title() -> str:
        found = modal.query("#approval-dialog, #human-dialog")
        return str(found.first().border_title) if found else ""

    await wait_until(pilot, lambda: modal.asker.label in title(), timeout=WAIT)
    return title()


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
            title = await modal_title(pilot, screen)
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
        # The question is asked from the run's task, its page reaches the screen as a
        # message: wait for both (on a loaded machine the message may come a poll later).
        await wait_until(
            pilot,
            lambda: sum(bool(r.waiting) and "item=" in r.url for r in screen.rows) == 3,
            timeout=WAIT,
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


async def test_pool_without_an_action_watches_runs_started_elsewhere_from_their_logs(
    tmp_path: Path, site: FixtureSite, name: str
) -> None:
    finish = tmp_path / "finish.jsonl"
    finish.write_text(json.dumps({"tool": "finish", "input": {"success": True, "answer": "ok"}}))
    hold = tmp_path / "hold.jsonl"
    hold.write_text(json.dumps({"tool": "wait", "input": {"seconds": 30}, "reason": "hold"}) * 1)

    def settings(task: str, plan: Path) -> RunSettings:
        return RunSettings(
            task=task,
            start_url=site.url("/fleet/order.html?item=tea"),
            model_spec=f"scripted:{plan}",
            approve="none",
            pool=name,
            max_rounds=4,
            audit_dir=tmp_path / "logs",
        )

    done = settings("finish at once", finish)
    assert (await run_session(done, supervisor=ConsoleSupervisor())).exit_code == 0
    held = asyncio.create_task(
        run_session(settings("hold the slot", hold), supervisor=ConsoleSupervisor())
    )
    app = PoolWatchApp(name, poll_interval=0.1, config_dir=tmp_path / "config", persist_theme=False)
    try:
        async with app.run_test(size=(140, 44)) as pilot:
            screen = app.pool_screen
            assert screen is not None

            def row(task: str) -> PoolRow | None:
                return next((r for r in screen.rows if r.task == task), None)

            await wait_until(
                pilot,
                lambda: (r := row("hold the slot")) is not None and r.round == "1/4",
                timeout=WAIT,
            )
            finished = row("finish at once")
            assert finished is not None
            assert (finished.state, finished.round) == ("completed · success", "1/4")
            assert row("hold the slot").state == "running"  # type: ignore[union-attr]
            screen.table.move_cursor(row=screen.rows.index(finished))
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, SlotLogScreen), timeout=WAIT)
            log_screen = app.screen
            assert isinstance(log_screen, SlotLogScreen)
            assert log_screen.path == Path(finished.key or "")
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.screen is screen, timeout=WAIT)
    finally:
        held.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await held


TITLE = "pool default · 2 of 4 slots running · fleet: 1 of 3 runs done, 1 waiting for you"
ROWS = [
    PoolRow("1", "running", "3f2a9c01b7e4", "order a kettle", "2/30", "approve click",
            "http://shop.example/kettles", key="3f2a9c01b7e4"),
    PoolRow("2", "running", "a81d44e0c9f2", "fill in the contact form", "5/30", "",
            "http://shop.example/contact", key="a81d44e0c9f2"),
    PoolRow("3", "completed", "77c0e5d1a3b8", "compare [three] teapots", "7/30", "",
            "http://shop.example/teapots?sort=price", key="77c0e5d1a3b8"),
    PoolRow("4", "idle", "", "", "", "", "about:blank"),
    PoolRow("—", "waiting", "0be9f4c2d6a7", "pool full: 4 of 4 slots running", "", "", ""),
]  # fmt: skip


class StillPool(ObservatoryApp):
    CSS_PATH = str(Path(__file__).resolve().parents[2] / "tui" / "observatory.tcss")

    def on_mount(self) -> None:
        self.push_screen(PoolScreen(lambda: (TITLE, ROWS), hint=FLEET_HINT))


def test_the_pool_screen_at_120_by_40(snap_compare: Any, tmp_path: Path) -> None:
    app = StillPool(config_dir=tmp_path, persist_theme=False)
    assert snap_compare(app, terminal_size=(120, 40))


def test_pool_without_an_action_for_a_pool_never_started_exits_2_naming_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert dispatch(["pool", "--name", "never-started"]) == 2
    assert "never-started" in capsys.readouterr().err


def test_a_fleet_for_a_pool_never_started_exits_2_before_any_run(
    tmp_path: Path, site: FixtureSite, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tasks_file(tmp_path, site)
    assert dispatch(["fleet", str(path), "--pool", "never-started"]) == 2
    assert "no pool named 'never-started'" in capsys.readouterr().err
    assert not (tmp_path / "logs").exists()


def test_the_fleets_one_operational_log_scrubs_every_runs_secrets() -> None:
    first = Secrets.from_specs(["SHOP_PASSWORD=FLEET_A"], {"FLEET_A": "hunter2-first"})
    second = Secrets.from_specs(["MAIL_TOKEN=FLEET_B"], {"FLEET_B": "tok-second-run"})
    joined = FleetSecrets()
    joined.add(first)
    joined.add(second)
    second.withhold("typed-later-text")
    line = "typed hunter2-first then tok-second-run and typed-later-text"
    assert "hunter2-first" not in joined.scrub(line)
    assert "tok-second-run" not in joined.scrub_json({"k": [line]})["k"][0]
    assert "typed-later-text" not in joined.scrub(line)


async def test_a_hand_over_and_an_approval_of_two_runs_wait_in_the_same_queue(
    tmp_path: Path, site: FixtureSite, name: str
) -> None:
    finish = {"tool": "finish", "input": {"success": True, "answer": "done"}}
    ask = {"tool": "ask_human", "input": {"question": "Log in for me, please."}}
    order = {"tool": "click", "target": "Order", "reason": "place the order"}
    for file, first in (("ask.jsonl", ask), ("order.jsonl", order)):
        (tmp_path / file).write_text(json.dumps(first) + "\n" + json.dumps(finish) + "\n")
    site.clear()
    url = site.url("/fleet/order.html?item=kettle")
    path = tmp_path / "TASKS.toml"
    path.write_text(
        f'start_url = "{url}"\naudit_dir = "logs"\nmax_rounds = 5\n\n'
        '[[task]]\ntask = "needs a person"\nmodel = "scripted:ask.jsonl"\n\n'
        '[[task]]\ntask = "orders"\nmodel = "scripted:order.jsonl"\n'
    )
    fleet = load_fleet(path, pool=name, default_model="scripted:none")
    app = FleetApp(
        fleet.runs,
        pool=name,
        config_dir=tmp_path / "config",
        persist_theme=False,
        poll_interval=0.1,
    )
    async with app.run_test(size=(140, 44)) as pilot:
        await wait_until(pilot, lambda: asked(app) == 2, timeout=WAIT)
        screen = app.pool_screen
        assert screen is not None
        await wait_until(
            pilot,
            lambda: (
                sorted(r.waiting for r in screen.rows if r.key)
                == ["approve click", "hand-over: ask_human"]
            ),
            timeout=WAIT,
        )
        for _ in range(2):
            await wait_until(
                pilot, lambda: isinstance(app.screen, FleetApproval | FleetHandOver), timeout=WAIT
            )
            modal = app.screen
            assert isinstance(modal, FleetApproval | FleetHandOver)
            title = await modal_title(pilot, modal)
            assert f"run {modal.asker.number} ({modal.asker.run_id[:8]}, slot " in title
            await pilot.pause(0.05)
            await pilot.press("r" if isinstance(modal, FleetHandOver) else "a")
            await wait_until(pilot, lambda m=modal: app.screen is not m, timeout=WAIT)
        await wait_until(pilot, lambda: app.done, timeout=WAIT)
    assert [r.exit_code for r in app.runs] == [0, 0]
    assert [p.form["item"][0] for p in site.posts("/fleet/order")] == ["kettle"]


def test_a_slots_log_opened_from_the_pool_screen_can_be_verified() -> None:
    """Importing the pool screen (hence replay, which asks core.audit for VerifyReport
    before verify) once left replay's ``verify`` bound to the module of that name, so every
    verification of a followed log failed with "'module' object is not callable". A fresh
    interpreter: in this one, another test may have imported the names the other way."""
    code = "import tui.screens.pool_screen, tui.screens.replay; assert callable(tui.screens.replay.verify)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


async def test_the_fleets_budget_is_spent_by_all_its_runs_together(
    tmp_path: Path, site: FixtureSite, name: str, fake: Any
) -> None:
    """Two runs of one fleet spend one budget: 100,000 tokens a call, 250,000 for the
    fleet, so two calls in all (whichever run makes them) and then both stop, exit 5."""
    from tests.helpers.agent_run import act
    from tests.helpers.fake_anthropic import MessageReply

    for _ in range(8):
        step = act("scroll", direction="down")
        fake.add(lambda body, step=step: MessageReply(step(body), usage={"input_tokens": 100_000}))
    path = tmp_path / "TASKS.toml"
    path.write_text(
        'model = "anthropic:claude-sonnet-5-5"\napprove = "none"\naudit_dir = "logs"\n'
        "fleet_max_tokens = 250000\nmax_rounds = 6\n"
        + "".join(
            f'[[task]]\ntask = "look at the {item}"\nstart_url = "{site.url("/fleet/order.html")}"\n'
            for item in ITEMS[:2]
        )
    )
    fleet = load_fleet(path, pool=name, default_model="scripted:none")
    assert fleet.budget.max_tokens == 250_000
    app = FleetApp(
        fleet.runs,
        pool=name,
        budget=fleet.budget,
        config_dir=tmp_path / "config",
        persist_theme=False,
        poll_interval=0.1,
    )
    async with app.run_test(size=(140, 44)) as pilot:
        await wait_until(pilot, lambda: app.done, timeout=WAIT)
    assert [r.exit_code for r in app.runs] == [5, 5]
    assert len(fake.message_bodies) == 2
    assert all(
        "the fleet's token budget" in (r.view.finished.reason if r.view.finished else "")
        for r in app.runs
    )
    assert 200_000 <= app.budget.tokens < 250_000  # each streamed reply adds its 20 output tokens


def test_fleet_budget_keys_are_read_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "TASKS.toml"
    path.write_text(
        'model = "scripted:p.jsonl"\nfleet_max_cost = 2\nfleet_max_time = "15m"\n'
        'max_tokens = 1000\n[[task]]\ntask = "a"\npolicy = "risky"\nmax_time = 90\n'
    )
    fleet = load_fleet(path, pool="p", default_model="scripted:none")
    assert (fleet.budget.max_cost, fleet.budget.max_time) == (2.0, 900.0)
    (run,) = fleet.runs
    assert (run.max_tokens, run.max_time, run.policy) == (1000, 90.0, "risky")
    path.write_text('[[task]]\ntask = "a"\nfleet_max_cost = 2\n')
    with pytest.raises(Exception, match="unknown key 'fleet_max_cost' in \\[\\[task\\]\\] 1"):
        load_fleet(path, pool="p", default_model="scripted:none")
    path.write_text('max_time = "soon"\n[[task]]\ntask = "a"\n')
    with pytest.raises(Exception, match="max_time must be a duration"):
        load_fleet(path, pool="p", default_model="scripted:none")


def test_fleet_har_keys_are_read_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "TASKS.toml"
    path.write_text(
        'har = true\n[[task]]\ntask = "a"\n[[task]]\ntask = "b"\nhar_content = "embed"\n'
    )
    first, second = load_fleet(path, pool="p", default_model="scripted:none").runs
    assert (first.har, first.har_content) == (True, "omit")
    assert (second.har, second.har_content) == (True, "embed")
    path.write_text('[[task]]\ntask = "a"\nhar_content = "all"\n')
    with pytest.raises(Exception, match="line 3: har_content must be omit or embed"):
        load_fleet(path, pool="p", default_model="scripted:none")
