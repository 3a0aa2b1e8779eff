"""A list box shows its options (issue 26): Django's filter_horizontal "Available" list was
`options="36"`, where a person sees the permission names. The options in its visible rows
are listed as items a person can click, with their selected state, and the rest is
announced like any scroll area; a dropdown (size 1) keeps its count."""

from __future__ import annotations

import pytest

from core.browser.browser import Tab
from core.eyes.snapshot import Snapshot
from core.hands import Page
from tests.helpers import index_of, open_page, page_eval
from tests.helpers.site_server import FixtureSite

pytestmark = pytest.mark.slow


def options_listed(snap: Snapshot) -> list[str]:
    return [e.name for _, e in sorted(snap.elements.items()) if e.role == "option"]


async def test_a_list_box_lists_the_options_a_person_sees(page: Page, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/widgets/eyes/listbox.html")
    listed = options_listed(snap)
    assert listed[:8] == [
        "Can add log entry", "Can change log entry", "Can delete log entry",
        "Can view log entry", "Can add permission", "Can change permission",
        "Can delete permission", "Can view permission",
    ], snap.text  # fmt: skip
    available = snap.elements[index_of(snap, "Available permissions")]
    assert available.role == "listbox"
    assert "28 more below" in available.line and "options=" not in available.line, available.line
    change = snap.elements[index_of(snap, "Can change log entry")]
    assert "selected" in change.attrs, change.line


async def test_a_small_list_box_shows_all_and_which_is_chosen(
    page: Page, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/widgets/eyes/listbox.html")
    assert options_listed(snap)[8:] == ["Can add log entry", "Can view user", "Can delete user"]
    chosen = snap.elements[index_of(snap, "Can view user")]
    assert "selected" in chosen.attrs


async def test_a_dropdown_keeps_its_count(page: Page, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/widgets/eyes/listbox.html")
    assert snap.elements[index_of(snap, "Sort by")].attrs["options"] == "9"


async def test_clicking_a_listed_option_selects_it(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/widgets/eyes/listbox.html")
    result = await page.click(index_of(snap, "Can add permission"))
    assert result.ok, result.message
    assert await page_eval(tab, "window.picked()") == ["Can add permission"]
