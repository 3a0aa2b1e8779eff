"""Approval policy as code, in real runs: the real Anthropic SDK against the fake Messages
API, real Chromium, a fixture shop whose every button press reaches the server.

Each rule kind decides as written: what a rule allows runs unasked, what it asks waits for
the person (who is told which rule asks), a denial is refused with the rule's note reaching
the model, a hand-over gives the page to the person and the action is not done. No policy
lowers a hand-over. The sealed log names the rule per round and keeps the whole policy.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.audit import read_log, verify
from core.run.session import RunSettings, run_session
from tests.helpers.agent_run import MODEL, Supervisor, act
from tests.helpers.fake_anthropic import FakeAnthropic
from tests.helpers.site_server import FixtureSite
from tests.helpers.tui_driver import wait_until
from tui.screens.replay import ReplayApp

# End to end: whole actions or runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow

SHOP = "/agent/policy-shop.html"


def policy_file(tmp_path: Path, text: str, mode: int = 0o644) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text(text)
    path.chmod(mode)
    return path


def settings(tmp_path: Path, site: FixtureSite, policy: Path, **kw: Any) -> RunSettings:
    base: dict[str, Any] = {
        "task": "Look for lamps in the shop",
        "start_url": site.url(SHOP),
        "model_spec": MODEL,
        "policy": str(policy),
        "headless": True,
        "profile": tmp_path / "profile",
        "audit_dir": tmp_path / "logs",
    }
    return RunSettings(**(base | kw))


def the_log(tmp_path: Path) -> Path:
    (log,) = sorted((tmp_path / "logs").glob("*.jsonl"))
    return log


def rounds(tmp_path: Path) -> list[dict[str, Any]]:
    return [r for r in read_log(the_log(tmp_path)).records if r["type"] == "round"]


def pressed(site: FixtureSite) -> list[str]:
    return [str(p.json_body["pressed"]) for p in site.posts("/agent/submit")]


def tool_results(body: dict[str, Any]) -> str:
    """Every tool result the model was sent in this request, as one text."""
    return json.dumps(body["messages"], ensure_ascii=False)


SHOP_POLICY = """
[[rule]]
note = "pay/send/delete"
name = "re:(?i)\\\\b(pay|send|delete)\\\\b"
decide = "ask"

[[rule]]
note = "never the account page"
page = "*/account*"
decide = "deny"

[[rule]]
note = "never open the account from the shop"
action = "click"
name = "Your account"
decide = "deny"

[[rule]]
note = "searching is fine"
host = "127.0.0.1"
action = ["click", "type"]
decide = "allow"
"""


async def test_each_rule_decides_as_written_and_the_log_names_it(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    site.clear()
    for step in (
        act("type", "Search the shop", text="lamp"),
        act("click", "Search"),
        act("click", "Delete my account"),
        act("click", "Your account"),
        act("finish", success=True, answer="looked"),
    ):
        fake.add(step)
    policy = policy_file(tmp_path, SHOP_POLICY)
    supervisor = Supervisor()
    finished = await run_session(settings(tmp_path, site, policy), supervisor=supervisor)
    assert finished.outcome == "success"
    # Typing and the search ran unasked; the deletion asked, naming its rule; the account
    # link was refused.
    assert [r.action.name for r in supervisor.requests] == ["click"]
    assert supervisor.requests[0].target_name == "Delete my account"
    assert supervisor.requests[0].asked_by == "rule 1 (pay/send/delete)"
    assert pressed(site) == ["search", "delete"]
    assert site.posts("/agent/submit")[0].json_body["query"] == "lamp"
    # The refusal reached the model with the rule that refused it.
    after_refusal = tool_results(fake.message_bodies[4])
    assert "rule 3 (never open the account from the shop)" in after_refusal
    assert not site.requested("/agent/account.html")

    recs = rounds(tmp_path)
    approvals = [r["approval"] for r in recs]
    assert [(a["decision"], a.get("rule", {}).get("index")) for a in approvals] == [
        ("auto", 4),
        ("auto", 4),
        ("approved", 1),
        ("denied", 3),
        ("not_needed", None),
    ]
    sha = approvals[0]["rule"]["policy_sha256"]
    assert sha == __import__("hashlib").sha256(policy.read_bytes()).hexdigest()
    assert approvals[2]["rule"]["text"].startswith('note = "pay/send/delete"')
    start = read_log(the_log(tmp_path)).records[0]
    assert start["settings"]["policy"]["source"] == SHOP_POLICY
    assert start["settings"]["policy"]["sha256"] == sha
    assert verify(the_log(tmp_path)).ok

    # Replay names the rule of each round.
    app = ReplayApp(the_log(tmp_path), config_dir=tmp_path / "config", persist_theme=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(
            pilot, lambda: app.replay_screen is not None and app.replay_screen.scan_done
        )
        screen = app.replay_screen
        assert screen is not None
        third = next(
            i for i, e in enumerate(screen.rows.entries) if e.kind == "round" and e.round == 3
        )
        screen.select_row(third)
        await wait_until(
            pilot, lambda: "rule: rule 1 (pay/send/delete)" in screen.panes.pane("action").plain
        )


async def test_a_hand_over_rule_gives_the_page_to_the_person_and_the_action_is_not_done(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    site.clear()
    fake.add(act("click", "Send the gift card"))
    fake.add(act("finish", success=True, answer="handed"))
    policy = policy_file(
        tmp_path,
        '[[rule]]\nnote = "gifts are mine"\nname = "*gift card*"\ndecide = "hand_over"\n'
        '[[rule]]\ndecide = "allow"\n',
    )
    supervisor = Supervisor()
    finished = await run_session(settings(tmp_path, site, policy), supervisor=supervisor)
    assert finished.outcome == "success"
    assert supervisor.requests == []
    (human,) = supervisor.humans
    assert "rule 1 (gifts are mine)" in human.detail
    assert pressed(site) == []
    told = tool_results(fake.message_bodies[1])
    assert "hands this action to the person" in told and "rule 1 (gifts are mine)" in told
    (first, _finish) = rounds(tmp_path)
    assert first["approval"]["decision"] == "handed_over"
    assert first["approval"]["rule"]["index"] == 1


async def test_once_asks_the_first_time_then_lets_the_same_action_through(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    site.clear()
    for step in (
        act("click", "Search"),
        act("click", "Search"),
        act("click", "Delete my account"),
        act("finish", success=True, answer="done"),
    ):
        fake.add(step)
    policy = policy_file(
        tmp_path,
        '[[rule]]\nnote = "first time only"\naction = "click"\ndecide = "ask"\nonce = true\n',
    )
    supervisor = Supervisor()
    await run_session(settings(tmp_path, site, policy), supervisor=supervisor)
    # The second identical click passed; another click (another target) asked again.
    assert [r.target_name for r in supervisor.requests] == ["Search", "Delete my account"]
    assert supervisor.requests[0].once
    assert pressed(site) == ["search", "search", "delete"]
    decisions = [r["approval"]["decision"] for r in rounds(tmp_path)]
    assert decisions == ["approved", "auto", "approved", "not_needed"]


async def test_a_policy_that_allows_everything_does_not_lower_a_password_hand_over(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    site.clear()
    fake.add(act("type", "Password", text="hunter2"))
    fake.add(act("finish", success=False, answer="stopped"))
    policy = policy_file(tmp_path, 'default = "allow"\n', mode=0o600)
    supervisor = Supervisor()
    await run_session(
        settings(tmp_path, site, policy, start_url=site.url("/agent/account.html")),
        supervisor=supervisor,
    )
    # The page was handed over before the model acted, and its typing was still refused.
    assert supervisor.humans and supervisor.humans[0].kind == "password"
    typed = rounds(tmp_path)[0]
    assert typed["approval"]["decision"] == "denied"
    assert "hunter2" not in the_log(tmp_path).read_text()


async def test_run_js_asks_under_allow_unless_the_rule_names_it_in_an_owner_only_file(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    site.clear()
    for _ in range(2):
        fake.add(act("run_js", code="document.title"))
    fake.add(act("finish", success=True, answer="ran"))
    text = '[[rule]]\naction = "run_js"\ndecide = "allow"\n'
    shared = policy_file(tmp_path, text, mode=0o644)
    supervisor = Supervisor()
    await run_session(
        settings(tmp_path, site, shared, allow_js=True, max_rounds=2), supervisor=supervisor
    )
    assert [r.action.name for r in supervisor.requests] == ["run_js", "run_js"]
    assert "0600" in supervisor.requests[0].why

    fake.add(act("run_js", code="document.title"))
    fake.add(act("finish", success=True, answer="ran"))
    owner_only = tmp_path / "owner"
    owner_only.mkdir()
    supervisor = Supervisor()
    await run_session(
        settings(owner_only, site, policy_file(owner_only, text, mode=0o600), allow_js=True),
        supervisor=supervisor,
    )
    assert supervisor.requests == []


async def test_a_remembered_permission_survives_a_restart_until_it_is_revoked(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    """s in the approval: clicks on this site pass in the next run (a new process would
    read the same file: the store is read afresh by each run), but a risky click still
    asks and says why; `handrail permissions revoke` takes it back."""
    from core.guard.decision import ApprovalDecision
    from tui.cli.main import dispatch

    site.clear()
    profile = tmp_path / "profile"

    def shop(folder: str) -> RunSettings:
        return RunSettings(
            task="Look for lamps",
            start_url=site.url(SHOP),
            model_spec=MODEL,
            approve="ask",
            headless=True,
            profile=profile,
            audit_dir=tmp_path / folder,
        )

    fake.add(act("click", "Search"))
    fake.add(act("finish", success=True, answer="one"))
    first = Supervisor([ApprovalDecision("approved", remember_for_site=True)])
    await run_session(shop("logs1"), supervisor=first)
    (asked,) = first.requests
    assert asked.site == "127.0.0.1"

    fake.add(act("click", "Search"))
    fake.add(act("click", "Delete my account"))
    fake.add(act("finish", success=True, answer="two"))
    second = Supervisor()
    await run_session(shop("logs2"), supervisor=second)
    # The search passed unasked; the deletion (a commitment) asked, saying what is allowed.
    (risky,) = second.requests
    assert risky.target_name == "Delete my account" and risky.site is None
    assert (
        risky.remembered is not None and "click on 127.0.0.1 is allowed since" in risky.remembered
    )
    (log2,) = (tmp_path / "logs2").glob("*.jsonl")
    search = next(r for r in read_log(log2).records if r["type"] == "round")["approval"]
    assert search["by"] == "person (remembered permission)"
    assert search["rule"]["remembered"] and '"click"' in search["rule"]["text"]
    assert pressed(site) == ["search", "search", "delete"]

    assert dispatch(["permissions", "revoke", "127.0.0.1", "click", "--profile", str(profile)]) == 0
    fake.add(act("click", "Search"))
    fake.add(act("finish", success=True, answer="three"))
    third = Supervisor()
    await run_session(shop("logs3"), supervisor=third)
    assert [r.target_name for r in third.requests] == ["Search"]
