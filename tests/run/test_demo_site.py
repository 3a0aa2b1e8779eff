"""Rail & Co, the demo booking site, in real headless Chromium; and the demo's scripted plan.

The browser here is Playwright driving Debian's Chromium: these tests are about the site's
own pages behaving, independently of handrail's browser layer.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator, Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Browser, Locator, Page, async_playwright, expect

from core.browser.find import find_chrome
from core.demo import DEMO_TASK, DemoSite, start_demo_site
from core.demo.plan import (
    DESTINATION,
    ORIGIN,
    demo_plan_lines,
    first_friday_of_next_month,
    write_demo_plan,
)
from core.demo.timetable import (
    MORNING_ENDS,
    cheapest_morning,
    clock,
    find_station,
    first_free_window_seat,
    format_day,
    journeys_for,
    seat_map,
)
from tests.helpers.waiting import scaled

# End to end: whole actions or runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
# Roles of the elements a digest indexes; a plan target must name exactly one of them.
INTERACTIVE_ROLES = (
    "button",
    "link",
    "textbox",
    "searchbox",
    "combobox",
    "listbox",
    "option",
    "checkbox",
    "radio",
    "spinbutton",
    "menuitem",
    "tab",
    "switch",
)
TRAVEL_DAY = first_friday_of_next_month(date.today())


# -- fixtures ----------------------------------------------------------------------------


@pytest.fixture
def demo_site() -> Iterator[DemoSite]:
    site = start_demo_site()
    yield site
    site.stop()


@pytest_asyncio.fixture(scope="module")
async def pw_browser() -> AsyncIterator[Browser]:
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=find_chrome(), args=CHROMIUM_ARGS)
        yield browser
        await browser.close()


@pytest_asyncio.fixture
async def page(pw_browser: Browser) -> AsyncIterator[Page]:
    context = await pw_browser.new_context(viewport={"width": 1280, "height": 900})
    page = await context.new_page()
    page.set_default_timeout(5000)
    yield page
    await context.close()


def _results_url(site: DemoSite, day: date = TRAVEL_DAY, pax: int = 1) -> str:
    query = urllib.parse.urlencode(
        {"from": ORIGIN, "to": DESTINATION, "date": day.isoformat(), "pax": pax}
    )
    return f"{site.url}results?{query}"


def _book_seat(site: DemoSite) -> tuple[str, str]:
    """POST the seat form the way the seat page does; return (passenger page URL, seat code)."""
    origin, destination = find_station(ORIGIN), find_station(DESTINATION)
    assert origin and destination
    train = cheapest_morning(journeys_for(origin, destination, TRAVEL_DAY))
    seat = first_free_window_seat(train.id).code
    body = urllib.parse.urlencode({"journey": train.id, "pax": 1, "seats": seat}).encode()
    with urllib.request.urlopen(f"{site.url}booking", data=body) as response:
        return response.url, seat


async def _passenger_done(page: Page, site: DemoSite) -> None:
    url, _ = _book_seat(site)
    await page.goto(url)
    await page.get_by_label("First name").fill("Ada")
    await page.get_by_label("Last name").fill("Lovelace")
    await page.get_by_label("Email").fill("ada@example.org")
    await page.get_by_role("button", name="Continue to payment").click()
    await page.wait_for_url("**/payment?booking=*")


async def resolve(page: Page, target: str, timeout: float = 5.0) -> Locator:
    """The one interactive element whose accessible name is ``target`` (any case).

    Waits for it to appear; fails when none or several match.
    """
    pattern = re.compile(f"^{re.escape(target)}$", re.IGNORECASE)
    deadline = time.monotonic() + scaled(timeout)
    while True:
        locators = [page.get_by_role(role, name=pattern) for role in INTERACTIVE_ROLES]  # type: ignore[arg-type]
        counts = [await loc.count() for loc in locators]
        if sum(counts) == 1:
            return locators[counts.index(1)]
        if time.monotonic() > deadline:
            raise AssertionError(f"{target!r} matched {sum(counts)} elements on {page.url}")
        await asyncio.sleep(0.05)


async def _rows(page: Page) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = await page.eval_on_selector_all(
        "#journeys > li",
        """rows => rows.map(r => ({departure: Number(r.dataset.departure),
            price: Number(r.dataset.price), text: r.innerText}))""",
    )
    return rows


# -- pure functions ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("today", "expected"),
    [
        (date(2026, 11, 29), date(2026, 12, 4)),
        (date(2026, 12, 15), date(2027, 1, 1)),  # year boundary; 1 January is a Friday
        (date(2026, 12, 31), date(2027, 1, 1)),
        (date(2027, 1, 31), date(2027, 2, 5)),
        (date(2028, 1, 10), date(2028, 2, 4)),  # leap-year February
        (date(2026, 4, 30), date(2026, 5, 1)),
        (date(2026, 7, 3), date(2026, 8, 7)),  # today is itself a first Friday
    ],
)
def test_first_friday_of_next_month(today: date, expected: date) -> None:
    assert first_friday_of_next_month(today) == expected


def test_first_friday_of_next_month_every_day_for_three_years() -> None:
    for n in range(3 * 366):
        today = date(2026, 1, 1) + timedelta(days=n)
        friday = first_friday_of_next_month(today)
        month_after = (today.replace(day=1) + timedelta(days=32)).replace(day=1)
        assert friday.weekday() == 4 and friday.day <= 7
        assert (friday.year, friday.month) == (month_after.year, month_after.month)


def test_cheapest_morning_train_is_unique_and_not_first_on_any_day() -> None:
    origin, destination = find_station(ORIGIN), find_station(DESTINATION)
    assert origin and destination
    for n in range(0, 400, 7):
        journeys = journeys_for(origin, destination, date(2026, 1, 1) + timedelta(days=n))
        morning = [j for j in journeys if j.departure < MORNING_ENDS]
        best = cheapest_morning(journeys)
        assert best is not journeys[0]
        assert all(j.price_cents > best.price_cents for j in morning if j is not best)
        assert min(journeys, key=lambda j: j.price_cents).departure >= 19 * 60


def test_plan_lines_are_well_formed_and_start_on_the_search_page(tmp_path: Path) -> None:
    lines = demo_plan_lines(date(2026, 11, 20))
    tools = {"click", "type", "press_key", "select_option", "scroll", "go_back", "wait", "finish"}
    assert all(line["tool"] in tools and line["reason"] for line in lines)
    assert lines[-1]["tool"] == "finish" and lines[-2]["target"] == "Continue to payment"
    assert all("target" in line for line in lines if line["tool"] in {"click", "type"})
    assert "Friday 4 December 2026" in [line.get("target") for line in lines]
    path = write_demo_plan(tmp_path / "plans" / "demo.jsonl", date(2026, 11, 20))
    assert [json.loads(text) for text in path.read_text("utf-8").splitlines()] == lines
    assert "Ada Lovelace" in DEMO_TASK and "Lyon" in DEMO_TASK


def test_site_listens_on_loopback_only(demo_site: DemoSite) -> None:
    assert demo_site.url.startswith("http://127.0.0.1:")
    with urllib.request.urlopen(f"{demo_site.url}api/state") as response:
        assert json.load(response) == demo_site.state()


# -- the pages in Chromium ---------------------------------------------------------------


async def test_autocomplete_suggests_stations_and_a_click_fills_the_field(
    page: Page, demo_site: DemoSite
) -> None:
    await page.goto(demo_site.url)
    await page.get_by_role("combobox", name="From").press_sequentially("lyon")
    options = page.get_by_role("listbox", name="From suggestions").get_by_role("option")
    # The list follows every key: wait for the one the whole word gives (an earlier key's
    # suggestions, "l" alone, may still be showing on a busy machine).
    await expect(options.first).to_have_text("Lyon Part-Dieu")
    names = await options.all_inner_texts()
    assert names[:3] == ["Lyon Part-Dieu", "Lyon Perrache", "Lyon Saint-Exupéry TGV"]
    await page.get_by_role("option", name="Lyon Perrache").click()
    assert await page.get_by_role("combobox", name="From").input_value() == "Lyon Perrache"
    assert await page.get_by_role("listbox", name="From suggestions").is_hidden()


async def test_autocomplete_enter_picks_the_first_suggestion_even_before_it_shows(
    page: Page, demo_site: DemoSite
) -> None:
    await page.goto(demo_site.url)
    to = page.get_by_role("combobox", name="To")
    await to.press_sequentially("paris")
    await to.press("Enter")  # within the debounce: the list has not been fetched yet
    await page.wait_for_function("document.getElementById('to').value !== 'paris'")
    assert await to.input_value() == "Paris Bercy"
    assert page.url == demo_site.url  # Enter chose a station; it did not submit the form


async def test_calendar_sets_the_date_and_typed_dates_are_accepted(
    page: Page, demo_site: DemoSite
) -> None:
    await page.goto(demo_site.url)
    await page.get_by_role("button", name="Choose date").click()
    await page.get_by_role("button", name="Next month").click()
    await page.get_by_role("button", name=format_day(TRAVEL_DAY), exact=True).click()
    date_input = page.get_by_label("Departure date")
    assert await date_input.input_value() == TRAVEL_DAY.isoformat()
    assert await page.locator("#date-hint").inner_text() == format_day(TRAVEL_DAY)
    assert await page.get_by_role("dialog", name="Calendar").is_hidden()

    later = TRAVEL_DAY + timedelta(days=3)
    await date_input.fill(later.isoformat())
    assert await page.locator("#date-hint").inner_text() == format_day(later)
    await page.get_by_role("button", name="Choose date").click()
    chosen = page.get_by_role("button", name=format_day(later), exact=True)
    assert await chosen.get_attribute("aria-pressed") == "true"


async def test_search_form_shows_errors_inline(page: Page, demo_site: DemoSite) -> None:
    await page.goto(demo_site.url)
    await page.get_by_label("Departure date").fill("4/12/2026")
    await page.get_by_role("button", name="Search trains").click()
    assert await page.locator("#from-error").inner_text() == "Enter a departure station."
    assert "YYYY-MM-DD" in await page.locator("#date-error").inner_text()
    assert await page.get_by_label("From", exact=True).get_attribute("aria-invalid") == "true"
    assert page.url == demo_site.url

    # The server checks the station names too and answers on the same form.
    await page.get_by_label("From", exact=True).fill("Lyon")
    await page.get_by_label("To", exact=True).fill(DESTINATION)
    await page.get_by_label("Departure date").fill(TRAVEL_DAY.isoformat())
    await page.get_by_role("button", name="Search trains").click()
    await page.wait_for_url("**/results?*")
    assert "from the suggestions" in await page.locator("#from-error").inner_text()
    assert demo_site.state()["searches"] == []


async def test_results_cheapest_morning_train_is_found_by_sorting_by_price(
    page: Page, demo_site: DemoSite
) -> None:
    await page.goto(_results_url(demo_site))
    by_departure = await _rows(page)
    assert len(by_departure) == 40
    assert await page.evaluate("document.body.scrollHeight > 3 * innerHeight")

    await page.get_by_label("Sort by").select_option(label="Price (lowest first)")
    by_price = await _rows(page)
    assert [r["price"] for r in by_price] == sorted(r["price"] for r in by_price)
    assert "sort=price" in page.url
    morning = [r for r in by_price if r["departure"] < MORNING_ENDS]
    best = morning[0]
    assert best["price"] < morning[1]["price"]  # unique
    assert by_price[0]["departure"] >= MORNING_ENDS  # the overall cheapest is a trap
    assert by_departure[0]["departure"] != best["departure"]
    assert "Lowest fare of the day" in by_price[0]["text"]


async def test_journey_detail_lists_stops_and_leads_to_seats(
    page: Page, demo_site: DemoSite
) -> None:
    origin, destination = find_station(ORIGIN), find_station(DESTINATION)
    assert origin and destination
    train = cheapest_morning(journeys_for(origin, destination, TRAVEL_DAY))
    await page.goto(_results_url(demo_site))
    await page.get_by_role(
        "link", name=re.compile(f"^Select the {clock(train.departure)} ")
    ).click()
    await page.wait_for_url(f"**/journey/{train.id}?pax=1")
    stops = await page.locator(".stops li").all_inner_texts()
    assert stops[0].endswith(ORIGIN) and stops[-1].endswith(DESTINATION)
    await page.get_by_role("link", name="Choose seat").click()
    await page.wait_for_url(f"**/seats/{train.id}?pax=1")


async def test_seat_map_disables_taken_seats_and_enables_continue_once_chosen(
    page: Page, demo_site: DemoSite
) -> None:
    origin, destination = find_station(ORIGIN), find_station(DESTINATION)
    assert origin and destination
    train = cheapest_morning(journeys_for(origin, destination, TRAVEL_DAY))
    seats = seat_map(train.id)
    await page.goto(f"{demo_site.url}seats/{train.id}?pax=1")
    taken = next(s for s in seats if s.taken)
    free = first_free_window_seat(train.id)
    assert await page.get_by_role("button", name=taken.label()).is_disabled()
    assert await page.locator("button.seat:disabled").count() == sum(s.taken for s in seats)
    proceed = page.get_by_role("button", name="Continue to passenger details")
    assert await proceed.is_disabled()

    await page.get_by_role("button", name=free.label()).click()
    chosen = page.get_by_role("button", name=free.label(selected=True))
    assert await chosen.get_attribute("aria-pressed") == "true"
    assert await proceed.is_enabled()
    await proceed.click()
    await page.wait_for_url("**/passenger?booking=*")
    assert demo_site.state()["bookings"][0]["seats"] == [free.code]


async def test_passenger_form_validates_inline_and_renders_summary_from_its_state(
    page: Page, demo_site: DemoSite
) -> None:
    url, _ = _book_seat(demo_site)
    await page.goto(url)
    await page.get_by_role("button", name="Continue to payment").click()
    for field in ("first-name", "last-name", "email"):
        assert await page.locator(f"#{field}-error").inner_text() != ""
    assert await page.evaluate("document.activeElement.id") == "first-name"

    await page.get_by_label("First name").press_sequentially("Ada")
    await page.get_by_label("Last name").press_sequentially("Lovelace")
    await page.get_by_label("Email").press_sequentially("ada@example")
    state = await page.evaluate("({...window.railcoPassenger.state})")
    assert (state["firstName"], state["lastName"], state["email"]) == (
        "Ada",
        "Lovelace",
        "ada@example",
    )
    assert await page.locator("#first-name-error").inner_text() == ""
    assert "name@example.org" in await page.locator("#email-error").inner_text()
    assert await page.locator("#summary-passenger").inner_text() == "Ada Lovelace"

    # The summary follows the state, whoever changes it.
    total_before = await page.locator("#summary-total").inner_text()
    await page.get_by_label("Railcard (optional)").select_option("youth")
    assert await page.locator("#summary-total").inner_text() != total_before
    await page.evaluate("window.railcoPassenger.update('firstName', 'Augusta Ada')")
    assert await page.locator("#summary-passenger").inner_text() == "Augusta Ada Lovelace"

    await page.get_by_label("Email").press_sequentially(".org")
    assert await page.locator("#email-error").inner_text() == ""
    await page.get_by_role("button", name="Continue to payment").click()
    await page.wait_for_url("**/payment?booking=*")
    booking = demo_site.state()["bookings"][0]
    assert booking["passenger"] == {
        "first_name": "Augusta Ada",
        "last_name": "Lovelace",
        "email": "ada@example.org",
        "railcard": "youth",
    }
    assert booking["status"] == "details_given"


async def test_payment_page_has_card_fields_and_signin_has_a_password(
    page: Page, demo_site: DemoSite
) -> None:
    await _passenger_done(page, demo_site)
    fields = await page.eval_on_selector_all(
        "#payment-form input:not([type=hidden])",
        "inputs => inputs.map(i => [i.name, i.autocomplete])",
    )
    assert fields == [
        ["cardnumber", "cc-number"],
        ["cc-exp", "cc-exp"],
        ["cvc", "cc-csc"],
        ["ccname", "cc-name"],
    ]
    assert re.fullmatch(r"Pay €\d+\.\d\d", await page.locator(".pay-button").inner_text())

    await page.get_by_role("link", name="Sign in").click()
    await page.wait_for_url("**/signin")
    password = page.get_by_label("Password")
    assert await password.get_attribute("type") == "password"
    assert await password.get_attribute("autocomplete") == "current-password"
    await page.get_by_label("Email address").fill("ada@example.org")
    await password.fill("analytical-engine")
    await page.get_by_role("button", name="Sign in to Rail & Co").click()
    await page.wait_for_url(demo_site.url)
    assert await page.get_by_text("Signed in as ada@example.org").is_visible()
    state = json.dumps(demo_site.state())
    assert "analytical-engine" not in state
    assert demo_site.state()["account"]["signed_in_as"] == "ada@example.org"


async def test_paying_shows_a_confirmation_and_the_server_records_the_booking(
    page: Page, demo_site: DemoSite
) -> None:
    await _passenger_done(page, demo_site)
    card = page.get_by_label("Card number")
    await card.press_sequentially("4242424242424242")
    assert await card.input_value() == "4242 4242 4242 4242"  # the page reformats
    await page.get_by_label("Expiry date (MM/YY)").press_sequentially("1234")
    await page.get_by_label("Security code (CVC)").fill("123")
    await page.get_by_label("Name on card").fill("Ada Lovelace")
    await page.get_by_role("button", name=re.compile(r"^Pay €")).click()
    await page.wait_for_url("**/confirmation?booking=*")
    reference = await page.locator("#reference").inner_text()
    assert re.fullmatch(r"RC-[A-Z0-9]{6}", reference)

    response = await page.request.get(f"{demo_site.url}api/state")
    booking = (await response.json())["bookings"][0]
    assert booking["status"] == "paid" and booking["reference"] == reference
    assert booking["payment"]["card_last4"] == "4242"
    assert "4242424242424242" not in await response.text()


async def test_invalid_card_is_refused_inline(page: Page, demo_site: DemoSite) -> None:
    await _passenger_done(page, demo_site)
    await page.get_by_label("Card number").fill("4242 4242 4242 4241")
    await page.get_by_role("button", name=re.compile(r"^Pay €")).click()
    assert "not valid" in await page.locator("#cardnumber-error").inner_text()
    assert "MM/YY" in await page.locator("#cc-exp-error").inner_text()
    assert demo_site.state()["bookings"][0]["status"] == "details_given"


async def test_demo_plan_walks_to_the_payment_page_with_unambiguous_targets(
    page: Page, demo_site: DemoSite
) -> None:
    """Every target names exactly one interactive element where it is used."""
    await page.goto(demo_site.url)
    lines = demo_plan_lines(date.today())
    for line in lines[:-1]:
        element = await resolve(page, line["target"])
        params = line["input"]
        if line["tool"] == "click":
            await element.click()
        elif line["tool"] == "type":
            await element.fill("")
            await element.press_sequentially(params["text"])
        elif line["tool"] == "select_option":
            await element.select_option(label=params["option"])
        else:
            raise AssertionError(f"the demo plan does not use {line['tool']}")
        await page.wait_for_load_state()
    await page.wait_for_url("**/payment?booking=*")
    assert await page.locator("input[autocomplete=cc-number]").count() == 1
    assert lines[-1]["tool"] == "finish"

    origin, destination = find_station(ORIGIN), find_station(DESTINATION)
    assert origin and destination
    train = cheapest_morning(journeys_for(origin, destination, TRAVEL_DAY))
    (booking,) = demo_site.state()["bookings"]
    assert booking["journey_id"] == train.id
    assert booking["seats"] == [first_free_window_seat(train.id).code]
    assert booking["passenger"]["first_name"] == "Ada"
    assert booking["passenger"]["last_name"] == "Lovelace"
    assert booking["status"] == "details_given" and booking["payment"] is None
