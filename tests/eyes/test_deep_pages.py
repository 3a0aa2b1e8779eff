"""Pages built to break the eyes by nesting: the walk recurses per level, and Chrome renders
thousands of nested elements. The digest reads what lies before, beside and after the deep
part, says where it stopped, and never fails the observation.

tests/site/snapshot/deep.html builds the nesting: ?depth=N of ?tag=, inside a button
(?inside=button, whose name is computed over it) or as nested shadow roots (?shadow=1).
"""

from __future__ import annotations

import pytest

from core.browser.browser import Tab
from core.eyes.snapshot import take_snapshot
from tests.helpers import load
from tests.helpers.site_server import FixtureSite

CUT = "[the page nests elements deeper than 400 levels here: what lies deeper is not read]"


@pytest.mark.parametrize(
    "query",
    ["depth=2500", "depth=5000&tag=span", "depth=2500&tag=section", "depth=1200&shadow=1"],
)
async def test_a_page_nested_thousands_deep_is_read_around_the_deep_part(
    tab: Tab, site: FixtureSite, query: str
) -> None:
    await load(tab, site.url(f"/snapshot/deep.html?{query}"), timeout=30)
    snap = await take_snapshot(tab)
    lines = snap.text.splitlines()
    assert "Before the deep part." in lines and "After the deep part." in lines
    assert lines.count(CUT) == 1  # said once, where it happened
    assert (
        lines.index("Before the deep part.")
        < lines.index(CUT)
        < lines.index("After the deep part.")
    )
    assert [e.name for e in snap.elements.values()] == ["Still here"]


async def test_a_button_holding_thousands_of_levels_is_still_named_and_listed(
    tab: Tab, site: FixtureSite
) -> None:
    await load(tab, site.url("/snapshot/deep.html?depth=2500&inside=button"), timeout=30)
    snap = await take_snapshot(tab)
    names = [e.name for e in snap.elements.values()]
    assert "Still here" in names and len(names) == 2
    assert "After the deep part." in snap.text


async def test_nesting_within_the_limit_is_read_to_the_bottom(tab: Tab, site: FixtureSite) -> None:
    await load(tab, site.url("/snapshot/deep.html?depth=300"))
    snap = await take_snapshot(tab)
    assert "the bottom of the well" in snap.text
    assert CUT not in snap.text
