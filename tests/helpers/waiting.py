"""Waiting in tests: on events where the code under test has them, else on a deadline that a
busy machine can stretch.

Tests synchronise on what they wait for (a CDP event, a page's report, a record in a log), never
on a fixed sleep. Where only polling will do (another process's state, a server's request log),
the deadline is a safety net, scaled by ``HANDRAIL_TEST_SLOWDOWN`` (a factor, default 1): on a
loaded CI machine ``HANDRAIL_TEST_SLOWDOWN=3`` gives every such wait three times as long, and a
passing test is never slowed, as the wait ends as soon as its condition holds.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable

SLOWDOWN_ENV = "HANDRAIL_TEST_SLOWDOWN"
POLL_S = 0.05


def slowdown() -> float:
    """The factor deadlines are stretched by (``HANDRAIL_TEST_SLOWDOWN``, at least 1)."""
    raw = os.environ.get(SLOWDOWN_ENV, "").strip()
    try:
        factor = float(raw) if raw else 1.0
    except ValueError as exc:
        raise ValueError(f"{SLOWDOWN_ENV} must be a number such as 2 or 2.5, not {raw!r}") from exc
    return max(1.0, factor)


def scaled(seconds: float) -> float:
    """``seconds`` as a deadline on this machine."""
    return seconds * slowdown()


def until(predicate: Callable[[], object], timeout: float, what: str | Callable[[], str]) -> None:
    """Poll ``predicate`` until it is true (for another process's state, which sends no
    events); fail naming ``what`` after the scaled ``timeout`` (a callable ``what`` is asked
    only then: what it lists may be changing meanwhile)."""
    deadline = time.monotonic() + scaled(timeout)
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what() if callable(what) else what}")
        time.sleep(POLL_S)


async def eventually(
    predicate: Callable[[], object | Awaitable[object]],
    timeout: float,
    what: str | Callable[[], str],
) -> object:
    """Await ``predicate`` (sync or async) until it returns something true, and return that;
    fail naming ``what`` after the scaled ``timeout``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + scaled(timeout)
    while True:
        value = predicate()
        if isinstance(value, Awaitable):
            value = await value
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what() if callable(what) else what}")
        await asyncio.sleep(POLL_S)
