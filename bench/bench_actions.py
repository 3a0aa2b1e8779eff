"""Median and p95 time of click, type and navigate on local fixture pages.

Runs a headless Chromium of its own against the test fixture site (tests/site/page/) and
times each action as the agent loop calls it, from the call to the returned result: that
includes the probes before and after, the actionability checks and the settle.

    .venv/bin/python bench/bench_actions.py [--reps 50] [--chrome PATH] [--busy]

``--busy`` runs the same figures while one busy loop per core competes with Chromium, as on
a loaded CI machine (the loops are stopped when the bench ends).

"click: settle window" is the part of each timed click spent in the settle's page-clock
wait (core/page/settle.py ``page_clock``: the page's timers due within 100 ms of the
release, then the motion the click started): the floor an idle click cannot go under
while that window holds.

Where an idle click's time goes (the median of 21 timed clicks of this page, every CDP
command and step logged; before: main 7671d7f at 16:37 UTC, load 0.6; after: this branch
at 17:55 UTC, load 0.5; 2026-12-01):

    step                                                            before    after
    probe | target | toggle state, concurrent                        11.5 ms   3.4 ms
    prepareClick (visible, enabled, in view, hit test; before: also
      the stability wait, a frame)                                  11.8      1.5
    mouseMoved (the page may hold a move until its next frame)        9.3      2.0
    hoverCheck (a frame and a task; hit test; after: also the
      stability check's second reading)                             16.3      2.9
    mousePressed, then mouseMoved with the button down (before: one
      after the other; after: back to back; the move waits for the
      page's next frame)                                       3.3 + 14.3     17.2
    pressCheck, mouseReleased                                  5.0 + 3.4   2.2 + 2.4
    settle: page clock (100 ms of page time from the release)       ~100     99.8
    probe after                                                      3.4      1.6

Before, every call into page.js carried the whole script with the sensitivity words
(~77 kB: ~4 ms a call instead of ~1), and the stability check waited a frame of its own
before the move, which then waited for the next. What is left outside the settle window
is the pointer's frame, the hover check's frame and the capture move's frame (each a
safety check: the page reacts to the hover before the hit test, the stability check's
readings are in different frames, a pointer capture takes effect before the press is
checked) and about ten round trips of 1-3 ms.

Figures (20 runs each, the two checkouts alternately in the same minutes, shared 2-core
machine: ``cd CHECKOUT && PYTHONPATH=$PWD .venv/bin/python bench/bench_actions.py --reps
20 [--busy]``; median / p95 ms, two runs each):

    2026-12-01 17:53-17:55 UTC, idle, load (uptime, 1 min) 0.1-0.7; main at 92eda76
    main, before   click 183.1/184.6 182.4/185.2  type 409/433 396/410  navigate 541/551 534/551
    this, after    click 133.0/137.7 133.5/136.5  type 338/355 340/363  navigate 529/535 521/526
    2026-12-01 17:34-17:36 UTC, idle, load 3.2-3.4; main at 4b50ab2
    main, before   click 182.9/185.4 183.4/197.1  type 442/474 455/552  navigate 551/653 550/599
    this, after    click 149.4/151.0 136.9/150.5  type 395/437 352/400  navigate 543/565 537/586
    2026-12-01 17:37-17:39 UTC, --busy, load 4.0-5.2; main at 4b50ab2
    main, before   click 181.4/199.5 185.7/191.4  type 486/606 460/491
    this, after    click 143.8/158.1 149.6/155.2  type 360/405 369/392

The minimum click went from 165 to 130 ms; on a loaded machine the median sits 137 or
149 ms, a frame apart, depending on where the clicks fall in the page's frame period.
Typing 11 characters sends its keys back to back (core.cdp ``send_in_order``) and reads
its field state in parallel; navigate no longer waits two frames after half a second of
network quiet.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.browser import Browser, LaunchOptions
from core.page import Page
from core.result import ActionResult
from core.snapshot import Snapshot
from tests.site_server import FixtureSite


def _index(snapshot: Snapshot, name: str) -> int:
    for element in snapshot.elements.values():
        if element.name == name:
            return element.index
    raise SystemExit(f"no element named {name!r} on {snapshot.url}")


async def _time(reps: int, action: Callable[[], Awaitable[ActionResult]]) -> list[float]:
    times = []
    for _ in range(reps):
        started = time.perf_counter()
        result = await action()
        times.append((time.perf_counter() - started) * 1000)
        if not result.ok:
            raise SystemExit(f"action failed during the bench: {result.message}")
    return times


@contextlib.contextmanager
def _settle_windows(into: list[float]) -> Iterator[None]:
    """Record the duration of every settle page-clock wait while the block runs."""
    from core.page import settle  # the hands' internals, for this figure only

    original = settle.page_clock

    async def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return await original(*args, **kwargs)
        finally:
            into.append((time.perf_counter() - started) * 1000)

    settle.page_clock = timed  # type: ignore[assignment]
    try:
        yield
    finally:
        settle.page_clock = original  # type: ignore[assignment]


async def _press_check(page: Page, reps: int) -> list[float]:
    """What the press-time check adds to a click: the hit test after the pointer moved (a
    frame and a task of the page) and the read-back of the press target, as two calls into
    our world. Measured without pressing (the read-back then finds no press)."""
    from core.page.context import Ctx, js  # the hands' internals, for this figure only

    snapshot, _ = await page.observe()
    index = _index(snapshot, "Add one")
    x, y, w, h = snapshot.elements[index].rect
    tab = page.browser.current
    loop = asyncio.get_running_loop()
    times = []
    for _ in range(reps):
        ctx = Ctx(name="bench", deadline=loop.time() + 30, hands=page._hands, tab=tab)
        started = time.perf_counter()
        await js(ctx, "hoverCheck", index, x + w / 2, y + h / 2, await_promise=True)
        await js(ctx, "pressCheck")
        times.append((time.perf_counter() - started) * 1000)
        await js(ctx, "pressDone")
    return times


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


@contextlib.contextmanager
def _busy_cores(on: bool) -> Iterator[None]:
    """One busy loop per core for the duration, when ``on``."""
    loops = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range((os.cpu_count() or 1) if on else 0)
    ]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


async def main(reps: int, chrome: str | None, busy: bool) -> None:
    with _busy_cores(busy):
        figures = await _measure(reps, chrome)
    load = "with every core busy" if busy else "idle machine"
    print(
        f"{'action':<22}{'median ms':>11}{'p95 ms':>10}{'min ms':>10}   ({reps} runs each, {load})"
    )
    for label, values in figures.items():
        print(
            f"{label:<22}{statistics.median(values):>11.1f}{_p95(values):>10.1f}{min(values):>10.1f}"
        )


async def _measure(reps: int, chrome: str | None) -> dict[str, list[float]]:
    site = FixtureSite()
    with tempfile.TemporaryDirectory(prefix="handrail-bench-") as profile:
        browser = await Browser.launch(
            LaunchOptions(executable=chrome, profile_dir=Path(profile), headless=True)
        )
        page = Page(browser)
        try:
            counter = site.url("/page/counter.html")
            other = site.url("/page/popup_target.html")
            await page.navigate(counter)
            snapshot, _ = await page.observe()
            add = _index(snapshot, "Add one")
            name = _index(snapshot, "Name")
            # Warm up (first world creation, JIT) before measuring.
            await page.click(add)
            await page.type(name, "warm up")

            windows: list[float] = []
            with _settle_windows(windows):
                clicks = await _time(reps, lambda: page.click(add))
            figures = {
                "click": clicks,
                "click: settle window": windows,
                "type (11 chars)": await _time(reps, lambda: page.type(name, "hello world")),
            }
            flip = [counter, other]
            n = 0

            def navigate() -> Awaitable[ActionResult]:
                nonlocal n
                n += 1
                return page.navigate(flip[n % 2])

            figures["navigate"] = await _time(reps, navigate)
            await page.navigate(counter)
            figures["press check"] = await _press_check(page, reps)
        finally:
            page.close()
            await browser.close()
            site.stop()
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=50)
    parser.add_argument("--chrome", default=None, help="Chrome/Chromium executable")
    parser.add_argument("--busy", action="store_true", help="one busy loop per core meanwhile")
    args = parser.parse_args()
    asyncio.run(main(args.reps, args.chrome, args.busy))
