"""Approval policy files: what they say is read exactly, a mistake is named with its fix,
the first matching rule decides, and nothing in a file lowers what the gate holds alone.

Policy files come from the person, but also from a colleague, a repository or a download:
a file written to look permissive must not open what handrail never lets through.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from core.actions import Action
from core.eyes.snapshot import ElementInfo, PageSignals, Snapshot
from core.guard.policy import Gate
from core.guard.rules import (
    Budget,
    PolicyError,
    Rule,
    Subject,
    builtin_policy,
    load_policy,
    parse_duration,
    parse_policy,
)
from tui.config import config_policy

PAGE = "https://rail.example/search"


def subject(action: str = "click", **kw: object) -> Subject:
    base: dict[str, object] = {"action": action, "params": {"index": 1}, "page_url": PAGE}
    base.update(kw)
    return Subject(**base)  # type: ignore[arg-type]


def decided(text: str, s: Subject) -> tuple[str, int]:
    ruling = parse_policy(text, name="p.toml").decide(s)
    return ruling.decide, ruling.ref.index


# --- reading a file -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("defualt = 'ask'", "unknown key 'defualt'"),
        ("[[rule]]\nhost = 'a.example'", "say what it decides"),
        ("[[rule]]\ndecide = 'maybe'", "must be one of allow, ask, deny, hand_over"),
        ("[[rule]]\nhots = 'a'\ndecide = 'ask'", "rule 1: unknown key 'hots'"),
        ("[[rule]]\naction = 'pay'\ndecide = 'ask'", "no action 'pay'"),
        ("[[rule]]\nrisk = 'scary'\ndecide = 'ask'", "no risk class 'scary'"),
        ("[[rule]]\nname = 're:(('\ndecide = 'ask'", "not a regular expression"),
        ("[[rule]]\ndecide = 'allow'\nonce = true", 'once only goes with decide = "ask"'),
        ("[[rule]]\nhost = 'https://a.example/path'\ndecide = 'ask'", "is not a host"),
        ("[[rule]]\ntext_length = 'long'\ndecide = 'ask'", "text_length is a bound"),
        ("[[rule]]\nnote = '" + "x" * 300 + "'\ndecide = 'ask'", "at most 200 characters"),
        ("[budget]\nmax_time = 'soon'", "90s, 15m or 1.5h"),
        ("[budget]\nmax_cost = -1", "positive number of US dollars"),
        ("[budget]\nmax_tokens = true", "whole number of tokens"),
        ("rule = 3", "[[rule]] tables"),
        ("[[rule]", "not TOML"),
    ],
)
def test_a_mistake_in_a_policy_is_named_with_where_it_is(text: str, named: str) -> None:
    with pytest.raises(PolicyError) as e:
        parse_policy(text, name="p.toml")
    assert named in str(e.value) and str(e.value).startswith("p.toml")


def test_a_missing_file_or_unknown_builtin_says_what_exists(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="ask, risky, none"):
        load_policy(str(tmp_path / "nope.toml"))


def test_the_record_keeps_the_file_as_read_and_its_sha256(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text("# mine\n[[rule]]\nnote = 'n'\ndecide = 'deny'\n")
    policy = load_policy(str(path))
    record = policy.record()
    assert record["source"] == path.read_text()
    assert record["sha256"] == __import__("hashlib").sha256(path.read_bytes()).hexdigest()
    assert policy.rules[0].text == 'note = "n", decide = "deny"'


def test_only_an_owner_only_file_is_trusted(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text("default = 'allow'\n")
    path.chmod(0o644)
    assert not load_policy(str(path)).trusted
    path.chmod(0o600)
    assert load_policy(str(path)).trusted
    path.chmod(0o620)  # group may write: someone else could add a run_js rule
    assert not load_policy(str(path)).trusted


def test_the_config_files_policy_table_is_a_policy(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        'theme = "dark"\n[policy]\ndefault = "allow"\n[[policy.rule]]\nrisk = "any"\ndecide = "ask"\n'
    )
    spec = config_policy(tmp_path)
    assert spec == f"{tmp_path / 'config.toml'}#policy"
    policy = load_policy(spec)
    assert policy.default == "allow" and policy.rules[0].decide == "ask"
    (tmp_path / "config.toml").write_text('theme = "dark"\n')
    assert config_policy(tmp_path) is None


def test_durations() -> None:
    assert [parse_duration(t) for t in ("90", "90s", "15m", "1.5h")] == [90, 90, 900, 5400]


# --- matching -------------------------------------------------------------------------------


def test_the_first_matching_rule_decides_and_the_default_when_none_does() -> None:
    text = """
default = "deny"
[[rule]]
action = "click"
name = "*delete*"
decide = "ask"
[[rule]]
action = "click"
decide = "allow"
"""
    assert decided(text, subject(name="Delete account")) == ("ask", 1)
    assert decided(text, subject(name="Search")) == ("allow", 2)
    assert decided(text, subject("type", name="Search")) == ("deny", 0)


@pytest.mark.parametrize(
    ("rule", "matches", "misses"),
    [
        ("host = 'rail.example'", {}, {"page_url": "https://evil.example/"}),
        ("host = '*.example'", {}, {"page_url": "https://example.org/"}),
        ("host = 'https://rail.example:443'", {}, {"page_url": "http://rail.example/"}),
        # A look-alike host or userinfo never passes for the named host.
        ("host = 'rail.example'", {}, {"page_url": "https://rail.example.evil.example/"}),
        ("host = 'rail.example'", {}, {"page_url": "https://rail.example@evil.example/"}),
        ("page = '*/search*'", {}, {"page_url": "https://rail.example/account"}),
        ("role = 'button'", {"role": "button"}, {"role": "link"}),
        ("name = 'Pay*'", {"name": "pay now"}, {"name": "Prepay"}),
        ("name = 're:^Pay'", {"name": "Pay now"}, {"name": "pay now"}),
        ("frame_host = 'pay.example'", {"frame_url": "https://pay.example/f"}, {}),
        ("risk = 'commitment'", {"risks": frozenset({"commitment"})}, {}),
        ("risk = 'any'", {"risks": frozenset({"new_host"})}, {}),
        ("risk = 'none'", {}, {"risks": frozenset({"upload"})}),
        (
            "args = { url = 'https://rail.example/*' }",
            {"params": {"url": "https://rail.example/a"}},
            {"params": {"url": "https://evil.example/"}},
        ),
        ("text_length = '<= 5'", {"params": {"text": "Lyon"}}, {"params": {"text": "Lyon Part"}}),
    ],
)
def test_each_kind_of_match(
    rule: str, matches: dict[str, object], misses: dict[str, object]
) -> None:
    text = f"[[rule]]\n{rule}\ndecide = 'deny'\n"
    assert decided(text, subject(**matches))[0] == "deny"
    assert decided(text, subject(**misses))[0] == "ask"


def test_remembered_permissions_come_after_the_files_rules() -> None:
    policy = parse_policy("[[rule]]\nname = '*delete*'\ndecide = 'ask'\n", name="p")
    remembered = Rule(
        index=0,
        text='host = "rail.example", action = "click", decide = "allow"',
        decide="allow",
        hosts=policy.rules[0].hosts,
        actions=frozenset({"click"}),
        risks=frozenset({"none"}),
        remembered="2026-12-03",
    )
    extended = policy.with_remembered([remembered])
    assert extended.decide(subject(name="Delete")).ref.index == 1
    ruling = extended.decide(subject(name="Search"))
    assert (ruling.decide, ruling.ref.index) == ("allow", 2)
    assert ruling.ref.label == "your permission since 2026-12-03"


# --- the gate: the built-in modes are policies, and what no policy lowers -----------------------


def element(index: int, name: str, **kw: object) -> ElementInfo:
    base = ElementInfo(
        index=index,
        tag="button",
        role="button",
        name=name,
        attrs={},
        line=f"[{index}]<button>{name}</button>",
        rect=(0, 0, 10, 10),
        in_viewport=True,
        is_new=False,
        frame=None,
        shadow=False,
        editable=False,
        disabled=False,
        input_type=None,
        autocomplete=None,
        form_action=None,
        form_method=None,
        submits_form=False,
        focused=False,
        sensitive=None,
    )
    return replace(base, **kw)  # type: ignore[arg-type]


SNAPSHOT = Snapshot(
    url=PAGE,
    title="",
    text="",
    elements={
        1: element(1, "Search"),
        2: element(2, "Pay now"),
        3: element(3, "Password", tag="input", role="textbox", editable=True, sensitive="password"),
        4: element(4, "Elsewhere", tag="a", role="link", attrs={"href": "https://evil.example/"}),
    },
    scroll=(0, 0, 800, 600, 800, 600),
    truncated=None,
    hidden_instruction_fragments=0,
    frames=(),
    signals=PageSignals(),
    focused_index=None,
)


def click(index: int) -> Action:
    return Action("click", {"index": index})


def test_the_builtin_modes_decide_as_the_modes_did() -> None:
    ask, risky, none = (Gate(mode=m) for m in ("ask", "risky", "none"))
    assert ask.assess(click(1), SNAPSHOT).needs_approval
    assert not risky.assess(click(1), SNAPSHOT).needs_approval
    assert risky.assess(click(2), SNAPSHOT).needs_approval  # a commitment
    assert not none.assess(click(2), SNAPSHOT).needs_approval
    assert ask.asks() and risky.asks() and not none.asks()
    assert builtin_policy("none").builtin and not builtin_policy("none").rules[0].once


def test_a_permissive_file_does_not_lower_the_gates_refusals(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(
        'default = "allow"\n[[rule]]\naction = ["run_js", "type", "click"]\ndecide = "allow"\n'
    )
    os.chmod(path, 0o600)
    gate = Gate(policy=load_policy(str(path)), allow_domains=["rail.example"])
    outside = gate.assess(click(4), SNAPSHOT)
    assert outside.refused and "outside the domains" in outside.refused
    typed = gate.assess(Action("type", {"index": 3, "text": "hunter2"}), SNAPSHOT)
    assert typed.refused and "never types passwords" in typed.refused
    assert gate.assess(Action("run_js", {"code": "1"}), SNAPSHOT).refused  # no --allow-js


def test_run_js_asks_under_allow_unless_named_in_a_trusted_file() -> None:
    text = '[[rule]]\naction = "run_js"\ndecide = "allow"\n'
    code = Action("run_js", {"code": "1"})
    untrusted = Gate(policy=parse_policy(text, name="p", trusted=False), allow_js=True)
    assert untrusted.assess(code, SNAPSHOT).needs_approval
    trusted = Gate(policy=parse_policy(text, name="p", trusted=True), allow_js=True)
    assert not trusted.assess(code, SNAPSHOT).needs_approval
    by_default = Gate(
        policy=parse_policy('default = "allow"', name="p", trusted=True), allow_js=True
    )
    assert by_default.assess(code, SNAPSHOT).needs_approval  # no rule names run_js


def test_a_deny_rule_refuses_with_its_note_for_the_model() -> None:
    gate = Gate(
        policy=parse_policy(
            "[[rule]]\nnote = 'no paying'\nname = 'Pay*'\ndecide = 'deny'", name="p"
        )
    )
    verdict = gate.assess(click(2), SNAPSHOT)
    assert verdict.refused and "rule 1 (no paying)" in verdict.refused
    assert verdict.rule is not None and verdict.rule.index == 1


def test_budget_from_the_command_line_over_the_files() -> None:
    merged = Budget(max_tokens=10, max_cost=1.0).over(Budget(max_cost=0.5))
    assert merged == Budget(max_tokens=10, max_cost=0.5)
