"""Median and p95 time of click, type and navigate on local fixture pages.

Runs a headless Chromium of its own against the test fixture site (tests/site/page/) and
times each action as the agent loop calls it, from the call to the returned result: that
includes the probes before and after, the actionability checks and the settle.

    .venv/bin/python bench/bench_actions.py [--reps 50] [--chrome PATH] [--busy]

``--busy`` runs the same figures while one busy loop per core competes with Chromium, as on
a loaded CI machine (the loops are stopped when the bench ends).

"click: settle window" is the part of each timed click spent in the settle's page-clock
wait (core/page/settle.py ``page_clock``: the page's timers due within 80 ms of the end of
the release, then the motion the click started): the floor an idle click cannot go under
while that window holds.

Where an idle click's time goes (the median of 21 timed clicks of this page, every CDP
command logged with its start and duration, ms from the call; 2026-12-01 20:37 UTC, load
2.8, the issue-10 change of 20:34):

    step                                                        start   duration
    probe | target | toggle state, concurrent                     0.2   2.9 | 2.4 | 2.3
    prepareClick (visible, enabled, in view, hit test, first box)   4.3   1.8
    mouseMoved (the page gets it at the start of a frame)           6.1   2.8
    hoverCheck (our rAF asked in that frame, a task; box, hit test) 9.0   1.8
    mousePressed                                                   10.6   2.8
    pressCheck (who got the press; the release held to it)         13.8   1.7
    mouseReleased                                                  16.5   3.4
    settle: page clock (80 ms from the release's end) | releaseCheck 19.7   79.8 | 1.5
    probe after                                                    99.9   1.9
                                                                 total  101.4

Before this change (main c761f08) a click spent three frames outside its settle window:
the pointer's move, the hover check's own frame (asked for after the move's answer, so a
whole frame later) and a move with the button down that let a pointer capture take
effect before the press was checked; and the window was 100 ms counted from the start of
the input. Now the hover check ends in the move's own frame, the release is held to the
pressed element instead of the capture move (page.js ``holdRelease``, ``guardRelease``),
where the release went is read while the page settles, and the window is 80 ms from the
input's arrival at the window, after the page's handlers.

Figures (20 runs each, the two checkouts alternately in the same minutes, shared 2-core
machine: ``cd CHECKOUT && PYTHONPATH=$PWD .venv/bin/python bench/bench_actions.py --reps
20 [--busy]``; median / p95 ms):

    2026-12-01 20:34-20:37 UTC, load (uptime, 1 min) 1.5-2.6; main at c761f08
    main, before   click 149.9/154.4 147.5/153.3  type 371/428 344/363  navigate 533/556 534/539
    this, after    click  96.3/101.1  97.6/106.8  type 342/351 344/360  navigate 536/542 531/537
    --busy         main click 149.4/159.4  type 370/437;  this click 103.9/127.8  type 403/476
    2026-12-01 21:46-21:51 UTC, idle VM (load 0.7-2.6) on a slower host (import anthropic
    3.85 s against 3.15 s at 19:45); main at c761f08 as before, this at 7e2a32f
    main, before   click 152.2/167.5 150.2/154.6 149.1/159.4 149.5/153.3
    this, after    click 115.2/119.6 113.8/119.2 106.5/115.9 107.9/113.5

On the slower host every round trip took about twice as long (the per-command trace:
move 6.0, hover check 4.3, press 5.9, press check 4.5, release 6.3 ms): the before figure
absorbs that in its frame waits, this one shows it whole.

Earlier figures (the change before this one, 17:53-17:55 UTC, load 0.1-0.7): main 7671d7f
click 183 ms median, that change 133 ms. Typing 11 characters sends its keys back to back
(core.cdp ``send_in_order``) and reads its field state in parallel; navigate no longer waits
two frames after half a second of network quiet.
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
        await js(ctx, "pressCheck", index, await_promise=True)
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
