"""The hands: every action lands as a person's would, and says what it did.

Each test drives real headless Chromium through core.hands against a fixture page under
tests/site/page/ and asserts on the page's own state (React's state, what the server
received, the page's event log), not only on the returned message.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from core.actions import Action
from core.browser.browser import Browser, Tab
from core.cdp import CDPError
from core.hands import DialogInfo, Page, TargetExpectation
from tests.conftest import launch_browser
from tests.helpers import index_of, open_page, page_eval
from tests.helpers.site_server import FixtureSite
from tests.helpers.waiting import eventually as eventually_true
from tests.helpers.waiting import scaled

# End to end: whole actions or runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow


@pytest.fixture
async def page(browser: Browser, tab: Tab) -> AsyncIterator[Page]:
    hands = Page(browser, action_timeout=15)
    yield hands
    hands.close()


async def eventually(tab: Tab, expression: str, timeout: float = 3.0) -> object:
    """Poll the page (main world) until ``expression`` is truthy; return its value."""
    return await eventually_true(
        lambda: page_eval(tab, expression), timeout, f"{expression!r} to become truthy"
    )


def current(page: Page) -> Tab:
    assert page.browser.current is not None
    return page.browser.current


# --- navigate -------------------------------------------------------------------------------


async def test_navigate_waits_for_the_new_document(page: Page, tab: Tab, site: FixtureSite) -> None:
    result = await page.navigate(site.url("/__slow?ms=400&then=/page/counter.html"))
    assert result.ok, result.message
    assert result.changes.url_changed and result.changes.dom_changed
    assert await page_eval(tab, "document.readyState") == "complete"
    assert await page_eval(tab, "document.title") == "Counter"
    assert "/page/counter.html" in result.message


async def test_navigate_refuses_other_schemes(page: Page, tab: Tab) -> None:
    for url in (
        "javascript:alert(1)",
        "chrome://settings",
        "file:///etc/passwd",
        "data:text/html,hi",
    ):
        result = await page.navigate(url)
        assert not result.ok and result.outcome == "error", url
        assert result.error and result.error.startswith("refused:")
    assert await page_eval(tab, "location.href") == "about:blank"


async def test_navigate_asks_for_a_scheme(page: Page) -> None:
    result = await page.navigate("example.com/path")
    assert not result.ok and "https://example.com/path" in result.message


async def test_first_navigation_leaves_no_blank_page_in_history(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, "/page/counter.html")
    back = await page.go_back()
    assert not back.ok and "no earlier page" in back.message
    assert await page_eval(tab, "location.pathname") == "/page/counter.html"


async def test_go_back_returns_to_the_previous_page(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, "/page/counter.html")
    await open_page(page, site, "/page/popup_target.html")
    result = await page.go_back()
    assert result.ok, result.message
    assert result.changes.url_changed
    assert await page_eval(tab, "location.pathname") == "/page/counter.html"


async def test_navigate_reports_an_error_page(page: Page, site: FixtureSite) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = await page.navigate(f"http://127.0.0.1:{port}/nothing-listens-here")
    assert not result.ok and result.outcome == "error"
    assert "ERR_CONNECTION_REFUSED" in result.message


async def test_navigate_to_a_page_that_never_answers_returns_in_time(
    browser: Browser, tab: Tab, site: FixtureSite
) -> None:
    hands = Page(browser, action_timeout=3)
    try:
        started = time.monotonic()
        result = await hands.navigate(site.url("/__never"))
        elapsed = time.monotonic() - started
    finally:
        hands.close()
    assert elapsed < 4.5
    assert not result.ok and result.outcome == "error"
    assert "did not answer" in result.message or "did not finish" in result.message


# --- click ----------------------------------------------------------------------------------


async def test_click_is_a_trusted_click(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/page/counter.html")
    await page_eval(
        tab,
        "window.__trusted = []; document.getElementById('inc').addEventListener('click', e => __trusted.push(e.isTrusted))",
    )
    result = await page.click(index_of(snap, "Add one"))
    assert result.ok, result.message
    assert await page_eval(tab, "window.__count") == 1
    assert await page_eval(tab, "window.__trusted") == [True]
    assert result.changes.dom_changed


async def test_click_on_a_link_waits_for_the_next_page(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/page/counter.html")
    result = await page.click(index_of(snap, "Go to the timetable"))
    assert result.ok and result.changes.url_changed and result.changes.title_changed
    assert await page_eval(tab, "document.readyState") == "complete"
    assert await page_eval(tab, "document.title") == "Timetable"


@contextlib.contextmanager
def busy_cores() -> Iterator[None]:
    """One busy loop per core while the block runs, as on a loaded CI machine."""
    loops = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(os.cpu_count() or 1)
    ]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


async def test_click_waits_for_a_navigation_the_page_starts_a_moment_later(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    # The page's timer fires 80 ms after the click by the page's clock; with every core busy
    # that is much later by the wall clock, and the settle must still see it.
    snap = await open_page(page, site, "/page/counter.html")
    with busy_cores():
        result = await page.click(index_of(snap, "Go in a moment"))
    assert result.ok and result.changes.url_changed, result.message
    assert await page_eval(tab, "document.readyState") == "complete"
    assert await page_eval(tab, "document.title") == "Timetable"


async def test_click_inside_a_same_origin_iframe(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/page/frame.html")
    result = await page.click(index_of(snap, "Framed button"))
    assert result.ok, result.message
    clicks = await page_eval(tab, "document.getElementById('inner').contentWindow.__framedClicks")
    assert clicks == 1


async def test_click_that_changes_nothing_says_so(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/page/toggles.html")
    result = await page.click(index_of(snap, "Does nothing"))
    assert result.ok
    assert "Nothing changed" in result.message and "wait" in result.message


async def test_covered_button_is_refused_and_the_cover_named(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/page/overlay.html")
    result = await page.click(index_of(snap, "Buy ticket"))
    assert not result.ok and result.outcome == "error"
    assert result.code == "not_actionable"
    assert result.error and result.error.startswith("not_actionable: covered")
    assert "veil" in result.message or "modal-backdrop" in result.message
    assert await page_eval(tab, "window.__buyClicks") == 0


async def test_click_follows_a_new_tab(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/page/popup.html")
    result = await page.click(index_of(snap, "Open the timetable"))
    assert result.ok, result.message
    assert result.changes.new_tab and "new tab" in result.message
    now = current(page)
    assert now is not tab
    assert await page_eval(now, "document.title") == "Timetable"
    snapshot, _ = await page.observe()
    assert snapshot.title == "Timetable"
    await page.browser.close_tab(now)


async def test_element_that_renders_late_is_clicked_after_a_wait(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, "/page/late.html")
    waited = await page.wait(1.3)
    assert waited.ok and waited.changes.dom_changed
    snap, _ = await page.observe()
    result = await page.click(index_of(snap, "Show offers"))
    assert result.ok, result.message
    assert await page_eval(tab, "window.__clicked") == 1


async def test_checkbox_state_is_reported(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/page/toggles.html")
    result = await page.click(index_of(snap, "Send me news"))
    assert "checkbox is now checked" in result.message
    assert await page_eval(tab, "document.getElementById('news').checked") is True
    result = await page.click(index_of(snap, "Dark mode"))
    assert "switch is now on" in result.message
    assert (
        await page_eval(tab, "document.getElementById('dark').getAttribute('aria-checked')")
        == "true"
    )


async def test_stale_index_is_a_clear_error(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/page/counter.html")
    index = index_of(snap, "Add one")
    await page_eval(tab, "document.getElementById('inc').remove()")
    result = await page.click(index)
    assert not result.ok and result.outcome == "error"
    assert f"[{index}]" in result.message and "no longer on the page" in result.message


async def test_moving_element_is_refused(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/page/moving.html")
    result = await page.click(index_of(snap, "Catch me"))
    assert not result.ok and result.error and result.error.startswith("not_actionable: moving")
    assert "keeps moving" in result.message
    assert await page_eval(tab, "window.__caught") == 0


@pytest.mark.parametrize("query", ["", "?slow"], ids=["at-once", "transition"])
async def test_a_button_that_moves_when_the_pointer_reaches_it_is_clicked_once(
    page: Page, tab: Tab, site: FixtureSite, query: str
) -> None:
    # The stability check's second reading is taken after the pointer moved: a box that
    # changed under the pointer (a hover lift) is measured again until still, then pressed.
    snap = await open_page(page, site, f"/hands/hover-lift.html{query}")
    result = await page.click(index_of(snap, "Save"))
    assert result.ok, result.message
    assert await page_eval(tab, "window.saved") == 1


async def test_click_scrolls_the_element_into_view(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/page/long.html")
    result = await page.click(index_of(snap, "Bottom button"))
    assert result.ok, result.message
    assert "scrolled it into view" in result.message
    assert await page_eval(tab, "window.__bottomClicks") == 1


# --- approvals bound to the target ------------------------------------------------------------


async def test_relabelled_target_is_not_clicked(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/page/counter.html")
    index = index_of(snap, "Add one")
    element = snap.elements[index]
    expect = TargetExpectation(url=snap.url, index=index, name=element.name, rect=element.rect)
    await page_eval(tab, "document.getElementById('inc').textContent = 'Delete account'")
    result = await page.click(index, expect=expect)
    assert not result.ok and result.code == "target_changed"
    assert result.error and "Delete account" in result.error
    assert await page_eval(tab, "window.__count") == 0


async def test_moved_target_is_not_clicked(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/page/counter.html")
    index = index_of(snap, "Add one")
    element = snap.elements[index]
    expect = TargetExpectation(url=snap.url, index=index, name=element.name, rect=element.rect)
    await page_eval(tab, "document.getElementById('inc').style.marginLeft = '200px'")
    result = await page.click(index, expect=expect)
    assert not result.ok and result.code == "target_changed"
    assert result.error and "moved" in result.error
    assert await page_eval(tab, "window.__count") == 0


async def test_unchanged_target_is_clicked(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/page/counter.html")
    index = index_of(snap, "Add one")
    element = snap.elements[index]
    expect = TargetExpectation(url=snap.url, index=index, name=element.name, rect=element.rect)
    result = await page.click(index, expect=expect)
    assert result.ok, result.message
    assert await page_eval(tab, "window.__count") == 1


# --- type -----------------------------------------------------------------------------------


async def test_react_controlled_form_submits_typed_state(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/page/react_form.html")
    assert (await page.type(index_of(snap, "Full name"), "Ada Lovelace")).ok
    assert (await page.type(index_of(snap, "Email"), "ada@example.org")).ok
    selected = await page.select_option(index_of(snap, "Size"), "large")
    assert selected.ok and "Large" in selected.message
    result = await page.click(index_of(snap, "Send order"))
    assert result.ok, result.message
    await eventually(tab, "!!document.getElementById('sent')")
    posts = site.posts("/page/react-post")
    assert posts, "the form posted nothing"
    assert posts[-1].form == {"name": ["Ada Lovelace"], "email": ["ada@example.org"], "size": ["l"]}


async def test_vue_v_model_keeps_the_typed_value(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/page/vue.html")
    result = await page.type(index_of(snap, "City"), "Zürich")
    assert result.ok, result.message
    assert await page_eval(tab, "window.__vueApp.city") == "Zürich"
    assert (
        await page_eval(tab, "document.getElementById('echo').textContent") == "You typed: Zürich"
    )


async def test_keyup_search_box_shows_results(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/page/search.html")
    result = await page.type(index_of(snap, "Search fruit"), "ap")
    assert result.ok, result.message
    results = await eventually(
        tab,
        "document.querySelectorAll('#results li').length && [...document.querySelectorAll('#results li')].map(li => li.textContent)",
    )
    assert results == ["apple", "apricot"]


async def test_contenteditable_editor_holds_the_text(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/page/editor.html")
    result = await page.type(index_of(snap, "Notes editor"), "Meeting at 10")
    assert result.ok, result.message
    assert (
        await page_eval(tab, "document.getElementById('editor').innerText.trim()")
        == "Meeting at 10"
    )
    assert await page_eval(tab, "window.__inputs") > 0


async def test_masked_value_is_reported(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/page/fields.html")
    result = await page.type(index_of(snap, "Phone"), "5551234567")
    assert result.ok
    assert await page_eval(tab, "document.getElementById('phone').value") == "(555) 123-4567"
    assert "(555) 123-4567" in result.message and "changed" in result.message


async def test_maxlength_cut_is_reported(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/page/fields.html")
    result = await page.type(index_of(snap, "Code"), "ABCDEFGH")
    assert await page_eval(tab, "document.getElementById('code').value") == "ABCDE"
    assert "at most 5 characters" in result.message and "'ABCDE'" in result.message


async def test_password_is_never_echoed(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/page/fields.html")
    result = await page.type(index_of(snap, "Password"), "hunter2-secret", secret=True)
    assert result.ok
    assert await page_eval(tab, "document.getElementById('pw').value") == "hunter2-secret"
    assert "hunter2" not in result.message and "14 characters" in result.message


async def test_card_number_is_never_echoed(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/page/fields.html")
    result = await page.type(index_of(snap, "Card number"), "4111111111111111", secret=True)
    assert await page_eval(tab, "document.getElementById('card').value") == "4111111111111111"
    assert "4111" not in result.message and "16 characters" in result.message


async def test_type_without_clear_appends(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/page/fields.html")
    await page.type(index_of(snap, "Note"), " and this", clear=False)
    assert await page_eval(tab, "document.getElementById('note').value") == "keep me and this"


async def test_type_replaces_by_default(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/page/fields.html")
    await page.type(index_of(snap, "Note"), "fresh")
    assert await page_eval(tab, "document.getElementById('note').value") == "fresh"


async def test_type_with_submit_presses_enter(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/page/react_form.html")
    await page.type(index_of(snap, "Full name"), "Grace")
    result = await page.type(index_of(snap, "Email"), "grace@example.org", submit=True)
    assert result.ok and "pressed Enter" in result.message
    await eventually(tab, "!!document.getElementById('sent')")
    assert site.posts("/page/react-post")[-1].form["email"] == ["grace@example.org"]


# --- keys -----------------------------------------------------------------------------------


async def test_control_a_selects_without_typing(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/page/keys.html")
    await page_eval(tab, "document.getElementById('first').focus()")
    result = await page.press_key("Control+A")
    assert result.ok, result.message
    field = "document.getElementById('first')"
    assert await page_eval(tab, f"{field}.value") == "hello world"
    assert await page_eval(tab, f"[{field}.selectionStart, {field}.selectionEnd]") == [0, 11]
    assert snap.url.endswith("/page/keys.html")


async def test_shift_tab_moves_focus_back(page: Page, tab: Tab, site: FixtureSite) -> None:
    await open_page(page, site, "/page/keys.html")
    await page_eval(tab, "document.getElementById('second').focus()")
    result = await page.press_key("Shift+Tab")
    assert result.ok
    assert await page_eval(tab, "document.activeElement.id") == "first"
    assert "focus moved" in result.message


async def test_unknown_key_is_explained(page: Page) -> None:
    result = await page.press_key("Control+Banana")
    assert not result.ok and "unknown key" in result.message


# --- select, scroll -----------------------------------------------------------------------


async def test_select_by_label_fires_input_and_change(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/page/select.html")
    result = await page.select_option(index_of(snap, "Colour"), "dark green")
    assert result.ok and "Dark green" in result.message
    assert await page_eval(tab, "document.getElementById('colour').value") == "gg"
    assert await page_eval(tab, "window.__events") == ["input:gg", "change:gg"]


async def test_ambiguous_option_lists_the_choices(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/page/select.html")
    result = await page.select_option(index_of(snap, "Colour"), "green")
    # "green" is exactly one label (case-insensitive), so it wins over the substring match.
    assert result.ok and "'Green'" in result.message
    result = await page.select_option(index_of(snap, "Colour"), "re")
    assert not result.ok and "several options" in result.message
    assert "'Red'" in result.message and "'Dark green'" in result.message


async def test_missing_option_is_refused_with_the_list(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/page/select.html")
    result = await page.select_option(index_of(snap, "Colour"), "purple")
    assert not result.ok and "no option" in result.message and "'Red'" in result.message
    assert await page_eval(tab, "window.__events") == []


async def test_scroll_by_pages_reports_the_position(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, "/page/long.html")
    result = await page.scroll(direction="down", pages=1)
    assert result.ok and "scroll: scrolled" in result.message and "% of" in result.message
    assert await page_eval(tab, "window.scrollY") > 300
    up = await page.scroll(direction="up", pages=5)
    assert up.ok and await page_eval(tab, "window.scrollY") == 0
    again = await page.scroll(direction="up")
    assert "nothing moved" in again.message


async def test_scroll_uses_the_apps_scrolling_container(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, "/page/app_scroll.html")
    result = await page.scroll(direction="down")
    assert result.ok and "main" in result.message
    assert await page_eval(tab, "document.getElementById('main').scrollTop") > 100


async def test_scroll_to_an_element(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/page/long.html")
    result = await page.scroll(index=index_of(snap, "Bottom button"))
    assert result.ok
    rect = await page_eval(
        tab,
        "(() => { const r = document.getElementById('bottom').getBoundingClientRect(); return [r.top, innerHeight]; })()",
    )
    assert 0 <= rect[0] <= rect[1]


# --- dialogs --------------------------------------------------------------------------------


async def test_alert_is_accepted_and_reported(page: Page, tab: Tab, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/page/dialogs.html")
    result = await asyncio.wait_for(page.click(index_of(snap, "Show alert")), 10)
    assert result.ok, result.message
    assert result.changes.dialog == "alert: Saved!"
    assert await page_eval(tab, "window.__answers") == [["alert", "closed"]]
    assert page.open_dialog is None


async def test_confirm_without_a_decider_is_dismissed(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/page/dialogs.html")
    result = await asyncio.wait_for(page.click(index_of(snap, "Delete file")), 10)
    assert result.changes.dialog == "confirm: Delete the file?"
    assert "Cancel" in result.message
    assert await page_eval(tab, "window.__answers") == [["confirm", False]]


async def test_confirm_asks_the_decider(page: Page, tab: Tab, site: FixtureSite) -> None:
    asked: list[DialogInfo] = []

    async def decide(info: DialogInfo) -> tuple[bool, str | None]:
        asked.append(info)
        await asyncio.sleep(0.2)  # a person taking a moment (the scenario, not a wait)
        return True, None

    page.dialog_decider = decide
    snap = await open_page(page, site, "/page/dialogs.html")
    result = await asyncio.wait_for(page.click(index_of(snap, "Delete file")), 10)
    assert [a.type for a in asked] == ["confirm"] and asked[0].message == "Delete the file?"
    assert "answered OK" in result.message
    assert await page_eval(tab, "window.__answers") == [["confirm", True]]


async def test_prompt_gets_the_deciders_text(page: Page, tab: Tab, site: FixtureSite) -> None:
    async def decide(info: DialogInfo) -> tuple[bool, str | None]:
        return True, "ziggy"

    page.dialog_decider = decide
    snap = await open_page(page, site, "/page/dialogs.html")
    result = await asyncio.wait_for(page.click(index_of(snap, "Set nickname")), 10)
    assert result.changes.dialog == "prompt: Your nickname?"
    assert await page_eval(tab, "window.__answers") == [["prompt", "ziggy"]]


async def test_prompt_without_a_decider_is_cancelled(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/page/dialogs.html")
    await asyncio.wait_for(page.click(index_of(snap, "Set nickname")), 10)
    assert await page_eval(tab, "window.__answers") == [["prompt", None]]


async def test_a_slow_decider_does_not_time_the_action_out(
    browser: Browser, tab: Tab, site: FixtureSite
) -> None:
    async def decide(info: DialogInfo) -> tuple[bool, str | None]:
        await asyncio.sleep(2.5)  # a person slower than the action timeout (the scenario)
        return True, None

    hands = Page(browser, action_timeout=2, dialog_decider=decide)
    try:
        await hands.navigate(site.url("/page/dialogs.html"))
        snap, _ = await hands.observe()
        result = await asyncio.wait_for(hands.click(index_of(snap, "Delete file")), 10)
    finally:
        hands.close()
    assert result.ok, result.message
    assert await page_eval(tab, "window.__answers") == [["confirm", True]]


async def test_beforeunload_is_accepted_and_the_page_left(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/page/leave.html")
    # Chrome only asks when the person interacted with the page.
    await page.type(index_of(snap, "Draft"), "unsaved words")
    result = await asyncio.wait_for(page.click(index_of(snap, "Leave this page")), 10)
    assert result.ok, result.message
    assert result.changes.dialog is not None and result.changes.dialog.startswith("beforeunload")
    assert await page_eval(tab, "document.title") == "Timetable"


# --- files, screenshots, run_js, tabs -----------------------------------------------------


async def test_upload_inside_the_upload_folder(
    browser: Browser, tab: Tab, site: FixtureSite, tmp_path: Path
) -> None:
    folder = tmp_path / "uploads"
    folder.mkdir()
    (folder / "cv.pdf").write_bytes(b"%PDF-1.4 fixture")
    hands = Page(browser, upload_dir=folder)
    try:
        await hands.navigate(site.url("/page/upload.html"))
        snap, _ = await hands.observe()
        result = await hands.upload_file(index_of(snap, "Attachment"), "cv.pdf")
    finally:
        hands.close()
    assert result.ok, result.message
    assert await page_eval(tab, "document.getElementById('chosen').textContent") == "cv.pdf"
    assert await page_eval(tab, "window.__changes") == 1


async def test_upload_outside_the_upload_folder_is_refused(
    browser: Browser, tab: Tab, site: FixtureSite, tmp_path: Path
) -> None:
    folder = tmp_path / "uploads"
    folder.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("private")
    (folder / "link.txt").symlink_to(secret)
    hands = Page(browser, upload_dir=folder)
    try:
        await hands.navigate(site.url("/page/upload.html"))
        snap, _ = await hands.observe()
        index = index_of(snap, "Attachment")
        for path in ("../secret.txt", str(secret), "link.txt", "missing.txt"):
            result = await hands.upload_file(index, path)
            assert not result.ok and result.error and result.error.startswith("refused"), path
    finally:
        hands.close()
    assert await page_eval(tab, "window.__changes") == 0


async def test_upload_without_an_upload_folder_is_refused(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/page/upload.html")
    result = await page.upload_file(index_of(snap, "Attachment"), "/etc/hostname")
    assert not result.ok and "--upload-dir" in result.message


async def test_download_is_reported_with_its_name(
    browser: Browser, tab: Tab, site: FixtureSite, tmp_path: Path
) -> None:
    downloads = tmp_path / "downloads"
    hands = Page(browser, downloads_dir=downloads)
    try:
        await hands.navigate(site.url("/page/download.html"))
        snap, _ = await hands.observe()
        result = await hands.click(index_of(snap, "Download the report"))
        notices = list(result.notices)

        async def reported() -> bool:
            # A download that outlives the click is reported by a later observation.
            notices.extend((await hands.observe())[1])
            return any("report.txt" in n for n in notices)

        if not any("report.txt" in n for n in notices):
            await eventually_true(reported, 5, "the download to be reported")
    finally:
        hands.close()
    assert any("download finished: report.txt" in n for n in notices), (result.message, notices)
    assert (downloads / "report.txt").read_bytes() == b"handrail fixture download\n"


async def test_screenshot_is_a_png_file(
    browser: Browser, tab: Tab, site: FixtureSite, tmp_path: Path
) -> None:
    hands = Page(browser, screenshots_dir=tmp_path / "shots")
    try:
        await hands.navigate(site.url("/page/counter.html"))
        result = await hands.screenshot()
        with_data = await hands.screenshot_base64()
    finally:
        hands.close()
    assert result.ok and result.screenshot and result.data is None
    shot = Path(result.screenshot)
    assert shot.parent == tmp_path / "shots"
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert isinstance(with_data.data, dict) and with_data.data["base64"].startswith("iVBOR")


async def test_run_js_returns_a_json_value(page: Page, tab: Tab, site: FixtureSite) -> None:
    await open_page(page, site, "/page/counter.html")
    result = await page.run_js("({count: window.__count + 41, title: document.title})")
    assert result.ok and result.data == {"count": 41, "title": "Counter"}
    body = await page.run_js("const n = 2; return n * 21;")
    assert body.ok and body.data == 42


async def test_run_js_describes_what_json_cannot_hold(page: Page, site: FixtureSite) -> None:
    await open_page(page, site, "/page/counter.html")
    result = await page.run_js("({button: document.getElementById('inc'), n: 10n, f: () => 1})")
    assert result.ok, result.message
    assert result.data == {"button": "<button id=inc>", "n": "10", "f": "[function]"}
    awaited = await page.run_js("new Promise(r => setTimeout(() => r('later'), 50))")
    assert awaited.data == "later"


async def test_run_js_reports_the_exceptions_first_line(page: Page, site: FixtureSite) -> None:
    await open_page(page, site, "/page/counter.html")
    result = await page.run_js("throw new TypeError('bad thing\\nsecond line')")
    assert not result.ok and result.outcome == "error"
    assert "TypeError: bad thing" in result.message and "second line" not in result.message


async def test_switch_tab_and_tab_descriptions(page: Page, tab: Tab, site: FixtureSite) -> None:
    await open_page(page, site, "/page/counter.html")
    other = await page.browser.new_tab()
    try:
        descriptions = page.tab_descriptions()
        assert any("* " in d and "about:blank" in d for d in descriptions)
        position = next(i for i, d in enumerate(descriptions) if "Counter" in d)
        result = await page.switch_tab(position)
        assert result.ok and "Counter" in result.message
        assert page.browser.current is tab
        missing = await page.switch_tab(99)
        assert not missing.ok and "no tab" in missing.message
    finally:
        await page.browser.close_tab(other)


async def test_dispatch_routes_and_never_raises(page: Page, tab: Tab, site: FixtureSite) -> None:
    await open_page(page, site, "/page/counter.html")
    result = await page.dispatch(Action("run_js", {"code": "1 + 1"}))
    assert result.data == 2
    bad = await page.dispatch(Action("click", {}))
    assert not bad.ok and "bad parameters" in bad.message
    unknown = await page.dispatch(Action("fly", {}))
    assert not unknown.ok


# --- faults ---------------------------------------------------------------------------------


async def test_crashed_renderer_gives_a_clear_result_then_recovers(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/page/counter.html")
    index = index_of(snap, "Add one")
    with contextlib.suppress(CDPError, TimeoutError):
        await tab.send("Page.crash", timeout=1)
    # Inspector.targetCrashed sets tab.crashed: the crash has reached handrail.
    await eventually_true(lambda: tab.crashed, 5, "the crash to be reported")
    result = await asyncio.wait_for(page.click(index), 10)
    assert not result.ok
    assert any("crashed" in n for n in result.notices) or "crashed" in result.message
    again = await page.navigate(site.url("/page/counter.html"))
    assert again.ok, again.message
    assert await page_eval(current(page), "document.title") == "Counter"
    # The browser dropped the crashed tab from its list; the fixture must not close it.
    tab.closed = True
    await page.browser.close_tab(current(page))


async def test_closed_tab_gives_a_clear_result_then_recovers(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/page/counter.html")
    index = index_of(snap, "Add one")
    await page.browser.connection.send("Target.closeTarget", {"targetId": tab.target_id})
    # Target.detachedFromTarget sets tab.closed: the close has reached handrail.
    await eventually_true(lambda: tab.closed, 5, "the closed tab to be noticed")
    result = await asyncio.wait_for(page.click(index), 10)
    assert not result.ok and result.notices
    assert any("closed" in n for n in result.notices)
    again = await page.navigate(site.url("/page/counter.html"))
    assert again.ok
    await page.browser.close_tab(current(page))


async def test_tab_closed_mid_action_is_unknown(page: Page, tab: Tab, site: FixtureSite) -> None:
    await open_page(page, site, "/page/counter.html")
    site.clear()
    task = asyncio.create_task(page.navigate(site.url("/__slow?ms=3000")))
    await site.until(lambda got: any(r.path == "/__slow" for r in got))  # the navigation is on
    await page.browser.connection.send("Target.closeTarget", {"targetId": tab.target_id})
    result = await asyncio.wait_for(task, 10)
    assert not result.ok and result.outcome == "unknown"
    assert "closed" in result.message


async def test_killed_browser_is_unknown_within_the_timeout(
    tmp_path: Path, site: FixtureSite
) -> None:
    browser = await launch_browser(tmp_path / "profile")
    hands = Page(browser, action_timeout=5)
    try:
        assert (await hands.navigate(site.url("/page/counter.html"))).ok
        site.clear()
        task = asyncio.create_task(hands.navigate(site.url("/__slow?ms=4000")))
        await site.until(lambda got: any(r.path == "/__slow" for r in got))  # it is on its way
        assert browser.process is not None
        os.killpg(browser.process.pid, signal.SIGKILL)
        started = time.monotonic()
        result = await asyncio.wait_for(task, 10)
        assert time.monotonic() - started < 5.5
        assert not result.ok and result.outcome == "unknown"
        assert "connection to the browser was lost" in result.message
        # A later action starts the browser again and says so (until the process has
        # been reaped, an action may still find it unreachable: a clear error, not a hang).
        for _ in range(5):
            again = await asyncio.wait_for(hands.navigate(site.url("/page/counter.html")), 30)
            if again.ok:
                break
            assert "cannot be reached" in again.message
            process = browser.process
            if process is not None:  # wait for the killed browser to be reaped, then try again
                await asyncio.wait_for(process.wait(), scaled(10))
        assert again.ok, again.message
        assert any("started it again" in n for n in again.notices)
    finally:
        hands.close()
        await browser.close()


async def test_observe_after_the_browser_died_starts_it_again(
    tmp_path: Path, site: FixtureSite
) -> None:
    browser = await launch_browser(tmp_path / "profile")
    hands = Page(browser, action_timeout=5)
    try:
        assert (await hands.navigate(site.url("/page/counter.html"))).ok
        assert browser.process is not None
        os.killpg(browser.process.pid, signal.SIGKILL)
        snapshot, notices = await asyncio.wait_for(hands.observe(), 30)
        assert any("started it again" in n for n in notices), notices
        assert snapshot.url == "about:blank"
    finally:
        hands.close()
        await browser.close()
