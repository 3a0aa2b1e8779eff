# ruff: noqa: F811 (the loopback fixtures are imported by name)
"""close_tab and find_text (issue 26): the model closes a tab it is done with (never the
last one), and finds where a text appears on the whole page, beyond the digest's margin."""

from __future__ import annotations

import pytest

from core.actions import PAGE_CHANGING
from core.browser.browser import Browser
from core.hands import Page
from tests.helpers import index_of, open_page
from tests.helpers.loopback import own_browser  # noqa: F401
from tests.helpers.site_server import FixtureSite

pytestmark = pytest.mark.slow


async def test_find_text_finds_text_and_an_element_far_below(page: Page, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/hands/long_page.html")
    assert "within 14 days" not in snap.text, "the digest's margin does not reach it"
    result = await page.find_text("WITHIN 14   days")
    assert result.ok and "found 'WITHIN 14   days' 1 time" in result.message, result.message
    assert "Refunds are paid within 14 days" in result.message
    button = await page.find_text("request a refund")
    assert "element [" in button.message and "out of view" in button.message, button.message
    missing = await page.find_text("no such sentence")
    assert missing.ok and "is not on this page" in missing.message


async def test_close_tab_closes_a_tab_and_never_the_last(
    own_browser: Browser, site: FixtureSite
) -> None:
    hands = Page(own_browser, action_timeout=15)
    try:
        for _ in range(len(own_browser.our_tabs()) - 1):  # a browser of this test's own
            assert (await hands.close_tab(0)).ok
        snap = await open_page(hands, site, "/hands/long_page.html")
        opened = await hands.click(index_of(snap, "Open the file list"))
        assert opened.ok and len(own_browser.our_tabs()) == 2, opened.message
        closed = await hands.close_tab(1)
        assert closed.ok, closed.message
        assert closed.message.startswith("closed tab [1] 'Files'"), closed.message
        assert closed.message.endswith("'Terms' is current"), closed.message
        assert len(own_browser.our_tabs()) == 1 and own_browser.current is not None
        assert own_browser.current.url.endswith("/hands/long_page.html")
        last = await hands.close_tab(0)
        assert not last.ok and "only tab" in last.message
        assert len(own_browser.our_tabs()) == 1
    finally:
        hands.close()


def test_closing_a_tab_waits_for_approval_and_finding_text_does_not() -> None:
    assert "close_tab" in PAGE_CHANGING and "find_text" not in PAGE_CHANGING
