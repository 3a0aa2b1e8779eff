"""Names as Chrome computes them, on real applications (issue 26, class 2): on pages of the
Django admin and Datasette, every element the digest lists carries the accessible name
Chrome's own accessibility tree gives it (tests/eyes/test_names_as_chrome.py does the same
on fixtures)."""

from __future__ import annotations

import pytest

from core.browser.browser import Tab
from core.eyes.snapshot import Snapshot, unescape_page_text
from core.hands import Page
from tests.apps.servers import DatasetteApp, DjangoApp
from tests.helpers import index_of
from tests.helpers.accessibility import chrome_name

pytestmark = pytest.mark.slow


# Where the digest names an element otherwise than Chrome does, on purpose: (ours, Chrome's).
DELIBERATE = {
    # The calendar link's only content is an icon <span title="Choose a Date">: Chrome leaves
    # the link unnamed; the digest names it by the tooltip a person sees on hover.
    ("Choose a Date", ""),
    # The filter's <summary> gets an arrow from CSS (::before '↓' when open, '→' when
    # closed): a glyph, not a word; the digest says expanded=true instead.
    ("By confirmed", "↓ By confirmed"),
}


def same(ours: str, chrome: str) -> bool:
    """The same name, spaces aside, and case: Chrome's name carries CSS text-transform (the
    admin's "VIEW SITE"), the digest the text as written."""
    ours = " ".join(unescape_page_text(ours).split())
    chrome = " ".join(chrome.split())
    return ours.casefold() == chrome.casefold() or (ours, chrome) in DELIBERATE


async def names_differing(tab: Tab, snap: Snapshot) -> list[tuple[str, str, str]]:
    """(digest line, our name, Chrome's name) of each element whose names differ."""
    differ = []
    for index, element in sorted(snap.elements.items()):
        chrome = await chrome_name(tab, index)
        if not same(element.name, chrome):
            differ.append((element.line, element.name, chrome))
    return differ


async def observed(page: Page, url: str) -> Snapshot:
    result = await page.navigate(url)
    assert result.ok, result.message
    snap, _ = await page.observe()
    return snap


ADMIN_PAGES = [
    "travel/trip/",
    "travel/trip/?confirmed__exact=1",
    "travel/trip/1/change/",
    "travel/traveller/",
    "",
]


@pytest.mark.parametrize("path", ADMIN_PAGES)
async def test_django_admin_pages_are_named_as_chrome_names_them(
    page: Page, signed_in: Tab, travel: DjangoApp, path: str
) -> None:
    snap = await observed(page, travel.admin(path))
    assert len(snap.elements) > 15, snap.text
    differ = await names_differing(signed_in, snap)
    assert differ == [], "\n".join(map(repr, differ))


async def test_the_admin_calendar_is_named_as_chrome_names_it(
    page: Page, signed_in: Tab, travel: DjangoApp
) -> None:
    snap = await observed(page, travel.admin("travel/trip/add/"))
    result = await page.click(index_of(snap, "Choose a Date"))
    assert result.ok, result.message
    snap, _ = await page.observe()
    assert index_of(snap, ">")
    differ = await names_differing(signed_in, snap)
    assert differ == [], "\n".join(map(repr, differ))


async def test_the_sign_in_page_is_named_as_chrome_names_it(
    page: Page, signed_out: Tab, travel: DjangoApp
) -> None:
    snap = await observed(page, travel.admin("login/"))
    differ = await names_differing(signed_out, snap)
    assert differ == [], "\n".join(map(repr, differ))


DATASETTE_PAGES = [
    "/",
    "/agency",
    "/agency/flights",
    "/agency/flights?price__gt=300&_sort=price",
    "/agency/flights/7",
]


@pytest.mark.parametrize("path", DATASETTE_PAGES)
async def test_datasette_pages_are_named_as_chrome_names_them(
    page: Page, tab: Tab, agency: DatasetteApp, path: str
) -> None:
    snap = await observed(page, agency.url + path)
    differ = await names_differing(tab, snap)
    assert differ == [], "\n".join(map(repr, differ))
