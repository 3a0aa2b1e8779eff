"""The hands on standard widgets: native date, time, colour and range inputs take what a
person would type for their pickers, and a click is read after the animation it started.

Fixture pages live under tests/site/widgets/hands/; forms post to the fixture server, and
the tests assert what it received (or the page's own state).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from core.browser.browser import Browser, Tab
from core.eyes.snapshot import Snapshot
from core.hands import Page
from tests.helpers import index_of, open_page, page_eval
from tests.helpers.site_server import FixtureSite

# End to end: whole actions or runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow

POSTED = "/widgets/hands/native-post"


@pytest.fixture
async def page(browser: Browser, tab: Tab) -> AsyncIterator[Page]:
    hands = Page(browser, action_timeout=15)
    yield hands
    hands.close()


@pytest.fixture(autouse=True)
def _fresh_site(site: FixtureSite) -> None:
    site.clear()


async def fill(page: Page, snap: Snapshot, fields: dict[str, str]) -> None:
    for name, text in fields.items():
        result = await page.type(index_of(snap, name), text)
        assert result.ok, result.message


async def submit(page: Page, snap: Snapshot, site: FixtureSite, button: str) -> dict[str, str]:
    result = await page.click(index_of(snap, button))
    assert result.ok, result.message
    await site.until(lambda got: any(r.method == "POST" and r.path == POSTED for r in got))
    [post] = site.posts(POSTED)
    return {key: values[0] for key, values in post.form.items()}


# --- native date, time, month, week, datetime-local, colour and range inputs ---------------

# What each field is typed, one way of writing per set, and what the form must receive.
FORMATS = {
    "iso": {
        "Departure date": "2010-09-09",
        "Departure time": "19:50",
        "Billing month": "2010-09",
        "Holiday week": "2010-W36",
        "Meeting": "2010-09-09T19:50",
        "Colour": "#ff0000",
        "Volume": "40",
    },
    "locale order and 12-hour clock": {
        "Departure date": "09/09/2010",
        "Departure time": "7:50 PM",
        "Billing month": "09/2010",
        "Holiday week": "week 36 2010",
        "Meeting": "09/09/2010 7:50 PM",
        "Colour": "#F00",
        "Volume": " 40 ",
    },
    "words": {
        "Departure date": "9 September 2010",
        "Departure time": "7:50pm",
        "Billing month": "September 2010",
        "Holiday week": "9 September 2010",
        "Meeting": "September 9, 2010 at 19:50",
        "Colour": "red",
        "Volume": "40.0",
    },
}
RECEIVED = {
    "date": "2010-09-09",
    "time": "19:50",
    "month": "2010-09",
    "week": "2010-W36",
    "meeting": "2010-09-09T19:50",
    "colour": "#ff0000",
    "volume": "40",
}


@pytest.mark.parametrize("way", list(FORMATS))
@pytest.mark.parametrize("form", ["native-form.html", "native-controlled.html"])
async def test_picker_fields_typed_in_each_format_send_iso_values(
    page: Page, site: FixtureSite, form: str, way: str
) -> None:
    snap = await open_page(page, site, f"/widgets/hands/{form}")
    await fill(page, snap, FORMATS[way])
    assert await submit(page, snap, site, "Book") == RECEIVED


async def test_the_result_reads_back_what_the_date_field_holds(
    page: Page, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/widgets/hands/native-form.html")
    result = await page.type(index_of(snap, "Departure date"), "9 September 2010")
    assert result.ok, result.message
    assert "2010-09-09" in result.message and "9 September 2010" in result.message


async def test_the_result_says_when_the_page_refused_the_value(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/widgets/hands/native-controlled.html")
    result = await page.type(index_of(snap, "Departure date"), "12 September 2010")  # a Sunday
    assert result.ok, result.message
    assert "2010-09-12" in result.message and "the page rejected the value" in result.message
    assert await page_eval(tab, "document.querySelector('[name=date]').value") == ""


@pytest.mark.parametrize(
    ("language", "typed", "held"),
    [
        ("en-US", "03/04/2010", "2010-03-04"),
        ("en-GB", "03/04/2010", "2010-04-03"),
        ("de-DE", "03.04.2010", "2010-04-03"),
        ("de-DE", "3. März 2010", "2010-03-03"),
    ],
)
async def test_a_date_is_read_in_the_browsers_language(
    page: Page, tab: Tab, site: FixtureSite, language: str, typed: str, held: str
) -> None:
    await tab.send("Emulation.setUserAgentOverride", {"userAgent": "", "acceptLanguage": language})
    snap = await open_page(page, site, "/widgets/hands/native-form.html")
    result = await page.type(index_of(snap, "Departure date"), typed)
    assert result.ok, result.message
    assert await page_eval(tab, "document.querySelector('[name=date]').value") == held


@pytest.mark.parametrize(
    ("field", "typed", "says"),
    [
        ("Departure date", "9 September 1999", "2000-01-01"),
        ("Departure date", "next tuesday", '"2010-09-23"'),
        ("Departure date", "31/02/2010", "23 September 2010"),
        ("Departure time", "25:10", "7:50 PM"),
        ("Volume", "150", "from 0 to 100 in steps of 5"),
        ("Volume", "42", "the nearest is 40"),
        ("Colour", "transparent", "transparency"),
        ("Colour", "reddish", "#ff0000"),
    ],
)
async def test_a_value_the_field_rejects_is_refused_with_what_it_takes(
    page: Page, tab: Tab, site: FixtureSite, field: str, typed: str, says: str
) -> None:
    snap = await open_page(page, site, "/widgets/hands/native-form.html")
    before = await page_eval(tab, "Array.from(document.forms[0].elements, (e) => e.value)")
    result = await page.type(index_of(snap, field), typed)
    assert not result.ok and result.code == "bad_parameters", result.message
    assert says in result.message, result.message
    after = await page_eval(tab, "Array.from(document.forms[0].elements, (e) => e.value)")
    assert after == before


async def test_keys_still_move_a_picker_field(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/widgets/hands/native-form.html")
    assert (await page.type(index_of(snap, "Volume"), "40")).ok
    result = await page.press_key("ArrowRight")
    assert result.ok, result.message
    assert await page_eval(tab, "document.querySelector('[name=volume]').value") == "45"


async def test_a_text_field_that_mentions_dates_is_typed_letter_for_letter(
    page: Page, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/widgets/hands/native-shifty.html")
    await fill(page, snap, {"When": "9 September 2010"})
    assert (await submit(page, snap, site, "Send"))["free"] == "9 September 2010"


async def test_a_field_that_becomes_a_date_input_on_focus_gets_an_iso_date(
    page: Page, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/widgets/hands/native-shifty.html")
    await fill(page, snap, {"Arrival": "9 September 2010"})
    assert (await submit(page, snap, site, "Send"))["arrival"] == "2010-09-09"


async def test_a_date_input_that_becomes_text_on_focus_is_typed_as_text(
    page: Page, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/widgets/hands/native-shifty.html")
    await fill(page, snap, {"Return": "9 September 2010"})
    assert (await submit(page, snap, site, "Send"))["return"] == "9 September 2010"


# --- settling waits for the motion a click started -----------------------------------------

OPENED = "Islands and remote areas take two days more."


@pytest.mark.parametrize(
    ("path", "header", "last_line"),
    [
        (
            "collapsible.html?open=600",
            "Shipping details",
            "Returns are free within 30 days of delivery.",
        ),
        ("jquery-accordion.html?duration=600", "When will my order arrive?", OPENED),
    ],
)
async def test_a_section_is_read_fully_open_right_after_the_click(
    page: Page, site: FixtureSite, path: str, header: str, last_line: str
) -> None:
    snap = await open_page(page, site, f"/widgets/hands/{path}")
    assert last_line not in snap.text
    result = await page.click(index_of(snap, header))
    assert result.ok and "still running" not in result.message, result.message
    after, _ = await page.observe()
    assert last_line in after.text, after.text


async def test_an_animation_longer_than_the_wait_is_cut_and_the_result_says_so(
    page: Page, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/widgets/hands/collapsible.html?open=4000")
    result = await page.click(index_of(snap, "Shipping details"))
    assert result.ok, result.message
    assert "was still running after 1 s" in result.message and "id=panel" in result.message


@pytest.mark.parametrize("noise", ["css-spinner", "js-spinner", "long-transition"])
async def test_motion_the_click_did_not_start_is_not_waited_for(
    page: Page, site: FixtureSite, noise: str
) -> None:
    # Waiting for any of these would run into the bound, and the result would say so.
    snap = await open_page(page, site, f"/widgets/hands/collapsible.html?open=100&noise={noise}")
    result = await page.click(index_of(snap, "Shipping details"))
    assert result.ok and "still running" not in result.message, result.message
    after, _ = await page.observe()
    assert "Returns are free within 30 days of delivery." in after.text
