"""Names follow the accessible-name computation as Chrome applies it (issue 26): text hidden
from sight but not from assistive technology (CSS image replacement with text-indent, the
visually-hidden class, clip-path, a 1px box) is part of a control's name, and text out of
the accessibility tree (display:none, visibility:hidden, aria-hidden, hidden) is not. Each
element's digest name is compared with Chrome's own (Accessibility.getPartialAXTree)."""

from __future__ import annotations

import pytest

from core.browser.browser import Tab
from core.eyes.snapshot import unescape_page_text
from core.hands import Page
from tests.helpers import open_page
from tests.helpers.accessibility import chrome_name
from tests.helpers.site_server import FixtureSite

pytestmark = pytest.mark.slow


async def test_every_control_is_named_as_chrome_names_it(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/snapshot/hidden_names.html")
    names = [(e.name, await chrome_name(tab, i)) for i, e in sorted(snap.elements.items())]
    differ = [
        (ours, chrome)
        for ours, chrome in names
        if " ".join(unescape_page_text(ours).split()) != " ".join(chrome.split())
    ]
    assert len(names) == 10, snap.text
    assert differ == [], differ


async def test_image_replaced_and_visually_hidden_names_are_read(
    page: Page, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/snapshot/hidden_names.html")
    named = {e.name for e in snap.elements.values()}
    for name in (
        "Choose selected permissions",
        "Remove selected permissions",
        "Previous month",
        "Toggle theme (current theme: auto) ◐",
        "Close dialog ×",
        "Next page →",
        "Save",
        "Send",
        "Print",
        "Share",
    ):
        assert name in named, (name, sorted(named))


async def test_icons_with_alt_text_are_read_in_their_table_cells(
    page: Page, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/snapshot/hidden_names.html")
    assert "True" in snap.text and "False" in snap.text, snap.text
