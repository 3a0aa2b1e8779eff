"""A sorted column says so (issue 26, grids and tables): the header's aria-sort reaches the
digest, on the sort control inside the header or as text after a header that is only text."""

from __future__ import annotations

import pytest

from core.hands import Page
from tests.helpers import index_of, open_page
from tests.helpers.site_server import FixtureSite

pytestmark = pytest.mark.slow


async def test_the_sort_control_of_a_sorted_column_carries_its_direction(
    page: Page, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/widgets/eyes/sorted_table.html")
    departure = snap.elements[index_of(snap, "Departure")]
    assert departure.attrs.get("sort") == "ascending", departure.line
    price = snap.elements[index_of(snap, "Price")]
    assert "sort" not in price.attrs, price.line


async def test_a_sorted_header_that_is_only_text_says_so(page: Page, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/widgets/eyes/sorted_table.html")
    assert "Seats left (sorted descending)" in snap.text, snap.text
    assert "Operator (sorted" not in snap.text
    fare = snap.elements[index_of(snap, "Fare")]
    assert fare.attrs.get("sort") == "descending", fare.line
