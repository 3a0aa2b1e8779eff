"""browserless, the browser grid, driven by handrail's own CDP client (tests/helpers/browserless.py).

A pool of persistent tabs on a grid relies on one property: a tab outlives the connection that
opened it, as long as another client is attached to its browser. Here the first connection
launches a browser and opens a tab in a browser context of its own; a second one attaches to
that browser through ``/devtools/browser/<id>``; once browserless has seen the first go, the
second still finds the tab. The grid refuses a connection without its token, and stopping it
leaves no process behind.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from core.cdp import CDPConnection, HandshakeRefused
from core.pool import pool
from core.pool.pool import PoolRun
from tests.helpers.browserless import Browserless
from tests.helpers.site_server import FixtureSite
from tests.helpers.waiting import eventually
from tests.pool.test_grid import pool_command
from tests.pool.test_pool import load
from tests.pool.test_pool_isolation import NOTHING, found

pytestmark = pytest.mark.slow

TOKEN = "handrail-grid-token"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def grid(tmp_path: Path) -> Iterator[Browserless]:
    """browserless with a token and room for four browsers, stopped after the test."""
    with Browserless.start(token=TOKEN, concurrent=4, queued=4, parent=tmp_path) as started:
        yield started


async def page_entry(grid: Browserless, target_id: str) -> dict[str, Any] | None:
    """The /sessions entry of the page ``target_id`` (it names the page's browser and how
    many clients that browser has), or None while browserless does not list it."""
    sessions = await asyncio.to_thread(grid.sessions)
    return next((s for s in sessions if s.get("id") == target_id), None)


async def has_clients(grid: Browserless, target_id: str, count: int) -> bool:
    entry = await page_entry(grid, target_id)
    return entry is not None and entry["numbConnected"] == count


async def test_a_tab_outlives_the_connection_that_opened_it(grid: Browserless) -> None:
    first = await CDPConnection.open(grid.endpoint("/chromium", timeout="0"))
    second: CDPConnection | None = None
    try:
        version = await first.send("Browser.getVersion")
        assert "Chrome" in version["product"], version
        context = (await first.send("Target.createBrowserContext"))["browserContextId"]
        created = await first.send(
            "Target.createTarget", {"url": "about:blank", "browserContextId": context}
        )
        target = created["targetId"]

        entry = await eventually(
            lambda: page_entry(grid, target), 15, f"/sessions to list the page {target}"
        )
        assert isinstance(entry, dict)
        second = await CDPConnection.open(grid.endpoint(f"/devtools/browser/{entry['browserId']}"))
        await eventually(
            lambda: has_clients(grid, target, 2), 15, "browserless to count the second client"
        )

        await first.close()
        await eventually(
            lambda: has_clients(grid, target, 1), 15, "browserless to see the first client go"
        )
        targets = (await second.send("Target.getTargets"))["targetInfos"]
        tab = next((t for t in targets if t["targetId"] == target), None)
        assert tab is not None, targets
        assert tab["type"] == "page"
        assert tab["browserContextId"] == context
    finally:
        await first.close()
        if second is not None:
            await second.close()

    # Another token, or none, and the websocket handshake is refused.
    for url in (
        f"ws://127.0.0.1:{grid.port}/chromium?token=not-{TOKEN}&timeout=0",
        f"ws://127.0.0.1:{grid.port}/chromium?timeout=0",
    ):
        with pytest.raises(HandshakeRefused) as refused:
            await CDPConnection.open(url)
        assert refused.value.status == 401, refused.value

    await asyncio.to_thread(grid.stop)
    assert grid.leftovers() == []
    with pytest.raises(ProcessLookupError):
        os.killpg(grid.pid, 0)  # browserless's process group is empty
    assert not grid.root.exists()
    assert not grid.tmp.exists()


@pytest.fixture
def two_grids(tmp_path: Path) -> Iterator[tuple[Browserless, Browserless]]:
    """Two browserless instances, as two hosts of a grid."""
    with (
        Browserless.start(token=TOKEN, concurrent=6, parent=tmp_path) as one,
        Browserless.start(token=TOKEN, concurrent=6, parent=tmp_path) as two,
    ):
        yield one, two


async def test_a_pool_over_two_browserless_spreads_its_runs_and_outlives_one_of_them(
    name: str, two_grids: tuple[Browserless, Browserless], site: FixtureSite
) -> None:
    one, two = two_grids
    started = pool_command(
        "start", "--name", name, "--endpoint", one.url, "--endpoint", two.url,
        "--slots-per-endpoint", "2",
    )  # fmt: skip
    assert started.returncode == 0, started.stderr
    assert TOKEN not in started.stdout + started.stderr  # the token is never printed
    # The slots outlive the command that made them: the keeper holds each browser.
    leases = []
    for n in range(4):
        lease = PoolRun(name, f"run-{n}", "a task")
        leases.append((lease, await lease.open()))
    try:
        ports = sorted(urlsplit(lease.endpoint or "").port for lease, _ in leases)
        assert ports == sorted([one.port, one.port, two.port, two.port])  # 2 and 2
        lease, browser = next(lb for lb in leases if str(one.port) in (lb[0].endpoint or ""))
        assert browser.current is not None
        await load(lease.endpoint or "", browser.current.target_id, site.url("/pool/trace.html"))
    finally:
        for lease, browser in leases:
            await lease.end(browser)
            await browser.close()
    status = pool_command("status", "--name", name)
    assert status.stdout.count("answers; 2 of 2 slots free") == 2, status.stdout
    assert TOKEN not in status.stdout
    # A reclaimed slot on that browser holds nothing of the run before.
    again = PoolRun(name, "again", "a task")
    browser = await again.open()
    try:
        assert browser.current is not None
        endpoint = again.endpoint or ""
        assert await found(endpoint, browser.current.target_id, site) == NOTHING
    finally:
        await again.end(browser)
        await browser.close()
    # One grid host goes away: its slots are lost, the other's go on.
    await asyncio.to_thread(one.stop)
    status = pool_command("status", "--name", name)
    assert "DOES NOT ANSWER" in status.stdout and status.stdout.count("lost") >= 2
    for n in range(2):
        lease = PoolRun(name, f"after-{n}", "a task")
        browser = await lease.open()
        assert urlsplit(lease.endpoint or "").port == two.port
        await lease.end(browser)
        await browser.close()
    stopped = pool_command("stop", "--name", name)
    assert stopped.returncode == 0, stopped.stderr
    state = pool.status  # the pool is gone: its keeper ended, and with it the browser it held
    with pytest.raises(pool.PoolMissing):
        state(name)
