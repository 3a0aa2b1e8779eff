"""The gate and the hands against an attacker's drag targets (issue 26): pages are written
by the attacker and the model obeys the page. A drop onto a payment button is risky, onto a
password field or into another site's frame refused; a drop target the page moves after the
approval, or lays under the drop point during the drag, gets nothing. Each is checked on
the page's own record of what received a drop."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.actions import Action
from core.audit import read_log
from core.browser.browser import Tab
from core.guard.policy import Gate
from core.hands import Page, TargetExpectation
from core.hands.drag import DragSpec
from core.hands.shot import PointHit
from core.run.events import ApprovalRequest
from core.run.session import RunSettings, run_session
from tests.helpers import index_of, open_page, page_eval
from tests.helpers.agent_run import MODEL, Supervisor
from tests.helpers.fake_anthropic import FakeAnthropic, tool_use_block
from tests.helpers.site_server import FixtureSite

pytestmark = pytest.mark.slow


def drag(**params: object) -> Action:
    return Action("drag", dict(params), "move the card")


def expectation(snapshot_url: str, index: int, element: object) -> TargetExpectation:
    return TargetExpectation(
        url=snapshot_url,
        index=index,
        name=element.name,  # type: ignore[attr-defined]
        rect=element.rect,  # type: ignore[attr-defined]
    )


async def test_a_payment_button_as_drop_target_is_risky_and_a_password_field_refused(
    page: Page, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/guard/drop-traps.html")
    card, pay, pin = (index_of(snap, n) for n in ("Write report", "Pay now", "Password"))
    gate = Gate(mode="risky")
    onto_pay = gate.assess(drag(index=card, to=pay), snap)
    assert onto_pay.risky and onto_pay.needs_approval and not onto_pay.refused, onto_pay
    assert "drop target" in onto_pay.why and "Pay now" in onto_pay.why, onto_pay.why
    assert any("Drop on:" in d and "Pay now" in d for d in onto_pay.details), onto_pay.details
    onto_pin = gate.assess(drag(index=card, to=pin), snap)
    assert onto_pin.refused and onto_pin.sensitive, onto_pin
    # By an offset onto the same field: the gate reads what is at the end point.
    x, y, w, h = snap.elements[card].rect
    px, py, pw, ph = snap.elements[pin].rect
    dx, dy = px + pw / 2 - (x + w / 2), py + ph / 2 - (y + h / 2)
    hit = await page.hit_test(x + w / 2 + dx, y + h / 2 + dy)
    assert isinstance(hit, PointHit) and hit.sensitive == "password", hit
    by_offset = gate.assess(drag(index=card, dx=dx, dy=dy), snap, hit=hit)
    assert by_offset.refused and by_offset.sensitive, by_offset


async def test_a_drop_target_in_another_sites_frame_is_refused(
    page: Page, tab: Tab, site: FixtureSite, other_site: FixtureSite
) -> None:
    snap = await open_page(page, site, f"/guard/drop-traps.html?other={other_site.origin}")
    assert await page_eval(tab, "window.otherReady")
    snap, _ = await page.observe()
    card, inbox = index_of(snap, "Write report"), index_of(snap, "Partner inbox")
    verdict = Gate(mode="none").assess(drag(index=card, to=inbox), snap)
    assert verdict.refused and "another site's frame" in verdict.refused, verdict
    result = await page.drag(DragSpec(index=card, to=inbox))
    assert not result.ok and "another site" in result.message, result.message


async def test_a_drop_target_moved_after_approval_gets_nothing(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/guard/drop-traps.html")
    card, done = index_of(snap, "Write report"), index_of(snap, "Done")
    approved = expectation(snap.url, done, snap.elements[done])
    await page_eval(tab, "window.moveDone()")
    result = await page.dispatch(drag(index=card, to=done), expect_to=approved)
    assert not result.ok and result.code == "target_changed", result.message
    assert await page_eval(tab, "window.log") == []


async def test_a_payment_button_laid_under_the_drop_point_during_the_drag_gets_no_drop(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/guard/drop-traps.html?swap=1")
    card, done = index_of(snap, "Write report"), index_of(snap, "Done")
    approved = expectation(snap.url, done, snap.elements[done])
    result = await page.dispatch(drag(index=card, to=done), expect_to=approved)
    assert not result.ok and result.code == "target_changed", result.message
    assert "Pay now" in result.message, result.message
    assert await page_eval(tab, "window.log") == ["dragstart"]


async def test_the_approval_and_the_log_show_both_ends_of_a_drag(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    def the_drag(body: dict[str, object]) -> list[dict[str, object]]:
        from core.model.scripted import latest_browser_state, parse_digest, resolve_target

        found = parse_digest(latest_browser_state(body["messages"]) or "")  # type: ignore[arg-type]
        card, column = resolve_target("Write report", found), resolve_target("Doing", found)
        assert card is not None and column is not None
        args = {"index": card.index, "to": column.index, "reason": "start the report"}
        return [tool_use_block("drag", args, "toolu_drag")]

    fake.add(the_drag)
    fake.add_tool_use("finish", {"success": True, "answer": "moved", "reason": "done"})
    supervisor = Supervisor()
    settings = RunSettings(
        task="Move 'Write report' to Doing",
        start_url=site.url("/hands/drag/kanban.html"),
        model_spec=MODEL,
        approve="ask",
        headless=True,
        profile=tmp_path / "profile",
        audit_dir=tmp_path / "logs",
    )
    finished = await run_session(settings, supervisor=supervisor)
    assert finished.outcome == "success", finished
    asked: ApprovalRequest = supervisor.requests[0]
    assert asked.action.name == "drag"
    assert asked.target_name == "Write report → Doing", asked.target_name
    assert asked.element_line is not None and "Write report" in asked.element_line
    assert "Doing" in asked.element_line.splitlines()[-1], asked.element_line
    assert asked.crop is not None and asked.crop.png is not None, asked.crop
    (log,) = sorted((tmp_path / "logs").glob("*.jsonl"))
    rounds = [r for r in read_log(log).records if r["type"] == "round"]
    assert rounds[0]["target_name"] == "Write report → Doing"
    assert "moved into 'Doing'" in rounds[0]["result"]["message"], rounds[0]["result"]


async def test_an_offset_drag_whose_end_point_changed_after_approval_moves_nothing(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/hands/drag/slider.html")
    handle = index_of(snap, "Maximum price")
    x, y, w, h = snap.elements[handle].rect
    approved = await page.hit_test(x + w / 2 + 120, y + h / 2)
    assert isinstance(approved, PointHit)
    # After the approval the page lays a button over the end point.
    await page_eval(
        tab,
        f"(() => {{ const b = document.createElement('button'); b.textContent = 'Buy';"
        f" Object.assign(b.style, {{position: 'fixed', left: '{approved.x - 30}px',"
        f" top: '{approved.y - 20}px', width: '60px', height: '40px', zIndex: 9}});"
        " document.body.append(b); })()",
    )
    result = await page.dispatch(drag(index=handle, dx=120, dy=0), at=approved.index)
    assert not result.ok and result.code == "target_changed", result.message
    assert "Buy" in result.message, result.message
    assert await page_eval(tab, "window.price()") == 200
