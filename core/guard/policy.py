"""Who must approve what, what is refused outright, and when a person must take over.

These are deterministic rules enforced in code, whatever the model believes: a page can
talk a model into anything, so the model's judgement is never the last line of defence.

- :class:`Gate` assesses each parsed action against the page the person and the model saw:
  ``--approve ask`` asks for every page-changing action, ``risky`` only for risky ones
  (new hosts, commitments, sensitive fields, off-screen fields, run_js), ``none`` asks for
  nothing. Refusals hold in every mode: hosts outside ``--allow-domain``, typing anything
  but a configured secret into a password or payment field, clicking a CAPTCHA, run_js
  when not allowed.
- :func:`detect_handover` looks at every observation for pages a person must handle
  (passwords, one-time codes, CAPTCHAs, payments) before the model may act on them.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal
from urllib.parse import urljoin, urlsplit

from core.actions import PAGE_CHANGING, Action
from core.eyes.snapshot import ElementInfo, SensitiveField, Snapshot
from core.guard.decision import HumanKind, RuleRef
from core.guard.rules import Policy, Rule, Subject, builtin_policy
from core.hands.shot import PointHit
from core.keys import MOVING_KEYS
from core.secrets import Secrets, only_placeholders

ApproveMode = Literal["ask", "risky", "none"]

COMMITMENT_WORDS = re.compile(
    r"\b(buy|pay|purchase|order|book|reserve|checkout|check\s*out|confirm|submit|send|post|publish|"
    r"delete|remove|transfer|subscribe|sign\s*up|register|accept|agree|donate|place\s+order)\b",
    re.IGNORECASE,
)
CREDENTIAL_WORDS = re.compile(
    r"\b(password|passcode|pass\s*word|pin|one[- ]time|otp|verification code|2fa|two[- ]factor|"
    r"security code|cvc|cvv|card number|login|log in|sign in|credentials?)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Assessment:
    """The gate's view of one action."""

    page_changing: bool
    needs_approval: bool
    risky: bool
    why: str
    details: tuple[str, ...] = ()
    refused: str | None = None
    """When set, the action must not run at all; the text is for the model."""
    sensitive: bool = False
    """The target is a password, code or payment field (its text is redacted in the log)."""
    risks: frozenset[str] = frozenset()
    """Why it is risky, as classes a policy's rules match (:data:`core.guard.rules.RISK_CLASSES`)."""
    rule: RuleRef | None = None
    """The policy's rule that decided it (None: the gate decided alone: a refusal, or an
    action that changes nothing)."""
    hand_over: bool = False
    """The policy hands the page to the person instead of running the action."""
    once: bool = False
    """Asked under a ``once`` rule: once approved, the same action passes for the run."""


@dataclass(frozen=True, slots=True)
class Finding:
    """Something on a page that a person must handle."""

    kind: HumanKind
    detail: str


def host_of(url: str) -> str:
    """The URL's host, lower-case; an IPv6 address without its brackets (``::1``)."""
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def port_of(url: str) -> int | None:
    """The URL's port, or its scheme's default (80, 443; ws 80, wss 443); None when unknown."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    return port if port is not None else _DEFAULT_PORTS.get(parts.scheme.lower())


_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


@dataclass(frozen=True, slots=True)
class AllowPattern:
    """One ``--allow-domain`` entry: a host glob and, when given, the only port it admits."""

    host: str
    """Lower-case glob; an IPv6 address without brackets. A glob-free name also admits its
    subdomains (``example.com`` admits ``www.example.com``)."""
    port: int | None = None

    def admits(self, host: str, port: int | None) -> bool:
        if self.port is not None and port != self.port:
            return False
        host = host.lower().rstrip(".")
        if fnmatch.fnmatchcase(host, self.host):
            return True
        return not self.is_glob and host.endswith("." + self.host)

    @property
    def is_glob(self) -> bool:
        return any(c in self.host for c in "*?[")


def parse_allow_pattern(text: str) -> AllowPattern:
    """Parse ``HOST``, ``HOST:PORT``, ``[IPV6]`` or ``[IPV6]:PORT`` (HOST may be a glob).

    A bare IPv6 address (``::1``, two colons or more) is read as a host without port.
    Raises ValueError with a message that names the entry and says how to write it.
    """
    entry = text.strip().lower()
    port_text: str | None = None
    if entry.startswith("["):
        end = entry.find("]")
        rest = entry[end + 1 :] if end > 0 else "?"
        if end < 0 or (rest and not rest.startswith(":")):
            raise ValueError(
                f"--allow-domain {text!r}: write an IPv6 address as [::1] or [::1]:8080"
            )
        host = entry[1:end]
        port_text = rest[1:] if rest else None
    elif entry.count(":") == 1:
        host, port_text = entry.split(":")
    else:
        host = entry
    host = host.rstrip(".")
    if not host or "/" in host:
        raise ValueError(
            f"--allow-domain {text!r}: give a host name (example.com, *.example.com), "
            "optionally with :PORT; not a URL"
        )
    port: int | None = None
    if port_text is not None:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise ValueError(f"--allow-domain {text!r}: the port must be a number from 1 to 65535")
        port = int(port_text)
    return AllowPattern(host, port)


def host_allowed(host: str, patterns: Sequence[str], port: int | None = None) -> bool:
    """Whether ``host`` (and ``port``, when the entry names one) matches one of the
    ``--allow-domain`` entries (none given: all hosts). See :func:`parse_allow_pattern`.

    An entry with a port admits only that port; ``port=None`` never matches such an entry.
    An entry that does not parse admits nothing.
    """
    if not patterns:
        return True
    for text in patterns:
        try:
            pattern = parse_allow_pattern(text)
        except ValueError:
            continue
        if pattern.admits(host, port):
            return True
    return False


def url_allowed(url: str, patterns: Sequence[str]) -> bool:
    """Whether the URL's host and port are admitted by ``patterns`` (none given: all)."""
    return host_allowed(host_of(url), patterns, port_of(url))


class Gate:
    """Assesses actions for one run. Holds the run's memory: hosts visited, kinds pre-approved."""

    def __init__(
        self,
        *,
        mode: ApproveMode = "ask",
        policy: Policy | None = None,
        allow_domains: Sequence[str] = (),
        allow_js: bool = False,
        secrets: Secrets | None = None,
    ) -> None:
        self.policy = policy if policy is not None else builtin_policy(mode)
        """Who decides what asks: ``--policy FILE``, or the built-in policy of ``mode``."""
        self.allow_domains = tuple(allow_domains)
        self.allow_js = allow_js
        self.secrets = secrets or Secrets()
        self.visited_hosts: set[str] = set()
        self._kinds: set[str] = set()
        self._once: set[tuple[int, str]] = set()

    # -- run memory ----------------------------------------------------------------------

    def note_visit(self, url: str) -> None:
        host = host_of(url)
        if host and url.startswith(("http:", "https:")):
            self.visited_hosts.add(host)

    def preapprove_kind(self, tool: str) -> None:
        """The person approved every further non-risky action of this tool (``A``)."""
        self._kinds.add(tool)

    def kind_preapproved(self, tool: str) -> bool:
        return tool in self._kinds

    def remember_once(self, action: Action, verdict: Assessment) -> None:
        """The person approved an action a ``once`` rule asked about: the same action
        (name and arguments) passes under that rule for the rest of the run."""
        if verdict.once and verdict.rule is not None:
            self._once.add((verdict.rule.index, _signature(action)))

    def asks(self) -> bool:
        """Whether this run's policy ever waits for a person: page dialogs ask then, and an
        action whose target changed under an approval is asked about again."""
        return self.policy.can_ask

    def asks_for_dialogs(self) -> bool:
        return self.asks()

    def remember(self, rule: Rule) -> None:
        """A permission the person gave just now (``s``): it holds for the rest of this run
        too, after the policy's own rules."""
        self.policy = self.policy.with_remembered([rule])

    def remembered(self, url: str, action: str) -> Rule | None:
        """The remembered permission for ``action`` on the page at ``url``, if any."""
        subject = Subject(action=action, params={}, page_url=url)
        return next(
            (r for r in self.policy.rules if r.remembered is not None and r.matches(subject)),
            None,
        )

    def allowed_by(self, rule: RuleRef | None = None) -> str:
        """Who let an action through unasked, for its record: the person's remembered
        permission, ``--approve none`` (a built-in policy) or ``policy`` (a file's)."""
        if rule is not None and rule.remembered is not None:
            return BY_REMEMBERED
        return f"--approve {self.policy.name}" if self.policy.builtin else "policy"

    # -- assessment ----------------------------------------------------------------------

    def assess(
        self, action: Action, snapshot: Snapshot, *, hit: PointHit | None = None
    ) -> Assessment:
        """The verdict on ``action`` against ``snapshot``. ``hit``: what the browser hits at
        the point a ``click_at`` (or a drag by an offset) ends on, read just before this
        (:meth:`core.hands.Page.locate`); such an action is judged as a click on it."""
        if action.name not in PAGE_CHANGING:
            return Assessment(
                page_changing=False,
                needs_approval=False,
                risky=False,
                why="does not change the page",
            )
        verdict: Assessment
        if action.name == "click_at":
            verdict = self._assess_click_at(action, snapshot, hit)
        elif action.name == "drag":
            verdict = self._assess_drag(action, snapshot, hit)
        else:
            check = getattr(self, f"_assess_{action.name}", None)
            verdict = check(action, snapshot) if check else _ask(EVERY_ACTION)
        if verdict.refused:
            return verdict
        return self._rule_on(action, snapshot, hit, verdict)

    def _rule_on(
        self, action: Action, snapshot: Snapshot, hit: PointHit | None, verdict: Assessment
    ) -> Assessment:
        """What the policy's first matching rule makes of the gate's own verdict. It can
        ask, refuse or hand over anything; what it lets through the gate had not refused,
        and run_js still asks unless the rule names it in a file only its owner may write."""
        role, name, frame = _target(action, snapshot, hit)
        ruling = self.policy.decide(
            Subject(
                action=action.name,
                params=action.params,
                page_url=snapshot.url,
                risks=verdict.risks,
                role=role,
                name=name,
                frame_url=frame,
            )
        )
        ref = ruling.ref
        if ruling.decide == "deny":
            return _refuse(
                f"refused by {ref.label}",
                f"the person's approval policy refuses this action ({ref.label}); do not try "
                "it again another way. Choose something else, or call finish if the task "
                "cannot go on.",
                sensitive=verdict.sensitive,
                rule=ref,
            )
        if ruling.decide == "hand_over":
            return replace(verdict, needs_approval=False, hand_over=True, rule=ref)
        if ruling.decide == "allow":
            if action.name == "run_js" and not (
                ruling.rule is not None and ruling.rule.names_run_js and self.policy.trusted
            ):
                return replace(
                    verdict,
                    needs_approval=True,
                    rule=ref,
                    why=f"{verdict.why}; {ref.label} allows it, but run_js asks unless a rule "
                    "names run_js in a policy file only you may write (mode 0600)",
                )
            return replace(verdict, needs_approval=False, rule=ref)
        once = ruling.rule is not None and ruling.rule.once
        if once and (ref.index, _signature(action)) in self._once:
            return replace(verdict, needs_approval=False, rule=ref, once=True)
        return replace(verdict, needs_approval=True, rule=ref, once=once)

    def _assess_navigate(self, action: Action, snapshot: Snapshot) -> Assessment:
        url = str(action.params.get("url", ""))
        return self._destination(url, details=(f"Full URL: {url}",))

    def _destination(
        self, url: str, *, details: tuple[str, ...], what: str = "navigation"
    ) -> Assessment:
        host = host_of(url)
        if host and not url_allowed(url, self.allow_domains):
            return _refuse(
                "host not allowed",
                f"{host} is outside the domains this run may visit "
                f"({', '.join(self.allow_domains)}); you may not go there. Stay on the allowed sites.",
            )
        if host and host not in self.visited_hosts:
            return _ask(f"{what} to a new host: {host}", details, risks=("new_host",))
        return _ask(EVERY_ACTION, details)

    def _element(self, action: Action, snapshot: Snapshot) -> ElementInfo | Assessment:
        index = action.params.get("index")
        element = snapshot.elements.get(index) if isinstance(index, int) else None
        if element is None:
            return _refuse(
                "unknown element",
                f"there is no element [{index}] in the current page state; use an index from the newest digest",
                risky=False,
            )
        return element

    def _assess_click(self, action: Action, snapshot: Snapshot) -> Assessment:
        element = self._element(action, snapshot)
        if isinstance(element, Assessment):
            return element
        details = [f"Element: {element.line}"]
        if _is_captcha(element):
            return _refuse(
                "CAPTCHA",
                "CAPTCHAs are never clicked or solved by the agent; call ask_human so the person can do it",
            )
        href = element.attrs.get("href")
        if element.tag == "a" and href:
            # The whole address where the page gave one (the line's href is cut at 80).
            absolute = element.link or urljoin(snapshot.url, href)
            if absolute.startswith(("http:", "https:")):
                destination = self._destination(
                    absolute, details=(*details, f"Link to: {absolute}"), what="link"
                )
                if destination.refused or destination.risky:
                    return destination
        # Only a form's submit path submits (a submit button, an image input). A type=button
        # inside a form (a calendar day, a "Next month") is an ordinary click: flagging it
        # made "approve all clicks" useless on any form with a widget in it.
        if element.submits_form:
            target = element.form_action or snapshot.url
            details.append(
                f"Submits a form to: {target} ({(element.form_method or 'get').upper()})"
            )
            verdict = self._destination(target, details=tuple(details), what="form submission")
            if verdict.refused:
                return verdict
            commits = ("commitment",) if COMMITMENT_WORDS.search(element.name or "") else ()
            return _ask("submits a form", details, risks=("form_submit", *commits, *verdict.risks))
        if COMMITMENT_WORDS.search(element.name or ""):
            return _ask(
                f"reads like a commitment: {element.name!r}", details, risks=("commitment",)
            )
        return _ask(EVERY_ACTION, details)

    def _assess_click_at(
        self, action: Action, snapshot: Snapshot, hit: PointHit | None
    ) -> Assessment:
        if hit is None:
            return _refuse(
                "no point", "click_at was not done: what is at that point could not be read"
            )
        at = f"At ({action.params.get('x')}, {action.params.get('y')}) of the screenshot: {hit.describe}"
        point = self._judge_point(hit, snapshot, "click")
        if point.refused:
            return point
        return replace(point, details=(at, *point.details))

    def _judge_point(self, hit: PointHit, snapshot: Snapshot, verb: str) -> Assessment:
        """A click (or a drop) at a point, judged as a click on what the browser hits there:
        the digest's element around it when there is one, else the element itself."""
        if hit.frame:
            return _refuse(
                "another site's frame",
                f"that point is inside a frame from {hit.frame}: handrail does not {verb} "
                "where it cannot check what is there; use an index the digest lists",
            )
        if hit.invisible:
            return _refuse(
                "invisible element at the point",
                f"an invisible element ({hit.describe}: {hit.invisible}) lies at that point"
                + (f" over {hit.beneath}" if hit.beneath else "")
                + f"; it would get the {verb} instead of what a person sees there",
            )
        if hit.sensitive and verb != "click":
            return _refuse(
                f"{hit.sensitive} field",
                f"that point is on a {hit.sensitive} field: the agent never drops anything "
                "into passwords, codes or card fields. Call ask_human.",
                sensitive=True,
            )
        listed = next((snapshot.elements[i] for i in hit.chain if i in snapshot.elements), None)
        if listed is not None:
            return self._assess_click(Action("click", {"index": listed.index}), snapshot)
        details = (f"Element (not in the digest): {hit.describe}",)
        if _is_captcha_text(f"{hit.name} {hit.describe}"):
            return _refuse(
                "CAPTCHA",
                "CAPTCHAs are never clicked or solved by the agent; call ask_human so the person can do it",
            )
        if COMMITMENT_WORDS.search(hit.name or ""):
            return _ask(f"reads like a commitment: {hit.name!r}", details, risks=("commitment",))
        return _ask(EVERY_ACTION, details)

    def _assess_drag(self, action: Action, snapshot: Snapshot, hit: PointHit | None) -> Assessment:
        params = action.params
        details: list[str] = []
        risky_why: list[str] = []
        risks: list[str] = []
        if "index" in params:
            source = self._element(action, snapshot)
            if isinstance(source, Assessment):
                return source
            details.append(f"Drag: {source.line}")
            if _is_captcha(source):
                return _refuse(
                    "CAPTCHA",
                    "CAPTCHAs (slider puzzles included) are never dragged or solved by the "
                    "agent; call ask_human so the person can do it",
                )
            if source.sensitive is not None:
                return _refuse(
                    f"{source.sensitive} field",
                    f"[{source.index}] is a {source.sensitive} field: nothing is dragged out of it",
                    sensitive=True,
                )
            if _foreign_frame(source, snapshot):
                return _refuse(
                    "another site's frame",
                    f"[{source.index}] is inside another site's frame: drag within one page only",
                )
        else:
            details.append(f"Drop the file: {params.get('path')}")
            risky_why.append("sends a local file to the site")
            risks.append("upload")
        if "to" in params:
            dest = snapshot.elements.get(params["to"]) if isinstance(params["to"], int) else None
            if dest is None:
                return _refuse(
                    "unknown element",
                    f"there is no element [{params['to']}] in the current page state; use an "
                    "index from the newest digest",
                    risky=False,
                )
            details.append(f"Drop on: {dest.line}")
            if dest.sensitive is not None:
                return _refuse(
                    f"{dest.sensitive} field",
                    f"[{dest.index}] is a {dest.sensitive} field: the agent never drops anything "
                    "into passwords, codes or card fields. Call ask_human.",
                    sensitive=True,
                )
            if _foreign_frame(dest, snapshot):
                return _refuse(
                    "another site's frame",
                    f"[{dest.index}] is inside another site's frame: what is dropped there "
                    "would go to that site; drag within one page only",
                )
            end = self._assess_click(Action("click", {"index": dest.index}), snapshot)
        else:
            if hit is None:
                return _refuse("no end point", "what is at the drag's end point could not be read")
            details.append(
                f"Drop at ({params.get('dx')}, {params.get('dy')}) from it: {hit.describe}"
            )
            end = self._judge_point(hit, snapshot, "drop")
        if end.refused:
            return end
        if end.risky:
            risky_why.append(f"the drop target {end.why}")
            risks.extend(end.risks)
        if risky_why:
            return _ask("; ".join(risky_why), details, risks=tuple(risks))
        return _ask(EVERY_ACTION, details)

    def _assess_hover(self, action: Action, snapshot: Snapshot) -> Assessment:
        element = self._element(action, snapshot)
        if isinstance(element, Assessment):
            return element
        # No button goes down, so a hover commits to nothing and is never risky by itself;
        # it does change the page (a menu opens), so ask mode asks as for a click.
        return _ask(EVERY_ACTION, (f"Element: {element.line}",))

    def _assess_type(self, action: Action, snapshot: Snapshot) -> Assessment:
        element = self._element(action, snapshot)
        if isinstance(element, Assessment):
            return element
        text = str(action.params.get("text", ""))
        shown = (
            text
            if self.secrets.contains_placeholder(text) or element.sensitive is None
            else "«redacted»"
        )
        details = [f"Field: {element.line}", f"Text: {shown}"]
        if element.sensitive is not None:
            if not (text and only_placeholders(text) and self._known_placeholders(text)):
                names = self.secrets.names()
                offer = (
                    f", or use one of the configured secrets: {', '.join(f'<secret:{n}>' for n in names)}"
                    if names
                    else ""
                )
                return _refuse(
                    f"{element.sensitive} field",
                    f"[{element.index}] is a {element.sensitive} field: the agent never types passwords, "
                    f"codes or card numbers. Call ask_human so the person can fill it in{offer}.",
                    sensitive=True,
                )
            return _ask(
                f"fills a {element.sensitive} field with a configured secret",
                details,
                risks=("sensitive_field",),
                sensitive=True,
            )
        if not element.in_viewport:
            return _ask("the field is not visible in the viewport", details, risks=("off_screen",))
        if action.params.get("submit"):
            target = element.form_action or snapshot.url
            details.append(f"Then presses Enter, which may submit the form to: {target}")
            return _ask("types and submits", details, risks=("form_submit",))
        return _ask(EVERY_ACTION, details)

    def _known_placeholders(self, text: str) -> bool:
        names = set(self.secrets.names())
        return bool(names) and all(
            m in names for m in re.findall(r"<secret:([A-Za-z0-9_.-]+)>", text)
        )

    def _assess_select_option(self, action: Action, snapshot: Snapshot) -> Assessment:
        element = self._element(action, snapshot)
        if isinstance(element, Assessment):
            return element
        return _ask(
            EVERY_ACTION, (f"Field: {element.line}", f"Option: {action.params.get('option')}")
        )

    def _assess_upload_file(self, action: Action, snapshot: Snapshot) -> Assessment:
        element = self._element(action, snapshot)
        if isinstance(element, Assessment):
            return element
        return _ask(
            "sends a local file to the site",
            (f"Field: {element.line}", f"File: {action.params.get('path')}"),
            risks=("upload",),
        )

    def _assess_press_key(self, action: Action, snapshot: Snapshot) -> Assessment:
        keys = str(action.params.get("keys", ""))
        focused = (
            snapshot.elements.get(snapshot.focused_index)
            if snapshot.focused_index is not None
            else None
        )
        details: tuple[str, ...] = (
            f"Keys: {keys}",
            f"Focused: {focused.line if focused else '(nothing)'}",
        )
        if (
            focused is not None
            and focused.sensitive is not None
            and keys.lower() not in MOVING_KEYS
        ):
            return _refuse(
                f"keys into a {focused.sensitive} field",
                f"[{focused.index}] is a {focused.sensitive} field and has the focus: the agent "
                "never types passwords, codes or card numbers, not even key by key. Call "
                "ask_human so the person can fill it in.",
                sensitive=True,
            )
        if keys.split("+")[-1].lower() in ("enter", "return") and focused is not None:
            verdict_risks: frozenset[str] = frozenset()
            if focused.form_action:
                details += (f"May submit the form to: {focused.form_action}",)
                verdict = self._destination(
                    focused.form_action, details=details, what="form submission"
                )
                if verdict.refused:
                    return verdict
                verdict_risks = verdict.risks
            return _ask("Enter may submit a form", details, risks=("form_submit", *verdict_risks))
        return _ask(EVERY_ACTION, details)

    def _assess_run_js(self, action: Action, snapshot: Snapshot) -> Assessment:
        if not self.allow_js:
            return _refuse(
                "run_js not allowed",
                "run_js is not available in this run (the person did not pass --allow-js)",
            )
        return _ask(
            "runs JavaScript in the page (always asks)",
            (f"Code:\n{action.params.get('code', '')}",),
            risks=("run_js",),
        )


EVERY_ACTION = "every page-changing action asks"
BY_REMEMBERED = "person (remembered permission)"
"""Who let an action through that a permission the person gave with ``s`` covers."""


def _ask(
    why: str, details: Sequence[str] = (), *, risks: Sequence[str] = (), sensitive: bool = False
) -> Assessment:
    """A page-changing action that may run once the person (or the policy) allows it;
    ``risks``: its risk classes (:data:`core.guard.rules.RISK_CLASSES`), none when it is
    not risky."""
    return Assessment(
        page_changing=True,
        needs_approval=True,
        risky=bool(risks),
        why=why,
        details=tuple(details),
        sensitive=sensitive,
        risks=frozenset(risks),
    )


def _refuse(
    why: str,
    message: str,
    *,
    risky: bool = True,
    sensitive: bool = False,
    rule: RuleRef | None = None,
) -> Assessment:
    """An action that must not run in any mode; ``message`` is written for the model."""
    return Assessment(
        page_changing=True,
        needs_approval=False,
        risky=risky,
        why=why,
        refused=message,
        sensitive=sensitive,
        rule=rule,
    )


def _signature(action: Action) -> str:
    """One action's name and arguments, for "the same action" of a ``once`` rule."""
    return json.dumps([action.name, action.params], sort_keys=True, default=str)


def _target(
    action: Action, snapshot: Snapshot, hit: PointHit | None
) -> tuple[str | None, str | None, str | None]:
    """The role, name and frame URL of what ``action`` acts on (Nones: nothing listed)."""
    element: ElementInfo | None = None
    index = action.params.get("index")
    if isinstance(index, int):
        element = snapshot.elements.get(index)
    elif action.name == "press_key" and snapshot.focused_index is not None:
        element = snapshot.elements.get(snapshot.focused_index)
    elif hit is not None:
        element = next((snapshot.elements[i] for i in hit.chain if i in snapshot.elements), None)
        if element is None:
            return None, hit.name, None
    if element is None:
        return None, None, None
    return element.role, element.name, element.frame


def _foreign_frame(element: ElementInfo, snapshot: Snapshot) -> bool:
    """Whether ``element`` lies in a frame of another site than the page's."""
    if element.frame_key is not None:
        return True
    host = host_of(element.frame or "")
    return bool(host) and host != host_of(snapshot.url)


def _is_captcha(element: ElementInfo) -> bool:
    return _is_captcha_text(
        " ".join([element.name or "", *element.attrs.values(), element.frame or ""])
    )


def _is_captcha_text(text: str) -> bool:
    blob = text.lower()
    return any(
        k in blob
        for k in (
            "recaptcha",
            "hcaptcha",
            "turnstile",
            "captcha",
            "i'm not a robot",
            "i am not a robot",
        )
    )


def looks_like_credential_prompt(message: str) -> bool:
    return bool(CREDENTIAL_WORDS.search(message))


def detect_handover(snapshot: Snapshot, acknowledged: set[tuple[str, str]]) -> Finding | None:
    """The first thing on this page a person must handle, unless already handled here.

    Runs on every observation, before the model sees the page.
    """
    for finding in _findings(snapshot):
        if handled_key(snapshot.url, finding.kind) not in acknowledged:
            return finding
    return None


def handled_key(url: str, kind: str) -> tuple[str, str]:
    """What marks a hand-over of ``kind`` as handled on the page at ``url``: the page is
    its URL without query or fragment."""
    parts = urlsplit(url)
    return (f"{parts.scheme}://{parts.netloc}{parts.path}", kind)


def _findings(snapshot: Snapshot) -> list[Finding]:
    signals = snapshot.signals
    found: list[Finding] = []
    if signals.captchas:
        where = "; ".join(f"{c.kind} ({c.where})" for c in signals.captchas[:3])
        found.append(Finding("captcha", f"a CAPTCHA is on the page: {where}"))
    groups: tuple[tuple[HumanKind, str, tuple[SensitiveField, ...]], ...] = (
        ("password", "a password field", signals.password_fields),
        ("otp", "a one-time-code field", signals.otp_fields),
        ("payment", "payment card fields", signals.card_fields),
    )
    for kind, label, fields in groups:
        if fields:
            where = ", ".join(_field_name(f) for f in fields[:4])
            framed = all("frame " in f.where for f in fields)
            found.append(
                Finding(kind, f"{label} {'in a frame' if framed else 'on the page'}: {where}")
            )
    if signals.payment_frames and not signals.card_fields:
        found.append(
            Finding("payment", f"a payment form from {', '.join(signals.payment_frames[:2])}")
        )
    for blocked in signals.blocked_frames:
        for frame_kind in blocked.kinds:
            what, human = _BLOCKED_KINDS[frame_kind]
            found.append(
                Finding(
                    human,
                    f"the {what} is served from {blocked.host or blocked.url}, which this run "
                    f"may not load ({blocked.label}): hand over, or allow that host",
                )
            )
    return found


# What a blocked frame seems to hold, and the hand-over it calls for.
_BLOCKED_KINDS: dict[str, tuple[str, HumanKind]] = {
    "payment": ("payment form", "payment"),
    "signin": ("sign-in form", "password"),
    "captcha": ("CAPTCHA", "captcha"),
}


def _field_name(field: SensitiveField) -> str:
    name = field.name or "unnamed field"
    place = f" in {field.where}" if field.where and field.where != "page" else ""
    return f"[{field.index}] {name}{place}" if field.index else f"{name}{place}"
