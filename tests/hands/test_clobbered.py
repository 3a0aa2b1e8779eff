"""A form whose controls are named like the members the page scripts read is still read,
typed into and submitted (issue 26, DOM clobbering: Django's changelist has
<select name="action">, so form.action was that select and the run ended with
"unhashable type: 'dict'").

The fixture (tests/site/hands/clobbered.html) gets one hidden input named after each member
name in core/**/*.js (tests/helpers/js_reads.py), so a read added tomorrow is clobbered by
this test too; and one <img name> of the document for each.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlencode

import pytest

from core.browser.browser import Tab
from core.eyes.snapshot import Snapshot
from core.hands import Page
from core.hands.expect import TargetExpectation
from tests.helpers import index_of, open_page, page_eval
from tests.helpers.fake_anthropic import FakeAnthropic
from tests.helpers.hostile import click, run_hostile, type_into
from tests.helpers.js_reads import member_names
from tests.helpers.site_server import FixtureSite

pytestmark = pytest.mark.slow

NAMES = member_names()


def clobbered_page(site: FixtureSite) -> str:
    return site.url("/hands/clobbered.html") + "?" + urlencode({"names": ",".join(NAMES)})


def test_the_list_of_read_members_holds_the_ones_that_broke() -> None:
    assert {"action", "method", "getAttribute", "tagName", "parentElement"} <= set(NAMES)
    assert len(NAMES) > 300


async def test_a_clobbered_form_is_read_as_a_person_sees_it(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, "/hands/clobbered.html")  # the same page, not clobbered
    plain = (await page.observe())[0]
    result = await page.navigate(clobbered_page(site))
    assert result.ok, result.message
    assert await page_eval(tab, "window.shadowed") == len(NAMES)
    snap, _ = await page.observe()

    def lines(snapshot: Snapshot) -> list[str]:
        return [e.line.split("]", 1)[1] for _, e in sorted(snapshot.elements.items())]

    assert lines(snap) == lines(plain)
    go = snap.elements[index_of(snap, "Go")]
    assert (go.form_action, go.form_method) == (site.url("/hands/clobbered-done"), "post")
    assert go.submits_form


async def test_a_clobbered_form_is_typed_into_and_submitted(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    site.clear()
    assert (await page.navigate(clobbered_page(site))).ok
    snap, _ = await page.observe()
    typed = await page.type(index_of(snap, "Email"), "ada@example.org")
    assert typed.ok, typed.message
    hovered = await page.hover(index_of(snap, "Go"))
    assert hovered.ok, hovered.message
    picked = await page.select_option(index_of(snap, "Action"), "Delete selected users")
    assert picked.ok, picked.message
    go = snap.elements[index_of(snap, "Go")]
    expect = TargetExpectation(url=snap.url, index=go.index, name=go.name, rect=go.rect)
    clicked = await page.click(go.index, expect=expect)
    assert clicked.ok, clicked.message
    await site.until(lambda got: any(r.path == "/hands/clobbered-done" for r in got))
    [posted] = site.posts("/hands/clobbered-done")
    # The visible fields come first; the hidden ones named alike follow with "clobbered".
    assert posted.form["email"][0] == "ada@example.org"
    assert posted.form["action"][0] == "delete_selected"


async def test_a_run_clicks_go_on_a_clobbered_form_and_ends_cleanly(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    """The reported crash, as a whole run in ask mode with the person approving."""
    site.clear()
    run = await run_hostile(
        tmp_path,
        fake,
        clobbered_page(site),
        [type_into("Email", "ada@example.org"), click("Go")],
        approve="ask",
    )
    assert run.finished.outcome != "error", run.finished
    [done] = run.done("click")
    assert done.result.ok, done.result
    assert site.posts("/hands/clobbered-done")


# Where a walk measures the form other than as a block: inside an area it scrolls (what lies
# beyond is counted), as that area itself, and as a row a grid orders by where it stands. The
# page's own members are clobbered too: the set-up goes through the prototypes.
PLACES = {
    "in a scroll area": "const box = make('div'); box.style.cssText = 'overflow:auto;height:60px';"
    " before(form, box); box.append(form);"
    " for (let k = 0; k < 5; k++) box.append(make('p')); box.lastChild.textContent = 'below';",
    "as the scroll area": "style(form).cssText = 'display:block;overflow:auto;height:60px';",
    "as a grid's row": "const grid = make('div'); grid.setAttribute('role', 'grid');"
    " grid.style.cssText = 'display:flex;flex-direction:column'; before(form, grid);"
    " const row = make('div'); row.setAttribute('role', 'row'); row.style.order = '-1';"
    " row.innerHTML = '<span role=gridcell>first</span><span role=gridcell>row</span>';"
    " Element.prototype.setAttribute.call(form, 'role', 'row'); grid.append(form, row);",
}
SET_UP = (
    "(() => { const make = (t) => Document.prototype.createElement.call(document, t);"
    " const before = (n, m) => Element.prototype.before.call(n, m);"
    " const style = (n) => Object.getOwnPropertyDescriptor(HTMLElement.prototype, 'style')"
    ".get.call(n);"
    " const form = Document.prototype.getElementById.call(document, 'changelist');"
    " PLACE return true; })()"
)


@pytest.mark.parametrize("place", PLACES)
async def test_a_clobbered_form_is_read_wherever_the_walk_measures_it(
    page: Page, tab: Tab, site: FixtureSite, place: str
) -> None:
    move = SET_UP.replace("PLACE", PLACES[place])
    await open_page(page, site, "/hands/clobbered.html")  # the same page, not clobbered
    assert await page_eval(tab, move)
    plain = (await page.observe())[0]
    result = await page.navigate(clobbered_page(site))
    assert result.ok, result.message
    assert await page_eval(tab, move)
    snap, _ = await page.observe()  # a box read through the form ended the digest

    def lines(snapshot: Snapshot) -> list[str]:
        # The element lines in reading order; indexes are the tab's counter, so left out.
        text = re.sub(r"index: \d+", "index: #", re.sub(r"[*~]*\[\d+\]", "[#]", snapshot.text))
        return [line for line in text.splitlines() if "[#]<" in line]

    assert lines(plain) and lines(snap) == lines(plain), snap.text
    assert "Action" in [e.name for e in snap.elements.values()]
