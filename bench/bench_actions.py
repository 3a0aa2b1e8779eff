"""Median and p95 time of click, type and navigate on local fixture pages.

Runs a headless Chromium of its own against the test fixture site (tests/site/page/) and
times each action as the agent loop calls it, from the call to the returned result: that
includes the probes before and after, the actionability checks and the settle.

    .venv/bin/python bench/bench_actions.py [--reps 50] [--chrome PATH] [--busy]

The last three rows are actions on a page whose form is in an out-of-process frame.

``--busy`` runs the same figures while one busy loop per core competes with Chromium, as on
a loaded CI machine (the loops are stopped when the bench ends).

"click: settle window" is the part of each timed click spent in the settle's page-clock
wait (core/hands/settle.py ``page_clock``: the page's timers due within 80 ms of the end of
the release, then the motion the click started): the floor an idle click cannot go under
while that window holds.

Where an idle click's time goes (the median of 21 timed clicks of this page, every CDP
command logged with its start and duration, ms from the call; 2026-12-01 23:48 UTC, load
1.7, main at ddf3cf4):

    step                                                          start   duration
    aimReadings (probe, target, toggle state, prepareClick)         0.3     2.8
    hoverCheck, sent right behind the move | mouseMoved             3.5     3.7 | 3.0
    pressCheck, sent right behind the press | mousePressed          7.2     2.7 | 2.6
    mouseReleased                                                  10.4     2.7
    settle: page clock (80 ms from the click's end) and the probe
      after, in one call | releaseCheck                            13.6    81.6 | 1.6
                                                                  total    95.3

Four round trips before the settle (there were seven, and a probe after it): the readings
are one call of our world, each check waits in the page for its input's dispatch
(mouse.py ``_behind``), and the probe after the click is read at the end of the settle's
own call. A round trip after a moment of quiet costs 2-4 ms on this machine, 0.7 ms back
to back; the 80 ms window is the issue's. The window now also rounds its timer up past
``setTimeout``'s whole milliseconds: truncated, it came due before a page timer set for
80 ms at the end of the click about one time in eight (the late-navigation test failed 1
time in 12 at 47b0c62, 0 in 12 here; a script of the same click, 0 in 25), which costs
about 1 ms of every click.

Figures (20 runs each, the two checkouts alternately in the same minutes, shared 2-core
machine: ``cd CHECKOUT && PYTHONPATH=$PWD .venv/bin/python bench/bench_actions.py --reps
20 [--busy]``; median / p95 ms):

    2026-12-01 23:12-23:14 UTC, load 0.5-1.5; before at 47b0c62, after at 7f4d262
    before   click 100.0/103.5  98.6/104.1 104.0/110.7
    after    click  97.7/100.1  95.4/98.8  103.9/116.3
    2026-12-01 23:41-23:44 UTC, load 1.2-2.4; before at 47b0c62, after at ddf3cf4
    before   click 100.4/104.1 101.0/110.2  97.8/101.6  type 346/367 352/364 345/356
    after    click  96.8/102.0  98.2/106.5  97.7/101.8  type 345/363 341/352 347/360
    --busy   before click 103.8/111.3 type 370/388;  after click 103.7/115.8 type 376/400
    navigate 530-545 ms in every run, before and after.
    2026-12-02 00:10-00:12 UTC, load 1.1-2.6, a slower host; before at 47b0c62, after at
    2669d9c
    before   click 106.1/116.7 105.4/116.3
    after    click 102.1/109.7 100.5/112.1
    2026-12-02 01:48 and 02:34-02:37 UTC, load 1.1-3.9 (no change to the hands since
    95d7cfc; the two checkouts alternately)
    95d7cfc  click 98.3/102.1  95.6/101.8  93.6/97.9
    57197c1  click 93.1/96.3  96.0/100.2  94.3/99.8  96.8/102.2

The frame rows (navigate to a page whose form is in a cross-site frame, click its field,
press a key there; tests/site/frames/host.html with a frame from 127.0.0.2) show what a
request counted in flight for ever cost before (core/hands/tab_watch.py): 2026-12-02 00:07-00:10
UTC, 10 runs each, 47b0c62 against 2669d9c: navigate 5,275 ms against 666, click 1,644
against 134, key 1,608 against 103 (medians).

"press check" (the hover check's frame and the press read-back, called without a move or a
press) is 15.1-15.7 ms against 15.2-15.7 before: without a move there is no move's frame to
end in, so it waits for the next one. In a click the two checks cost what the table above
shows.

Figures of the change before (issue 10, 20:34-21:51 UTC): main c761f08 click 147.5-152.2
ms, that change 96.3-97.6 ms at 20:34 and 106.5-115.2 ms at 21:46-21:51 on a slower host.
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
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.browser.browser import Browser
from core.browser.launch import LaunchOptions
from core.eyes.snapshot import Snapshot, follow_frames
from core.hands import Page
from core.result import ActionResult
from tests.helpers.site_server import FixtureSite


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
    from core.hands import settle  # the hands' internals, for this figure only

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
    from core.hands.ctx import Ctx, js  # the hands' internals, for this figure only

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
        figures.update(await _measure_frame(reps, chrome))
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


async def _measure_frame(reps: int, chrome: str | None) -> dict[str, list[float]]:
    """Actions on a page whose form is in a cross-site frame (another loopback address, so
    out of process), with the frames followed as a run follows them: navigating to it (at
    most 10 times), clicking the frame's field, and a key press there."""
    site, partner = FixtureSite(), FixtureSite("127.0.0.2")
    with tempfile.TemporaryDirectory(prefix="handrail-bench-") as profile:
        browser = await Browser.launch(
            LaunchOptions(executable=chrome, profile_dir=Path(profile), headless=True)
        )
        await follow_frames(browser)
        page = Page(browser)
        try:
            frame = quote(partner.url("/frames/form.html"), safe="")
            host = site.url("/frames/host.html") + f"?name=Partner&f={frame}"
            figures = {
                "frame page: navigate": await _time(min(reps, 10), lambda: page.navigate(host))
            }
            snapshot, _ = await page.observe()
            field = _index(snapshot, "Postcode")
            figures["frame: click"] = await _time(reps, lambda: page.click(field))
            figures["frame: key"] = await _time(reps, lambda: page.press_key("N"))
        finally:
            page.close()
            await browser.close()
            site.stop()
            partner.stop()
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=50)
    parser.add_argument("--chrome", default=None, help="Chrome/Chromium executable")
    parser.add_argument("--busy", action="store_true", help="one busy loop per core meanwhile")
    args = parser.parse_args()
    asyncio.run(main(args.reps, args.chrome, args.busy))
