"""Eyes in every frame and every shadow root: closed shadow roots and cross-origin frames,
read by the digest, acted on by the hands and seen by the hand-over detectors.

Real headless Chromium. Cross-origin frames come from fixture servers on other loopback
ADDRESSES (127.0.0.2, 127.0.0.3): those are different sites for Chromium, so with site
isolation the frames really run out of process.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from core.browser import Browser, Tab
from core.page import Page
from core.snapshot import Snapshot
from tests.helpers import page_eval
from tests.site_server import FixtureSite


@pytest.fixture
async def page(browser: Browser, tab: Tab) -> AsyncIterator[Page]:
    hands = Page(browser, action_timeout=15)
    yield hands
    hands.close()


async def observe(page: Page, url: str) -> Snapshot:
    result = await page.navigate(url)
    assert result.ok, result.message
    snapshot, _ = await page.observe()
    return snapshot


def index_of(snapshot: Snapshot, name: str) -> int:
    found = [e.index for e in snapshot.elements.values() if e.name == name]
    assert len(found) == 1, f"{name!r} found {len(found)} times in:\n{snapshot.text}"
    return found[0]


# -- closed shadow roots -----------------------------------------------------------------


async def test_a_button_in_a_closed_root_is_clicked_and_its_handler_runs(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await observe(page, site.url("/snapshot/closed.html"))
    result = await page.click(index_of(snap, "Sign in now"))
    assert result.ok, result.message
    assert await page_eval(tab, "document.getElementById('clicked').textContent") == (
        "sign-in clicked"
    )
