"""Click targets found by their listeners, asked about element by element (issue 26: eyes as
fast as Playwright's on real pages).

A document with thousands of listeners (Jupyter's React roots carry 131 each) is read in ask
mode (core/eyes/listeners.py ``ask_mode``): the walk records the elements whose listeners
would decide how they are read, CDP is asked about those alone, and the walk is taken again
when an answer changes what it read. These tests hold that asking reads what listing every
listener reads, on the listener fixtures, and that what changed since the last digest (an
element added with a handler, a handler added to or removed from an element already there)
shows in the very digest after it.

Real headless Chromium against tests/site/widgets/eyes/.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

import core.eyes.listeners as listeners
from core.browser.browser import Tab
from core.cdp import CDPConnection, CDPError
from core.eyes.snapshot import Snapshot, take_snapshot
from core.world.calls import world_call
from tests.helpers import load, page_eval
from tests.helpers.site_server import FixtureSite


@pytest.fixture
def always_ask(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every digest after a document's first asks (whatever its listener count)."""
    monkeypatch.setattr(listeners, "ASK_ABOVE", -1)
    monkeypatch.setattr(listeners, "ASK_COST", 0)


def scan(snap: Snapshot) -> dict[str, Any]:
    got = snap.stats.get("listeners")
    assert isinstance(got, dict), f"listener discovery failed: {got!r}"
    return got


def names(snap: Snapshot) -> list[str]:
    return [e.name for e in snap.elements.values()]


def line_of(snap: Snapshot, name: str) -> str:
    found = [e.line for e in snap.elements.values() if e.name == name]
    assert len(found) == 1, f"{name!r} found {len(found)} times in:\n{snap.text}"
    return found[0]


async def read(tab: Tab, site: FixtureSite, path: str) -> tuple[Snapshot, Snapshot]:
    """The page's first digest (every listener listed) and its second (asking)."""
    await load(tab, site.url(path))
    first = await take_snapshot(tab)
    second = await take_snapshot(tab)
    assert scan(first)["asked"] is None
    assert scan(second)["asked"], scan(second)
    return first, second


@pytest.mark.parametrize(
    "path",
    [
        "/widgets/eyes/delegated.html",  # jQuery delegation, data-action delegation, own listeners
        "/widgets/eyes/jquery-datepicker.html",  # jQuery UI's Prev/Next and day cells
        "/snapshot/clickable.html",  # a div with a listener of its own among pointer decoys
        "/widgets/eyes/framework-roots.html",  # roots with 130 listeners each
    ],
)
async def test_asking_reads_what_listing_every_listener_reads(
    always_ask: None, tab: Tab, site: FixtureSite, path: str
) -> None:
    first, second = await read(tab, site, path)
    assert second.text == first.text
    assert names(second) == names(first)


async def test_delegated_and_own_targets_are_found_by_asking(
    always_ask: None, tab: Tab, site: FixtureSite
) -> None:
    _, snap = await read(tab, site, "/widgets/eyes/delegated.html")
    # jQuery's selector on an ancestor, a data-action item under a plain listener, and an
    # element's own listener; decoys (a wide wrapper, a hidden and a pointer-less element) not.
    assert set(names(snap)) == {"Previous page", "Next page", "Red", "Blue", "Alpha", "Beta"}


@pytest.fixture(params=["asking", "listing"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Asking (as :func:`always_ask`), or listing every listener on every digest, whose walk
    goes out with the previous listing and is taken again when the new one differs."""
    listing = request.param == "listing"
    monkeypatch.setattr(listeners, "ASK_ABOVE", 10**9 if listing else -1)
    monkeypatch.setattr(listeners, "ASK_COST", 0)
    return str(request.param)


async def test_a_handler_added_since_the_last_digest_shows_in_the_next(
    mode: str, tab: Tab, site: FixtureSite
) -> None:
    if mode == "asking":
        _, snap = await read(tab, site, "/widgets/eyes/framework-roots.html")
    else:
        await load(tab, site.url("/widgets/eyes/framework-roots.html"))
        await take_snapshot(tab)
        snap = await take_snapshot(tab)  # with the listing handed before: nothing to retake
        assert scan(snap)["asked"] is None and scan(snap)["retake"] is False
    assert "Plain words" not in names(snap)
    # A listener bound to an element already there (no DOM change at all).
    await page_eval(
        tab,
        "window.plainClick = () => { out.textContent = 'plain'; };"
        "document.getElementById('plain').addEventListener('click', window.plainClick)",
    )
    snap = await take_snapshot(tab)
    assert scan(snap)["retake"] is True
    assert "Plain words" in names(snap)
    # A new element with a listener of its own, marked new as any new element is.
    await page_eval(
        tab,
        "(() => { const s = document.createElement('span'); s.textContent = 'Third item';"
        " s.addEventListener('click', () => { out.textContent = 'third'; });"
        " document.querySelector('.items').appendChild(s); })()",
    )
    snap = await take_snapshot(tab)
    assert re.match(r"^\*\[\d+\]<span>Third item</span>$", line_of(snap, "Third item"))
    assert not line_of(snap, "Plain words").startswith("*")
    # The handler removed: no longer a target.
    await page_eval(
        tab, "document.getElementById('plain').removeEventListener('click', window.plainClick)"
    )
    snap = await take_snapshot(tab)
    assert "Plain words" not in names(snap)
    assert "\nPlain words" in snap.text or snap.text.startswith("Plain words")


async def test_a_framework_root_is_a_target_that_acts(
    always_ask: None, tab: Tab, site: FixtureSite
) -> None:
    _, snap = await read(tab, site, "/widgets/eyes/framework-roots.html")
    for _ in range(2):  # the root's answer is kept: the same on the digest after
        assert [n for n in names(snap) if n.startswith("Tool ")] == [
            f"Tool {k}" for k in range(1, 21)
        ]
        snap = await take_snapshot(tab)
    tool = next(e.index for e in snap.elements.values() if e.name == "Tool 7")
    await world_call(tab, "function (i) { globalThis.__handrail.element(i).click(); }", tool)
    assert await page_eval(tab, "out.textContent") == "tool 7"


async def test_a_page_with_thousands_of_listeners_is_asked_about_and_a_light_one_is_not(
    tab: Tab, site: FixtureSite
) -> None:
    # No thresholds patched: the page's own figures decide.
    await load(tab, site.url("/widgets/eyes/framework-roots.html"))
    first = await take_snapshot(tab)
    assert scan(first)["asked"] is None  # a document's first digest lists every listener
    second = await take_snapshot(tab)
    assert scan(second)["asked"]
    assert second.text == first.text
    await load(tab, site.url("/widgets/eyes/delegated.html"))
    for _ in range(2):
        assert scan(await take_snapshot(tab))["asked"] is None


async def test_jquery_delegation_changed_since_the_last_digest_shows_in_the_next(
    mode: str, tab: Tab, site: FixtureSite
) -> None:
    # jQuery keeps one object of handlers per element and adds to it; removing every handler
    # lets that object go, and the next handler bound starts a new one. Both show at once.
    await load(tab, site.url("/widgets/eyes/delegated.html"))
    for _ in range(3):
        snap = await take_snapshot(tab)
    assert {"Previous page", "Next page"} <= set(names(snap))
    assert "Not a control" not in names(snap)
    await page_eval(tab, "$('.pager').on('click', 'a:not([title])', () => {})")
    snap = await take_snapshot(tab)
    assert {"Previous page", "Next page", "Not a control"} <= set(names(snap))
    await page_eval(
        tab, "$('.pager').off('click'); $('.pager').on('click', 'a[title^=N]', () => {})"
    )
    snap = await take_snapshot(tab)
    assert "Next page" in names(snap)
    assert not {"Previous page", "Not a control"} & set(names(snap)), snap.text
    await page_eval(tab, "$('.pager').off('click')")
    snap = await take_snapshot(tab)
    assert not {"Previous page", "Next page", "Not a control"} & set(names(snap)), snap.text


async def test_a_delegated_jquery_handler_beside_an_own_one_shows_in_the_next_digest(
    mode: str, tab: Tab, site: FixtureSite
) -> None:
    # jQuery keeps delegated handlers first in a type's list and counts them (what its
    # dispatch reads): an element with a handler of its own alone has nothing to read for a
    # selector, until a delegated one joins the same list.
    await load(tab, site.url("/widgets/eyes/delegated.html"))
    await page_eval(
        tab,
        "(() => { const bar = document.createElement('div'); bar.className = 'bar';"
        " bar.innerHTML = '<b>Bold</b> <u>Underline</u>'; document.body.append(bar);"
        " $(bar).on('click', () => {}); return true; })()",
    )
    for _ in range(3):  # the lists are kept and read again from there
        snap = await take_snapshot(tab)
    assert "Bold" not in names(snap)
    assert "Bold Underline" in names(snap), snap.text  # the bar, a target of its own
    await page_eval(tab, "$('.bar').on('click', 'b', () => {})")
    snap = await take_snapshot(tab)
    assert "Bold" in names(snap) and "Underline" not in names(snap), snap.text
    await page_eval(tab, "$('.bar').off('click', 'b')")
    snap = await take_snapshot(tab)
    assert "Bold" not in names(snap) and "Bold Underline" in names(snap), snap.text


@pytest.mark.parametrize(
    "tamper",
    [
        # jQuery's list swapped for a proxy whose traps would answer anything asked.
        "ev.click = new Proxy(ev.click, { get: () => { throw new Error('trap'); },"
        " ownKeys: () => { throw new Error('trap'); } })",
        # A list grown to 100,000 entries of junk, and an accessor where a handler sat.
        "ev.click.push(...Array.from({ length: 100000 }, () => ({ selector: 1 })));"
        " Object.defineProperty(ev.click, 0, { get: () => { throw new Error('trap'); } })",
        # The events object itself swapped for a getter on jQuery's data.
        "Object.defineProperty(data, 'events', { get: () => { throw new Error('trap'); } })",
    ],
)
async def test_jquery_data_a_page_tampers_with_between_digests_ends_no_digest(
    mode: str, tab: Tab, site: FixtureSite, tamper: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await load(tab, site.url("/widgets/eyes/delegated.html"))
    for _ in range(3):  # the lists are kept and read again from there
        snap = await take_snapshot(tab)
    assert "Next page" in names(snap)
    await page_eval(
        tab,
        "(() => { const el = document.querySelector('.pager');"
        " const data = $._data(el); const ev = data.events;"
        f" {tamper}; return true; }})()",
    )
    reads: list[str] = []
    send = CDPConnection.send

    async def counted(self: CDPConnection, method: str, *args: Any, **kw: Any) -> Any:
        if method == "Runtime.getProperties":
            reads.append(method)
        return await send(self, method, *args, **kw)

    monkeypatch.setattr(CDPConnection, "send", counted)
    snap = await take_snapshot(tab)
    monkeypatch.undo()
    # Bounded work: a handler list of 100,000 entries is not read entry by entry.
    assert len(reads) <= 2 * listeners.MAX_HANDLERS
    assert isinstance(snap.stats.get("listeners"), dict)
    assert {"Red", "Blue", "Alpha", "Beta"} <= set(names(snap))
    assert await page_eval(tab, "document.getElementById('page').textContent") == "1"


@pytest.mark.parametrize("digests", [1, 3])  # the first read, and one from a kept object
async def test_objects_read_from_jquery_data_do_not_outlive_the_digest(
    mode: str, tab: Tab, site: FixtureSite, digests: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A property read answers in the object group of the element's handle, kept for the
    # document's life: every digest of a jQuery page used to leave its reads behind.
    await load(tab, site.url("/widgets/eyes/delegated.html"))
    for _ in range(digests - 1):
        await take_snapshot(tab)
    handed: list[str] = []
    send = CDPConnection.send

    async def recorded(self: CDPConnection, method: str, *args: Any, **kw: Any) -> Any:
        got = await send(self, method, *args, **kw)
        if method == "Runtime.getProperties":
            handed.extend(
                str(p["value"]["objectId"])
                for p in got.get("result", [])
                if p.get("value", {}).get("objectId") and p["value"].get("subtype") != "node"
            )
        return got

    monkeypatch.setattr(CDPConnection, "send", recorded)
    snap = await take_snapshot(tab)
    monkeypatch.undo()
    assert "Next page" in names(snap) and len(handed) > 1, handed
    alive = []
    for object_id in handed:
        try:
            await tab.send("Runtime.getProperties", {"objectId": object_id})
        except CDPError:
            continue
        alive.append(object_id)
    # Only jQuery's events object stays, read first in this digest (the next starts there).
    assert len(alive) == (1 if digests == 1 else 0), alive
    snap = await take_snapshot(tab)
    assert "Next page" in names(snap)
