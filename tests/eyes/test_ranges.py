"""A range a person reads off a widget is in the digest (issue 26): a slider's value, its
bounds, the text its handle carries, a star rating, a spin button, and the progress of a
bar, a <progress> and a <meter>. Real headless Chromium against
tests/site/widgets/eyes/ranges.html."""

from __future__ import annotations

import pytest

from core.eyes.snapshot import ElementInfo, Snapshot
from core.hands import Page
from tests.helpers import index_of, open_page

pytestmark = pytest.mark.slow


@pytest.fixture
async def ranges(page: Page, site: object) -> Snapshot:
    return await open_page(page, site, "/widgets/eyes/ranges.html")  # type: ignore[arg-type]


def named(snap: Snapshot, name: str) -> ElementInfo:
    return snap.elements[index_of(snap, name)]


def shown(element: ElementInfo) -> tuple[str | None, str | None, str | None]:
    return element.attrs.get("value"), element.attrs.get("min"), element.attrs.get("max")


async def test_a_slider_shows_its_value_text_and_bounds(ranges: Snapshot) -> None:
    price = named(ranges, "Minimum price")
    assert price.role == "slider" and shown(price) == ("35 €", "0", "200"), price.line


async def test_a_slider_without_a_value_in_aria_shows_what_its_handle_says(
    ranges: Snapshot,
) -> None:
    assert shown(named(ranges, "Size"))[0] == "Medium", ranges.text


async def test_a_star_rating_and_a_spin_button_show_their_numbers(ranges: Snapshot) -> None:
    assert shown(named(ranges, "Rating")) == ("4", "1", "5")
    assert shown(named(ranges, "Guests")) == ("2", "1", "9")


async def test_a_native_range_shows_its_bounds_too(ranges: Snapshot) -> None:
    assert shown(named(ranges, "Volume")) == ("3", "0", "10")


async def test_progress_a_person_reads_is_in_the_text(ranges: Snapshot) -> None:
    text = ranges.text
    assert "Upload: 40%" in text, text
    assert "Download: 70%" in text, text
    assert "Disk usage: 60%" in text, text
    # A scrollbar a person can focus is an element: its position is its value.
    assert shown(named(ranges, "Timeline position")) == ("10", "0", "50")
