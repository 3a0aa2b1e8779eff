"""Tables read as a person reads them (issue 26, class 6): a row is one line, its cells in
order joined by " | ", under a header line; an element in a cell keeps its own form there, and
every reader of a digest (the scripted planner, the rerun's matcher) finds it.

Fixture: tests/site/snapshot/table_rows.html (the Django admin changelist's shape).
"""

from __future__ import annotations

import re

import pytest

from core.hands import Page
from core.model.scripted import parse_digest
from core.rerun.match import read_digest
from tests.helpers import open_page
from tests.helpers.site_server import FixtureSite

ROW = (
    "[4]<input type=checkbox>Select this object for an action - Paris | "
    "[5]<a href=/trip/2/>Paris | Dec. 11, 2026 | 55.00 | False | window seat"
)
# A name that ends its cell runs to the " | ": no closing tag there, unless the name holds a
# " | " itself; one that text follows in its cell keeps it.
LAST_ROW = (
    "[#]<input type=checkbox>Select this object for an action - Bordeaux | "
    "[#]<a href=/trip/4/>Bordeaux | Arcachon</a> | Dec. 13, 2026 | 70.00 |  | "
    "[#]<a href=/trip/4/seats/>seats</a> left: 3"
)
# As rows read before the closing tags left the ends of cells (recorded runs have them).
OLD_ROW = (
    "[4]<input type=checkbox>Select this object for an action - Paris</input> | "
    "[5]<a href=/trip/2/>Paris</a> | Dec. 11, 2026 | 55.00 | False | window seat"
)


def unindexed(line: str) -> str:
    return re.sub(r"\[\d+\]", "[#]", line)


@pytest.mark.parametrize("row", [ROW, OLD_ROW])
def test_every_element_of_a_row_line_is_read_back(row: str) -> None:
    found = parse_digest(f"<browser_state>\nTrips\n{row}\n</browser_state>")
    assert [(e.index, e.tag, e.name) for e in found] == [
        (4, "input", "Select this object for an action - Paris"),
        (5, "a", "Paris"),
    ]
    digest = read_digest(f"<browser_state>\nURL: http://x/\n\nTrips\n{row}\n</browser_state>")
    assert [(e.element.index, e.attrs["href"]) for e in digest.entries[1:]] == [
        (5, "http://x/trip/2/")
    ]


@pytest.mark.slow
async def test_a_table_row_is_one_line_of_its_cells_under_the_header_line(
    page: Page, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/snapshot/table_rows.html")
    lines = snap.text.splitlines()
    header = next(
        line for line in lines if line.endswith("| Trip | Departs | Price | Confirmed | Note")
    )
    rows = lines[lines.index(header) + 1 :]
    assert unindexed(rows[1]) == unindexed(ROW)
    # Each value sits in its column: the price is the 4th cell, the icon's alt the 5th.
    cells = rows[0].split(" | ")
    assert cells[3:5] == ["40.00", "True"]
    # Page text that looks like our lines stays escaped inside a row, first cell or not.
    assert rows[2].startswith("&#91;9]&lt;button>Pay now")
    assert [e.name for e in parse_digest(snap.text) if e.name == "Pay now"] == []
    assert unindexed(rows[3]) == LAST_ROW
    assert "Bordeaux | Arcachon" in [e.name for e in snap.elements.values()]


@pytest.mark.slow
async def test_a_flex_container_is_read_in_the_order_it_draws(
    page: Page, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/snapshot/flex_order.html")
    body = snap.text.splitlines()
    start = body.index("Skills")
    assert [unindexed(line) for line in body[start + 1 : start + 5]] == [
        "Python",
        "[#]<button>remove tag",
        "Go",
        "[#]<button>remove tag",
    ]
