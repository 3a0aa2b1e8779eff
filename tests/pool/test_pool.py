"""The tab pool (core/pool, `handrail pool`, `run --pool`): real headless Chromium, pools of
3 slots (the issue's 12 is a default, not the point of these promises)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from core.browser.browser import Browser
from core.cdp import TRACE_ENV, CDPConnection
from core.pool import owner, pool
from core.pool.detached import kill_group, launch_detached
from core.pool.pool import PoolRun
from core.pool.state import PoolInfo, PoolState
from tests.helpers.site_server import FixtureSite
from tests.helpers.waiting import until
from tui.cli.command import handrail_command
from tui.cli.main import dispatch

# End to end: whole actions or runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
_names = itertools.count(1)
FRONT = ("Target.activateTarget", "Page.bringToFront")


@pytest.fixture
def trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every CDP command this process and the handrails it starts send, one JSON a line."""
    path = tmp_path / "cdp-trace.jsonl"
    path.touch()
    monkeypatch.setenv(TRACE_ENV, str(path))
    return path


def sent(trace: Path) -> list[str]:
    return [json.loads(line)["method"] for line in trace.read_text().splitlines()]


def start(name: str, slots: int = 3, *extra: str) -> None:
    code = dispatch(["pool", "start", "--headless", "--slots", str(slots), "--name", name, *extra])
    assert code == 0


def plan(tmp_path: Path, *steps: dict[str, Any]) -> str:
    path = tmp_path / f"plan-{next(_names)}.jsonl"
    path.write_text("".join(json.dumps(step) + "\n" for step in steps))
    return f"scripted:{path}"


FINISH = {"tool": "finish", "input": {"success": True, "answer": "done"}}
HOLD = {"tool": "wait", "input": {"seconds": 30}, "reason": "hold the slot"}


def run_args(name: str, model: str, logs: Path, *extra: str) -> list[str]:
    return [
        "run",
        "pooled task",
        "--no-tui",
        "--approve",
        "none",
        "--pool",
        name,
        "--model",
        model,
        "--audit-dir",
        str(logs),
        *extra,
    ]


async def page_targets(endpoint: str) -> list[dict[str, Any]]:
    conn = await CDPConnection.open(endpoint)
    try:
        infos = (await conn.send("Target.getTargets"))["targetInfos"]
    finally:
        await conn.close()
    return [t for t in infos if t["type"] == "page"]


async def evaluate(endpoint: str, target_id: str, expression: str) -> Any:
    conn = await CDPConnection.open(endpoint)
    try:
        attached = await conn.send(
            "Target.attachToTarget", {"targetId": target_id, "flatten": True}
        )
        reply = await conn.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            session_id=attached["sessionId"],
        )
    finally:
        await conn.close()
    return reply["result"].get("value")


async def load(endpoint: str, target_id: str, url: str) -> None:
    """Navigate a slot's tab and wait for its load event (the page's own signal)."""
    conn = await CDPConnection.open(endpoint)
    try:
        attached = await conn.send(
            "Target.attachToTarget", {"targetId": target_id, "flatten": True}
        )
        session = conn.session(attached["sessionId"])
        await session.send("Page.enable")
        loaded = session.expect("Page.loadEventFired")
        await session.send("Page.navigate", {"url": url})
        async with asyncio.timeout(15):
            await loaded
    finally:
        await conn.close()


def dead_pid() -> tuple[int, int]:
    """A process that has ended (an owner that is gone)."""
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    return done.pid, 1


# -- cold start and focus --------------------------------------------------------------


async def test_a_cold_start_makes_exactly_n_blank_slots_and_no_other_page(
    name: str, trace: Path
) -> None:
    await asyncio.to_thread(start, name, 3)
    status = pool.status(name)
    pages = await page_targets(status.info.endpoint)
    assert sorted(p["targetId"] for p in pages) == sorted(s.target_id for s in status.slots)
    assert [p["url"] for p in pages] == ["about:blank"] * 3
    assert [s.state for s in status.slots] == ["idle"] * 3
    assert not set(FRONT) & set(sent(trace))


def test_only_pool_show_brings_a_tab_to_the_front(
    name: str, trace: Path, tmp_path: Path, site: FixtureSite
) -> None:
    start(name, 3)
    model = plan(
        tmp_path, {"tool": "navigate", "input": {"url": site.url("/pool/opens_tab.html")}}, FINISH
    )
    assert dispatch(run_args(name, model, tmp_path / "logs")) == 0
    assert not set(FRONT) & set(sent(trace)), "a pooled run or pool start stole the focus"
    before = len(sent(trace))
    assert dispatch(["pool", "show", "2", "--name", name]) == 0
    assert "Target.activateTarget" in sent(trace)[before:]


# -- claims ----------------------------------------------------------------------------


def test_one_run_claims_a_second_slot_for_the_tab_its_page_opens(
    name: str, trace: Path, tmp_path: Path, site: FixtureSite
) -> None:
    start(name, 3)
    model = plan(tmp_path, {"tool": "click", "target": "Open the price list"}, FINISH)
    args = run_args(name, model, tmp_path / "logs", "--start-url", site.url("/pool/opens_tab.html"))
    assert dispatch(args) == 0
    status = pool.status(name)
    mine = [s for s in status.slots if s.state == "completed"]
    assert len(mine) == 2 and len({s.run_id for s in mine}) == 1
    assert {s.url.rsplit("/", 1)[-1] for s in mine} == {"opens_tab.html", "price_list.html"}
    assert [s.state for s in status.slots if s not in mine] == ["idle"]
    # The pool keeps its size: the popup took the place of the slot's blank tab.
    assert len(asyncio.run(page_targets(status.info.endpoint))) == 3
    assert not set(FRONT) & set(sent(trace)), "following the popup stole the focus"


async def test_a_claim_reclaims_the_oldest_completed_slot_and_it_holds_no_trace(
    name: str, site: FixtureSite
) -> None:
    await asyncio.to_thread(start, name, 3)
    endpoint = pool.status(name).info.endpoint
    state = PoolState.open(name)
    try:
        running = state.claim("running-run", task="still working")  # owned by us: alive
        older = state.claim("older-run", pid=dead_pid()[0], pid_started=1)
        newer = state.claim("newer-run", pid=dead_pid()[0], pid_started=1)
        for claim in (older, newer):
            await load(endpoint, claim.target_id, site.url("/pool/trace.html"))
        state.finish("older-run")
        state.finish("newer-run")
    finally:
        state.close()

    lease = PoolRun(name, "new-run", "a new task")
    claim = lease.claim_first()
    browser: Browser = await lease.open()
    try:
        assert claim.slot == older.slot
        tab = browser.current
        assert tab is not None
        left = await evaluate(
            endpoint,
            tab.target_id,
            "[location.href, document.title, document.documentElement.outerHTML, history.length]",
        )
        assert left == ["about:blank", "", "<html><head></head><body></body></html>", 1]
        await load(endpoint, tab.target_id, site.url("/pool/read_trace.html"))
        found = await evaluate(
            endpoint, tab.target_id, "document.getElementById('found').textContent"
        )
        assert json.loads(found) == {"session": None, "local": None, "cookie": "", "history": 2}
    finally:
        await lease.end(browser)
        await browser.close()
    slots = {s.slot: s for s in pool.status(name).slots}
    assert slots[running.slot].state == "running" and slots[running.slot].run_id == "running-run"
    kept = await evaluate(endpoint, slots[newer.slot].target_id, "document.title")
    assert kept == "Trace left by the last run", "the newer completed page must be kept"


def test_a_full_pool_exits_4_with_the_message_and_touches_nothing(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    start(name, 3)
    state = PoolState.open(name)
    try:
        for run in ("7f3a9c", "b2", "c3"):
            state.claim(run, task="busy")
        before = state.slots()
    finally:
        state.close()
    capsys.readouterr()
    code = dispatch(run_args(name, plan(tmp_path, FINISH), tmp_path / "logs"))
    err = capsys.readouterr().err.strip()
    assert code == 4
    assert re.fullmatch(
        r"handrail: pool full: 3 of 3 slots running \(oldest since \d\d:\d\d, run 7f3a…\)", err
    ), err
    assert pool.status(name).slots == tuple(before)
    assert not list((tmp_path / "logs").glob("*.jsonl")), "a refused run must not open a log"


# -- processes -------------------------------------------------------------------------


def _handrail(args: list[str], logs: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("ANTHROPIC_API_KEY", None)
    return subprocess.Popen(
        [sys.executable, "-m", "tui.cli.main", *args],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def test_concurrent_runs_get_distinct_slots_and_one_too_many_exits_4(
    name: str, tmp_path: Path
) -> None:
    slots_n = 12
    start(name, slots_n)  # the numbers: 12 runs at once get 12 slots, a 13th exits 4
    model = plan(tmp_path, HOLD, HOLD)
    procs = [
        _handrail(run_args(name, model, tmp_path / "logs"), tmp_path) for _ in range(slots_n + 1)
    ]
    try:
        until(lambda: any(p.poll() is not None for p in procs), 120, "one run to be refused")
        refused = [p for p in procs if p.poll() is not None]
        assert [p.returncode for p in refused] == [4]
        out = refused[0].stdout.read().decode() if refused[0].stdout else ""
        assert f"pool full: {slots_n} of {slots_n} slots running" in out
        slots = pool.status(name).slots
        assert [s.state for s in slots] == ["running"] * slots_n
        holders = [p for p in procs if p is not refused[0]]
        assert sorted(s.pid or 0 for s in slots) == sorted(p.pid for p in holders)
        assert len({s.run_id for s in slots}) == slots_n
        for p in holders:
            p.send_signal(signal.SIGTERM)  # an aborted run: its slot is completed
        for p in holders:
            assert p.wait(timeout=60) == 130
        assert [s.state for s in pool.status(name).slots] == ["completed"] * slots_n
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def test_a_sigkilled_run_leaves_its_slot_completed_with_its_page(
    name: str, tmp_path: Path, site: FixtureSite
) -> None:
    start(name, 2)
    model = plan(tmp_path, HOLD, HOLD)
    url = site.url("/pool/price_list.html")
    logs = tmp_path / "logs"
    proc = _handrail(run_args(name, model, logs, "--start-url", url), tmp_path)
    try:

        def holding() -> bool:
            return any("intent" in p.read_text() for p in logs.glob("*.jsonl"))

        until(lambda: holding() or proc.poll() is not None, 120, "round 1")
        assert proc.poll() is None
        proc.kill()
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    first = pool.status(name).slots[0]
    assert first.state == "completed" and first.pid == proc.pid
    page = asyncio.run(evaluate(pool.status(name).info.endpoint, first.target_id, "location.href"))
    assert page == url


# -- someone else's browser --------------------------------------------------------------


def test_a_pool_in_the_persons_browser_never_lists_their_tabs(
    name: str, tmp_path: Path, site: FixtureSite
) -> None:
    # The person's browser: a Chrome of their own with a tab of their own open.
    person = asyncio.run(
        launch_detached(tmp_path, profile=tmp_path / "person-profile", headless=True)
    )
    assert person.pid is not None
    try:
        own = asyncio.run(open_tab(person.endpoint, site.url("/pool/person.html")))
        start(name, 2, "--cdp-url", person.endpoint)
        model = plan(
            tmp_path, {"tool": "switch_tab", "input": {"tab": 1}, "on_deny": "skip"}, FINISH
        )
        args = run_args(
            name, model, tmp_path / "logs", "--start-url", site.url("/pool/opens_tab.html")
        )
        assert dispatch(args) == 0
        logged = "".join(p.read_text() for p in (tmp_path / "logs").glob("*.jsonl"))
        assert "no tab 1" in logged, "the run's tab list holds its own tab only"
        assert "Person's own bank" not in logged and "person.html" not in logged
        assert "person.html" not in json.dumps(pool.status(name).public())
        assert dispatch(["pool", "stop", "--name", name]) == 0
        left = asyncio.run(page_targets(person.endpoint))
        assert [t["targetId"] for t in left] == [own], "the person's tab alone remains"
    finally:
        kill_group(person.pid)
        if person.tmp_dir is not None:
            shutil.rmtree(person.tmp_dir, ignore_errors=True)


async def open_tab(endpoint: str, url: str) -> str:
    conn = await CDPConnection.open(endpoint)
    try:
        infos = (await conn.send("Target.getTargets"))["targetInfos"]
        first = next(t["targetId"] for t in infos if t["type"] == "page")
        attached = await conn.send("Target.attachToTarget", {"targetId": first, "flatten": True})
        session = conn.session(attached["sessionId"])
        await session.send("Page.enable")
        loaded = session.expect("Page.loadEventFired")
        await session.send("Page.navigate", {"url": url})
        async with asyncio.timeout(15):
            await loaded
    finally:
        await conn.close()
    return str(first)


# -- the person's commands -----------------------------------------------------------------


def test_pool_stop_refuses_while_a_slot_is_running(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    start(name, 3)
    state = PoolState.open(name)
    try:
        state.claim("busy-run", task="working")  # owned by this live process
    finally:
        state.close()
    capsys.readouterr()
    assert dispatch(["pool", "stop", "--name", name]) == 2
    err = capsys.readouterr().err
    assert "slot(s) of pool" in err and "busy-run" in err and "--force" in err
    status = pool.status(name)
    assert status.browser_alive
    assert [s.state for s in status.slots] == ["running", "idle", "idle"]


def test_pool_clear_completed_gives_back_blank_idle_slots_and_spares_running_ones(
    name: str, site: FixtureSite
) -> None:
    start(name, 3)
    endpoint = pool.status(name).info.endpoint
    state = PoolState.open(name)
    try:
        running = state.claim("busy-run")
        done = state.claim("done-run", pid=dead_pid()[0], pid_started=1)
        asyncio.run(load(endpoint, done.target_id, site.url("/pool/trace.html")))
        state.finish("done-run")
    finally:
        state.close()
    assert dispatch(["pool", "clear", "--completed", "--name", name]) == 0
    slots = {s.slot: s for s in pool.status(name).slots}
    assert slots[done.slot].state == "idle" and slots[done.slot].run_id is None
    assert slots[running.slot].state == "running"
    pages = {p["targetId"]: p["url"] for p in asyncio.run(page_targets(endpoint))}
    assert pages[slots[done.slot].target_id] == "about:blank"
    assert len(pages) == 3


def test_a_tab_the_page_opens_in_a_full_pool_is_closed_and_the_model_is_told(
    name: str, tmp_path: Path, site: FixtureSite
) -> None:
    start(name, 2)
    state = PoolState.open(name)
    try:
        other = state.claim("other-run", task="busy")  # the only other slot: running
    finally:
        state.close()
    model = plan(tmp_path, {"tool": "click", "target": "Open the price list"}, FINISH)
    args = run_args(name, model, tmp_path / "logs", "--start-url", site.url("/pool/opens_tab.html"))
    assert dispatch(args) == 0
    logged = "".join(p.read_text() for p in (tmp_path / "logs").glob("*.jsonl"))
    assert "which was closed at once: pool full: 2 of 2 slots running" in logged
    status = pool.status(name)
    assert len(asyncio.run(page_targets(status.info.endpoint))) == 2
    slots = {s.slot: s for s in status.slots}
    assert slots[other.slot].state == "running" and slots[other.slot].run_id == "other-run"


def test_a_recycled_pid_is_not_taken_for_the_slots_owner(name: str) -> None:
    """The owner's pid now names another process (this one, started at another time): the
    owner has ended, so its slot is completed, not running forever."""
    info = PoolInfo(name=name, kind="cdp_url", endpoint="ws://127.0.0.1:9/none")
    state = PoolState.create(info, [("T1", None), ("T2", None)])
    try:
        pid, started = owner.me()
        state.claim("gone-run", pid=pid, pid_started=started + 1)
        state.claim("live-run", pid=pid, pid_started=started)
        by_run = {s.run_id: s.state for s in state.slots()}
    finally:
        state.close()
        (pool.pool_dir(name) / "pool.sqlite3").unlink()
    assert by_run == {"gone-run": "completed", "live-run": "running"}


def test_a_process_reclaims_the_slot_of_its_own_finished_run(name: str) -> None:
    """A fleet runs many runs in one process: a run that ended frees its slot for the next,
    though its process lives on."""
    info = PoolInfo(name=name, kind="cdp_url", endpoint="ws://127.0.0.1:9/none")
    state = PoolState.create(info, [("T1", None)])
    try:
        first = state.claim("first-run")
        state.finish("first-run")
        second = state.claim("second-run")
        assert (second.slot, second.dirty) == (first.slot, True)
    finally:
        state.close()
        (pool.pool_dir(name) / "pool.sqlite3").unlink()


# -- resuming a completed slot -------------------------------------------------------------


def rounds(logs: Path) -> list[dict[str, Any]]:
    """The round records of the one run that logged into ``logs``."""
    (path,) = logs.glob("*.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return [r for r in records if r.get("type") == "round"]


def test_a_resumed_slot_goes_on_from_the_page_its_last_run_left(
    name: str, tmp_path: Path, site: FixtureSite
) -> None:
    start(name, 2)
    url = site.url("/pool/resume_form.html")
    typed = plan(
        tmp_path, {"tool": "type", "target": "Recipient", "input": {"text": "Ada"}}, FINISH
    )
    assert dispatch(run_args(name, typed, tmp_path / "first", "--start-url", url)) == 0
    (left,) = [s for s in pool.status(name).slots if s.state == "completed"]
    resume = ("--resume-slot", str(left.slot))
    assert dispatch(run_args(name, plan(tmp_path, FINISH), tmp_path / "second", *resume)) == 0
    first_look = rounds(tmp_path / "second")[0]
    assert first_look["url"] == url
    assert "Typed so far: Ada" in first_look["observation"]
    after = {s.slot: s for s in pool.status(name).slots}[left.slot]
    assert after.state == "completed" and after.run_id not in (None, left.run_id)
    assert after.target_id == left.target_id, "a resumed slot keeps its tab"
    page = asyncio.run(
        evaluate(
            pool.status(name).info.endpoint,
            left.target_id,
            "[recipient.value, document.getElementById('loads').textContent]",
        )
    )
    assert page == ["Ada", "Loaded 1 time(s) in this tab"], "no wipe, no reload"


def test_resuming_a_running_slot_exits_4_and_changes_nothing(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    start(name, 2)
    state = PoolState.open(name)
    try:
        busy = state.claim("busy-run", task="working")  # owned by this live process
        before = state.slots()
    finally:
        state.close()
    capsys.readouterr()
    args = run_args(name, plan(tmp_path, FINISH), tmp_path / "logs", "--resume-slot", "1")
    assert dispatch(args) == 4
    err = capsys.readouterr().err
    assert re.search(
        rf"slot {busy.slot} is running \(run busy-run, pid {os.getpid()}, since \d\d:\d\d\)", err
    ), err
    assert pool.status(name).slots == tuple(before)
    assert not list((tmp_path / "logs").glob("*.jsonl")), "a refused run must not open a log"


async def close_page(endpoint: str, target_id: str) -> None:
    """Close a tab as the person would, and wait until the browser says it is gone."""
    conn = await CDPConnection.open(endpoint)
    try:
        await conn.send("Target.setDiscoverTargets", {"discover": True})
        gone = conn.expect("Target.targetDestroyed", lambda p: p.get("targetId") == target_id)
        await conn.send("Target.closeTarget", {"targetId": target_id})
        async with asyncio.timeout(15):
            await gone
    finally:
        await conn.close()


def test_resuming_a_slot_whose_tab_was_closed_exits_2_and_leaves_it_completed(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    start(name, 2)
    state = PoolState.open(name)
    try:
        done = state.claim("done-run", pid=dead_pid()[0], pid_started=1)
        state.finish("done-run")
    finally:
        state.close()
    asyncio.run(close_page(pool.status(name).info.endpoint, done.target_id))
    capsys.readouterr()
    args = run_args(name, plan(tmp_path, FINISH), tmp_path / "logs", "--resume-slot", "1")
    assert dispatch(args) == 2
    assert f"slot {done.slot}'s tab is gone" in capsys.readouterr().err
    after = {s.slot: s for s in pool.status(name).slots}[done.slot]
    assert after.state == "completed" and after.target_id == done.target_id
    pages = asyncio.run(page_targets(pool.status(name).info.endpoint))
    assert done.target_id not in [p["targetId"] for p in pages], "no tab was made up for it"


@pytest.mark.parametrize(
    ("slot", "message"),
    [
        ("1", "slot 1 is idle: nothing to resume; use --pool without --resume-slot"),
        ("7", "there is no slot 7 to resume: the pool's slots are 1 to 2"),
    ],
)
def test_resuming_an_idle_or_missing_slot_exits_2(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], slot: str, message: str
) -> None:
    start(name, 2)
    before = pool.status(name).slots
    capsys.readouterr()
    args = run_args(name, plan(tmp_path, FINISH), tmp_path / "logs", "--resume-slot", slot)
    assert dispatch(args) == 2
    assert message in capsys.readouterr().err
    assert pool.status(name).slots == before


def test_resume_slot_without_a_pool_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = run_args("x", plan(tmp_path, FINISH), tmp_path / "logs", "--resume-slot", "1")
    with pytest.raises(SystemExit) as exited:
        dispatch([a for a in args if a not in ("--pool", "x")])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "--resume-slot N resumes a slot of a tab pool: add --pool NAME" in err


def test_pool_status_says_how_to_resume_each_completed_slot(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    start(name, 3)
    state = PoolState.open(name)
    try:
        state.claim("busy-run")
        done = state.claim("done-run", pid=dead_pid()[0], pid_started=1)
    finally:
        state.close()
    capsys.readouterr()
    assert dispatch(["pool", "status", "--name", name]) == 0
    out = capsys.readouterr().out
    command = f"handrail run TASK --pool {name} --resume-slot {done.slot}"
    # Printed for the person as they can type it here (tui/cli/command.py); the JSON's is
    # the plain command.
    typed = command.replace("handrail", handrail_command(), 1)
    assert f"slot {done.slot}: {typed}" in out
    assert "--resume-slot 1" not in out and "--resume-slot 3" not in out
    assert dispatch(["pool", "status", "--json", "--name", name]) == 0
    slots = json.loads(capsys.readouterr().out)["slots"]
    assert [s["resume"] for s in slots] == [None, command, None]
