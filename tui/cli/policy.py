"""``handrail policy``: check an approval policy file, or show a built-in one.

``check FILE`` reads the file as a run would (errors name the rule and the fix), then
prints what it decides for a sample of actions: the sites its rules name, a search, a
commitment, a new host, an upload, run_js. ``show NAME`` prints a built-in policy (``ask``,
``risky``, ``none``): the modes of ``--approve`` are these files.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from tui.exit_codes import EXIT_USAGE

if TYPE_CHECKING:
    from core.guard.rules import Policy, Subject

POLICY_HELP = """\
A policy file (TOML) holds ordered [[rule]] tables; the first rule that matches an action
decides it, and `default` decides when none does (default: "ask").

  default = "ask"

  [[rule]]
  note = "pay/send/delete"           # shown in the approval and kept in the log
  risk = ["commitment", "form_submit"]
  decide = "ask"

  [[rule]]
  host = "rail.example"              # glob, or scheme://host:port as for secrets
  action = ["click", "type", "select_option"]
  decide = "allow"

  [budget]                           # optional: a hard stop (exit 5)
  max_cost = 0.50                    # US dollars; also max_tokens, max_time = "15m"

A rule matches on: host (the page's), page (the page's URL, a glob), action, role, name
(glob, or re:REGEX), frame_host, risk (commitment, form_submit, new_host, sensitive_field,
off_screen, upload, run_js, any, none), args ({ url = "https://*" }) and text_length
("<= 40"). It decides allow, ask, deny (refused; the model is told the rule) or hand_over
(the person takes the page); once = true asks, then lets the same action through for the
run.

What a policy cannot lower: the hand-overs for passwords, CAPTCHAs and payments; the
gate's refusals (hosts outside --allow-domain, typing into password or card fields); the
network guard; secrets' scopes; run_js always asks unless a rule names run_js and the file
is only yours (chmod 600).
"""


def add_policy_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    policy = sub.add_parser(
        "policy",
        help="check an approval policy file, or show a built-in one",
        description=POLICY_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = policy.add_subparsers(dest="policy_command", metavar="ACTION", required=True)
    check = actions.add_parser(
        "check",
        help="validate a policy file and print what it decides for sample actions",
        description="Reads FILE as a run would and prints its rules, then what it decides "
        "for a sample of actions. Exit 0: usable; 2: not (the message says why).",
    )
    check.add_argument("file", metavar="FILE", help="the policy file (TOML)")
    show = actions.add_parser(
        "show",
        help="print a built-in policy (ask, risky, none) or a policy file",
        description="The modes of --approve are built-in policy files; this prints one.",
    )
    show.add_argument("name", metavar="NAME", help="ask, risky or none, or a file's path")


def run_policy_command(args: argparse.Namespace) -> int:
    """The file's words reach the terminal as text: a control character in it is shown, not
    obeyed (a policy file may come from anyone)."""
    from core.guard.rules import PolicyError, load_policy
    from core.visible import visible

    try:
        policy = load_policy(args.file if args.policy_command == "check" else args.name)
    except PolicyError as exc:
        print(visible(f"handrail policy: {exc}"), file=sys.stderr)
        return EXIT_USAGE
    if args.policy_command == "show":
        print(visible(policy.source.removesuffix("\n")))
        return 0
    print(visible(describe_policy(policy)))
    return 0


def describe_policy(policy: Policy) -> str:
    """The policy's rules, then a table of what it decides for sample actions."""
    lines = [
        f"{policy.name}: a usable policy (sha256 {policy.sha256[:16]}…)",
        "  only yours (mode 0600): run_js may be allowed by a rule that names it"
        if policy.trusted
        else "  readable or writable by others: run_js asks whatever the rules say (chmod 600 "
        "to change that)",
    ]
    for rule in policy.rules:
        lines.append(f"  rule {rule.index}: {rule.text}")
    lines.append(f'  default = "{policy.default}" (when no rule matches)')
    budget = policy.budget
    limits = [
        f"{k} {v}"
        for k, v in (
            ("max_tokens", budget.max_tokens),
            ("max_cost", f"${budget.max_cost:.2f}" if budget.max_cost is not None else None),
            ("max_time", f"{budget.max_time:g} s" if budget.max_time is not None else None),
        )
        if v is not None
    ]
    if limits:
        lines.append("  budget: " + ", ".join(limits))
    lines += ["", "What it decides for sample actions:"]
    for label, subject in sample_actions(policy):
        ruling = policy.decide(subject)
        shown = ruling.decide
        if (
            subject.action == "run_js"
            and shown == "allow"
            and not (ruling.rule and ruling.rule.names_run_js and policy.trusted)
        ):
            shown = "ask"  # the floor: core.guard.policy.Gate
        lines.append(f"  {label:52} {shown:9} {ruling.ref.label}")
    return "\n".join(lines)


def sample_actions(policy: Policy) -> list[tuple[str, Subject]]:
    """A handful of actions on each site the rules name (or example.org)."""
    from core.guard.rules import Subject

    hosts: list[str] = []
    for rule in policy.rules:
        for origin in rule.hosts:
            host = origin.host.replace("*.", "www.").replace("*", "x")
            if host not in hosts:
                hosts.append(host)
    out: list[tuple[str, Subject]] = []
    for host in hosts[:3] or ["example.org"]:
        page = f"https://{host}/"
        out += [
            (
                f'click "Search" on {host}',
                Subject("click", {"index": 1}, page, role="button", name="Search"),
            ),
            (
                f'type "Lyon" into "From" on {host}',
                Subject("type", {"index": 2, "text": "Lyon"}, page, role="textbox", name="From"),
            ),
            (
                f'click "Pay now" (a form submit) on {host}',
                Subject(
                    "click",
                    {"index": 3},
                    page,
                    frozenset({"commitment", "form_submit"}),
                    role="button",
                    name="Pay now",
                ),
            ),
            (
                f"navigate from {host} to a new host",
                Subject(
                    "navigate", {"url": "https://elsewhere.example/"}, page, frozenset({"new_host"})
                ),
            ),
            (
                f"open {host}/account",
                Subject("navigate", {"url": f"{page}account"}, f"{page}account"),
            ),
        ]
    page = f"https://{(hosts or ['example.org'])[0]}/"
    out += [
        (
            "upload_file a local file",
            Subject("upload_file", {"index": 4, "path": "a.pdf"}, page, frozenset({"upload"})),
        ),
        ("run_js", Subject("run_js", {"code": "1"}, page, frozenset({"run_js"}))),
    ]
    return out
