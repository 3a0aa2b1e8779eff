"""Widgets as a person sees them (issue 15, the eyes): the states read off menus, trees and
toggles, SVG text, icon names and list items as elements of their own.

Real headless Chromium against tests/site/widgets/eyes/ (plain HTML pages, and jQuery UI from
tests/site/node_modules). Each task is done through the digest and the hands, and checked
against the page's own state.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from urllib.parse import quote

import pytest

from core.browser.browser import Browser, Tab
from core.eyes.snapshot import Snapshot
from core.hands import Page
from core.world.calls import world_call
from tests.helpers import open_page, page_eval
from tests.helpers.site_server import FixtureSite


@pytest.fixture
async def page(browser: Browser, tab: Tab) -> AsyncIterator[Page]:
    hands = Page(browser, action_timeout=15)
    yield hands
    hands.close()


def line_of(snapshot: Snapshot, name: str) -> str:
    """The one digest line of the element named ``name`` (tag, attributes and name)."""
    found = [e.line for e in snapshot.elements.values() if e.name == name]
    assert len(found) == 1, f"{name!r} found {len(found)} times in:\n{snapshot.text}"
    return re.sub(r"^\*?~?\[\d+\]", "", found[0])


def index_named(snapshot: Snapshot, name: str) -> int:
    found = [e.index for e in snapshot.elements.values() if e.name == name]
    assert len(found) == 1, f"{name!r} found {len(found)} times in:\n{snapshot.text}"
    return found[0]


# -- states as attributes -------------------------------------------------------------------


async def test_widget_states_read_as_attributes(page: Page, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/widgets/eyes/states.html")
    assert line_of(snap, "Home") == "<a current=page href=/home>Home</a>"
    assert line_of(snap, "Step 2") == "<a current=step href=/step2>Step 2</a>"
    assert line_of(snap, "Bold") == "<button pressed>Bold</button>"
    assert line_of(snap, "Italic") == "<button>Italic</button>"
    assert line_of(snap, "Underline") == "<button pressed=mixed>Underline</button>"
    assert line_of(snap, "Font") == "<button haspopup=listbox expanded=false>Font</button>"
    assert line_of(snap, "Share") == "<button haspopup=dialog>Share</button>"
    assert line_of(snap, "Paste") == "<menuitem disabled>Paste</menuitem>"
    assert line_of(snap, "Find") == "<menuitem haspopup=menu expanded=false>Find</menuitem>"
    # aria-disabled on an ancestor disables what it holds.
    assert line_of(snap, "Archive") == "<button disabled>Archive</button>"
    assert line_of(snap, "Overview") == "<tab selected>Overview</tab>"


async def test_a_role_is_shown_as_the_tag_but_on_fields_and_links(
    page: Page, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/widgets/eyes/role_tags.html")
    assert line_of(snap, "Wi-Fi") == "<switch checked>Wi-Fi</switch>"
    assert line_of(snap, "General") == "<tab selected>General</tab>"
    assert line_of(snap, "City").startswith("<input role=combobox ")
    assert line_of(snap, "Help") == "<a role=button href=/help>Help</a>"
    assert line_of(snap, "Two roles") == '<div role="button link">Two roles</div>'
    assert line_of(snap, "Plain") == "<div role=presentation>Plain</div>"


async def test_tree_items_show_level_and_open_state(page: Page, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/widgets/eyes/states.html")
    assert line_of(snap, "Inbox") == "<treeitem expanded=true level=1>Inbox</treeitem>"
    assert line_of(snap, "Receipts") == "<treeitem selected level=2>Receipts</treeitem>"
    # No aria-expanded, but its group is hidden: collapsed, and its hidden item not listed.
    assert line_of(snap, "Travel") == "<treeitem expanded=false level=2>Travel</treeitem>"
    assert "Flights" not in snap.text


async def test_file_in_a_collapsed_folder_is_opened_without_a_wrong_click(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    # A tree with no ARIA: folders are known only by their hidden nested lists.
    snap = await open_page(page, site, "/widgets/eyes/tree.html")
    assert line_of(snap, "Documents") == "<span expanded=false level=1>Documents</span>"
    assert line_of(snap, "2025.pdf.lnk") == "<span>2025.pdf.lnk</span>"
    assert (await page.click(index_named(snap, "Documents"))).ok
    snap, _ = await page.observe()
    assert line_of(snap, "Documents") == "<span expanded=true level=1>Documents</span>"
    assert line_of(snap, "Taxes") == "<span expanded=false level=2>Taxes</span>"
    assert (await page.click(index_named(snap, "Taxes"))).ok
    snap, _ = await page.observe()
    assert line_of(snap, "2025.pdf") == "<span level=3>2025.pdf</span>"
    assert (await page.click(index_named(snap, "2025.pdf"))).ok
    assert await page_eval(tab, "window.opened") == ["2025.pdf"]


async def test_jquery_ui_submenu_item_chosen_through_its_haspopup_parent(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/widgets/eyes/jquery-menu.html")
    assert line_of(snap, "Export") == "<menuitem haspopup=menu expanded=false>Export</menuitem>"
    assert line_of(snap, "Save") == "<menuitem disabled>Save</menuitem>"
    assert "<menuitem>PDF" not in snap.text
    # jQuery UI opens a submenu on its own timer once the pointer rests on its parent.
    assert (await page.click(index_named(snap, "Export"))).ok
    await page_eval(tab, SUBMENU_SHOWN)
    snap, _ = await page.observe()
    assert line_of(snap, "Export") == "<menuitem haspopup=menu expanded=true>Export</menuitem>"
    assert (await page.click(index_named(snap, "PDF"))).ok
    # (jQuery UI also reports the click on Export itself as a "select".)
    assert (await page_eval(tab, "window.chosen"))[-1] == "PDF"


SUBMENU_SHOWN = """new Promise((resolve) => {
  const sub = document.querySelector("#menu ul");
  const check = () => (sub.style.display !== "none" ? resolve(true) : requestAnimationFrame(check));
  check();
})"""


# -- SVG -----------------------------------------------------------------------------------


async def test_svg_text_and_titles_are_read_in_reading_order(page: Page, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/widgets/eyes/svg.html")
    lines = snap.text.splitlines()
    chart = lines[lines.index("Quarterly chart") + 1 : lines.index("Quarterly chart") + 5]
    # Top to bottom, left to right, though the page writes the heading after Q1 and Q2.
    assert chart == ["Revenue by quarter", "Q2 is the best quarter", "Q1", "Q2"]
    assert "Hello" in lines
    assert "secret hidden label" not in snap.text
    assert "never drawn" not in snap.text


async def test_svg_control_is_named_by_its_title_or_text_and_clicked(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/widgets/eyes/svg.html")
    assert line_of(snap, "Delete") == "<g>Delete</g>"
    assert line_of(snap, "Zoom in") == "<g>Zoom in</g>"
    assert (await page.click(index_named(snap, "Zoom in"))).ok
    assert (await page.click(index_named(snap, "Delete"))).ok
    assert await page_eval(tab, "window.clicked") == ["zoom", "delete"]


# -- icons ---------------------------------------------------------------------------------


async def test_icon_only_controls_are_named_by_title_image_tooltip_or_hint(
    page: Page, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/widgets/eyes/icons.html")
    assert line_of(snap, "Like") == "<button>Like</button>"  # its title
    assert line_of(snap, "Star") == "<button>Star</button>"  # an image's title inside
    assert line_of(snap, "Move to trash") == "<button>Move to trash</button>"  # its tooltip
    assert line_of(snap, "Save") == "<button>Save</button>"  # words its CSS draws
    assert line_of(snap, "Pin to top") == "<i>Pin to top</i>"  # its alternative text
    assert line_of(snap, "Settings") == "<button>Settings</button>"  # a name beats a hint
    # Nothing but a class or data attribute: a guess, and printed as one.
    assert line_of(snap, "retweet (icon)") == "<span>retweet (icon)</span>"
    assert line_of(snap, "paper plane (icon)") == "<i>paper plane (icon)</i>"
    assert line_of(snap, "bookmark (icon)") == "<button>bookmark (icon)</button>"
    assert line_of(snap, "dropdown menu (icon)") == "<svg>dropdown menu (icon)</svg>"
    assert not [e for e in snap.elements.values() if "header" in e.name]


async def test_reply_icon_inside_a_clickable_row_is_named_and_clicked(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    # Drawn by CSS `content: url(...)` on an empty span, inside a row that opens on click.
    snap = await open_page(page, site, "/widgets/eyes/icons.html")
    assert (await page.click(index_named(snap, "reply (icon)"))).ok
    assert await page_eval(tab, "window.clicked") == ["reply"]


# -- list items as elements ----------------------------------------------------------------

SUGGESTIONS_SHOWN = """new Promise((resolve) => {
  const shown = () => [...document.querySelectorAll("li")].some((li) => li.offsetHeight > 0);
  const check = () => (shown() ? resolve(true) : requestAnimationFrame(check));
  check();
})"""


@pytest.mark.parametrize("path", ["autocomplete.html", "jquery-autocomplete.html"])
async def test_autocomplete_item_is_chosen_by_its_own_index(
    page: Page, tab: Tab, site: FixtureSite, path: str
) -> None:
    snap = await open_page(page, site, f"/widgets/eyes/{path}")
    assert (await page.type(index_named(snap, "Country"), "Ni")).ok
    await page_eval(tab, SUGGESTIONS_SHOWN)
    snap, _ = await page.observe()
    for country in ["Nicaragua", "Niger", "Nigeria", "Niue"]:
        assert line_of(snap, country) == f"<li>{country}</li>"
    assert "Nicaragua Niger" not in snap.text
    # Niger sits between two others: a click on the list's centre would pick another.
    assert (await page.click(index_named(snap, "Niger"))).ok
    assert await page_eval(tab, "document.getElementById('country').value") == "Niger"


async def test_clickable_list_keeps_a_short_name(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/widgets/eyes/autocomplete.html")
    assert (await page.type(index_named(snap, "Country"), "Ni")).ok
    await page_eval(tab, SUGGESTIONS_SHOWN)
    snap, _ = await page.observe()
    assert line_of(snap, "Suggestions") == "<ul>Suggestions</ul>"


async def test_items_of_a_listbox_without_roles_are_elements(page: Page, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/widgets/eyes/states.html")
    assert line_of(snap, "Small") == "<div>Small</div>"
    assert line_of(snap, "Large") == "<div>Large</div>"


@pytest.mark.parametrize(
    "path", ["states.html", "tree.html", "jquery-menu.html", "svg.html", "icons.html"]
)
async def test_hands_name_each_widget_as_the_digest_does(
    page: Page, tab: Tab, site: FixtureSite, path: str
) -> None:
    # The hands re-check an approved element by this name before they act on it.
    snap = await open_page(page, site, f"/widgets/eyes/{path}")
    names = await world_call(
        tab,
        "function (ids) { return ids.map((i) => globalThis.__handrail.accessibleName("
        "globalThis.__handrail.element(i))); }",
        list(snap.elements),
    )
    assert names == [e.name for e in snap.elements.values()]


# -- scroll containers ------------------------------------------------------------------------


async def test_scroll_area_is_announced_with_what_lies_below_it(
    page: Page, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/widgets/eyes/scroll.html")
    results = index_named(snap, "Flights")
    assert snap.elements[results].line == (
        f"[{results}]<div scrollable>Flights</div> (3 more below: scroll{{index: {results}}})"
    )
    # Only the first flight shows; the others are not listed as if visible.
    assert "Book AF 1001" in snap.text
    assert "AZ 2002" not in snap.text and "FR 3003" not in snap.text
    assert "Scroll: the page itself fits in the viewport, but 1 scrollable area" in snap.header()


async def test_cheapest_flight_in_a_scroll_area_is_booked_after_scrolling_it(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/widgets/eyes/scroll.html")
    results = index_named(snap, "Flights")
    # A person reads every flight, one scroll of the area at a time, and books the cheapest.
    prices: dict[str, int] = {}
    notes: list[str] = []
    for _ in range(6):
        for code, price in re.findall(r"Book (\w+ \d+)\n[^\n]*€(\d+)", snap.text):
            prices[code] = int(price)
        notes.append(snap.elements[results].line.split("</div>")[1])
        if "below" not in notes[-1]:
            break
        await page_eval(tab, "document.getElementById('results').scrollTop += 160")
        snap, _ = await page.observe()
    assert notes == [
        f" (3 more below: scroll{{index: {results}}})",
        f" (1 more above, 2 more below: scroll{{index: {results}}})",
        f" (2 more above, 1 more below: scroll{{index: {results}}})",
        # The last flight is taller than the area: a little of it still lies below.
        f" (3 more above, more below: scroll{{index: {results}}})",
        f" (3 more above: scroll{{index: {results}}})",
    ]
    assert prices == {"AF 1001": 212, "AZ 2002": 188, "FR 3003": 79, "U2 4004": 131}
    await page_eval(tab, "document.getElementById('results').scrollTop = 320")
    snap, _ = await page.observe()
    assert (await page.click(index_named(snap, "Book FR 3003"))).ok
    assert await page_eval(tab, "window.booked") == ["FR 3003"]


async def test_areas_a_person_cannot_scroll_are_not_announced(
    page: Page, site: FixtureSite
) -> None:
    # overflow:hidden clips without a scrollbar, a 0-height area shows nothing, and an area
    # whose content fits has nothing beyond: none is a scroll area, none leaks its content.
    snap = await open_page(page, site, "/widgets/eyes/scroll.html")
    scrollable = [e.name for e in snap.elements.values() if "scrollable" in e.attrs]
    assert scrollable == ["Flights"]
    assert "secret deal" not in snap.text
    assert "from nowhere" not in snap.text
    assert "Prices include taxes." in snap.text


async def test_scroll_area_in_a_closed_shadow_root_is_announced(
    page: Page, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/widgets/eyes/scroll-closed.html")
    inbox = index_named(snap, "Messages")
    assert snap.elements[inbox].line == (
        f"[{inbox}]<ul scrollable>Messages</ul> (4 more below: scroll{{index: {inbox}}})"
    )
    assert "Open Invoice 1" in snap.text and "Open Invoice 2" not in snap.text


async def test_scroll_area_in_a_cross_origin_frame_names_its_own_index(
    page: Page, site: FixtureSite, other_site: FixtureSite
) -> None:
    # other_site is another origin: the frame is read through CDP, and its lines renumbered.
    frame = quote(other_site.url("/widgets/eyes/scroll.html"), safe="")
    snap = await open_page(page, site, f"/frames/host.html?name=Partner+flights&f={frame}")
    results = index_named(snap, "Flights")
    host = other_site.origin.removeprefix("http://")
    assert snap.elements[results].frame_label == f'frame "Partner flights" ({host})'
    assert snap.elements[results].line.endswith(f"(3 more below: scroll{{index: {results}}})")


# -- click targets found by their listeners -------------------------------------------------


async def test_calendar_moved_two_months_back_with_its_prev_arrow(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    # jQuery UI's arrows: <a title="Prev"> with no href, role, tabindex or pointer cursor.
    snap = await open_page(page, site, "/widgets/eyes/jquery-datepicker.html")
    assert "September 2010" in snap.text
    for _ in range(2):
        assert line_of(snap, "Prev") == "<a>Prev</a>"
        assert (await page.click(index_named(snap, "Prev"))).ok
        snap, _ = await page.observe()
    shown = "(() => { const i = $.datepicker._getInst($('#calendar')[0]);"
    shown += " return [i.drawYear, i.drawMonth]; })()"
    assert await page_eval(tab, shown) == [2010, 6]  # July (months count from 0)
    assert "July 2010" in snap.text


async def test_targets_of_delegated_and_own_listeners_are_listed(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/widgets/eyes/delegated.html")
    # jQuery delegation ($(".pager").on("click", "a[title]", ...)): the matching items only.
    assert line_of(snap, "Next page") == "<a>Next page</a>"
    assert "\nNot a control\n" in snap.text
    # A plain listener on the list, acting on its data-action items.
    assert line_of(snap, "Blue") == "<span>Blue</span>"
    assert "\nPlain words\n" in snap.text
    # A listener of its own.
    assert line_of(snap, "Beta") == "<i>Beta</i>"
    for name in ("Next page", "Blue", "Beta"):
        assert (await page.click(index_named(snap, name))).ok
    state = "[page, filter, tab].map((e) => e.textContent)"
    assert await page_eval(tab, state) == ["2", "filter-blue", "Beta"]


async def test_listeners_a_person_cannot_use_list_nothing(page: Page, site: FixtureSite) -> None:
    # A "click anywhere" listener on an article, one on a hidden element, one on an element
    # that lets the pointer through: none of them is a control.
    snap = await open_page(page, site, "/widgets/eyes/delegated.html")
    shown = {e.name for e in snap.elements.values()}
    assert shown == {"Previous page", "Next page", "Red", "Blue", "Alpha", "Beta"}
    assert "Hidden action" not in snap.text
    assert "\nInert action" in snap.text


async def test_a_spin_buttons_hidden_arrows_are_listed_and_step_it(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/widgets/eyes/stepper-arrows.html")
    assert "Decoy" not in snap.text, snap.text
    more = index_named(snap, "More")  # a glyph read by its tooltip
    fewer = index_named(snap, "Fewer")
    assert fewer < index_named(snap, "Guests") < more, snap.text
    for index in (more, more, fewer):
        result = await page.click(index)
        assert result.ok, result.message
        snap, _ = await page.observe()
    assert await page_eval(tab, "document.getElementById('guests').value") == "3"
