"""A double click and a right click (issue 26): a file list opens a file on double-click
(Jupyter), and a page draws its own context menu on a right click. Both are trusted input
with the click's checks, gated like a click; the action says which it was."""

from __future__ import annotations

import pytest

from core.actions import ParseError, parse_call
from core.browser.browser import Tab
from core.hands import Page
from tests.helpers import index_of, open_page, page_eval
from tests.helpers.site_server import FixtureSite


@pytest.mark.slow
async def test_a_double_click_opens_the_file(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/hands/clicks.html")
    result = await page.click(index_of(snap, "notes.ipynb"), count=2)
    assert result.ok, result.message
    assert result.message.startswith("double-clicked"), result.message
    assert await page_eval(tab, "window.events") == [
        "click notes 1",
        "click notes 2",
        "dblclick notes",
    ]
    assert await page_eval(tab, "document.getElementById('opened').textContent") == (
        "Opened notes.ipynb"
    )


@pytest.mark.slow
async def test_a_right_click_opens_the_pages_own_menu_and_clicks_nothing(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/hands/clicks.html")
    result = await page.click(index_of(snap, "Whiteboard"), button="right")
    assert result.ok, result.message
    assert result.message.startswith("right-clicked"), result.message
    assert await page_eval(tab, "window.events") == ["contextmenu board"]
    after, _ = await page.observe()
    assert {"Rename", "Delete"} <= {e.name for e in after.elements.values()}, after.text


def test_a_click_takes_a_count_of_one_or_two_and_a_left_or_right_button() -> None:
    def call(**params: object) -> object:
        return parse_call("click", {"index": 3, "reason": "r", **params}, allow_js=False)

    double = call(count=2, button="right")
    assert not isinstance(double, ParseError) and double.params["count"] == 2  # type: ignore[attr-defined]
    assert isinstance(call(count=3), ParseError) and isinstance(call(button="middle"), ParseError)
    plain = call()
    assert not isinstance(plain, ParseError)
    assert plain.params == {"index": 3}  # type: ignore[attr-defined]  (a plain click, as before)
