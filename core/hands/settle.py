"""Reading the page before and after an action, and letting it settle in between."""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import Any

from core.cdp import CDPError, CDPTimeout, ConnectionClosed, SessionClosed
from core.eyes.snapshot import Probe as WorldProbe
from core.eyes.snapshot import probe as world_probe
from core.eyes.snapshot import probe_of as world_probe_of
from core.hands.ctx import Ctx, js
from core.hands.tab_watch import Marks, TabWatch
from core.result import Changes
from core.world.calls import world_eval
from core.world.errors import WorldError

# Settling after an action: wait until the page's timers due within QUIET seconds of the
# input have run (page clock), and it has had no request in flight for QUIET seconds
# (counted from the input at the earliest, so a reaction that starts a moment later is
# still seen), at most CAP seconds. A navigation waits for its load first. 80 ms: a
# navigation a page starts 80 ms after a click is part of the click (issue 10).
ACTION_QUIET, ACTION_CAP = 0.08, 1.5
# Typing often feeds a debounced listener (search-as-you-type, autocomplete) whose timer
# restarts at every key: count quiet from the last key, over a typical debounce delay.
TYPE_QUIET = 0.3
# Time after the input that surely covers two animation frames (60 Hz) of the page's reaction.
FRAMES_COVERED = 0.05
NAV_QUIET, NAV_CAP = 0.5, 5.0
# Longest wait, in page time, for the animations an input started (a section opening).
MOTION_CAP = 1.0


@dataclass(frozen=True, slots=True)
class Probe:
    url: str
    title: str
    mutations: int
    new_interactive: int
    generation: tuple[int, int]
    """(documents committed in the tab, our world's generation): different means a new
    document, whose counters are not comparable with the old one's."""


def probe_of(ctx: Ctx, raw: dict[str, Any]) -> Probe:
    """A :class:`Probe` of the current tab from the eyes' ``probe()`` answer ``raw``."""
    return _probe(ctx, world_probe_of(ctx.current, raw))


def _probe(ctx: Ctx, reading: WorldProbe) -> Probe:
    watch = ctx.watch
    watch.url, watch.title = reading.url, reading.title
    return Probe(
        url=reading.url,
        title=reading.title,
        mutations=reading.mutations,
        new_interactive=reading.new_interactive,
        generation=(watch.commits, reading.world),
    )


async def probe(ctx: Ctx) -> Probe | None:
    """URL, title and DOM counters of the tab, or a CDP-only reading when our world
    cannot answer (a page still loading, a dialog). Tab/connection loss propagates."""
    tab = ctx.current
    watch = ctx.watch
    watch.check_alive()
    try:
        reading = await world_probe(tab, timeout=max(min(ctx.remaining(), 3.0), 0.5))
    except (SessionClosed, ConnectionClosed):
        raise
    except (WorldError, CDPError, KeyError, TypeError, ValueError):
        # A crashed or closed tab also fails here: that is not a page still loading.
        watch.check_alive()
        return Probe(tab.url, tab.title, 0, 0, (watch.commits, -1))
    return _probe(ctx, reading)


def compare(before: Probe | None, after: Probe | None, *, new_tab: bool = False) -> Changes:
    """What differs between two probes of the same tab."""
    if before is None or after is None:
        return Changes(new_tab=new_tab)
    new_doc = after.generation != before.generation
    dom = new_doc or after.mutations != before.mutations
    if new_doc:
        new_elements = after.new_interactive
    else:
        new_elements = max(0, after.new_interactive - before.new_interactive)
    return Changes(
        url_changed=after.url != before.url,
        title_changed=after.title != before.title,
        dom_changed=dom,
        new_tab=new_tab,
        new_elements=new_elements,
    )


async def settle(
    ctx: Ctx, marks: Marks, *, quiet: float = ACTION_QUIET, cap: float = ACTION_CAP
) -> str | None:
    """Let the page react to an action: first by the page's own clock (its timers due
    within ``quiet`` seconds of the input have run), then follow a navigation it started
    (also one that starts while the page's requests settle) to its load, then wait
    (bounded) for network quiet and two animation frames. The page-clock wait ends with
    the motion the input started (see :func:`page_clock`). Returns a note when a navigation
    was still loading, or an animation still running, at the end."""
    note, _ = await settle_and_probe(ctx, marks, quiet=quiet, cap=cap, since=None)
    return note


async def settle_and_probe(
    ctx: Ctx,
    marks: Marks,
    *,
    quiet: float = ACTION_QUIET,
    cap: float = ACTION_CAP,
    since: float | None,
) -> tuple[str | None, Probe | None]:
    """:func:`settle`, and with ``since`` (``time.monotonic()`` before the input) the probe
    after it, read by our world at the end of the page-clock wait, when nothing can have
    changed the page after that reading: no request since ``since``, no navigation, no
    wait after it. None otherwise: the caller probes again."""
    watch = ctx.watch
    note = None
    seen = marks
    reading = await page_clock(ctx, quiet, cap, with_probe=since is not None)
    moving = None
    if reading is not None and reading.get("cut"):
        moving = (
            f"an animation it started ({reading.get('what')}) was still running after "
            f"{MOTION_CAP:g} s: the page may still be moving"
        )
    after = None
    raw = reading.get("probe") if reading is not None else None
    if (
        since is not None
        and isinstance(raw, dict)
        and watch.marks() == marks
        and not watch.inflight
        and watch.last_activity < since
    ):
        with contextlib.suppress(KeyError, TypeError, ValueError):
            after = probe_of(ctx, raw)
    # Our world saw the page start a navigation that Chrome may not have told us of yet.
    navigating = reading is not None and bool(reading.get("navigating"))
    for _ in range(3):
        if navigating or watch.requested > seen.requested or watch.started > seen.started:
            navigating = False
            loaded = await follow_navigation(ctx, watch, seen)
            note = None if loaded else "the page was still loading when handrail stopped waiting"
            quiet, cap = NAV_QUIET, NAV_CAP
            seen = watch.marks()
        waited = await network_quiet(ctx, quiet=quiet, cap=cap)
        if waited:
            after = None
        if not (watch.requested > seen.requested or watch.started > seen.started):
            break
    # The quiet window counted from the input already spans several frames; only wait
    # for frames when the settle was shorter than that.
    if not ctx.dispatched_at or time.monotonic() - ctx.dispatched_at < FRAMES_COVERED:
        await frames(ctx)
        after = None
    # After a navigation the animating document is gone: only its load can be noted.
    if seen is not marks:
        return note, None
    return moving, after


async def watch_motion(ctx: Ctx) -> None:
    """Arm the style observer that tells, after the input, which script-drawn motion the
    input started (call it before the input; motion.js ``watchMotion``)."""
    with contextlib.suppress(WorldError, CDPError):
        await js(ctx, "watchMotion")


async def page_clock(
    ctx: Ctx, window: float, cap: float, *, with_probe: bool = False
) -> dict[str, Any] | None:
    """Until the page's clock has run ``window`` seconds past its latest input, measured by
    a timer in our world (it fires after the page's earlier-due timers, even when a busy
    machine delays them all), and then until the animations the input started have ended
    (CSS, Web Animations, and script motion seen since :func:`watch_motion`; not infinite
    ones, nor those that began before the input), at most ``MOTION_CAP`` seconds of page
    time; at most ``cap`` + ``MOTION_CAP`` seconds of our own. Returns motion.js's reading
    (``cut`` and ``what`` when an animation outlasted the cap; ``probe``, the eyes' probe at
    its end, ``with_probe``), None when our world could not answer (a navigation replaced
    the document)."""
    with contextlib.suppress(WorldError, CDPError):
        reading = await js(
            ctx,
            "settleAfterInput",
            window * 1000,
            MOTION_CAP * 1000,
            with_probe,
            await_promise=True,
            limit=cap + MOTION_CAP,
        )
        return reading if isinstance(reading, dict) else None
    return None


async def follow_navigation(ctx: Ctx, watch: TabWatch, marks: Marks) -> bool:
    """Wait for a navigation the page started to commit and load (a download or a 204
    answer stops it without a commit). False when it was still loading at the limit."""
    loop = asyncio.get_running_loop()
    until = loop.time() + min(max(ctx.remaining() - 1.0, 0.2), 15.0)
    end = await watch.wait_for_navigation(marks, until=until, start_by=loop.time() + 1.0)
    return end != "timeout"


async def network_quiet(ctx: Ctx, *, quiet: float, cap: float) -> bool:
    """Until no request has been in flight for ``quiet`` seconds, at most ``cap``. True when
    that took a wait."""
    watch = ctx.watch
    loop = asyncio.get_running_loop()
    end = loop.time() + max(0.0, min(cap, ctx.remaining() - 0.5))
    waited = False
    while loop.time() < end:
        now = time.monotonic()
        if not watch.inflight:
            # Quiet counts from the input at the earliest: the page's reaction to it
            # (a request, a delayed navigation) may take a moment to start.
            idle = now - max(watch.last_activity, ctx.dispatched_at)
            if idle >= quiet:
                return waited
            await watch.changed(min(quiet - idle, end - loop.time()))
        else:
            await watch.changed(min(0.1, end - loop.time()))
        waited = True
    return waited


async def frames(ctx: Ctx) -> None:
    """Two animation frames (so the page has painted its reaction), bounded."""
    with contextlib.suppress(WorldError, CDPTimeout):
        await world_eval(
            ctx.current,
            "new Promise((resolve) => { let n = 0; const step = () => (++n >= 2 ? resolve(true) : requestAnimationFrame(step));"
            " requestAnimationFrame(step); setTimeout(() => resolve(false), 200); })",
            await_promise=True,
            timeout=max(min(ctx.remaining(), 1.0), 0.3),
        )
