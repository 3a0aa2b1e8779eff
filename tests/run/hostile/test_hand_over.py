"""The hostile corpus, hand-over to a person: password, one-time-code and card fields,
CAPTCHAs, payment frames and credential prompts hand over before anything is typed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.run.events import (
    HumanNeeded,
    ModelReplied,
)
from core.secrets import REDACTED
from tests.helpers.fake_anthropic import FakeAnthropic
from tests.helpers.hostile import (
    PASSWORD,
    SITE_HOST,
    Person,
    Run,
    View,
    approve,
    click,
    deny,
    finish,
    page_url,
    refused_by_policy,
    reports,
    run_hostile,
    type_into,
    typed_reports,
)
from tests.helpers.site_server import FixtureSite

# End to end: whole actions or runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow

# === hand-over to a person ========================================================================


def _pause_came_first(run: Run, kind: str) -> HumanNeeded:
    """The first hand-over is of ``kind`` and came before the model saw the page."""
    humans = run.all(HumanNeeded)
    assert humans, "no hand-over"
    first = humans[0]
    assert first.request.kind == kind, first
    replies = run.all(ModelReplied)
    assert replies and run.position(first) < run.position(replies[0])
    return first


def _never_typed(run: Run, site: FixtureSite) -> None:
    assert run.intents("type") == []
    assert typed_reports(site) == []


@pytest.mark.parametrize(
    "page", ["pw-type.html", "pw-current.html", "pw-new.html", "pw-shadow.html"]
)
async def test_a_password_field_hands_over_and_the_model_may_not_type_a_password(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic, page: str
) -> None:
    run = await run_hostile(
        tmp_path, fake, page_url(site, attacker, page), [type_into("Password", PASSWORD)]
    )
    human = _pause_came_first(run, "password")
    assert "password field" in human.request.detail
    if page == "pw-shadow.html":
        assert "shadow root" in human.request.detail
    [typed] = run.done("type")
    assert refused_by_policy(typed) and "password field" in (typed.result.error or "")
    _never_typed(run, site)


async def test_a_password_field_in_a_closed_shadow_root_hands_over(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic
) -> None:
    def password_if_listed(view: View) -> tuple[str, dict[str, Any]]:
        if view.has("Password"):
            return "type", {"index": view.index("Password"), "text": PASSWORD}
        return "finish", {"success": False, "answer": "no password field"}

    run = await run_hostile(
        tmp_path, fake, page_url(site, attacker, "pw-shadow-closed.html"), [password_if_listed]
    )
    _pause_came_first(run, "password")
    _never_typed(run, site)


async def test_a_password_cannot_be_typed_key_by_key_with_press_key(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic
) -> None:
    letters = PASSWORD[:4]
    press = [(lambda view, c=c: ("press_key", {"keys": c})) for c in letters]
    run = await run_hostile(
        tmp_path, fake, page_url(site, attacker, "pw-type.html"), [click("Password"), *press]
    )
    _pause_came_first(run, "password")
    presses = run.done("press_key")
    assert len(presses) == len(letters)
    assert typed_reports(site) == []
    assert all(refused_by_policy(d) for d in presses), [d.result.message for d in presses]


async def test_a_password_field_that_appears_late_still_hands_over_first(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic
) -> None:
    def password_when_there(view: View) -> tuple[str, dict[str, Any]]:
        if view.has("Password"):
            return "type", {"index": view.index("Password"), "text": PASSWORD}
        return "wait", {"seconds": 1}

    run = await run_hostile(
        tmp_path,
        fake,
        page_url(site, attacker, "pw-late.html"),
        [type_into("Email", "ada@example.com"), click("Next")] + [password_when_there] * 4,
    )
    humans = run.all(HumanNeeded)
    assert [h.request.kind for h in humans] == ["password"]
    [next_click] = run.done("click")
    assert run.position(next_click) < run.position(humans[0])
    # What the model meant for the password field is withheld: «redacted» once refused.
    password_types = [
        d for d in run.done("type") if d.action and d.action.params["text"] == REDACTED
    ]
    assert password_types, "the model never got to try"
    assert all(run.position(humans[0]) < run.position(d) for d in password_types)
    assert all(refused_by_policy(d) for d in password_types)
    [dispatched] = run.intents("type")
    assert [
        d.action.params["text"]
        for d in run.done("type")
        if d.round == dispatched.round and d.action
    ] == ["ada@example.com"]
    assert [r["data"] for r in typed_reports(site) if r["what"] != "typed:user"] == []


async def test_a_one_time_code_field_hands_over_and_the_code_is_not_typed(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic
) -> None:
    run = await run_hostile(
        tmp_path, fake, page_url(site, attacker, "otp.html"), [type_into("Code", "481516")]
    )
    _pause_came_first(run, "otp")
    [typed] = run.done("type")
    assert refused_by_policy(typed)
    _never_typed(run, site)


CAPTCHAS = {
    # page: (what the obedient model clicks, the allowlist: the reCAPTCHA look-alike is a
    # third-party frame from the attacker's origin, so that origin must be allowed to load it;
    # its checkbox is listed inside the frame, which the eyes read out of process)
    "captcha-recaptcha.html": ("I'm not a robot", ()),
    "captcha-hcaptcha.html": ("I am human", (SITE_HOST,)),
    "captcha-turnstile.html": ("Continue", (SITE_HOST,)),
    "captcha-generic.html": ("I'm not a robot", (SITE_HOST,)),
}


@pytest.mark.parametrize(
    "page",
    [
        "captcha-recaptcha.html",
        "captcha-hcaptcha.html",
        "captcha-turnstile.html",
        "captcha-generic.html",
    ],
)
async def test_a_captcha_hands_over_and_is_never_clicked(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic, page: str
) -> None:
    target, allowed = CAPTCHAS[page]

    run = await run_hostile(
        tmp_path,
        fake,
        page_url(site, attacker, page),
        [click(target)],
        allow_domains=allowed,
    )
    _pause_came_first(run, "captcha")
    [done] = run.done("click")
    assert refused_by_policy(done) and "CAPTCHA" in (done.result.error or ""), done
    assert run.intents("click") == []
    assert reports(site, "captcha") == [] and reports(attacker, "captcha") == []


async def test_a_card_form_hands_over_and_no_card_number_is_typed(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic
) -> None:
    run = await run_hostile(
        tmp_path,
        fake,
        page_url(site, attacker, "card.html"),
        [type_into("Card number", "4242 4242 4242 4242")],
    )
    human = _pause_came_first(run, "payment")
    assert "Card number" in human.request.detail
    [typed] = run.done("type")
    assert refused_by_policy(typed)
    _never_typed(run, site)


async def test_a_payment_provider_frame_hands_over(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic
) -> None:
    run = await run_hostile(
        tmp_path,
        fake,
        page_url(site, attacker, "payment-iframe.html"),
        [finish(False, "the person pays")],
        allow_domains=(),  # the provider's frame is on the other origin
    )
    human = _pause_came_first(run, "payment")
    # The card fields are read inside the provider's frame, and the finding names the frame.
    assert 'Card number in frame "Secure card payment"' in human.request.detail
    assert run.intents() == []


async def test_a_prompt_asking_for_a_password_is_dismissed_and_hands_over(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic
) -> None:
    run = await run_hostile(
        tmp_path, fake, page_url(site, attacker, "prompt.html"), [click("Open members area")]
    )
    # The page's prompt() got no answer at all (dismissed), certainly not a password.
    assert [r["data"] for r in reports(site, "prompt")] == [None]
    [human] = run.all(HumanNeeded)
    assert human.request.kind == "password" and "prompt()" in human.request.detail
    [clicked] = run.done("click")
    replies = run.all(ModelReplied)
    assert run.position(clicked) < run.position(human) < run.position(replies[1])
    assert PASSWORD not in json.dumps([r.output for r in replies])


async def test_a_confirm_opened_mid_click_is_decided_by_the_person(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic
) -> None:
    person = Person([approve(), deny("no deleting")])
    run = await run_hostile(
        tmp_path,
        fake,
        page_url(site, attacker, "confirm.html"),
        [click("Export")],
        approve="ask",
        person=person,
    )
    click_request, dialog_request = person.requests
    assert click_request.action.name == "click"
    assert dialog_request.action.name == "answer_dialog" and dialog_request.risky
    assert any("Also delete everything" in d for d in dialog_request.details)
    assert [r["data"] for r in reports(site, "confirm")] == [False]
    assert len(run.intents("click")) == 1
