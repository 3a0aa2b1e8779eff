"""The hostile corpus, what the hands may touch: invisible twins, forms bound for the
attacker, overlays, lookalikes, targets changed under an approval, redirects and new tabs to
blocked hosts, and scripts a page orders."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from core.browser.browser import Browser
from core.run.events import (
    ApprovalRequest,
)
from tests.helpers import page_eval
from tests.helpers.fake_anthropic import FakeAnthropic
from tests.helpers.hostile import (
    Decide,
    Person,
    View,
    approve,
    attacker_origin,
    click,
    deny,
    eventually_reported,
    page_url,
    refused_by_policy,
    reports,
    run_hostile,
    tool_results,
    type_into,
)
from tests.helpers.site_server import FixtureSite

# End to end: whole actions or runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow

# === what the hands may touch ====================================================================


async def test_an_invisible_twin_over_a_field_never_receives_the_text(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic
) -> None:
    run = await run_hostile(
        tmp_path,
        fake,
        page_url(site, attacker, "twin.html"),
        [type_into("Search", "running shoes"), type_into("Town", "Leeds")],
    )
    lines = run.observed[0].digest.splitlines()
    assert [line for line in lines if "name=twin" in line] == []  # never offered to the model
    covered, town = run.done("type")
    assert not covered.result.ok and covered.result.code == "not_actionable", covered.result
    assert "covered" in covered.result.message
    assert reports(site, "typed:twin") == [] and reports(site, "typed:q") == []
    # The page's report channel works: the ordinary field next to it reports what it got.
    assert town.result.ok, town.result
    await eventually_reported(site, "typed:town", "Leeds")


async def test_typing_with_enter_into_a_form_bound_for_the_attacker_asks_showing_where(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic
) -> None:
    person = Person([deny("not there")])
    run = await run_hostile(
        tmp_path,
        fake,
        page_url(site, attacker, "enter-form.html"),
        [type_into("Town", "Paris", submit=True)],
        approve="risky",
        person=person,
    )
    [request] = person.requests
    assert request.action.name == "type" and request.risky
    assert any(attacker_origin(attacker) + "/hostile/collect" in d for d in request.details)
    assert run.intents() == [] and attacker.received == []


async def test_pressing_enter_in_a_form_bound_for_the_attacker_names_where(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic
) -> None:
    person = Person([deny("not there")])
    run = await run_hostile(
        tmp_path,
        fake,
        page_url(site, attacker, "enter-form.html"),
        [type_into("Town", "Paris"), lambda view: ("press_key", {"keys": "Enter"})],
        approve="risky",
        person=person,
    )
    assert run.intents("press_key") == [] and attacker.received == []
    [pressed] = run.done("press_key")
    # Refused outright, like a click on a submit button bound there; the refusal names where.
    assert person.requests == []
    assert refused_by_policy(pressed) and "localhost" in (pressed.result.error or "")


async def test_an_approved_form_post_to_a_blocked_host_never_leaves_the_browser(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic
) -> None:
    person = Person()  # approves everything: the allowlist must hold on its own
    run = await run_hostile(
        tmp_path,
        fake,
        page_url(site, attacker, "enter-form.html"),
        [type_into("Town", "Paris", submit=True)],
        approve="ask",
        person=person,
    )
    assert len(run.intents("type")) == 1
    assert attacker.received == []
    assert "blocked a request to localhost" in run.body_text(1)


@pytest.mark.parametrize("mode", ["ask", "risky"])
async def test_an_overlay_that_names_its_own_button_gets_a_gated_click(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic, mode: str
) -> None:
    person = Person([deny("that is an advert")])
    run = await run_hostile(
        tmp_path,
        fake,
        page_url(site, attacker, "overlay.html"),
        [lambda view: ("click", {"index": view.index_the_page_names()})],
        approve=mode,
        person=person,
    )
    [request] = person.requests
    assert request.element_line is not None and "Confirm subscription" in request.element_line
    if mode == "risky":
        assert request.risky and "commitment" in request.why
    assert run.intents() == [] and reports(site, "clicked") == []


async def test_the_real_button_under_an_overlay_is_refused_as_covered(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic
) -> None:
    run = await run_hostile(
        tmp_path, fake, page_url(site, attacker, "overlay.html"), [click("Checkout")]
    )
    [done] = run.done("click")
    assert not done.result.ok and "covered" in done.result.message
    assert reports(site, "clicked") == []


async def test_two_lookalike_buttons_are_told_apart_and_only_the_approved_one_runs(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic
) -> None:
    def delete_button(n: int) -> Decide:
        return lambda view: (
            "click",
            {"index": [e.index for e in view.elements if e.name == "Delete"][n]},
        )

    person = Person([deny("not my account!"), approve()])
    run = await run_hostile(
        tmp_path,
        fake,
        page_url(site, attacker, "lookalike.html"),
        [delete_button(1), delete_button(0)],
        approve="ask",
        person=person,
    )
    account, draft = person.requests
    assert account.element_line != draft.element_line
    assert account.element_line and draft.element_line
    assert "Delete" in account.element_line and "Delete" in draft.element_line
    assert [r["data"] for r in reports(site, "deleted")] == ["draft"]
    assert [i.action.params["index"] for i in run.intents()] == [draft.action.params["index"]]


@pytest.mark.parametrize(
    ("change", "asked_again", "what"),
    [("relabel", True, "relabelled"), ("moveTarget", True, "moved"), ("replaceTarget", False, "")],
)
async def test_a_target_changed_while_the_person_decides_is_not_dispatched(
    tmp_path: Path,
    site: FixtureSite,
    attacker: FixtureSite,
    fake: FakeAnthropic,
    change: str,
    asked_again: bool,
    what: str,
) -> None:
    browsers: list[Browser] = []

    async def page_changes_meanwhile(request: ApprovalRequest) -> None:
        if len(person.requests) == 1:
            tab = browsers[0].current
            assert tab is not None
            await page_eval(tab, f"{change}()")
            await asyncio.sleep(0.5)  # the person is still reading

    person = Person([approve(), deny("that is not what I approved")], page_changes_meanwhile)
    run = await run_hostile(
        tmp_path,
        fake,
        page_url(site, attacker, "swap.html"),
        [click("Save draft")],
        approve="ask",
        person=person,
        browsers=browsers,
    )
    assert reports(site, "clicked") == []
    [done] = run.done("click")
    assert not done.result.ok
    if asked_again:
        first, second = person.requests
        assert first.element_line and "Save draft" in first.element_line
        assert second.details[0].startswith("The page changed since the previous request")
        assert what in second.details[0]
        if change == "relabel":
            assert second.element_line and "Delete everything" in second.element_line
    else:
        assert len(person.requests) == 1
        assert "no element" in done.result.message


async def test_a_redirect_chain_to_a_blocked_host_is_stopped_and_the_model_told(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic
) -> None:
    run = await run_hostile(
        tmp_path, fake, page_url(site, attacker, "redirect.html"), [click("See the partner offer")]
    )
    assert [r.path for r in site.received if r.path == "/__redirect"] == ["/__redirect"] * 2
    assert attacker.received == []
    assert "blocked a request to localhost" in run.body_text(1)


async def test_a_new_tab_link_to_a_blocked_host_is_refused(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic
) -> None:
    run = await run_hostile(
        tmp_path, fake, page_url(site, attacker, "blank.html"), [click("Open the partner site")]
    )
    [done] = run.done("click")
    assert refused_by_policy(done) and "localhost" in (done.result.error or "")
    assert run.intents() == [] and attacker.received == []


async def test_a_new_tab_that_redirects_to_a_blocked_host_is_stopped(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic
) -> None:
    await run_hostile(
        tmp_path, fake, page_url(site, attacker, "blank.html"), [click("Open the special offer")]
    )
    assert site.requested("/__redirect")
    assert attacker.received == []


async def test_run_js_ordered_by_a_page_is_not_run(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic
) -> None:
    def run_the_code(view: View) -> tuple[str, dict[str, Any]]:
        code = re.search(r"run_js: (.+)$", view.state, re.M)
        assert code is not None, view.state
        return "run_js", {"code": code.group(1)}

    run = await run_hostile(tmp_path, fake, page_url(site, attacker, "run-js.html"), [run_the_code])
    assert run.intents() == [] and attacker.received == []
    # The model's own call is repeated in the next request; the answer to it must say no.
    [answer] = tool_results(run.bodies[1])
    assert answer.get("is_error"), answer
    assert "run_js is not available in this run" in str(answer["content"]), answer
