"""Approval policy as code: ordered rules, read from TOML, the first match decides.

A policy file says what the person wants asked, let through, refused or handed to them::

    default = "ask"                 # when no rule matches (the default: ask)

    [[rule]]
    note = "never touch the account page"
    page = "*/account*"
    decide = "deny"

    [[rule]]
    note = "pay/send/delete"
    risk = ["commitment", "form_submit"]
    decide = "ask"

    [[rule]]
    host = "rail.example"
    action = ["click", "type", "select_option"]
    decide = "allow"

    [budget]
    max_cost = 0.50                 # USD; also max_tokens, max_time = "10m"

A rule matches when every key it gives matches (a list: any of its entries). What it can
match (:data:`MATCH_KEYS`): the page's host, as a glob or scheme://host:port as for secrets
(``host``); the page's URL (``page``, a glob); the action's name (``action``); the target's
role, name and frame host (``role``, ``name``, ``frame_host``); the risk classes the gate
computed (``risk``, :data:`RISK_CLASSES`, or ``any``/``none``); the action's arguments
(``args = { url = "https://*" }``) and the typed text's length (``text_length = "<= 40"``).
Patterns are globs (case-insensitive) unless written ``re:...`` (a Python regex, searched).

What a rule decides (``decide``): ``allow``, ``ask``, ``deny`` (refused; the model is told
why, with the rule's ``note``) or ``hand_over`` (the person takes the page). ``once`` asks
the first time and then lets identical actions through for the rest of the run.

A policy never lowers what the gate holds on its own (:class:`core.guard.policy.Gate`):
refusals (hosts outside ``--allow-domain``, typing into password or card fields, CAPTCHAs),
the hand-overs for passwords, CAPTCHAs and payments, the network guard and secrets' scopes
stay. ``run_js`` asks even under ``allow`` unless the rule names ``run_js`` and the file is
only its owner's (mode 0600) or one of handrail's own.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any, Literal, cast

from core.actions import TOOL_NAMES
from core.guard.decision import RuleRef
from core.secrets import Origin, SecretsError, parse_origin, parse_scope, scope_matches

Decide = Literal["allow", "ask", "deny", "hand_over"]
DECISIONS: tuple[Decide, ...] = ("allow", "ask", "deny", "hand_over")

RISK_CLASSES: dict[str, str] = {
    "commitment": "the target's name reads like a commitment (pay, book, send, delete…)",
    "form_submit": "submits a form (a submit button, Enter in a form, type with submit)",
    "new_host": "goes to a host this run has not visited",
    "sensitive_field": "fills a password, code or card field with a configured secret",
    "off_screen": "types into a field outside the viewport",
    "upload": "sends a local file to the site",
    "run_js": "runs JavaScript in the page",
}
"""The risk classes the gate computes for an action, with what each means."""

MATCH_KEYS = (
    "host",
    "page",
    "action",
    "role",
    "name",
    "frame_host",
    "risk",
    "args",
    "text_length",
)
RULE_KEYS = (*MATCH_KEYS, "decide", "once", "note")
BUILTIN = ("ask", "risky", "none")
"""The approval modes, each a policy file shipped with handrail (``handrail policy show``)."""

NOTE_LIMIT = 200
"""Characters of a rule's note: a line in the approval dialog and in the model's refusal."""
_LENGTH = re.compile(r"^\s*(<=|>=|<|>|==)?\s*(\d+)\s*$")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h)?\s*$")


class PolicyError(ValueError):
    """A policy file that cannot be used; the message names the file, the rule and the fix."""


@dataclass(frozen=True, slots=True)
class Pattern:
    """A glob (case-insensitive) or, written ``re:...``, a regular expression (searched)."""

    text: str
    regex: re.Pattern[str]

    @classmethod
    def parse(cls, text: str) -> Pattern:
        if text.startswith("re:"):
            return cls(text, re.compile(text[3:]))
        return cls(text, re.compile(_glob_regex(text), re.IGNORECASE | re.DOTALL))

    def matches(self, value: str) -> bool:
        return self.regex.search(value) is not None


def _glob_regex(glob: str) -> str:
    out = []
    for ch in glob:
        out.append(".*" if ch == "*" else "." if ch == "?" else re.escape(ch))
    return "^" + "".join(out) + "$"


@dataclass(frozen=True, slots=True)
class Subject:
    """What a rule is matched against: one action as the gate judged it."""

    action: str
    params: Mapping[str, Any]
    page_url: str
    risks: frozenset[str] = frozenset()
    role: str | None = None
    name: str | None = None
    frame_url: str | None = None


@dataclass(frozen=True, slots=True)
class Rule:
    """One ``[[rule]]``: what it matches and what it decides."""

    index: int
    """1-based, in the order the file gives them (remembered permissions follow)."""
    text: str
    """The rule as written, on one line: what the approval and the record show."""
    decide: Decide
    hosts: tuple[Origin, ...] = ()
    pages: tuple[Pattern, ...] = ()
    actions: frozenset[str] = frozenset()
    roles: frozenset[str] = frozenset()
    names: tuple[Pattern, ...] = ()
    frame_hosts: tuple[Origin, ...] = ()
    risks: frozenset[str] = frozenset()
    args: tuple[tuple[str, Pattern], ...] = ()
    text_length: tuple[str, int] | None = None
    once: bool = False
    note: str | None = None
    remembered: str | None = None
    """For a remembered permission: since when (``2026-12-03``); None for a file's rule."""

    def matches(self, s: Subject) -> bool:
        if self.actions and s.action not in self.actions:
            return False
        if self.hosts and not any(scope_matches(h, parse_origin(s.page_url)) for h in self.hosts):
            return False
        if self.pages and not any(p.matches(s.page_url) for p in self.pages):
            return False
        if self.roles and (s.role or "").lower() not in self.roles:
            return False
        if self.names and not any(p.matches(s.name or "") for p in self.names):
            return False
        if self.frame_hosts:
            if not s.frame_url:
                return False
            where = parse_origin(s.frame_url)
            if not any(scope_matches(h, where) for h in self.frame_hosts):
                return False
        if self.risks and not _risks_match(self.risks, s.risks):
            return False
        for key, pattern in self.args:
            value = s.params.get(key)
            if value is None or not pattern.matches(_arg_text(value)):
                return False
        if self.text_length is not None:
            text = s.params.get("text")
            if not isinstance(text, str) or not _compare(len(text), *self.text_length):
                return False
        return True

    @property
    def names_run_js(self) -> bool:
        return "run_js" in self.actions

    def ref(self, policy: Policy) -> RuleRef:
        return RuleRef(
            index=self.index,
            text=self.text,
            note=self.note,
            policy_sha256=policy.sha256,
            remembered=self.remembered,
        )


def _risks_match(wanted: frozenset[str], present: frozenset[str]) -> bool:
    if "none" in wanted and not present:
        return True
    if "any" in wanted and present:
        return True
    return bool(wanted & present)


def _arg_text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _compare(n: int, op: str, bound: int) -> bool:
    return {
        "<=": n <= bound,
        ">=": n >= bound,
        "<": n < bound,
        ">": n > bound,
        "==": n == bound,
    }[op]


@dataclass(frozen=True, slots=True)
class Budget:
    """Limits with a hard stop; None: no limit."""

    max_tokens: int | None = None
    max_cost: float | None = None
    """US dollars, priced from core/model/prices.toml."""
    max_time: float | None = None
    """Seconds of the run's wall clock."""

    def over(self, other: Budget) -> Budget:
        """These limits, with ``other``'s where it sets one (the command line over the file)."""
        return Budget(
            other.max_tokens if other.max_tokens is not None else self.max_tokens,
            other.max_cost if other.max_cost is not None else self.max_cost,
            other.max_time if other.max_time is not None else self.max_time,
        )

    def to_json(self) -> dict[str, Any]:
        return {"max_tokens": self.max_tokens, "max_cost": self.max_cost, "max_time": self.max_time}


@dataclass(frozen=True, slots=True)
class Ruling:
    """What the policy decided for one action, and which rule decided it."""

    decide: Decide
    rule: Rule | None
    ref: RuleRef


@dataclass(frozen=True)
class Policy:
    """An ordered list of rules and the decision when none matches."""

    name: str
    """A built-in's name (``ask``), or the file's path as given."""
    source: str
    """The file's text, as read: what ``run_start`` records."""
    rules: tuple[Rule, ...]
    default: Decide = "ask"
    trusted: bool = False
    """One of handrail's own, or a file only its owner may read and write (mode 0600)."""
    budget: Budget = field(default_factory=Budget)
    sha256: str = ""

    builtin: bool = False
    """One of handrail's own (``ask``, ``risky``, ``none``)."""

    @property
    def can_ask(self) -> bool:
        """Whether anything this policy decides waits for a person (dialogs ask then too)."""
        return self.default in ("ask", "hand_over") or any(
            r.decide in ("ask", "hand_over") for r in self.rules
        )

    def decide(self, subject: Subject) -> Ruling:
        for rule in self.rules:
            if rule.matches(subject):
                return Ruling(rule.decide, rule, rule.ref(self))
        return Ruling(
            self.default,
            None,
            RuleRef(
                index=0, text=f'default = "{self.default}"', note=None, policy_sha256=self.sha256
            ),
        )

    def with_remembered(self, rules: Iterable[Rule]) -> Policy:
        """This policy with remembered permissions appended after its own rules."""
        extra = tuple(replace(r, index=len(self.rules) + i) for i, r in enumerate(rules, 1))
        return replace(self, rules=self.rules + extra) if extra else self

    def record(self) -> dict[str, Any]:
        """The whole policy, for ``run_start``."""
        return {
            "name": self.name,
            "sha256": self.sha256,
            "trusted": self.trusted,
            "default": self.default,
            "source": self.source,
            "remembered": [r.text for r in self.rules if r.remembered is not None],
            "budget": self.budget.to_json(),
        }


def builtin_source(name: str) -> str:
    """The text of a built-in policy (``ask``, ``risky``, ``none``)."""
    if name not in BUILTIN:
        raise PolicyError(f"no built-in policy {name!r}: there are {', '.join(BUILTIN)}")
    return (resources.files("core.guard") / "policies" / f"{name}.toml").read_text("utf-8")


def builtin_policy(name: str) -> Policy:
    return replace(parse_policy(builtin_source(name), name=name, trusted=True), builtin=True)


def load_policy(spec: str) -> Policy:
    """A built-in's name, a policy file's path, or ``FILE#policy``: the ``[policy]`` table
    of a TOML file (handrail's config file). Raises :class:`PolicyError`."""
    if spec in BUILTIN and not Path(spec).exists():
        return builtin_policy(spec)
    table: str | None = None
    if spec.endswith(TABLE_SUFFIX) and not Path(spec).expanduser().exists():
        spec, table = spec.removesuffix(TABLE_SUFFIX), TABLE_SUFFIX[1:]
    path = Path(spec).expanduser()
    try:
        raw = path.read_bytes()
        st = os.stat(path)
    except FileNotFoundError:
        raise PolicyError(
            f"policy file {spec} is not there (a file's path, or one of the built-in "
            f"policies: {', '.join(BUILTIN)})"
        ) from None
    except OSError as exc:
        raise PolicyError(f"cannot read the policy file {spec}: {exc.strerror}") from None
    if len(raw) > 1_000_000:
        raise PolicyError(f"policy file {spec} is over a megabyte: not a policy")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise PolicyError(f"policy file {spec} is not UTF-8 text") from None
    owner_only = st.st_uid == os.geteuid() and st.st_mode & 0o077 == 0
    if table is None:
        return parse_policy(text, name=spec, trusted=owner_only)
    data = _toml(text, spec).get(table)
    if not isinstance(data, dict):
        raise PolicyError(f"{spec} has no [{table}] table")
    # The table as the run read it: its own words, whatever else the file holds.
    source = json.dumps(data, ensure_ascii=False, indent=1, default=str)
    return policy_of(data, source, name=f"{spec} [{table}]", trusted=owner_only)


TABLE_SUFFIX = "#policy"


def _toml(text: str, name: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PolicyError(f"{name}: not TOML ({exc})") from None


def parse_policy(text: str, *, name: str, trusted: bool = False) -> Policy:
    """Read a policy from TOML ``text``; ``name`` is how errors name it."""
    return policy_of(_toml(text, name), text, name=name, trusted=trusted)


def policy_of(data: Mapping[str, Any], source: str, *, name: str, trusted: bool) -> Policy:
    """A policy from its parsed TOML ``data``; ``source`` is what the run records of it."""
    unknown = sorted(set(data) - {"default", "rule", "budget"})
    if unknown:
        raise PolicyError(
            f"{name}: unknown key {unknown[0]!r}; a policy has default, [[rule]] and [budget]"
        )
    default = _decision(data.get("default", "ask"), f"{name}: default")
    raw_rules = data.get("rule", [])
    if not isinstance(raw_rules, list) or not all(isinstance(r, dict) for r in raw_rules):
        raise PolicyError(f"{name}: rules are written [[rule]] tables")
    rules = tuple(_rule(r, i, name) for i, r in enumerate(raw_rules, 1))
    return Policy(
        name=name,
        source=source,
        rules=rules,
        default=default,
        trusted=trusted,
        budget=_budget(data.get("budget", {}), name),
        sha256=hashlib.sha256(source.encode("utf-8")).hexdigest(),
    )


def _decision(value: object, where: str) -> Decide:
    for decide in DECISIONS:
        if value == decide:
            return decide
    raise PolicyError(f"{where} must be one of {', '.join(DECISIONS)} (got {value!r})")


def _strings(value: object, where: str) -> list[str]:
    items = value if isinstance(value, list) else [value]
    if not items or not all(isinstance(v, str) and v for v in items):
        raise PolicyError(f"{where} must be a string or a list of strings")
    return cast(list[str], items)


def _patterns(value: object, where: str) -> tuple[Pattern, ...]:
    out = []
    for text in _strings(value, where):
        try:
            out.append(Pattern.parse(text))
        except re.error as exc:
            raise PolicyError(f"{where}: {text!r} is not a regular expression ({exc})") from None
    return tuple(out)


def _origins(value: object, where: str) -> tuple[Origin, ...]:
    out = []
    for text in _strings(value, where):
        try:
            out.append(parse_scope(text))
        except SecretsError:
            raise PolicyError(
                f"{where}: {text!r} is not a host: write host, *.host, host:port or "
                "scheme://host[:port]"
            ) from None
    return tuple(out)


def _rule(raw: dict[str, Any], index: int, name: str) -> Rule:
    where = f"{name}: rule {index}"
    unknown = sorted(set(raw) - set(RULE_KEYS))
    if unknown:
        raise PolicyError(
            f"{where}: unknown key {unknown[0]!r} (a rule has {', '.join(RULE_KEYS)})"
        )
    if "decide" not in raw:
        raise PolicyError(f"{where}: say what it decides: decide = {' | '.join(DECISIONS)}")
    decide = _decision(raw["decide"], f"{where}: decide")
    actions = (
        frozenset(_strings(raw["action"], f"{where}: action")) if "action" in raw else frozenset()
    )
    if bad := sorted(actions - set(TOOL_NAMES)):
        raise PolicyError(f"{where}: no action {bad[0]!r}; handrail's are {', '.join(TOOL_NAMES)}")
    risks = frozenset(_strings(raw["risk"], f"{where}: risk")) if "risk" in raw else frozenset()
    if bad := sorted(risks - set(RISK_CLASSES) - {"any", "none"}):
        raise PolicyError(
            f"{where}: no risk class {bad[0]!r}; they are {', '.join(RISK_CLASSES)}, any, none"
        )
    args: list[tuple[str, Pattern]] = []
    raw_args = raw.get("args", {})
    if not isinstance(raw_args, dict):
        raise PolicyError(f'{where}: args is a table of patterns: args = {{ url = "https://*" }}')
    for key, value in raw_args.items():
        for pattern in _patterns(value, f"{where}: args.{key}"):
            args.append((key, pattern))
    length: tuple[str, int] | None = None
    if "text_length" in raw:
        found = _LENGTH.match(str(raw["text_length"]))
        if found is None:
            raise PolicyError(f'{where}: text_length is a bound such as "<= 40" or "> 200"')
        length = (found.group(1) or "==", int(found.group(2)))
    once = raw.get("once", False)
    if not isinstance(once, bool):
        raise PolicyError(f"{where}: once is true or false")
    if once and decide != "ask":
        raise PolicyError(f'{where}: once only goes with decide = "ask"')
    note = raw.get("note")
    if note is not None and (not isinstance(note, str) or len(note) > NOTE_LIMIT):
        raise PolicyError(f"{where}: note is a string of at most {NOTE_LIMIT} characters")
    return Rule(
        index=index,
        text=rule_text(raw),
        decide=decide,
        hosts=_origins(raw["host"], f"{where}: host") if "host" in raw else (),
        pages=_patterns(raw["page"], f"{where}: page") if "page" in raw else (),
        actions=actions,
        roles=frozenset(r.lower() for r in _strings(raw["role"], f"{where}: role"))
        if "role" in raw
        else frozenset(),
        names=_patterns(raw["name"], f"{where}: name") if "name" in raw else (),
        frame_hosts=_origins(raw["frame_host"], f"{where}: frame_host")
        if "frame_host" in raw
        else (),
        risks=risks,
        args=tuple(args),
        text_length=length,
        once=once,
        note=note,
    )


def rule_text(raw: Mapping[str, Any]) -> str:
    """A rule on one line, its keys in the order written: ``decide = "ask", risk = [...]``."""
    return ", ".join(f"{k} = {json.dumps(v, ensure_ascii=False)}" for k, v in raw.items())


def _budget(raw: object, name: str) -> Budget:
    if not isinstance(raw, dict):
        raise PolicyError(f"{name}: [budget] is a table (max_tokens, max_cost, max_time)")
    unknown = sorted(set(raw) - {"max_tokens", "max_cost", "max_time"})
    if unknown:
        raise PolicyError(
            f"{name}: [budget] has no {unknown[0]!r} (max_tokens, max_cost, max_time)"
        )
    tokens = raw.get("max_tokens")
    if tokens is not None and (
        not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 1
    ):
        raise PolicyError(f"{name}: [budget] max_tokens is a whole number of tokens, at least 1")
    cost = raw.get("max_cost")
    if cost is not None and (
        not isinstance(cost, (int, float)) or isinstance(cost, bool) or cost <= 0
    ):
        raise PolicyError(f"{name}: [budget] max_cost is a positive number of US dollars")
    time_s = None
    if raw.get("max_time") is not None:
        try:
            time_s = parse_duration(str(raw["max_time"]))
        except ValueError as exc:
            raise PolicyError(f"{name}: [budget] {exc}") from None
    return Budget(tokens, float(cost) if cost is not None else None, time_s)


def parse_duration(text: str) -> float:
    """Seconds from ``90``, ``90s``, ``15m`` or ``1.5h``. Raises ValueError saying how to
    write one."""
    found = _DURATION.match(text)
    if found is None or float(found.group(1)) <= 0:
        raise ValueError(f"max_time {text!r}: write a duration such as 90s, 15m or 1.5h")
    return float(found.group(1)) * {"s": 1, "m": 60, "h": 3600}[found.group(2) or "s"]
