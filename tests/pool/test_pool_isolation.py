"""A reclaimed slot starts as a fresh browser would (issue 25): whatever the last run in it
did, on whichever host, the next run finds none of it, and runs in other slots never share
its login. Real headless Chromium; each slot's tab lives in a browser context of its own."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import urllib.parse
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from core.browser.browser import Browser
from core.cdp import CDPConnection
from core.pool import pool
from core.pool.pool import PoolRun
from tests.helpers.site_server import FixtureSite
from tests.pool.test_pool import evaluate, load, start

pytestmark = pytest.mark.slow

NOTHING = {"session": None, "local": None, "cookie": "", "history": 2}
"""What /pool/read_trace.html finds in a tab that holds nothing of an earlier run."""


@pytest.fixture
def idp() -> Iterator[FixtureSite]:
    """A second host (not just another port: cookies are the host's) for sign-in hops."""
    server = FixtureSite("127.0.0.2")
    yield server
    server.stop()


@pytest.fixture
def third() -> Iterator[FixtureSite]:
    server = FixtureSite("127.0.0.3")
    yield server
    server.stop()


@asynccontextmanager
async def slot_run(name: str, run_id: str) -> AsyncIterator[tuple[str, str]]:
    """A run holding one slot: yields (browser endpoint, its tab's target id); the run ends
    (its slot completed, the page kept) when the block does."""
    async with leased(name, run_id) as (lease, browser):
        assert browser.current is not None
        yield lease.info.endpoint, browser.current.target_id


@asynccontextmanager
async def leased(name: str, run_id: str) -> AsyncIterator[tuple[PoolRun, Browser]]:
    lease = PoolRun(name, run_id, f"task of {run_id}")
    lease.claim_first()
    browser: Browser = await lease.open()
    try:
        yield lease, browser
    finally:
        await lease.end(browser)
        await browser.close()


async def found(endpoint: str, target: str, site: FixtureSite) -> Any:
    await load(endpoint, target, site.url("/pool/read_trace.html"))
    text = await evaluate(endpoint, target, "document.getElementById('found').textContent")
    return json.loads(text)


async def test_the_next_run_in_a_one_slot_pool_finds_nothing_of_the_last_on_its_own_site(
    name: str, site: FixtureSite
) -> None:
    await asyncio.to_thread(start, name, 1)
    async with slot_run(name, "run-a") as (endpoint, tab):
        await load(endpoint, tab, site.url("/pool/trace.html"))
        assert (await found(endpoint, tab, site))["cookie"] == "session=ada-4411"
    async with slot_run(name, "run-b") as (endpoint, tab):
        assert await found(endpoint, tab, site) == NOTHING


async def test_a_redirect_through_a_second_host_leaves_no_session_there(
    name: str, site: FixtureSite, idp: FixtureSite
) -> None:
    await asyncio.to_thread(start, name, 1)
    back = site.url("/pool/price_list.html")
    sign_in = idp.url("/__redirect?" + urllib.parse.urlencode({"to": back, "cookie": "sso=ada"}))
    async with slot_run(name, "run-a") as (endpoint, tab):
        await load(
            endpoint, tab, site.url("/__redirect?" + urllib.parse.urlencode({"to": sign_in}))
        )
        assert idp.requested("/__redirect"), "the bounce went through the second host"
        history = await evaluate(endpoint, tab, "history.length")
        assert history == 2, "no history entry names the second host"
    async with slot_run(name, "run-b") as (endpoint, tab):
        assert (await found(endpoint, tab, idp))["cookie"] == ""


async def test_a_client_side_hop_through_a_third_host_leaves_neither_storage_nor_a_database(
    name: str, site: FixtureSite, third: FixtureSite
) -> None:
    await asyncio.to_thread(start, name, 1)
    back = site.url("/pool/price_list.html")
    hop = third.url("/pool/bounce.html?" + urllib.parse.urlencode({"back": back}))
    async with slot_run(name, "run-a") as (endpoint, tab):
        await load(endpoint, tab, hop)
        await site.until(lambda got: any(r.path == "/pool/price_list.html" for r in got))
    async with slot_run(name, "run-b") as (endpoint, tab):
        left = await found(endpoint, tab, third)
        assert left["cookie"] == "" and left["local"] is None
        databases = await evaluate(
            endpoint, tab, "indexedDB.databases().then(all => all.map(d => d.name))"
        )
        assert databases == []


async def test_a_service_worker_and_both_caches_of_the_last_run_are_gone(
    name: str, site: FixtureSite
) -> None:
    await asyncio.to_thread(start, name, 1)

    def fetched() -> int:
        return len([r for r in site.received if r.path == "/__cached"])

    before = fetched()
    async with slot_run(name, "run-a") as (endpoint, tab):
        await load(endpoint, tab, site.url("/pool/leave_workers.html"))
        assert await evaluate(endpoint, tab, "window.left") is True
    assert fetched() == before + 1
    async with slot_run(name, "run-b") as (endpoint, tab):
        await load(endpoint, tab, site.url("/pool/price_list.html"))
        workers = await evaluate(
            endpoint, tab, "navigator.serviceWorker.getRegistrations().then(r => r.length)"
        )
        stores = await evaluate(endpoint, tab, "caches.keys()")
        await evaluate(endpoint, tab, "fetch('/__cached').then(r => r.text())")
        assert workers == 0 and stores == []
    assert fetched() == before + 2, (
        "the HTTP cache entry of the last run must not answer for this one"
    )


async def test_runs_in_two_slots_never_share_a_login_and_a_reclaim_leaves_the_other_alone(
    name: str, site: FixtureSite
) -> None:
    await asyncio.to_thread(start, name, 2)
    async with slot_run(name, "run-a") as (endpoint, a_tab):
        # Run A is signed in and still running in slot 1 while slot 2 changes hands.
        await load(endpoint, a_tab, site.url("/pool/trace.html"))
        async with slot_run(name, "run-c") as (_, c_tab):
            await load(endpoint, c_tab, site.url("/pool/trace.html"))
        async with slot_run(name, "run-b") as (_, b_tab):
            assert b_tab != c_tab, "the completed slot was reclaimed with a new tab"
            assert await found(endpoint, b_tab, site) == NOTHING
        kept = await evaluate(
            endpoint, a_tab, "[document.cookie, localStorage.getItem('remembered')]"
        )
        assert kept == ["session=ada-4411", "ada"], "the running run keeps its login"


NOTIFICATIONS = "navigator.permissions.query({name: 'notifications'}).then(p => p.state)"


async def test_a_permission_granted_in_the_last_run_is_asked_for_again(
    name: str, site: FixtureSite
) -> None:
    """A site was allowed to notify during run A: run B on the same site is asked again, as
    in a fresh browser. (A grant over CDP lasts while its connection does, so this one is
    held open across both runs.)"""
    await asyncio.to_thread(start, name, 1)
    origin = site.url("/").rstrip("/")
    conn: CDPConnection | None = None
    try:
        async with leased(name, "run-a") as (lease, browser):
            assert browser.current is not None
            endpoint, tab = lease.info.endpoint, browser.current.target_id
            await load(endpoint, tab, site.url("/pool/price_list.html"))
            conn = await CDPConnection.open(endpoint)
            grant = {"permissions": ["notifications"], "origin": origin}
            if lease.context_id is not None:
                grant["browserContextId"] = lease.context_id
            await conn.send("Browser.grantPermissions", grant)
            assert await evaluate(endpoint, tab, NOTIFICATIONS) == "granted"
        async with slot_run(name, "run-b") as (endpoint, tab):
            await load(endpoint, tab, site.url("/pool/price_list.html"))
            assert await evaluate(endpoint, tab, NOTIFICATIONS) == "prompt"
    finally:
        if conn is not None:
            await conn.close()


async def test_a_pool_started_by_an_earlier_handrail_gives_its_slots_contexts_of_their_own(
    name: str, site: FixtureSite
) -> None:
    """Its database has no context per slot (its tabs shared the profile's): the next
    claims give each slot a fresh one, and a run's login still does not reach the next."""
    await asyncio.to_thread(start, name, 1)
    with sqlite3.connect(pool.pool_dir(name) / "pool.sqlite3") as db:
        db.execute("ALTER TABLE slots DROP COLUMN context_id")
    async with leased(name, "run-a") as (lease, browser):
        assert lease.context_id is not None, "the old slot was given a context of its own"
        assert browser.current is not None
        endpoint, tab = lease.info.endpoint, browser.current.target_id
        await load(endpoint, tab, site.url("/pool/trace.html"))
    async with slot_run(name, "run-b") as (endpoint, tab):
        assert await found(endpoint, tab, site) == NOTHING
    assert [s.context_id is not None for s in pool.status(name).slots] == [True]
