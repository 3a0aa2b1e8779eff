"""One name per element, everywhere (issue 26): the name the digest gives an element (what
the model reads, and what the approval shows and binds) is the name the hands find on it
just before they act. A difference is a legitimate click refused as "relabelled".

Every element of every fixture page of the eyes, the hands and the widgets is checked:
the digest's name against the hands' own reading of the same element, at once, on a page
nobody has touched.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from core.browser.browser import Tab
from core.hands import Page
from core.hands.ctx import Ctx, js
from core.hands.expect import name_matches
from core.world.errors import WorldError
from tests.helpers import open_page
from tests.helpers.site_server import FixtureSite

pytestmark = pytest.mark.slow

SITE = Path(__file__).resolve().parents[1] / "site"
FOLDERS = ("page", "snapshot", "widgets", "hands", "observe", "gallery/widgets")
PAGES = sorted(
    p.relative_to(SITE).as_posix() for folder in FOLDERS for p in (SITE / folder).rglob("*.html")
)


async def hands_name(page: Page, tab: Tab, index: int) -> str | None:
    """The name the hands' pre-action check reads for ``[index]`` (None: it is gone)."""
    ctx = Ctx(
        name="check", deadline=asyncio.get_running_loop().time() + 15, hands=page._hands, tab=tab
    )
    try:
        target = await js(ctx, "target", index)
    except WorldError:
        return None
    return str(target.get("name", ""))


@pytest.mark.parametrize("path", PAGES)
async def test_the_hands_name_every_element_as_the_digest_does(
    page: Page, tab: Tab, site: FixtureSite, path: str
) -> None:
    snap = await open_page(page, site, "/" + path)
    differ = []
    for index, element in sorted(snap.elements.items()):
        now = await hands_name(page, tab, index)
        if now is not None and not name_matches(element.name, now):
            differ.append(f"[{index}] digest {element.name!r}, hands {now!r}: {element.line}")
    assert differ == [], "\n".join(differ)
