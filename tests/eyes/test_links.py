"""Links as short as they read against the page's address, and lines without a closing tag
they do not need (issue 26: tokens at most half of browser-use's).

A link is printed as a relative reference against the top page's address ("?page=3",
"6/change/"), and everything that reads it (the gate, the rerun matcher, navigate) resolves
it against that same address, so it goes where the page's link goes. A link inside a
cross-origin frame reads against the top page too: printed whole when its origin is the
frame's, so the gate judges the frame's host, not the page's.

Real headless Chromium against tests/site/snapshot/links/ and tests/site/frames/.
"""

from __future__ import annotations

from urllib.parse import quote, urljoin

import pytest

from core.actions import Action
from core.browser.browser import Browser, Tab
from core.eyes.snapshot import PageSignals, Snapshot, take_snapshot
from core.guard.policy import Gate
from core.hands import Page
from core.rerun.match import read_digest
from core.run.checkpoint import resolved_navigation
from tests.helpers import load
from tests.helpers.loopback import (  # noqa: F401
    eyes_browser,
    oop_tab,
    own_browser,
    second_site,
)
from tests.helpers.site_server import FixtureSite


def by_name(snap: Snapshot, name: str) -> int:
    found = [e.index for e in snap.elements.values() if e.name == name]
    assert len(found) == 1, f"{name!r} found {len(found)} times in:\n{snap.text}"
    return found[0]


async def read_links(tab: Tab, site: FixtureSite, other: FixtureSite) -> Snapshot:
    await load(tab, site.url(f"/snapshot/links/index.html?page=2&other={quote(other.origin)}"))
    return await take_snapshot(tab)


async def test_links_read_short_and_resolve_to_where_they_go(
    tab: Tab, site: FixtureSite, other_site: FixtureSite
) -> None:
    snap = await read_links(tab, site, other_site)
    page = f"/snapshot/links/index.html?page=2&other={quote(other_site.origin)}"
    expected = {
        "Next page": ("?page=3", "/snapshot/links/index.html?page=3"),
        "Lisbon": ("6/change/", "/snapshot/links/6/change/"),
        "Folder": ("./", "/snapshot/links/"),
        "Basic form": ("../basic.html", "/snapshot/basic.html"),
        "Administration": ("/admin/", "/admin/"),
        # Same path, another query: the query and the fragment.
        "Reviews": ("?page=2#reviews", "/snapshot/links/index.html?page=2#reviews"),
        # A first segment with a colon would read as a scheme: another way round.
        "Colon path": ("../links/x:y/z", "/snapshot/links/x:y/z"),
    }
    for name, (shown, goes) in expected.items():
        element = snap.elements[by_name(snap, name)]
        assert element.attrs["href"] == shown, name
        # What a click on it does, and what the gate and navigate resolve it to, agree.
        assert urljoin(site.url(page), shown) == site.url(goes), name
    away = snap.elements[by_name(snap, "Elsewhere")]
    assert away.attrs["href"] == f"{other_site.origin}/help"
    assert snap.elements[by_name(snap, "Script")].attrs["href"] == "javascript:…"


LONG_HOST = "a" * 63 + "." + "b" * 20 + ".example"
"""A host of 90 characters (a DNS label holds at most 63)."""


async def test_the_gate_judges_a_link_by_its_whole_address_not_the_cut_line(
    tab: Tab, site: FixtureSite, other_site: FixtureSite
) -> None:
    snap = await read_links(tab, site, other_site)
    link = snap.elements[by_name(snap, "Long host")]
    # The line's href is cut (80 characters): its host is not whole there.
    assert link.attrs["href"].endswith("…") and LONG_HOST not in link.attrs["href"]
    assert link.link == f"https://{LONG_HOST}/offers"
    # A run allowed on that host clicks it (the cut host would have been refused), and one
    # allowed elsewhere is refused.
    allowed = Gate(mode="none", allow_domains=[LONG_HOST, "127.0.0.1"])
    assert allowed.assess(Action("click", {"index": link.index}), snap).refused is None
    elsewhere = Gate(mode="none", allow_domains=["127.0.0.1"])
    assert elsewhere.assess(Action("click", {"index": link.index}), snap).refused


async def test_a_line_holding_one_element_needs_no_closing_tag(
    tab: Tab, site: FixtureSite, other_site: FixtureSite
) -> None:
    snap = await read_links(tab, site, other_site)
    lines = snap.text.splitlines()
    assert f"[{by_name(snap, 'Lisbon')}]<a href=6/change/>Lisbon" in lines
    assert not any(line.endswith("</a>") for line in lines)
    # The element's own description keeps it (the approval card shows it whole).
    assert snap.elements[by_name(snap, "Lisbon")].line.endswith(">Lisbon</a>")
    # The rerun's reader and the scripted planner's find the same names and links.
    digest = read_digest(f"URL: {snap.url}\n\n{snap.text}")
    lisbon = next(e for e in digest.entries if e.element.name == "Lisbon")
    assert lisbon.attrs["href"] == site.url("/snapshot/links/6/change/")


async def test_a_table_row_keeps_the_closing_tags_text_follows(tab: Tab, site: FixtureSite) -> None:
    await load(tab, site.url("/snapshot/table_rows.html"))
    snap = await take_snapshot(tab)
    rows = [line for line in snap.text.splitlines() if " | " in line and "</a>" in line]
    assert rows, snap.text
    for row in rows:
        # A closing tag stays where text goes on after it in its cell, never at the end of a
        # cell (the " | " ends the name) or of the line, unless the name holds a " | ".
        for cell in row.split(" | "):
            assert not cell.endswith("</a>") or cell.endswith("Arcachon</a>"), row
    assert any("seats</a> left: 3" in row for row in rows), rows


def test_navigate_to_a_link_as_printed_goes_where_the_link_goes() -> None:
    snap = Snapshot(
        url="http://127.0.0.1:8000/admin/travel/trip/?q=x",
        title="",
        text="",
        elements={},
        scroll=(0, 0, 800, 600, 800, 600),
        truncated=None,
        hidden_instruction_fragments=0,
        frames=(),
        signals=PageSignals(),
        focused_index=None,
    )
    cases = {
        "6/change/": "http://127.0.0.1:8000/admin/travel/trip/6/change/",
        "?o=2": "http://127.0.0.1:8000/admin/travel/trip/?o=2",
        "/admin/": "http://127.0.0.1:8000/admin/",
        "../": "http://127.0.0.1:8000/admin/travel/",
    }
    for printed, whole in cases.items():
        got = resolved_navigation(Action("navigate", {"url": printed}), snap)
        assert got.params["url"] == whole
    # A host without its scheme, a scheme-relative URL and a full one are left as written
    # (navigate refuses the first with a hint; the gate judges the others' hosts).
    for kept in ("example.com/x", "//evil.example/x", "https://other.example/"):
        assert resolved_navigation(Action("navigate", {"url": kept}), snap).params["url"] == kept
    # The gate judges the whole URL: a new host is risky, the page's own is not.
    gate = Gate(mode="risky")
    gate.note_visit(snap.url)
    own = gate.assess(resolved_navigation(Action("navigate", {"url": "6/change/"}), snap), snap)
    assert not own.risky
    away = gate.assess(Action("navigate", {"url": "//evil.example/x"}), snap)
    assert away.risky


# -- links in a cross-origin frame -------------------------------------------------------------


@pytest.mark.parametrize("which", ["in process", "out of process"])
async def test_a_link_in_a_cross_origin_frame_reads_and_is_judged_as_the_frames_host(
    tab: Tab,
    oop_tab: Tab,  # noqa: F811
    site: FixtureSite,
    other_site: FixtureSite,
    second_site: FixtureSite,  # noqa: F811
    which: str,
) -> None:
    # other_site: another origin of the same site (the frame shares the tab's process);
    # second_site: another site (its own process, once the eyes follow frames). A path on
    # either is not a path on the page.
    where, partner = (tab, other_site) if which == "in process" else (oop_tab, second_site)
    frame = partner.url("/frames/links.html")
    await load(where, site.url("/frames/host.html") + f"?name=Partner&f={quote(frame, safe='')}")
    snap = await take_snapshot(where)
    delivery = snap.elements[by_name(snap, "Partner delivery")]
    assert delivery.attrs["href"] == partner.url("/frames/fields.html")
    assert snap.elements[by_name(snap, "Partner help")].attrs["href"] == partner.url(
        "/frames/help.html"
    )
    if partner is second_site:
        # The gate judges the frame's host (the page's would pass as visited).
        gate = Gate(mode="risky")
        gate.note_visit(snap.url)
        verdict = gate.assess(Action("click", {"index": delivery.index}), snap)
        assert verdict.risky
        assert f"Link to: {partner.url('/frames/fields.html')}" in verdict.details


async def test_a_page_driven_by_the_hands_still_follows_a_printed_link(
    browser: Browser, tab: Tab, site: FixtureSite, other_site: FixtureSite
) -> None:
    hands = Page(browser, action_timeout=15)
    try:
        await read_links(tab, site, other_site)
        snap, _ = await hands.observe()
        result = await hands.click(by_name(snap, "Next page"))
        assert result.ok, result.message
        after, _ = await hands.observe()
        assert after.url.endswith("?page=3")
    finally:
        hands.close()
