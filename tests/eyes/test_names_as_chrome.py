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
        if _words(unescape_page_text(ours)) != _words(chrome) and DEPARTURES.get(ours) != chrome
    ]
    assert len(names) == 18, snap.text
    assert differ == [], differ


def _words(name: str) -> str:
    # Spacing aside: next to generated content Chrome's spacing follows the layout
    # ("↓By confirmed" beside a margin), the digest puts a space.
    return "".join(name.split())


# Where the digest departs from Chrome on purpose: an icon font's private-use code means
# nothing outside its font, and a counter's number is not in Chrome's name either, only the
# punctuation after it.
DEPARTURES = {"Home": "\uf015Home", "First step": ". First step"}


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


async def test_names_carry_what_css_draws_before_and_after(page: Page, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/snapshot/hidden_names.html")
    named = {e.name for e in snap.elements.values()}
    for name in (
        "↓ By confirmed",  # Django's open disclosure arrow
        "→ By destination",
        "Next ›",
        "Inbox (4)",  # attr()
        "Starred Favourites",  # the alternative text after "/", not the glyph
        "Home",  # an icon font's private-use code left out
        "Empty marker",
        "First step",
    ):
        assert name in named, (name, sorted(named))
