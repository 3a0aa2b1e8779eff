"""Widgets as a person uses them (issue 15, the tools): ``hover{index}`` for menus that open
under the pointer, and ``scroll{index}`` into scrolling areas that clip their content.

Real headless Chromium against tests/site/widgets/tools/ (plain HTML and CSS pages, and
jQuery UI from tests/site/node_modules). Each task is done through the digest and the
hands (or the whole agent, for the gate), and checked against the page's own state.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from core.audit import read_log
from core.browser.browser import Browser, Tab
from core.eyes.snapshot import Snapshot
from core.guard.decision import ApprovalDecision
from core.guard.policy import Gate
from core.hands import Page, TargetExpectation
from core.model.scripted import ScriptedPlan
from core.run.agent import Agent, AgentConfig
from core.run.events import ApprovalRequest, HumanRequest, HumanResponse
from core.run.session import RunSettings, run_session
from tests.helpers import index_of, open_page, page_eval
from tests.helpers.site_server import FixtureSite

# End to end: whole actions or runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow


@pytest.fixture
async def page(browser: Browser, tab: Tab) -> AsyncIterator[Page]:
    hands = Page(browser, action_timeout=15)
    yield hands
    hands.close()


def expectation(snapshot: Snapshot, index: int) -> TargetExpectation:
    """What a person approving an action on ``[index]`` of this digest approved."""
    element = snapshot.elements[index]
    return TargetExpectation(snapshot.url, index, element.name, element.rect)


def named(snapshot: Snapshot, name: str) -> bool:
    return any(e.name == name for e in snapshot.elements.values())


def write_plan(path: Path, *steps: dict[str, object]) -> Path:
    """A scripted plan (core/model/scripted.py) of these steps, one JSON line each."""
    path.write_text("\n".join(json.dumps(s) for s in steps) + "\n", encoding="utf-8")
    return path


# -- hover ------------------------------------------------------------------------------------


async def test_a_css_hover_submenu_item_is_reached_by_hover_then_clicked(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/widgets/tools/css-menu.html")
    assert not named(snap, "PDF"), snap.text
    file_menu = index_of(snap, "File")
    hovered = await page.hover(file_menu, expect=expectation(snap, file_menu))
    assert hovered.ok, hovered.message
    assert "'New'" in hovered.message and "'Export'" in hovered.message, hovered.message
    snap, _ = await page.observe()
    export = index_of(snap, "Export")
    hovered = await page.hover(export, expect=expectation(snap, export))
    assert hovered.ok and "'PDF'" in hovered.message, hovered.message
    snap, _ = await page.observe()
    pdf = index_of(snap, "PDF")
    clicked = await page.click(pdf, expect=expectation(snap, pdf))
    assert clicked.ok, clicked.message
    assert await page_eval(tab, "window.chosen") == ["PDF"]


async def test_a_jquery_ui_submenu_item_is_reached_by_hover_then_clicked(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    # jQuery UI opens a submenu 300 ms after the pointer enters its item: the hover's result
    # is read after that, so it can already name the submenu's items.
    snap = await open_page(page, site, "/widgets/tools/jquery-menu.html")
    assert not named(snap, "Archive"), snap.text
    send_to = index_of(snap, "Send to")
    hovered = await page.hover(send_to, expect=expectation(snap, send_to))
    assert hovered.ok and "'Archive'" in hovered.message, hovered.message
    snap, _ = await page.observe()
    archive = index_of(snap, "Archive")
    clicked = await page.click(archive, expect=expectation(snap, archive))
    assert clicked.ok, clicked.message
    assert await page_eval(tab, "window.chosen") == ["Archive"]


async def test_a_jquery_ui_tooltip_appended_to_the_body_is_reported(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/widgets/tools/jquery-tooltip.html")
    hovered = await page.hover(index_of(snap, "Refund policy"))
    assert hovered.ok, hovered.message
    assert "a tooltip 'Refunds within 30 days of delivery'" in hovered.message, hovered.message
    # Said once: the title the widget took is the tooltip it shows.
    assert hovered.message.count("Refunds within 30 days") == 1, hovered.message
    shown = "$('.ui-tooltip:visible').text()"
    assert await page_eval(tab, shown) == "Refunds within 30 days of delivery"


async def test_a_hover_reports_the_title_tooltip(page: Page, site: FixtureSite) -> None:
    snap = await open_page(page, site, "/widgets/tools/css-menu.html")
    hovered = await page.hover(index_of(snap, "Help"))
    assert hovered.ok
    assert "'Keyboard shortcuts and the manual'" in hovered.message, hovered.message


@pytest.mark.parametrize("how", ["replace", "relabel", "cover"])
async def test_a_page_that_swaps_the_hovered_element_gets_no_click_from_it(
    page: Page, tab: Tab, site: FixtureSite, how: str
) -> None:
    snap = await open_page(page, site, f"/widgets/tools/swap-on-hover.html?how={how}")
    archive = index_of(snap, "Archive")
    approved = expectation(snap, archive)
    hovered = await page.hover(archive, expect=approved)
    assert hovered.ok, hovered.message
    # The person approved a click on "Archive": what the hover put there is not clicked.
    clicked = await page.click(archive, expect=approved)
    assert not clicked.ok, clicked.message
    assert await page_eval(tab, "[window.archived, window.deleted]") == [None, None]


async def test_a_hover_on_a_covered_element_is_refused_before_the_pointer_moves(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/widgets/tools/hover-refused.html?cover=1")
    account = index_of(snap, "Account")
    hovered = await page.hover(account, expect=expectation(snap, account))
    assert not hovered.ok and hovered.code == "not_actionable", hovered.message
    assert "covered by <div id=layer>" in hovered.message, hovered.message
    assert await page_eval(tab, "window.overs") == []


async def test_a_hover_on_an_element_relabelled_since_approval_is_refused(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/widgets/tools/hover-refused.html")
    account = index_of(snap, "Account")
    approved = expectation(snap, account)
    # The page renames the link after the person saw it.
    await page_eval(tab, "document.querySelector('#account > a').textContent = 'Delete'")
    hovered = await page.hover(account, expect=approved)
    assert not hovered.ok and hovered.code == "target_changed", hovered.message
    assert await page_eval(tab, "window.overs") == []


class _Person:
    """Answers approvals from a queue and records what it was asked."""

    def __init__(self, *decisions: ApprovalDecision) -> None:
        self.decisions = list(decisions)
        self.requests: list[ApprovalRequest] = []

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        self.requests.append(request)
        return self.decisions.pop(0)

    async def human(self, request: HumanRequest) -> HumanResponse:
        raise AssertionError(f"no hand-over expected: {request}")


async def test_ask_mode_asks_before_a_hover_and_a_denied_hover_moves_no_pointer(
    browser: Browser, tab: Tab, site: FixtureSite, tmp_path: Path
) -> None:
    plan = write_plan(
        tmp_path / "plan.jsonl",
        {"tool": "hover", "target": "File", "on_deny": "skip"},
        {"tool": "hover", "target": "Help"},
        {"tool": "finish", "input": {"success": True, "answer": "done"}},
    )
    hands = Page(browser, action_timeout=15)
    try:
        assert (await hands.navigate(site.url("/widgets/tools/css-menu.html"))).ok
        person = _Person(
            ApprovalDecision("denied", note="not that menu"), ApprovalDecision("approved")
        )
        agent = Agent(
            config=AgentConfig(task="Open the help", max_rounds=5),
            model=ScriptedPlan(plan),
            page=hands,
            gate=Gate(mode="ask"),
            supervisor=person,
        )
        finished = await agent.run()
    finally:
        hands.close()
    assert finished.exit_code == 0, finished.reason
    assert [(r.action.name, r.risky) for r in person.requests] == [
        ("hover", False),
        ("hover", False),
    ]
    # The page saw the pointer enter Help (approved), never File (denied).
    overs = await page_eval(tab, "window.overs")
    assert "Help" in overs and "File" not in overs, overs


async def test_a_hover_and_what_it_showed_are_written_to_the_audit_log(
    tmp_path: Path, site: FixtureSite
) -> None:
    plan = write_plan(
        tmp_path / "plan.jsonl",
        {"tool": "hover", "target": "File", "reason": "open the File menu"},
        {"tool": "finish", "input": {"success": True, "answer": "opened"}},
    )
    settings = RunSettings(
        task="Open the File menu",
        start_url=site.url("/widgets/tools/css-menu.html"),
        model_spec=f"scripted:{plan}",
        approve="none",
        headless=True,
        profile=tmp_path / "profile",
        audit_dir=tmp_path / "logs",
    )
    finished = await run_session(settings, supervisor=_Person())
    assert finished.exit_code == 0, finished.reason
    (log,) = sorted((tmp_path / "logs").glob("*.jsonl"))
    rounds = [r for r in read_log(log).records if r["type"] == "round"]
    hover = rounds[0]
    assert hover["action"]["name"] == "hover" and hover["action"]["reason"] == "open the File menu"
    assert hover["approval"]["decision"] == "auto"
    assert hover["result"]["ok"] and "'Export'" in hover["result"]["message"], hover["result"]


# -- scroll into scrolling areas --------------------------------------------------------------


async def test_the_cheapest_flight_clipped_in_a_results_area_is_scrolled_to_and_chosen(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/widgets/tools/clipped-results.html")
    assert "U2 477" not in snap.text, snap.text
    # The index of an item inside the area, with a direction: the area around it scrolls.
    scrolled = await page.scroll(index=index_of(snap, "Select TP 101"), direction="down")
    assert scrolled.ok, scrolled.message
    assert "more above, nothing more below" in scrolled.message, scrolled.message
    assert await page_eval(tab, "document.getElementById('results').scrollTop") > 0
    assert await page_eval(tab, "window.scrollY") == 0
    snap, _ = await page.observe()
    assert "U2 477, 18:50, €91" in snap.text, snap.text
    cheapest = index_of(snap, "Select U2 477")
    assert (await page.click(cheapest, expect=expectation(snap, cheapest))).ok
    assert await page_eval(tab, "window.picked") == ["U2 477"]


async def test_a_results_area_scrolled_by_its_own_index_shows_the_flight_it_clipped(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/widgets/tools/clipped-results.html")
    area = index_of(snap, "Flights to Lisbon")
    assert "scrollable" in snap.elements[area].attrs
    assert "U2 477" not in snap.text, snap.text
    scrolled = await page.scroll(index=area)
    assert scrolled.ok and "down by 124 px" in scrolled.message, scrolled.message
    assert await page_eval(tab, "document.getElementById('results').scrollTop") == 124
    snap, _ = await page.observe()
    assert "U2 477, 18:50, €91" in snap.text, snap.text


async def test_an_element_that_does_not_scroll_is_scrolled_into_view(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/widgets/tools/clipped-results.html")
    scrolled = await page.scroll(index=index_of(snap, "Contact us"))
    assert scrolled.ok and "scrolled to" in scrolled.message, scrolled.message
    in_view = "(r => r.top >= 0 && r.bottom <= innerHeight)(contact.getBoundingClientRect())"
    assert await page_eval(tab, in_view) is True
    assert await page_eval(tab, "window.scrollY") > 0
    assert await page_eval(tab, "document.getElementById('results').scrollTop") == 0


async def test_a_scrolling_area_in_a_scrolled_page_scrolls_down_by_its_own_index(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, "/widgets/tools/nested-scroll.html")
    assert (await page.scroll(direction="down")).ok
    snap, _ = await page.observe()
    page_y = await page_eval(tab, "window.scrollY")
    assert page_y > 0
    # No direction: the area has more below, so its content moves down, and only it: not
    # the panel around it, nor the page.
    scrolled = await page.scroll(index=index_of(snap, "Messages"))
    assert scrolled.ok, scrolled.message
    assert "down by 108 px" in scrolled.message and "more above" in scrolled.message, (
        scrolled.message
    )
    state = "[chat.scrollTop, panel.scrollTop, window.scrollY]"
    assert await page_eval(tab, state) == [108, 0, page_y]


async def test_an_area_at_its_end_scrolls_back_toward_what_it_holds_by_its_index(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    # The digest's note for such an area reads "(3 more above: scroll{index: N})".
    snap = await open_page(page, site, "/widgets/tools/nested-scroll.html")
    bottom = await page_eval(tab, "chat.scrollTop = chat.scrollHeight; chat.scrollTop")
    scrolled = await page.scroll(index=index_of(snap, "Messages"))
    assert scrolled.ok and " up by 108 px" in scrolled.message, scrolled.message
    assert await page_eval(tab, "chat.scrollTop") == bottom - 108


async def test_a_sideways_scrolling_area_scrolls_right_by_index(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, "/widgets/tools/nested-scroll.html")
    snap, _ = await page.observe()
    scrolled = await page.scroll(index=index_of(snap, "Tags"), direction="right")
    assert scrolled.ok and "to the left" in scrolled.message, scrolled.message
    assert await page_eval(tab, "document.getElementById('tags').scrollLeft") > 0
