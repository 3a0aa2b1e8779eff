"""drag (issue 26): a sortable list, a slider, a kanban board and a file drop zone, each
checked against the page's own state (the library's order, the slider's value, the board's
columns, the files the page read), never against what handrail reports."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.actions import ParseError, parse_call
from core.browser.browser import Browser, Tab
from core.hands import Page
from core.hands.drag import DragSpec
from tests.helpers import index_of, open_page, page_eval
from tests.helpers.site_server import FixtureSite

pytestmark = pytest.mark.slow


async def test_an_item_of_a_sortable_list_moves_to_its_new_place(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/hands/drag/sortable.html")
    result = await page.drag(DragSpec(index=index_of(snap, "Alpha"), to=index_of(snap, "Charlie")))
    assert result.ok, result.message
    assert await page_eval(tab, "window.order()") == ["b", "c", "a", "d"]
    assert await page_eval(tab, "window.sorts") == 1
    assert "'Bravo', 'Charlie', 'Alpha', 'Delta'" in result.message, result.message


async def test_a_slider_handle_dragged_by_an_offset_changes_the_value(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/hands/drag/slider.html")
    handle = index_of(snap, "Maximum price")
    # The track is 400 px wide for 0..1000: 120 px is 300.
    result = await page.drag(DragSpec(index=handle, dx=120, dy=0))
    assert result.ok, result.message
    price = await page_eval(tab, "window.price()")
    assert 470 <= price <= 530, price
    assert f"its value is now '{price}" in result.message or str(price) in result.message, (
        result.message
    )


async def test_a_card_dropped_on_another_column_of_an_html5_board_moves_there(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/hands/drag/kanban.html")
    result = await page.drag(
        DragSpec(index=index_of(snap, "Write report"), to=index_of(snap, "Doing"))
    )
    assert result.ok, result.message
    assert await page_eval(tab, "window.board()") == {
        "todo": ["c2"],
        "doing": ["c1"],
        "done": ["c3"],
    }
    assert await page_eval(tab, "window.log") == ["dragstart c1", "drop c1 doing"]
    assert "moved into 'Doing'" in result.message, result.message


async def test_a_file_from_the_upload_folder_drops_onto_a_drop_zone(
    browser: Browser, tab: Tab, site: FixtureSite, tmp_path: Path
) -> None:
    folder = tmp_path / "uploads"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello from the upload folder")
    hands = Page(browser, action_timeout=15, upload_dir=folder)
    try:
        snap = await open_page(hands, site, "/hands/drag/dropzone.html")
        zone = index_of(snap, "Drop files here")
        result = await hands.drag(DragSpec(path="notes.txt", to=zone))
        assert result.ok, result.message
        assert await page_eval(tab, "window.dropped") == [
            {"name": "notes.txt", "text": "hello from the upload folder"}
        ]
        (tmp_path / "secret.txt").write_text("not for the site")
        refused = await hands.drag(DragSpec(path="../secret.txt", to=zone))
        assert not refused.ok and "upload folder" in refused.message, refused.message
        assert len(await page_eval(tab, "window.dropped")) == 1
    finally:
        hands.close()


def test_a_drag_names_one_source_and_one_destination() -> None:
    def call(**params: object) -> object:
        return parse_call("drag", {"reason": "r", **params}, allow_js=False)

    assert not isinstance(call(index=1, to=2), ParseError)
    assert not isinstance(call(index=1, dx=10, dy=0), ParseError)
    assert not isinstance(call(path="a.txt", to=2), ParseError)
    for wrong in (
        {"index": 1},
        {"to": 2},
        {"index": 1, "path": "a.txt", "to": 2},
        {"index": 1, "to": 2, "dx": 3, "dy": 0},
        {"index": 1, "dx": 3},
        {"path": "a.txt", "dx": 1, "dy": 1},
        {"index": 2, "to": 2},
    ):
        assert isinstance(call(**wrong), ParseError), wrong
