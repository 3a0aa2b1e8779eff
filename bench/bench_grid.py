"""A fleet over a browser grid, measured: two browserless instances with 6 slots each, and
one handrail process supervising (issue 30).

    .venv/bin/python bench/bench_grid.py [--tasks 24] [--slots 6] [--waiting 12]

Needs browserless (``bash scripts/bootstrap.sh --dev`` installs it in tests/grid). Three
phases, each a fleet (``tui.screens.fleet.FleetApp``, headless, as ``handrail fleet`` runs
it) over one pool of ``--slots`` slots in each of the two browserless instances:

1. **Throughput**: ``--tasks`` scripted tasks on the demo site with ``--approve none`` (the
   demo's own plan up to the passenger details, then ``finish``). Wall time, runs per
   minute, and handrail's own peak RSS.
2. **Waiting on the model**: ``--waiting`` runs whose model (the real ``anthropic`` SDK
   against a local fake Messages API) takes 60 s to answer. Once every run waits, the
   process's RSS above its idle level and its CPU over 10 s, per waiting run: what a
   supervising process pays per concurrent run while the model thinks.
3. **The approval queue**: ``--waiting`` runs with ``approve = "ask"`` all asking at once;
   the person approves them one after another. The latency is from the key press to the
   next run's approval on screen.

Nothing here is a test: the figures go into the issue's note. Results on this machine are
in docs/scale.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system


class Sampler:
    """The process's RSS every 0.2 s, on a thread (the peak is what it needed)."""

    def __init__(self) -> None:
        self.peak = rss_kb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, rss_kb())

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def demo_plan(folder: Path) -> Path:
    """The demo's plan up to the passenger details, then ``finish``: a whole booking
    flow on the demo site that never reaches the payment hand-over."""
    from core.demo.plan import demo_plan_lines

    lines = demo_plan_lines(date.today())
    cut = next(i for i, line in enumerate(lines) if line.get("target") == "Continue to payment")
    steps = [*lines[:cut], {"tool": "finish", "input": {"success": True, "answer": "booked"}}]
    path = folder / "demo-plan.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in steps))
    return path


def tasks_file(folder: Path, count: int, site: str, model: str, approve: str) -> Path:
    tasks = "".join(f'[[task]]\ntask = "book a seat, {n}"\n\n' for n in range(1, count + 1))
    path = folder / f"tasks-{approve}-{count}.toml"
    path.write_text(
        f'model = "{model}"\napprove = "{approve}"\naudit_dir = "logs"\n'
        f'start_url = "{site}"\nallow_domain = ["127.0.0.1"]\nmax_rounds = 40\n'
        "screenshots = false\n\n" + tasks
    )
    return path


async def fleet(path: Path, pool: str, **options: Any) -> Any:
    from core.run.fleet import load_fleet
    from tui.screens.fleet import FleetApp

    loaded = load_fleet(path, pool=pool, default_model="scripted:none")
    return FleetApp(
        loaded.runs, pool=pool, persist_theme=False, config_dir=path.parent / "config",
        poll_interval=0.5, **options,
    )  # fmt: skip


async def until(pilot: Any, condition: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit("the fleet did not get there in time")
        await pilot.pause(0.01)


async def throughput(folder: Path, pool: str, site: str, count: int) -> dict[str, float]:
    path = tasks_file(folder, count, site, f"scripted:{demo_plan(folder)}", "none")
    app = await fleet(path, pool)
    sampler = Sampler()
    began = time.perf_counter()
    async with app.run_test(headless=True, size=(140, 44)) as pilot:
        await until(pilot, lambda: app.done, 900)
    wall = time.perf_counter() - began
    peak = sampler.stop()
    codes = [r.exit_code for r in app.runs]
    if codes != [0] * count:
        raise SystemExit(f"runs failed: {codes}: {[r.problem for r in app.runs]}")
    return {"wall_s": wall, "runs_per_min": count / wall * 60, "peak_rss_mb": peak / 1024}


async def waiting_on_the_model(folder: Path, pool: str, site: str, count: int) -> dict[str, Any]:
    from tests.helpers.fake_anthropic import FakeAnthropic, tool_use_block

    release = threading.Event()

    def slow(_body: dict[str, Any]) -> list[dict[str, Any]]:
        release.wait(60)  # the model thinks (the SDK's request stays open)
        return [tool_use_block("finish", {"success": True, "answer": "done"}, "toolu_1")]

    with FakeAnthropic() as fake:
        fake.respond_with(slow)
        os.environ["ANTHROPIC_BASE_URL"] = fake.url
        os.environ["ANTHROPIC_API_KEY"] = fake.api_key
        path = tasks_file(folder, count, site, "anthropic:claude-sonnet-4-5", "none")
        app = await fleet(path, pool)
        idle_rss, idle_fds = rss_kb(), open_fds()
        async with app.run_test(headless=True, size=(140, 44)) as pilot:
            await until(pilot, lambda: len(fake.message_bodies) >= count, 300)
            await pilot.pause(1.0)
            fds = open_fds()
            cpu0, t0, rss0 = cpu_seconds(), time.perf_counter(), rss_kb()
            await pilot.pause(10.0)
            cpu1, t1, rss1 = cpu_seconds(), time.perf_counter(), rss_kb()
            release.set()
            await until(pilot, lambda: app.done, 300)
    core_share = (cpu1 - cpu0) / (t1 - t0)
    return {
        "runs_waiting": count,
        "rss_above_idle_mb_per_run": ((rss0 + rss1) / 2 - idle_rss) / 1024 / count,
        "cpu_percent_of_a_core_per_run": core_share * 100 / count,
        "cpu_percent_of_a_core_all": core_share * 100,
        "fds_per_run": (fds - idle_fds) / count,
    }


async def approval_queue(folder: Path, pool: str, site: str, count: int) -> dict[str, float]:
    from tui.screens.fleet import FleetApproval

    plan = folder / "click.jsonl"
    plan.write_text(
        json.dumps({"tool": "click", "target": "Choose date", "reason": "open the calendar"})
        + "\n"
        + json.dumps({"tool": "finish", "input": {"success": True, "answer": "done"}})
        + "\n"
    )
    path = tasks_file(folder, count, site, f"scripted:{plan}", "ask")
    app = await fleet(path, pool)
    latencies = []
    async with app.run_test(headless=True, size=(140, 44)) as pilot:
        await until(pilot, lambda: len(app.queue) + (app.showing is not None) == count, 300)
        for _ in range(count):
            await until(pilot, lambda: isinstance(app.screen, FleetApproval), 60)
            shown = app.screen
            began = time.perf_counter()
            await pilot.press("a")
            await until(
                pilot,
                lambda s=shown: (
                    app.screen is not s and (isinstance(app.screen, FleetApproval) or not app.queue)
                ),
                60,
            )
            latencies.append((time.perf_counter() - began) * 1000)
        await until(pilot, lambda: app.done, 300)
    return {
        "median_ms": statistics.median(latencies[:-1] or latencies),
        "max_ms": max(latencies[:-1] or latencies),
    }


async def main_async(args: argparse.Namespace) -> None:
    from core.demo import start_demo_site
    from core.pool import pool
    from tests.helpers.browserless import Browserless

    with tempfile.TemporaryDirectory(prefix="bench-grid-") as tmp:
        folder = Path(tmp)
        os.environ["HANDRAIL_DATA_DIR"] = str(folder / "data")
        site = start_demo_site()
        concurrent = args.slots + 4  # the keeper's browser, the runs' connections, headroom
        with (
            Browserless.start(concurrent=concurrent, parent=folder) as one,
            Browserless.start(concurrent=concurrent, parent=folder) as two,
        ):
            try:
                await pool.start("bench", slots=args.slots, endpoints=[one.url, two.url])
                print(f"grid: 2 browserless x {args.slots} slots; demo site {site.url}")
                got = await throughput(folder, "bench", site.url, args.tasks)
                print(
                    f"1. {args.tasks} tasks, --approve none: {got['wall_s']:.1f} s wall, "
                    f"{got['runs_per_min']:.1f} runs/min, handrail peak RSS "
                    f"{got['peak_rss_mb']:.0f} MB"
                )
                waiting = await waiting_on_the_model(folder, "bench", site.url, args.waiting)
                print(
                    f"2. {args.waiting} runs waiting on the model: "
                    f"{waiting['rss_above_idle_mb_per_run']:.1f} MB RSS and "
                    f"{waiting['cpu_percent_of_a_core_per_run']:.2f}% of a core per run "
                    f"({waiting['cpu_percent_of_a_core_all']:.1f}% for all), "
                    f"{waiting['fds_per_run']:.1f} open files per run"
                )
                queue = await approval_queue(folder, "bench", site.url, args.waiting)
                print(
                    f"3. {args.waiting} approvals waiting at once: next one on screen "
                    f"{queue['median_ms']:.0f} ms after the key (median), "
                    f"{queue['max_ms']:.0f} ms at most"
                )
            finally:
                await pool.stop("bench", force=True)
                site.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=24)
    parser.add_argument("--slots", type=int, default=6, help="slots in each browserless")
    parser.add_argument("--waiting", type=int, default=12)
    args = parser.parse_args()
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
