"""A data grid from npm (AG Grid Community), as a person uses it (issue 26, class 6): rows in
the order they stand on screen, each value under its column's header, the sort state on the
headers, cells as elements a person double-clicks and edits, and the header's icon buttons
named. Each task is checked through the grid's own API.

Page: tests/site/gallery/grid/ag-grid.html.
"""

from __future__ import annotations

import pytest

from core.browser.browser import Tab
from core.eyes.snapshot import Snapshot
from core.hands import Page
from tests.helpers import index_of, open_page, page_eval
from tests.helpers.site_server import FixtureSite

pytestmark = pytest.mark.slow

READY = "new Promise((r) => { const t = () => (document.body.dataset.ready ? r(true) : requestAnimationFrame(t)); t(); })"
FRAMES = "new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"
# The grid's own order of its rows, as its API reports it.
GRID_ORDER = "(() => { const out = []; grid.forEachNodeAfterFilterAndSort((n) => out.push(n.data.trip)); return out; })()"


async def open_grid(page: Page, tab: Tab, site: FixtureSite) -> Snapshot:
    await open_page(page, site, "/gallery/grid/ag-grid.html")
    await page_eval(tab, READY)
    snap, _ = await page.observe()
    return snap


def rows(snap: Snapshot) -> list[list[str]]:
    """The grid's body rows as the digest shows them: each row's cell names."""
    out = []
    for line in snap.text.splitlines():
        cells = line.split(" | ")
        named = [c for c in cells if "]<gridcell" in c]
        if len(named) == len(cells) > 1:
            out.append([c.split(">", 1)[1].split("<", 1)[0] for c in cells])
    return out


async def test_each_row_is_one_line_under_a_header_line(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_grid(page, tab, site)
    header = next(line for line in snap.text.splitlines() if "]<columnheader" in line)
    assert [c.split(">", 1)[1].split("<", 1)[0] for c in header.split(" | ")] == [
        "Trip",
        "Departs",
        "Price",
        "Seats",
    ]
    assert rows(snap)[1] == ["Paris", "2026-12-11", "55", "3"]


async def test_after_a_sort_rows_are_read_in_the_order_on_screen(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_grid(page, tab, site)
    clicked = await page.click(index_of(snap, "Price"))
    assert clicked.ok, clicked.message
    await page_eval(tab, FRAMES)
    snap, _ = await page.observe()
    # The grid moves its rows with translateY and keeps them in the DOM as they were made.
    assert [row[0] for row in rows(snap)] == await page_eval(tab, GRID_ORDER)
    assert [row[0] for row in rows(snap)] == ["Nice", "Lyon", "Paris", "Lille"]
    assert "sort=ascending" in snap.elements[index_of(snap, "Price")].line


async def test_a_cell_is_edited_by_a_double_click_and_typing(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_grid(page, tab, site)
    [paris_price] = [e.index for e in snap.elements.values() if e.name == "55"]
    opened = await page.click(paris_price, count=2)
    assert opened.ok, opened.message
    snap, _ = await page.observe()
    [field] = [e.index for e in snap.elements.values() if e.editable]
    typed = await page.type(field, "60", submit=True)
    assert typed.ok, typed.message
    assert await page_eval(tab, "grid.getRowNode('Paris').data.price") == 60


async def test_the_header_filter_icon_is_named_and_filters(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_grid(page, tab, site)
    icons = [e for e in snap.elements.values() if e.name == "filter (icon)"]
    assert len(icons) == 2, snap.text  # Trip and Price have filters
    opened = await page.click(icons[0].index)
    assert opened.ok, opened.message
    snap, _ = await page.observe()
    [box] = [e.index for e in snap.elements.values() if e.editable and e.tag == "input"]
    # The filter applies after the grid's own debounce: wait for its event.
    await page_eval(
        tab, "window.filtered = new Promise((r) => grid.addEventListener('filterChanged', r)), 1"
    )
    typed = await page.type(box, "Li")
    assert typed.ok, typed.message
    await page_eval(tab, "window.filtered.then(() => true)")
    assert await page_eval(tab, GRID_ORDER) == ["Lille"]
