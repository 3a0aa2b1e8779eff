"""Tabs a web component shows through a slot are tabs (issue 26): a tab group whose tabs
are light-DOM children slotted into a nav it listens on read as one line,
`[4]<div>General Specs Reviews</div>`; each tab is an element of its own, with its
selected state, and clicking one selects it."""

from __future__ import annotations

import pytest

from core.browser.browser import Tab
from core.hands import Page
from tests.helpers import index_of, open_page, page_eval
from tests.helpers.site_server import FixtureSite

pytestmark = pytest.mark.slow


async def test_slotted_tabs_are_listed_each_with_its_state(page: Page, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/widgets/eyes/slotted_tabs.html")
    tabs = {e.name: e for e in snap.elements.values() if e.role == "tab"}
    assert set(tabs) == {"General", "Specs", "Reviews"}, snap.text
    assert "selected" in tabs["General"].attrs and "selected" not in tabs["Specs"].attrs
    assert not any("General Specs" in e.name for e in snap.elements.values()), snap.text


async def test_clicking_a_slotted_tab_selects_it(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/widgets/eyes/slotted_tabs.html")
    result = await page.click(index_of(snap, "Specs"))
    assert result.ok, result.message
    assert await page_eval(tab, "window.picked") == "Specs"
