"""The hands cannot be tricked: the target is checked at the moment of the press and of the
keys, and sensitive fields are judged by meaning at dispatch.

Fixture pages live under tests/site/hands/; each reports what happened to it to the test
server (POST /hands/report) and keeps its own state in window globals the tests read.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from secrets import token_hex
from typing import Any

import pytest

from core.browser.browser import Browser, Tab
from core.eyes.snapshot import Snapshot
from core.guard.decision import ApprovalDecision
from core.hands import Page, TargetExpectation
from core.run.events import ApprovalNeeded, HumanNeeded
from tests.helpers import index_of, open_page, page_eval
from tests.helpers.fake_anthropic import FakeAnthropic
from tests.helpers.hostile import Decide, Person, View, approve, click, run_hostile, type_into
from tests.helpers.site_server import FixtureSite

# End to end: whole actions or runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow


@pytest.fixture
async def page(browser: Browser, tab: Tab) -> AsyncIterator[Page]:
    hands = Page(browser, action_timeout=15)
    yield hands
    hands.close()


@pytest.fixture(autouse=True)
def _fresh_site(site: FixtureSite) -> None:
    site.clear()


def expectation(snapshot: Snapshot, index: int) -> TargetExpectation:
    element = snapshot.elements[index]
    return TargetExpectation(url=snapshot.url, index=index, name=element.name, rect=element.rect)


def reports(site: FixtureSite, what: str) -> list[dict[str, Any]]:
    found = [p.json_body for p in site.posts("/hands/report")]
    return [r for r in found if r["what"] == what or r["what"].startswith(what)]


# --- the target at the moment of the press ----------------------------------------------------

SWAPS = [
    "mouseover",
    "mouseenter",
    "pointerover",
    "pointermove",
    "overlay",
    "next-frame",
    # The hover check goes right behind the move and waits for our window listener to see
    # it; a page that stops the move before the window leaves it waiting for Chrome's answer
    # to the move, and then for the next frame: the swap is still seen before the press.
    "mouseover&stop=move",
    "next-frame&stop=move",
]


@pytest.mark.parametrize("on", SWAPS)
async def test_a_target_swapped_on_hover_is_not_clicked(
    page: Page, tab: Tab, site: FixtureSite, on: str
) -> None:
    snap = await open_page(page, site, f"/hands/hover-swap.html?on={on}")
    index = index_of(snap, "Continue reading")
    result = await page.click(index, expect=expectation(snap, index))
    assert not result.ok and result.code == "target_changed", result.message
    assert "under the pointer" in result.message and "Delete account" in result.message
    assert await page_eval(tab, "[window.deleted, window.continued]") == [None, None]
    assert reports(site, "deleted") == [] and reports(site, "pressed-trap") == []


async def test_a_press_the_page_hides_from_our_listeners_is_released_elsewhere(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    # The page stops pointerdown and mousedown at the window before our listeners: the
    # press check cannot tell who got the press, so the button is released away from it
    # and no click happens (the check waits for Chrome's answer to the press, not forever).
    snap = await open_page(page, site, "/hands/hover-swap.html?on=none&stop=press")
    index = index_of(snap, "Continue reading")
    result = await page.click(index, expect=expectation(snap, index))
    assert not result.ok and result.code == "target_changed", result.message
    assert "handrail released the button elsewhere" in result.message
    assert await page_eval(tab, "window.continued") is None


CAPTURES = ["pointerdown", "mousedown", "window", "existing", "timer", "regrab"]


@pytest.mark.parametrize("how", CAPTURES)
async def test_a_pointer_capture_to_another_element_never_gives_it_the_click(
    page: Page, tab: Tab, site: FixtureSite, how: str
) -> None:
    # The press lands on the approved button; the page captures the pointer to a transparent
    # full-page "Delete account" so that the release and the click would go there. Our world
    # holds the release to the button (it gets the click), or, when the capture took effect
    # first (a synthetic move Chrome sends after the page changed, a timer), stops the
    # capture's events before the trap's handlers and refuses. Never does the trap see them.
    snap = await open_page(page, site, f"/hands/capture-swap.html?how={how}")
    index = index_of(snap, "Continue reading")
    result = await page.click(index, expect=expectation(snap, index))
    assert reports(site, "deleted") == [] and reports(site, "trap-") == []
    assert await page_eval(tab, "window.deleted") is None
    if result.ok:
        assert await page_eval(tab, "window.continued") is True
    else:
        assert result.code == "target_changed" and "Delete account" in result.message
        assert await page_eval(tab, "window.continued") is None


async def test_a_target_that_leaves_at_the_press_was_clicked_and_what_replaced_it_gets_nothing(
    page: Page, site: FixtureSite
) -> None:
    # A suggestion list picks on the press and closes; a hostile page puts a trap there
    # instead. The press was the click; the release reaches nothing the page could use.
    snap = await open_page(page, site, "/hands/capture-swap.html?how=vanish")
    result = await page.click(index_of(snap, "Continue reading"))
    assert result.ok, result.message
    assert reports(site, "picked")
    assert reports(site, "deleted") == [] and reports(site, "trap-") == []


async def test_a_widget_that_captures_the_pointer_to_itself_is_clicked(
    page: Page, site: FixtureSite
) -> None:
    # A slider's thumb captures the pointer on pointerdown, as drag widgets do: its own
    # capture is kept, and the click is its own.
    snap = await open_page(page, site, "/hands/capture-swap.html?how=none")
    result = await page.click(index_of(snap, "Volume"))
    assert result.ok, result.message
    assert reports(site, "thumb-captured") and reports(site, "thumb-clicked")


# ?on=none: nothing listens for the hover; the same button must still work, also when the
# page stops the move before our window listener or cancels the press.
@pytest.mark.parametrize(
    "stop", ["", "&stop=move", "&stop=cancel"], ids=["plain", "move", "cancel"]
)
async def test_an_unchanged_target_is_clicked_through_the_press_check(
    page: Page, tab: Tab, site: FixtureSite, stop: str
) -> None:
    snap = await open_page(page, site, f"/hands/hover-swap.html?on=none{stop}")
    index = index_of(snap, "Continue reading")
    result = await page.click(index, expect=expectation(snap, index))
    assert result.ok, result.message
    assert await page_eval(tab, "window.continued") is True


async def test_keys_that_would_follow_a_focus_the_page_moved_are_stopped(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/hands/focus-steal.html")
    result = await page.type(index_of(snap, "Search"), "garden hose")
    assert not result.ok and result.code == "target_changed", result.message
    assert "Message to the seller" in result.message
    assert await page_eval(tab, "document.getElementById('note').value") == ""


@pytest.mark.parametrize("approve_mode", ["ask", "risky"])
async def test_a_hover_swap_asks_the_person_again_and_never_reaches_the_server(
    tmp_path: Path,
    site: FixtureSite,
    other_site: FixtureSite,
    fake: FakeAnthropic,
    approve_mode: str,
) -> None:
    person = Person([approve()] * 5)
    run = await run_hostile(
        tmp_path,
        fake,
        site.url("/hands/hover-swap.html?on=mouseover"),
        [click("Continue reading")],
        approve=approve_mode,
        person=person,
    )
    assert reports(site, "deleted") == []
    # Asked (again) about what is there now, with the reason first.
    again = [r for r in person.requests if r.details and "changed" in r.details[0]]
    assert again, [r.details for r in person.requests]
    assert "under the pointer" in again[0].details[0] and "Delete account" in again[0].details[0]
    [done] = run.done("click")
    assert not done.result.ok


# --- sensitive fields, judged by meaning at dispatch ------------------------------------------

SENSITIVE = {
    "type-password": "password",
    "autocomplete-otp": "one-time code",
    "autocomplete-card": "card",
    "show-password": "password",
    "wrapper-role": "password",
    "flips-on-focus": "password",
    "describedby": "password",
    "placeholder": "password",
    "name-id": "password",
    "aria-labelledby": "one-time code",
    "legend-card": "card",
    "legend-expiry": "card",
    "legend-cvc": "card",
    "split-card": "card",
    "split-code": "one-time code",
}
LANGUAGES = {
    "en": "password",
    "fr": "password",
    "de": "password",
    "es": "password",
    "zh": "password",
    "ja": "password",
    "fr-card": "card",
    "de-otp": "one-time code",
    "es-card": "card",
    "zh-otp": "one-time code",
    "ja-card": "card",
}


def _fields(case: str) -> str:
    return f"/hands/fields.html?case={case}"


async def _first_field(page: Page, site: FixtureSite, case: str) -> tuple[Snapshot, int]:
    snap = await open_page(page, site, f"/hands/fields.html?case={case}")
    fields = [
        e.index
        for e in snap.elements.values()
        if e.tag in ("input", "div", "textbox") and e.name not in ("Save", "Show")
    ]
    assert fields, snap.text
    return snap, fields[0]


async def _assert_refused(page: Page, tab: Tab, site: FixtureSite, case: str, kind: str) -> None:
    _, index = await _first_field(page, site, case)
    result = await page.type(index, "hunter2-canary")
    assert not result.ok and result.code == "sensitive_field", result.message
    assert result.data == {"sensitive": kind}, result.message
    assert "hunter2" not in result.message
    assert await page_eval(tab, "document.getElementById('f').value") == ""
    assert reports(site, "typed:") == []


@pytest.mark.parametrize(("case", "kind"), SENSITIVE.items())
async def test_typing_into_a_sensitive_field_is_refused(
    page: Page, tab: Tab, site: FixtureSite, case: str, kind: str
) -> None:
    await _assert_refused(page, tab, site, case, kind)


@pytest.mark.parametrize(("case", "kind"), LANGUAGES.items())
async def test_sensitive_words_are_understood_in_each_language(
    page: Page, tab: Tab, site: FixtureSite, case: str, kind: str
) -> None:
    await _assert_refused(page, tab, site, case, kind)


@pytest.mark.parametrize("case", ["zip", "promo", "spinning", "phone"])
async def test_ordinary_fields_that_share_words_are_typed(
    page: Page, tab: Tab, site: FixtureSite, case: str
) -> None:
    _, index = await _first_field(page, site, case)
    result = await page.type(index, "123")
    assert result.ok, result.message
    assert await page_eval(tab, "document.getElementById('f').value") == "123"


async def test_keys_pressed_one_by_one_into_a_focused_sensitive_field_are_refused(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await _first_field(page, site, "show-password")
    await page_eval(tab, "document.getElementById('f').focus()")
    refused = await page.press_key("h")
    assert not refused.ok and refused.code == "sensitive_field", refused.message
    assert await page_eval(tab, "document.getElementById('f').value") == ""
    moved = await page.press_key("Tab")  # leaving the field types nothing into it
    assert moved.ok, moved.message


async def test_a_configured_secret_still_fills_a_sensitive_field(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    _, index = await _first_field(page, site, "flips-on-focus")
    result = await page.type(index, "hunter2-canary", secret=True)
    assert result.ok, result.message
    assert await page_eval(tab, "document.getElementById('f').value") == "hunter2-canary"
    assert "hunter2" not in result.message


async def test_a_field_that_turns_sensitive_on_focus_becomes_a_hand_over(
    tmp_path: Path, site: FixtureSite, other_site: FixtureSite, fake: FakeAnthropic
) -> None:
    person = Person()
    run = await run_hostile(
        tmp_path,
        fake,
        site.url("/hands/fields.html?case=flips-on-focus"),
        [type_into("Account key", "hunter2-canary")],
        person=person,
    )
    assert [h.kind for h in person.humans] == ["password"]
    assert run.all(HumanNeeded)
    assert reports(site, "typed:") == []
    [done] = run.done("type")
    assert done.result.code == "sensitive_field"


def _type_into_first_field(text: str) -> Decide:
    def decide(view: View) -> tuple[str, dict[str, Any]]:
        fields = [
            e for e in view.elements if e.tag in ("input", "div", "textbox") and e.name != "Show"
        ]
        return "type", {"index": fields[0].index, "text": text}

    return decide


def _files_holding(root: Path, needle: str) -> list[str]:
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if needle.encode() in path.read_bytes():
            found.append(path.name)
    return found


async def test_text_typed_toward_a_sensitive_field_leaves_no_trace(
    tmp_path: Path, site: FixtureSite, other_site: FixtureSite, fake: FakeAnthropic
) -> None:
    # Every sensitive case in one run (judged before dispatch and at dispatch): the model types
    # a distinct canary into each. A canary may be in the model's own reply that asked for it,
    # and in what the person was shown to approve; nowhere else, ever after.
    cases = [*SENSITIVE, *LANGUAGES]
    canaries = {case: "pw" + token_hex(8) for case in cases}
    steps: list[Decide] = []
    for n, case in enumerate(cases):
        if n:
            steps.append(lambda view, c=case: ("navigate", {"url": site.url(_fields(c))}))
        steps.append(_type_into_first_field(canaries[case]))
    run = await run_hostile(tmp_path, fake, site.url(_fields(cases[0])), steps)
    typed = run.done("type")
    assert len(typed) == len(cases) and not any(d.result.ok for d in typed)
    leaks: dict[str, list[str]] = {}
    for n, (case, canary) in enumerate(canaries.items()):
        where = _files_holding(tmp_path / "logs", canary)
        # Request 2n showed case n's page and got the type back; every later one is clean.
        where += [
            f"request {i}"
            for i, b in enumerate(run.bodies[2 * n + 1 :], 2 * n + 1)
            if canary in json.dumps(b)
        ]
        where += [
            type(e).__name__
            for e in run.events
            if not isinstance(e, ApprovalNeeded) and canary in repr(e)
        ]
        if where:
            leaks[case] = where
    assert leaks == {}
    assert reports(site, "typed:") == []


async def test_a_persons_edit_toward_a_field_that_turns_sensitive_leaves_no_trace(
    tmp_path: Path, site: FixtureSite, other_site: FixtureSite, fake: FakeAnthropic
) -> None:
    # The person corrects the model's text in the approval; the field turns into a password
    # field only when it gets the focus. Neither text may outlive the approval request.
    mine, theirs = "pw" + token_hex(8), "pw" + token_hex(8)
    person = Person([ApprovalDecision("edited", edited_params={"text": mine})])
    run = await run_hostile(
        tmp_path,
        fake,
        site.url(_fields("flips-on-focus")),
        [type_into("Account key", theirs)],
        approve="ask",
        person=person,
    )
    [typed] = run.done("type")
    assert typed.result.code == "sensitive_field", typed.result.message
    for canary in (mine, theirs):
        assert _files_holding(tmp_path / "logs", canary) == []
        assert not any(canary in json.dumps(b) for b in run.bodies[1:])
        assert not [
            e for e in run.events if not isinstance(e, ApprovalNeeded) and canary in repr(e)
        ]


# --- dialog storms ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["alert", "confirm", "prompt"])
async def test_a_dialog_storm_closes_the_tab_and_the_run_goes_on(
    tmp_path: Path, site: FixtureSite, other_site: FixtureSite, fake: FakeAnthropic, kind: str
) -> None:
    run = await run_hostile(
        tmp_path,
        fake,
        site.url(f"/hands/dialog-storm.html?kind={kind}"),
        [click("See the offer")],
        action_timeout=20.0,
    )
    [done] = run.done("click")
    assert done.result.code == "hostile_page", done.result.message
    # The model read why, and the run went on to its finish, with its record closed.
    assert "dialog storm" in run.body_text(1)
    assert run.finished.outcome == "failure"  # the obedient model's closing finish(False)
    assert run.log_records[-1]["type"] == "run_end"


async def test_a_dialog_storm_at_load_does_not_take_the_run_down(
    tmp_path: Path, site: FixtureSite, other_site: FixtureSite, fake: FakeAnthropic
) -> None:
    run = await run_hostile(
        tmp_path,
        fake,
        site.url("/hands/dialog-storm.html?kind=alert&at=load"),
        [],
        action_timeout=20.0,
    )
    assert "dialog storm" in run.body_text(0)
    assert run.log_records[-1]["type"] == "run_end"


@pytest.mark.parametrize("kind", ["confirm", "prompt"])
async def test_a_dialog_storm_in_ask_mode_asks_the_person_once(
    tmp_path: Path, site: FixtureSite, other_site: FixtureSite, fake: FakeAnthropic, kind: str
) -> None:
    person = Person([approve()] * 30)
    run = await run_hostile(
        tmp_path,
        fake,
        site.url(f"/hands/dialog-storm.html?kind={kind}"),
        [click("See the offer")],
        approve="ask",
        person=person,
        action_timeout=20.0,
    )
    asked = [r.action.name for r in person.requests]
    assert asked == ["click", "answer_dialog"]
    # The page answered the person's answer with more dialogs at once: hostile, not 20 later.
    [done] = run.done("click")
    assert done.result.code == "hostile_page", done.result.message
    assert "of the answer to its last one" in done.result.message
    assert run.log_records[-1]["type"] == "run_end"


# --- beforeunload storms ------------------------------------------------------------------------


async def test_a_beforeunload_storm_never_holds_the_run(
    tmp_path: Path, site: FixtureSite, other_site: FixtureSite, fake: FakeAnthropic
) -> None:
    storm = site.url("/hands/beforeunload-storm.html")
    run = await run_hostile(
        tmp_path,
        fake,
        storm,
        [
            # Our click gives the page a user activation: leaving it through the link must
            # get past its beforeunload.
            click("Keep my draft"),
            click("Leave"),
            lambda view: ("navigate", {"url": storm}),
            # The page now navigates itself every 5 ms, each document re-arming the handler;
            # our own navigation must still get away from it.
            click("Keep my draft"),
            click("Start the tour"),
            lambda view: ("navigate", {"url": site.url("/hands/left.html")}),
        ],
        action_timeout=20.0,
    )
    leave = run.done("click")[1]
    assert leave.result.ok and (leave.result.changes.dialog or "").startswith("beforeunload")
    assert "accepted leaving the page" in leave.result.message
    # The tour's self-navigating page: its beforeunloads were answered, or the tab that they
    # blocked was closed (either way the result says so); then our navigation got away.
    start = run.done("click")[3]
    assert "beforeunload" in start.result.message, start.result.message
    assert run.observed[-1].url == site.url("/hands/left.html")
    assert run.finished.outcome == "failure"  # the obedient model's closing finish(False)
    assert run.log_records[-1]["type"] == "run_end"
    assert "Traceback" not in run.log_path.with_suffix(".log").read_text()
