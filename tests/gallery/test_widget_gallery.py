"""The widget gallery (issue 26): pages built from real widget libraries installed from npm
(tests/site/gallery/widgets/, one per library, as its documentation sets it up), and tasks a
person would type, done with handrail's own eyes and hands: every target is found by the name
the digest shows, and every action carries what the gate would have approved (the digest's
name and box), so a click the hands would refuse as "relabelled" fails here as in a run.

Each task is checked against the library's own state through its API (Tom Select's
getValue(), Tagify's value, flatpickr's selectedDates, jQuery UI's options, Bootstrap's
events, noUiSlider's get(), Sortable's toArray(), Shoelace's properties), never against what
handrail reports; what the digest shows a person is asserted only where issue 26 names a
class of failure for it (names, values, selected state).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from core.actions import Action
from core.browser.browser import Tab
from core.eyes.snapshot import ElementInfo, Snapshot
from core.hands import Page
from core.hands.expect import TargetExpectation
from core.result import ActionResult
from tests.helpers import index_of, open_page, page_eval
from tests.helpers.site_server import FixtureSite
from tests.helpers.waiting import eventually

pytestmark = pytest.mark.slow


# --- a person's steps, through the gate's eyes ---------------------------------------------


def approved(snap: Snapshot, index: int) -> TargetExpectation:
    """What the gate binds an approved action to: the element as this digest showed it."""
    element = snap.elements[index]
    return TargetExpectation(url=snap.url, index=index, name=element.name, rect=element.rect)


def named(snap: Snapshot, name: str) -> ElementInfo:
    return snap.elements[index_of(snap, name)]


def index_after(snap: Snapshot, text: str, name: str) -> int:
    """The first element named ``name`` after the digest line ``text`` (a chip's remove
    button, read where a person sees it: right after the chip's text)."""
    lines = snap.text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == text), None)
    assert start is not None, f"no line {text!r} in:\n{snap.text}"
    for line in lines[start + 1 :]:
        m = re.match(r"[*~]*\[(\d+)\]", line)
        if m and snap.elements[int(m.group(1))].name == name:
            return int(m.group(1))
    raise AssertionError(f"no {name!r} after {text!r} in:\n{snap.text}")


async def look(page: Page) -> Snapshot:
    snap, _ = await page.observe()
    return snap


async def click(page: Page, name: str, **kw: Any) -> Snapshot:
    """Click the element the digest names ``name``, as approved; the digest after it."""
    snap = await look(page)
    index = index_of(snap, name)
    result = await page.click(index, expect=approved(snap, index), **kw)
    assert result.ok, result.message
    return await look(page)


async def click_index(page: Page, snap: Snapshot, index: int) -> Snapshot:
    result = await page.click(index, expect=approved(snap, index))
    assert result.ok, result.message
    return await look(page)


async def type_into(page: Page, name: str, text: str, **kw: Any) -> ActionResult:
    snap = await look(page)
    index = index_of(snap, name)
    result = await page.type(index, text, expect=approved(snap, index), **kw)
    assert result.ok, result.message
    return result


async def press(page: Page, keys: str, times: int = 1) -> None:
    for _ in range(times):
        result = await page.press_key(keys)
        assert result.ok, result.message


async def drag(page: Page, snap: Snapshot, index: int, **params: Any) -> ActionResult:
    """The drag tool as a run calls it (issue 26's new hand: not on this branch yet)."""
    action = Action("drag", {"index": index, **params}, reason="put it where the task says")
    return await page.dispatch(action, expect=approved(snap, index))


async def settles(tab: Tab, expression: str, expected: Any, timeout: float = 5) -> None:
    """Wait until the page's own ``expression`` holds ``expected`` (libraries that update
    after a debounce or a transition), failing with what it held last."""
    seen: list[Any] = []

    async def holds() -> bool:
        seen[:] = [await page_eval(tab, expression)]
        return bool(seen[0] == expected)

    await eventually(holds, timeout, lambda: f"{expression} == {expected!r} (last: {seen!r})")


# --- Tom Select: a searchable select and a multi-select with chips -------------------------

TOM = "/gallery/widgets/tom-select.html"


async def test_tom_select_picks_lyon_from_what_typing_ly_offers(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, TOM)
    await type_into(page, "Destination city", "Ly")
    snap = await look(page)
    offered = [e.name for e in snap.elements.values() if e.role == "option"]
    assert offered == ["Lyon"], snap.text  # what a person sees: the search narrowed the list
    await click(page, "Lyon")
    assert await page_eval(tab, "document.getElementById('city').tomselect.getValue()") == "LYS"


async def test_tom_select_adds_two_toppings_and_removes_one_by_its_chips_x(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, TOM)
    await click(page, "Pizza toppings")
    await click(page, "Extra cheese")
    await click(page, "Mushrooms")
    await press(page, "Escape")
    value = "document.getElementById('toppings').tomselect.getValue()"
    assert await page_eval(tab, value) == ["cheese", "mushrooms"]
    snap = await look(page)
    # Class 8: the chip's x is its own element; approved by the name the digest gave it,
    # the click is done (not refused as relabelled "Extra cheeseRemove").
    await click_index(page, snap, index_after(snap, "Extra cheese", "Remove"))
    assert await page_eval(tab, value) == ["mushrooms"]


# --- Tagify: a tag input with suggestions --------------------------------------------------

TAGIFY = "/gallery/widgets/tagify.html"
TAGS = "skills.value.map((tag) => tag.value)"


async def test_tagify_takes_two_typed_skills_as_tags(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, TAGIFY)
    # Class 2: the field's visible label is read, though it labels the input Tagify hid.
    assert "Skills" in snap.text.splitlines(), snap.text
    await type_into(page, "Tags input field", "Python", submit=True)
    await type_into(page, "Tags input field", "Go", submit=True)
    await settles(tab, TAGS, ["Python", "Go"])


async def test_tagify_takes_a_suggestion_picked_from_its_dropdown(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, TAGIFY)
    await type_into(page, "Tags input field", "Ru", clear=False)
    await click(page, "Rust")
    await settles(tab, TAGS, ["Rust"])


async def test_tagify_removes_a_tag_by_its_x(page: Page, tab: Tab, site: FixtureSite) -> None:
    await open_page(page, site, TAGIFY)
    await type_into(page, "Tags input field", "Python", submit=True)
    await settles(tab, TAGS, ["Python"])
    await click(page, "remove tag")  # class 8: the x is not relabelled by its chip's text
    await settles(tab, TAGS, [])


async def test_tagify_removes_the_tag_whose_x_is_read_beside_it(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, TAGIFY)
    await type_into(page, "Tags input field", "Python", submit=True)
    await type_into(page, "Tags input field", "Go", submit=True)
    await settles(tab, TAGS, ["Python", "Go"])
    snap = await look(page)
    # Tagify puts the x first in the DOM and draws it after the text (CSS order): the digest
    # reads it where a person sees it, so the x after "Python" is Python's.
    await click_index(page, snap, index_after(snap, "Python", "remove tag"))
    await settles(tab, TAGS, ["Go"])


# --- flatpickr: a date picker --------------------------------------------------------------

FLATPICKR = "/gallery/widgets/flatpickr.html"
PICKED = (
    "document.getElementById('checkin')._flatpickr.selectedDates"
    ".map((d) => [d.getFullYear(), d.getMonth() + 1, d.getDate()])"
)


async def day_name(tab: Tab, months_ahead: int, day: int) -> tuple[str, list[int]]:
    """How flatpickr names a day ``months_ahead`` of the page's today ("February 14, 2027"),
    and that day as [year, month, day]."""
    got = await page_eval(
        tab,
        f"(() => {{ const n = new Date(); const d = new Date(n.getFullYear(), n.getMonth() + "
        f"{months_ahead}, {day}); return [d.toLocaleDateString('en-US', {{ month: 'long', "
        f"day: 'numeric', year: 'numeric' }}), [d.getFullYear(), d.getMonth() + 1, d.getDate()]]; }})()",
    )
    return str(got[0]), list(got[1])


async def test_flatpickr_picks_a_day_of_this_month(page: Page, tab: Tab, site: FixtureSite) -> None:
    await open_page(page, site, FLATPICKR)
    await click(page, "Check-in date")
    name, date = await day_name(tab, 0, 20)
    await click(page, name)
    assert await page_eval(tab, PICKED) == [date]


async def test_flatpickr_picks_a_day_two_months_ahead_with_its_named_arrows(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, FLATPICKR)
    snap = await click(page, "Check-in date")
    # Class 2: the month arrows are icons with no text; the digest still names them.
    [arrow] = [e for e in snap.elements.values() if "next month" in e.name.lower()]
    await click(page, arrow.name)
    await click(page, arrow.name)
    name, date = await day_name(tab, 2, 14)
    await click(page, name)
    assert await page_eval(tab, PICKED) == [date]


async def test_flatpickr_picks_a_month_from_its_month_list(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, FLATPICKR)
    snap = await click(page, "Check-in date")
    month = named(snap, "Month")
    result = await page.select_option(month.index, "March", expect=approved(snap, month.index))
    assert result.ok, result.message
    year = await page_eval(tab, "document.getElementById('checkin')._flatpickr.currentYear")
    await click(page, f"March 3, {year}")
    assert await page_eval(tab, PICKED) == [[year, 3, 3]]


# --- Bootstrap 5: dropdown, modal, tabs, collapse, tooltip ---------------------------------

BOOTSTRAP = "/gallery/widgets/bootstrap.html"


async def test_bootstrap_dropdown_opens_and_its_item_is_chosen(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, BOOTSTRAP)
    await click(page, "Sort by")
    await click(page, "Price, low to high")
    await settles(tab, "window.bsEvents.includes('hidden.bs.dropdown Sort by')", True)
    assert await page_eval(tab, "document.getElementById('sorted').textContent") == (
        "Price, low to high"
    )


async def test_bootstrap_modal_opens_and_is_closed_without_its_action(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, BOOTSTRAP)
    await click(page, "Cancel order")
    await settles(tab, "window.bsEvents.includes('shown.bs.modal cancelModal')", True)
    # Class 2: every control a person sees in the modal has a name; its backdrop is none.
    snap = await look(page)
    assert [e.line for e in snap.elements.values() if not e.name] == [], snap.text
    await click(page, "Keep order")
    await settles(tab, "window.bsEvents.includes('hidden.bs.modal cancelModal')", True)
    assert await page_eval(tab, "window.cancelled === undefined")


async def test_bootstrap_tab_shows_its_panel(page: Page, tab: Tab, site: FixtureSite) -> None:
    await open_page(page, site, BOOTSTRAP)
    snap = await click(page, "Shipped")
    await settles(tab, "window.bsEvents.includes('shown.bs.tab shipped-tab')", True)
    # The pane waits out the old one's fade, then fades in: read it once a person can.
    await settles(tab, "getComputedStyle(document.getElementById('shipped-pane')).opacity", "1")
    [shipped] = [e for e in snap.elements.values() if e.role == "tab" and e.name == "Shipped"]
    assert "selected" in shipped.attrs
    # Class 2: the panel's text is read (Bootstrap's panes are focusable, tabindex=0).
    snap = await look(page)
    assert "Order 1017: two mugs, on its way." in snap.text.splitlines(), snap.text


async def test_bootstrap_collapse_shows_the_address(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, BOOTSTRAP)
    await click(page, "Delivery address")
    await settles(tab, "window.bsEvents.includes('shown.bs.collapse address')", True)
    snap = await look(page)
    assert named(snap, "Delivery address").attrs.get("expanded") == "true"
    assert "12 Rue de la Paix, 75002 Paris" in snap.text.splitlines(), snap.text


async def test_bootstrap_tooltip_shows_on_hover(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, BOOTSTRAP)
    index = index_of(snap, "Invoices")
    result = await page.hover(index, expect=approved(snap, index))
    assert result.ok, result.message
    await settles(tab, "window.bsEvents.includes('shown.bs.tooltip Invoices')", True)
    assert "Download all invoices as a PDF" in result.message


# --- jQuery UI: tabs, selectmenu, spinner, dialog ------------------------------------------

JQUERY_UI = "/gallery/widgets/jquery-ui.html"


async def test_jquery_ui_tab_and_selectmenu_choose_express_delivery(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, JQUERY_UI)
    await click(page, "Delivery")
    assert await page_eval(tab, "$('#tabs').tabs('option', 'active')") == 1
    await click(page, "Standard (3-5 days)")  # the selectmenu's button reads its choice
    await click(page, "Express (next day)")
    assert await page_eval(tab, "$('#speed').val()") == "express"


async def test_jquery_ui_spinner_steps_up_with_the_arrow_keys(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, JQUERY_UI)
    await click(page, "Quantity")
    await press(page, "ArrowUp", times=2)
    assert await page_eval(tab, "$('#quantity').spinner('value')") == 3
    snap = await look(page)
    assert named(snap, "Quantity").attrs.get("value") == "3"  # class 7: the value read


async def test_jquery_ui_spinner_steps_up_with_its_arrow(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    # The arrows are aria-hidden (the spin button's keys do the same), yet a person sees and
    # clicks them: each is a line of its own after the spin button, and clicking works.
    snap = await open_page(page, site, JQUERY_UI)
    spin = index_of(snap, "Quantity")
    arrows = [i for i in sorted(snap.elements) if i > spin][:2]
    assert [snap.elements[i].role for i in arrows] == ["button", "button"], snap.text
    up = arrows[0]
    for _ in range(2):
        snap = await look(page)
        result = await page.click(up, expect=approved(snap, up))
        assert result.ok, result.message
    await settles(tab, "$('#quantity').spinner('value')", 3)


async def test_jquery_ui_spinner_reads_what_was_typed_into_it(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, JQUERY_UI)
    await type_into(page, "Quantity", "7")
    assert await page_eval(tab, "$('#quantity').spinner('value')") == 7
    # Class 7: a spin button a person typed into shows what they typed (jQuery UI updates
    # aria-valuenow only on blur).
    snap = await look(page)
    assert named(snap, "Quantity").attrs.get("value") == "7", snap.text


async def test_jquery_ui_dialog_opens_and_is_agreed_to(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, JQUERY_UI)
    await click(page, "Read the terms")
    assert await page_eval(tab, "$('#terms').dialog('isOpen')") is True
    snap = await look(page)
    assert "Returns are free within 30 days." in snap.text.splitlines(), snap.text
    assert [e.line for e in snap.elements.values() if not e.name] == [], snap.text
    await click(page, "I agree")
    assert await page_eval(tab, "[$('#terms').dialog('isOpen'), window.agreed]") == [False, True]


# --- noUiSlider: a range slider with two handles -------------------------------------------

NOUISLIDER = "/gallery/widgets/nouislider.html"
PRICE = "document.getElementById('price').noUiSlider.get()"


async def test_nouislider_maximum_price_is_lowered_with_the_arrow_keys(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, NOUISLIDER)
    # Class 7: each handle shows its value (the tooltip's text, from aria-valuetext).
    assert named(snap, "Maximum price").attrs.get("value") == "€80", snap.text
    await click(page, "Maximum price")
    await press(page, "ArrowLeft", times=2)
    assert await page_eval(tab, PRICE) == ["€20", "€70"]
    assert named(await look(page), "Maximum price").attrs.get("value") == "€70"


async def test_nouislider_volume_goes_to_its_top_with_end(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, NOUISLIDER)
    await click(page, "Volume")
    result = await page.press_key("End")
    assert result.ok and '"Volume"' in result.message, result.message  # the handle, by name
    assert float(await page_eval(tab, "document.getElementById('volume').noUiSlider.get()")) == 100


async def test_nouislider_minimum_price_is_dragged_up(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, NOUISLIDER)
    handle = named(snap, "Minimum price")
    width = float(await page_eval(tab, "document.getElementById('price').offsetWidth"))
    result = await drag(page, snap, handle.index, dx=round(width * 0.2))  # 20 of 0-100: +20
    assert result.ok, result.message
    assert await page_eval(tab, PRICE) == ["€40", "€80"]


# --- SortableJS: a list put in order by dragging -------------------------------------------

SORTABLE = "/gallery/widgets/sortable.html"


async def test_sortable_items_are_read_in_the_order_sortable_holds(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, SORTABLE)
    items = [e.name for _, e in sorted(snap.elements.items()) if e.tag == "li"]
    order = await page_eval(
        tab,
        "priorities.toArray().map((id) => document.querySelector(`[data-id=${id}]`).textContent)",
    )
    assert items == order == ["Buy milk", "Pay rent", "Call the dentist", "Water the plants"]


async def test_sortable_pay_rent_is_dragged_to_the_top(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, SORTABLE)
    result = await drag(page, snap, index_of(snap, "Pay rent"), to=index_of(snap, "Buy milk"))
    assert result.ok, result.message
    await settles(tab, "priorities.toArray()", ["rent", "milk", "dentist", "plants"])


# --- Shoelace: web components, their controls in shadow roots ------------------------------

SHOELACE = "/gallery/widgets/shoelace.html"


async def open_shoelace(page: Page, tab: Tab, site: FixtureSite) -> Snapshot:
    await open_page(page, site, SHOELACE)
    # Lit renders each component after it is defined: wait for the page's own promise.
    await page_eval(
        tab,
        "Promise.all([...new Set([...document.querySelectorAll(':not(:defined)')]"
        ".map((e) => e.localName))].map((n) => customElements.whenDefined(n)))"
        ".then(() => Promise.all([...document.querySelectorAll('*')]"
        ".filter((e) => e.updateComplete).map((e) => e.updateComplete)))",
    )
    return await look(page)


async def test_shoelace_switch_turns_dark_mode_on(page: Page, tab: Tab, site: FixtureSite) -> None:
    await open_shoelace(page, tab, site)
    # Class 8: approved as "Dark mode", the click is done (the hands once read '' there).
    snap = await click(page, "Dark mode")
    assert await page_eval(tab, "document.getElementById('dark').checked") is True
    assert "checked" in named(snap, "Dark mode").attrs


async def test_shoelace_reviews_tab_is_chosen(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_shoelace(page, tab, site)
    # Class 7: the slotted tabs are elements of their own, with their selected state.
    assert "selected" in named(snap, "General").attrs
    snap = await click(page, "Reviews")
    assert await page_eval(tab, "document.getElementById('tabs').activeTab.panel") == "reviews"
    assert "selected" in named(snap, "Reviews").attrs
    assert '"Quiet and quick." Four stars from 212 reviews.' in snap.text.splitlines()


async def test_shoelace_select_takes_express_shipping(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_shoelace(page, tab, site)
    await click(page, "Shipping method")
    await settles(tab, "window.slEvents.includes('sl-after-show shipping')", True)
    await click(page, "Express")
    assert await page_eval(tab, "document.getElementById('shipping').value") == "express"
    await settles(tab, "window.slEvents.includes('sl-after-hide shipping')", True)
    snap = await look(page)
    assert named(snap, "Shipping method").attrs.get("value") == "Express"


async def test_shoelace_rating_is_set_to_four_stars(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_shoelace(page, tab, site)
    snap = await click(page, "Rate this kettle")
    # Class 7: the stars lit are read as the rating's value; the keys then move it to 4.
    shown = int(float(named(snap, "Rate this kettle").attrs["value"]))
    await press(page, "ArrowRight" if shown < 4 else "ArrowLeft", times=abs(4 - shown))
    assert await page_eval(tab, "document.getElementById('rating').value") == 4
    assert named(await look(page), "Rate this kettle").attrs.get("value") == "4"


async def test_shoelace_checkbox_range_and_details(page: Page, tab: Tab, site: FixtureSite) -> None:
    await open_shoelace(page, tab, site)
    await click(page, "Gift wrap")
    assert await page_eval(tab, "document.getElementById('gift').checked") is True
    await click(page, "Whistle volume")
    await press(page, "Home")
    assert await page_eval(tab, "document.getElementById('volume').value") == 0
    await click(page, "Warranty")
    await settles(tab, "window.slEvents.includes('sl-after-show warranty')", True)
    assert named(await look(page), "Warranty").attrs.get("expanded") == "true"


async def test_shoelace_dialog_opens_and_closes(page: Page, tab: Tab, site: FixtureSite) -> None:
    await open_shoelace(page, tab, site)
    await click(page, "Need help?")
    await settles(tab, "window.slEvents.includes('sl-after-show help')", True)
    snap = await look(page)
    assert "Call 01 23 45 67 89, Monday to Friday." in snap.text.splitlines(), snap.text
    await click(page, "Got it")
    await settles(tab, "window.slEvents.includes('sl-after-hide help')", True)
    assert await page_eval(tab, "document.getElementById('help').open") is False
