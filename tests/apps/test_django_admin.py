"""Tasks a person would give handrail on a real Django admin (the travel agency of
tests/apps/travel), each done with handrail's own eyes and hands (the names the digest
shows) and checked against the application's own state, through its ORM (issue 26)."""

from __future__ import annotations

import datetime
import re

import pytest

from core.actions import Action
from core.browser.browser import Tab
from core.eyes.snapshot import Snapshot
from core.guard.policy import Gate
from core.hands import Page
from tests.apps.finding import index_where
from tests.apps.servers import DjangoApp
from tests.helpers import index_of, page_eval

pytestmark = pytest.mark.slow


async def test_signing_in_through_the_form(page: Page, signed_out: Tab, travel: DjangoApp) -> None:
    assert travel.orm("print(json.dumps(str(User.objects.get().last_login)))") == "None"
    result = await page.navigate(travel.admin())
    assert result.ok, result.message
    snap, _ = await page.observe()
    assert "/admin/login/" in snap.url, snap.text
    result = await page.type(index_of(snap, "Username:"), travel.username)
    assert result.ok, result.message
    result = await page.type(index_of(snap, "Password:"), travel.password, secret=True)
    assert result.ok, result.message
    result = await page.click(index_of(snap, "Log in"))
    assert result.ok, result.message
    snap, _ = await page.observe()
    assert snap.url == travel.admin(), snap.text
    assert "Welcome, admin." in snap.text
    assert travel.orm("print(json.dumps(User.objects.get().last_login is not None))") is True


async def act(page: Page, snap: Snapshot, name: str) -> Snapshot:
    """Click the element the digest names ``name``; return the digest after it."""
    result = await page.click(index_of(snap, name))
    assert result.ok, result.message
    snap, _ = await page.observe()
    return snap


def chosen(snap: Snapshot) -> list[str]:
    """The items the digest lists in the "Chosen travellers" list box (after its line)."""
    lines = snap.text.splitlines()
    start = next(k for k, line in enumerate(lines) if "<select name=travellers " in line)
    names = []
    for line in lines[start + 1 :]:
        match = re.match(r"^[*~]?\[(\d+)\]<option", line)
        if not match:
            break
        names.append(snap.elements[int(match.group(1))].name)
    return names


async def test_adding_a_trip_with_the_calendar_and_the_travellers_box(
    page: Page, signed_in: Tab, travel: DjangoApp
) -> None:
    result = await page.navigate(travel.admin("travel/trip/add/"))
    assert result.ok, result.message
    snap, _ = await page.observe()
    result = await page.type(index_of(snap, "Destination:"), "Marrakesh")
    assert result.ok, result.message
    # The admin's calendar: its arrows are image-replaced links ("<" and ">" hidden by
    # text-indent), named all the same.
    snap = await act(page, snap, "Choose a Date")
    this_month = datetime.date.today().replace(day=1)
    assert f"{this_month:%B %Y}" in snap.text, snap.text
    assert index_of(snap, "<")
    snap = await act(page, snap, ">")
    next_month = (this_month + datetime.timedelta(days=31)).replace(day=1)
    assert f"{next_month:%B %Y}" in snap.text, snap.text
    snap = await act(page, snap, "15")
    departs = next_month.replace(day=15)
    assert f'value="{departs}"' in snap.elements[index_of(snap, "Departure date:")].line
    # filter_horizontal: the travellers on offer are listed as items of the list box, and
    # its arrow buttons are named. A click selects one item (as it does for a person).
    for name in ("Grace Hopper", "Alan Turing"):
        snap = await act(page, snap, name)
        assert "<option selected>" in snap.elements[index_of(snap, name)].line
        snap = await act(page, snap, "Choose selected travellers")
        assert name in chosen(snap), snap.text
    snap = await act(page, snap, "Alan Turing")  # now an item of the chosen list
    snap = await act(page, snap, "Remove selected travellers")
    assert chosen(snap) == ["Grace Hopper"], snap.text
    snap = await act(page, snap, "Ada Lovelace")
    snap = await act(page, snap, "Choose selected travellers")
    snap = await act(page, snap, "Save")
    assert "was added successfully" in snap.text, snap.text

    trip = travel.orm(
        "t = Trip.objects.get(destination='Marrakesh')\n"
        "print(json.dumps([str(t.departs), sorted(p.name for p in t.travellers.all())]))"
    )
    assert trip == [str(departs), ["Ada Lovelace", "Grace Hopper"]]


def trips_where(travel: DjangoApp, condition: str) -> list[str]:
    """Destinations of the trips ``Trip.objects.filter(<condition>)`` holds, in the admin's
    order (the model's ordering)."""
    return list(
        travel.orm(f"print(json.dumps([t.destination for t in Trip.objects.filter({condition})]))")
    )


async def listed_trips(tab: Tab) -> list[str]:
    """The destinations the changelist's table shows, read from the page itself."""
    return list(
        await page_eval(
            tab, "[...document.querySelectorAll('#result_list tbody th a')].map(a => a.innerText)"
        )
    )


async def changelist(page: Page, travel: DjangoApp) -> Snapshot:
    result = await page.navigate(travel.admin("travel/trip/"))
    assert result.ok, result.message
    snap, _ = await page.observe()
    return snap


async def test_deleting_selected_trips_with_the_bulk_action(
    page: Page, signed_in: Tab, travel: DjangoApp
) -> None:
    assert trips_where(travel, "destination__in=['Reykjavik', 'Tromso']") == [
        "Reykjavik",
        "Tromso",
    ]
    others = trips_where(travel, "~Q(destination__in=['Reykjavik', 'Tromso'])")
    snap = await changelist(page, travel)
    for name in ("Reykjavik (09 Jan 2027)", "Tromso (23 Jan 2027)"):
        result = await page.click(index_of(snap, f"Select this object for an action - {name}"))
        assert result.ok, result.message
    # The changelist's form holds <select name="action">, which shadows form.action: the
    # digest must still say where Go submits, and the gate read it without crashing.
    action = index_of(snap, "Action:")
    result = await page.select_option(action, "Delete selected trips")
    assert result.ok, result.message
    snap, _ = await page.observe()
    go = snap.elements[index_of(snap, "Go")]
    assert go.form_action == travel.admin("travel/trip/"), go
    verdict = Gate(mode="none", allow_domains=("127.0.0.1",)).assess(
        Action("click", {"index": go.index}), snap
    )
    assert f"Submits a form to: {travel.admin('travel/trip/')} (POST)" in verdict.details
    snap = await act(page, snap, "Go")
    assert "Are you sure you want to delete the selected trips?" in snap.text, snap.text
    snap = await act(page, snap, "Yes, I’m sure")
    assert "Successfully deleted 2 trips." in snap.text, snap.text

    assert trips_where(travel, "destination__in=['Reykjavik', 'Tromso']") == []
    assert trips_where(travel, "") == others


async def test_searching_the_trips(page: Page, tab: Tab, signed_in: Tab, travel: DjangoApp) -> None:
    snap = await changelist(page, travel)
    result = await page.type(index_where(snap, name="q"), "kyo", submit=True)
    assert result.ok, result.message
    snap, _ = await page.observe()
    assert "q=kyo" in snap.url, snap.url
    found = trips_where(travel, "destination__icontains='kyo'")
    assert found == ["Kyoto"]
    assert await listed_trips(tab) == found
    assert index_of(snap, "Kyoto")


async def test_filtering_the_trips_by_their_confirmed_flag(
    page: Page, tab: Tab, signed_in: Tab, travel: DjangoApp
) -> None:
    snap = await changelist(page, travel)
    snap = await act(page, snap, "Yes")
    assert "confirmed__exact=1" in snap.url, snap.url
    confirmed = trips_where(travel, "confirmed=True")
    assert len(confirmed) >= 3
    assert await listed_trips(tab) == confirmed
    assert sorted(e.name for e in snap.elements.values() if e.name in confirmed) == sorted(
        confirmed
    )


async def test_the_confirmed_icons_read_as_each_trips_flag(
    page: Page, signed_in: Tab, travel: DjangoApp
) -> None:
    flags: dict[str, bool] = dict(
        travel.orm("print(json.dumps(list(Trip.objects.values_list('destination', 'confirmed'))))")
    )
    assert set(flags.values()) == {True, False}
    snap = await changelist(page, travel)
    # Each row, from its selection checkbox to the next (the last up to the count under the
    # table): the icon's alt text is in it.
    table = re.split(r"^\d+ trips$", snap.text, flags=re.MULTILINE)[0]
    rows = table.split("Select this object for an action - ")[1:]
    read = {}
    for row in rows:
        words = re.findall(r"\b(True|False)\b", row)
        assert len(words) == 1, row
        read[row.split(" (")[0]] = words[0] == "True"
    assert read == flags, snap.text
