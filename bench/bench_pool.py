"""The tab pool's costs: cold start, claim latency, and the pool browser's memory.

- ``cold start``: ``pool start --slots 12 --headless`` (launch a detached Chromium and make
  its 12 background slots) until it returns; median of ``--runs``.
- ``claim idle``: a run's claim of an idle slot: the database transaction, connecting to
  the pool's browser and attaching to the slot (what ``run --pool`` does before round 1).
- ``claim reclaim``: the same for the oldest completed slot whose page holds a finished
  run's page (sessionStorage, localStorage, a cookie): the wipe is in it.
- ``memory``: the sum of the resident set sizes of every process of the pool browser
  (its process group), with 12 idle slots, then with each slot on a small page.

- ``fleet``: 12 scripted runs at once in one process, each in its own slot (what
  ``handrail fleet`` does, without the screen): total wall time from the first claim to the
  last run's end, against one run alone; and the time per round of each (a run's wall
  time over its rounds), so the overhead of sharing one browser and two cores shows.

    .venv/bin/python bench/bench_pool.py [--runs N] [--slots 12] [--fleet-only]

Headless Chromium on loopback; a temporary data directory (never the real pools). The
machine's load matters: note it (``uptime``) beside the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.audit.key import DATA_DIR_ENV  # noqa: E402
from core.cdp import CDPConnection  # noqa: E402
from core.pool import pool  # noqa: E402
from core.pool.pool import PoolRun  # noqa: E402
from core.pool.state import PoolState  # noqa: E402
from tests.helpers.site_server import FixtureSite  # noqa: E402

NAME = "bench"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def _group_memory_kib(leader: int) -> tuple[int, int]:
    """Sums of RSS and of PSS over every process whose process group is ``leader`` (Chrome
    leads its own group: browser, GPU, utility and renderer processes). RSS counts shared
    pages once per process (an overstatement); PSS shares them out."""
    total = pss = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            pgrp = int(stat[stat.rfind(")") + 2 :].split()[2])
            if pgrp != leader:
                continue
            for line in (entry / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
            for line in (entry / "smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    pss += int(line.split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return total, pss


async def _load(endpoint: str, target_id: str, url: str) -> None:
    conn = await CDPConnection.open(endpoint)
    try:
        attached = await conn.send(
            "Target.attachToTarget", {"targetId": target_id, "flatten": True}
        )
        session = conn.session(attached["sessionId"])
        await session.send("Page.enable")
        loaded = session.expect("Page.loadEventFired")
        await session.send("Page.navigate", {"url": url})
        async with asyncio.timeout(30):
            await loaded
    finally:
        await conn.close()


def _dead_pid() -> int:
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    return done.pid


async def cold_start(slots: int) -> float:
    start = time.monotonic()
    await pool.start(NAME, slots=slots, headless=True)
    return time.monotonic() - start


async def claim_idle() -> float:
    start = time.monotonic()
    lease = PoolRun(NAME, f"idle-{time.monotonic_ns()}", "bench")
    browser = await lease.open()
    took = time.monotonic() - start
    await lease.end(browser)
    await browser.close()
    return took


async def claim_reclaim(site: FixtureSite) -> float:
    """Fill every slot, leave one completed with a finished run's page, then time the claim."""
    state = PoolState.open(NAME)
    try:
        idle = [s for s in state.slots() if s.state == "idle"]
        for n, _ in enumerate(idle):
            state.claim(f"filler-{n}")
        endpoint = state.info().endpoint
        oldest = min(
            (s for s in state.slots() if s.state == "running"), key=lambda s: s.claimed_at or 0
        )
        await _load(endpoint, oldest.target_id, site.url("/pool/trace.html"))
        with state._write() as db:  # the bench plays a run that ended long ago
            db.execute(
                "UPDATE slots SET state='completed', pid=?, finished_at=0 WHERE slot=?",
                (_dead_pid(), oldest.slot),
            )
    finally:
        state.close()
    start = time.monotonic()
    lease = PoolRun(NAME, f"reclaim-{time.monotonic_ns()}", "bench")
    browser = await lease.open()
    took = time.monotonic() - start
    await lease.end(browser)
    await browser.close()
    return took


FLEET_ROUNDS = 4
"""Rounds of each fleet run: three ``wait 0`` (observe, reply, act) and ``finish``."""


async def _one_run(site: FixtureSite, plan: Path, logs: Path, n: int) -> float:
    from core.run.session import RunSettings, run_session
    from tui.console import ConsoleSupervisor

    settings = RunSettings(
        task=f"bench run {n}",
        start_url=site.url("/pool/price_list.html"),
        model_spec=f"scripted:{plan}",
        approve="none",
        pool=NAME,
        max_rounds=FLEET_ROUNDS + 1,
        audit_dir=logs,
    )
    start = time.monotonic()
    finished = await run_session(settings, supervisor=ConsoleSupervisor())
    assert finished.exit_code == 0, finished
    return time.monotonic() - start


async def fleet(site: FixtureSite, runs: int, slots: int) -> tuple[float, float, float, float]:
    """(one run's wall time, its time per round, the fleet's wall time, the fleet's median
    time per round), ``runs`` runs at once in a pool of ``slots``."""
    folder = Path(tempfile.mkdtemp(prefix="hr-bench-fleet-"))
    plan = folder / "plan.jsonl"
    wait = '{"tool": "wait", "input": {"seconds": 0}}\n'
    plan.write_text(
        wait * (FLEET_ROUNDS - 1)
        + '{"tool": "finish", "input": {"success": true, "answer": "ok"}}\n'
    )
    await pool.start(NAME, slots=slots, headless=True)
    try:
        await _one_run(site, plan, folder / "warm", 0)  # imports and first attach, not timed
        await pool.clear(NAME, None)
        alone = await _one_run(site, plan, folder / "alone", 0)
        await pool.clear(NAME, None)
        start = time.monotonic()
        each = await asyncio.gather(
            *(_one_run(site, plan, folder / "fleet", n) for n in range(1, runs + 1))
        )
        total = time.monotonic() - start
    finally:
        await pool.stop(NAME, force=True)
        shutil.rmtree(folder, ignore_errors=True)
    return alone, alone / FLEET_ROUNDS, total, statistics.median(each) / FLEET_ROUNDS


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--slots", type=int, default=12)
    parser.add_argument("--fleet-only", action="store_true", help="only the fleet figures")
    args = parser.parse_args()
    site = FixtureSite("127.0.0.1")
    if args.fleet_only:
        try:
            alone, alone_round, total, fleet_round = await fleet(site, args.slots, args.slots)
        finally:
            site.stop()
        _print_fleet(args.slots, alone, alone_round, total, fleet_round)
        return
    starts, idles, reclaims = [], [], []
    memory_idle = memory_pages = (0, 0)
    try:
        for run in range(args.runs):
            starts.append(await cold_start(args.slots))
            try:
                for _ in range(3):
                    idles.append(await claim_idle())
                for _ in range(3):
                    reclaims.append(await claim_reclaim(site))
                if run == 0:
                    info = pool.status(NAME).info
                    assert info.browser_pid is not None
                    state = PoolState.open(NAME)
                    with state._write() as db:  # release the fillers: the bench owns them
                        db.execute("UPDATE slots SET state='completed', pid=?", (_dead_pid(),))
                    state.close()
                    await pool.clear(NAME, None)
                    memory_idle = _group_memory_kib(info.browser_pid)
                    for s in pool.status(NAME).slots:
                        await _load(info.endpoint, s.target_id, site.url("/pool/price_list.html"))
                    memory_pages = _group_memory_kib(info.browser_pid)
            finally:
                await pool.stop(NAME, force=True)
    finally:
        site.stop()
    print(f"load: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores")
    print(
        f"cold start, {args.slots} slots:   median {_ms(statistics.median(starts))}  (n={len(starts)})"
    )
    print(f"claim idle slot:          median {_ms(statistics.median(idles))}  (n={len(idles)})")
    print(
        f"claim by reclaim (wipe):  median {_ms(statistics.median(reclaims))}  (n={len(reclaims)})"
    )
    for what, (rss, pss) in (("idle slots", memory_idle), ("slots on a page", memory_pages)):
        print(
            f"memory, {args.slots} {what}: {rss / 1024:.0f} MiB RSS, {pss / 1024:.0f} MiB PSS "
            "(sums over the browser's processes)"
        )


def _print_fleet(
    runs: int, alone: float, alone_round: float, total: float, fleet_round: float
) -> None:
    print(f"load: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores")
    print(f"one run alone, {FLEET_ROUNDS} rounds:  {_ms(alone)}  ({_ms(alone_round)} a round)")
    print(
        f"{runs} runs at once:            {_ms(total)} in all  "
        f"(median {_ms(fleet_round)} a round, {fleet_round / alone_round:.1f}x one run's)"
    )


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="hr-bench-pool-") as data:
        os.environ[DATA_DIR_ENV] = data
        asyncio.run(main())
