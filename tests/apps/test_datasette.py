"""Tasks a person would give handrail on a real Datasette (the agency's flights), each done
with handrail's own eyes and hands and checked against Datasette's own state: its JSON API
for the page the browser ended on, and the sqlite file it serves (issue 26)."""

from __future__ import annotations

import re
import urllib.parse

import pytest

from core.browser.browser import Tab
from core.eyes.snapshot import Snapshot
from core.hands import Page
from tests.apps.finding import index_where
from tests.apps.servers import DatasetteApp
from tests.helpers import index_of, page_eval

pytestmark = pytest.mark.slow


async def open_table(page: Page, agency: DatasetteApp, path: str = "/agency/flights") -> Snapshot:
    result = await page.navigate(agency.url + path)
    assert result.ok, result.message
    snap, _ = await page.observe()
    return snap


def as_json(url: str, **extra: str) -> str:
    """The JSON API's address for the page at ``url`` (path and query kept)."""
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.parse_qsl(parts.query) + list(extra.items())
    return f"{parts.path}.json?{urllib.parse.urlencode(query)}"


async def shown_ids(tab: Tab) -> list[int]:
    """The ids in the page's table, top to bottom, read from the page itself."""
    cells = await page_eval(
        tab,
        "[...document.querySelectorAll('table.rows-and-columns td.col-id')].map(td => td.innerText)",
    )
    return [int(c) for c in cells]


async def test_filtering_a_column_with_greater_than(
    page: Page, tab: Tab, agency: DatasetteApp
) -> None:
    snap = await open_table(page, agency)
    for name, option in (("_filter_column", "price"), ("_filter_op", ">")):
        result = await page.select_option(index_where(snap, name=name), option)
        assert result.ok, result.message
    result = await page.type(index_where(snap, name="_filter_value"), "300")
    assert result.ok, result.message
    result = await page.click(index_of(snap, "Apply"))
    assert result.ok, result.message
    snap, _ = await page.observe()

    expected = [row[0] for row in agency.query("select id from flights where price > 300")]
    assert expected == [1, 2, 4, 5, 9]
    rows = agency.json(as_json(snap.url, _shape="array"))
    assert [row["id"] for row in rows] == expected
    assert await shown_ids(tab) == expected
    # The applied filter reads as the page shows it: `>`, not a look-alike a model would
    # then type back.
    assert 'selected=">"' in snap.elements[index_where(snap, name="_filter_op_1")].line
    assert "5 rows where price > 300" in snap.text, snap.text


async def test_sorting_by_a_column(page: Page, tab: Tab, agency: DatasetteApp) -> None:
    snap = await open_table(page, agency)
    result = await page.click(index_of(snap, "price"))
    assert result.ok, result.message
    snap, _ = await page.observe()

    expected = [row[0] for row in agency.query("select id from flights order by price, id")]
    rows = agency.json(as_json(snap.url, _shape="array"))
    assert [row["id"] for row in rows] == expected
    assert await shown_ids(tab) == expected
    # The rows the digest lists are in the page's order: each id is a link to its row.
    row_link = re.compile(r"http://[^/]+/agency/flights/\d+")
    links = [
        e.name
        for e in snap.elements.values()
        if row_link.fullmatch(urllib.parse.urljoin(snap.url, e.attrs.get("href", "")))
    ]
    assert links == [str(i) for i in expected], snap.text


async def test_opening_a_row(page: Page, agency: DatasetteApp) -> None:
    snap = await open_table(page, agency, "/agency/flights?_sort=price")
    result = await page.click(index_of(snap, "7"))
    assert result.ok, result.message
    snap, _ = await page.observe()

    assert urllib.parse.urlsplit(snap.url).path == "/agency/flights/7", snap.url
    [row] = agency.json(as_json(snap.url, _shape="array"))
    [stored] = agency.query("select * from flights where id = 7")
    assert tuple(row.values()) == stored
    assert all(str(value) in snap.text for value in stored), snap.text


async def test_running_a_query_typed_into_the_sql_editor(page: Page, agency: DatasetteApp) -> None:
    snap = await open_table(page, agency, "/agency")
    # Datasette's SQL box (CodeMirror 5) has no label: it is the page's one text field.
    [editor] = [e.index for e in snap.elements.values() if e.role == "textbox"]
    sql = "select destination, price from flights where price > 500 order by price"
    result = await page.type(editor, sql)
    assert result.ok, result.message
    result = await page.click(index_of(snap, "Run SQL"))
    assert result.ok, result.message
    snap, _ = await page.observe()

    assert urllib.parse.parse_qs(urllib.parse.urlsplit(snap.url).query)["sql"] == [sql]
    rows = agency.json(as_json(snap.url, _shape="array"))
    assert [tuple(row.values()) for row in rows] == agency.query(sql)
    assert "price > 500" in snap.text, snap.text


async def test_faceting_by_a_column_through_its_menu(
    page: Page, tab: Tab, agency: DatasetteApp
) -> None:
    snap = await open_table(page, agency)
    # The column's menu is a cog (an <svg> without a name) right after its header link.
    order = sorted(snap.elements)
    header = index_where(snap, href="/agency/flights?_sort=origin")
    cog = snap.elements[order[order.index(header) + 1]]
    assert cog.tag == "svg", snap.text
    result = await page.click(cog.index)
    assert result.ok, result.message
    snap, _ = await page.observe()
    result = await page.click(index_of(snap, "Facet by this"))
    assert result.ok, result.message
    snap, _ = await page.observe()

    counts = dict(agency.query("select origin, count(*) from flights group by origin"))
    facet = agency.json(as_json(snap.url))["facet_results"]["origin"]["results"]
    assert {f["value"]: f["count"] for f in facet} == counts
    result = await page.click(index_of(snap, "Porto"))
    assert result.ok, result.message
    snap, _ = await page.observe()
    porto = [row[0] for row in agency.query("select id from flights where origin = 'Porto'")]
    assert [row["id"] for row in agency.json(as_json(snap.url, _shape="array"))] == porto
    assert await shown_ids(tab) == porto
