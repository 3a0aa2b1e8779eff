"""The gate's side of a round: between the model's action and the page.

:class:`Checkpoint` takes one parsed action and sees it through: the policy's assessment
(``core.guard``), the person's decision when one is needed (the
:class:`~core.run.events.Supervisor`), the secrets put in at the last moment, and the
dispatch to the hands with what the person saw as the expectation. It also hands the page
to the person (a password, a CAPTCHA, a payment, the model's ``ask_human``) and answers the
page's own dialogs. The loop (:mod:`core.run.agent`) observes, asks the model and records;
nothing that changes a page runs except through :meth:`Checkpoint.act`.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any, Literal, overload
from urllib.parse import urljoin, urlsplit

from core.actions import Action
from core.audit.records import ApprovalRecord
from core.eyes.snapshot import ElementInfo, Snapshot
from core.guard.decision import ApprovalDecision, HumanKind, RuleRef
from core.guard.policy import (
    Assessment,
    Finding,
    Gate,
    handled_key,
    host_of,
    looks_like_credential_prompt,
)
from core.hands import DialogInfo, Page, TargetExpectation
from core.hands.badge import Badge
from core.hands.shot import PointHit
from core.keys import KeySpecError, parse_keys, pastes
from core.result import DENIED_BY_PERSON, ActionResult
from core.run.events import (
    ActionIntent,
    ApprovalGiven,
    ApprovalNeeded,
    ApprovalRequest,
    Event,
    HumanNeeded,
    HumanRequest,
    HumanReturned,
    NoSupervisor,
    RunFinished,
    Supervisor,
    TargetCrop,
)
from core.run.permissions import REMEMBERABLE, PermissionStore
from core.run.target_picture import crop_target
from core.secrets import Secrets, SecretsError, only_placeholders, replace_texts, withheld_mark

MAX_REAPPROVALS = 3
# What the hands call a sensitive field → the kind of hand-over it becomes.
_SENSITIVE_HANDOVER: dict[str, HumanKind] = {
    "password": "password",
    "one-time code": "otp",
    "card": "payment",
}
Outcome = Literal[
    "success", "failure", "gave_up", "round_limit", "aborted", "human_needed", "error", "budget"
]


class StopRun(Exception):
    """Ends the run from deep inside a round (an abort, or nobody to ask)."""

    def __init__(self, finished: RunFinished) -> None:
        super().__init__(finished.reason)
        self.finished = finished


class Checkpoint:
    """Decides, asks and acts for one run's loop, which hands it these callables:

    ``emit`` (the run's events), ``mark`` (the in-page badge), ``observe`` (a fresh
    digest, when the target changed under an approval), ``note`` (a line for the model's
    next observation) and ``finished`` (the run's end, for :class:`StopRun`).
    """

    def __init__(
        self,
        *,
        page: Page,
        gate: Gate,
        supervisor: Supervisor,
        secrets: Secrets,
        action_timeout: float,
        headless: bool,
        emit: Callable[[Event], None],
        mark: Callable[[Callable[[Badge], Awaitable[bool]]], Awaitable[None]],
        observe: Callable[[int], Awaitable[tuple[Snapshot, str]]],
        note: Callable[[str], None],
        finished: Callable[[Outcome, str, int], RunFinished],
        permissions: PermissionStore | None = None,
    ) -> None:
        self.page = page
        self.permissions = permissions
        """Where ``s`` keeps what the person allows on a site from now on (None: nowhere,
        and ``s`` is not offered)."""
        self.gate = gate
        self.supervisor = supervisor
        self.secrets = secrets
        self.action_timeout = action_timeout
        self.headless = headless
        self._emit = emit
        self._mark = mark
        self._observe = observe
        self._note = note
        self._finished = finished
        self.round = 0
        self.reason_by = "the model's"
        """Whose reason the round's action carries, for the approval: "recorded" when a rerun
        replayed the recorded step (set by the agent each round)."""
        """The loop's current round (a page's dialog can open at any time)."""
        self.acknowledged: set[tuple[str, str]] = set()
        """(page, kind) hand-overs the person has already handled."""
        self.dialog_finding: Finding | None = None
        """A credential prompt() the page opened, for the next observation to hand over."""

    async def act(
        self, n: int, action: Action, snapshot: Snapshot
    ) -> tuple[ActionResult, ApprovalRecord, float]:
        started = time.monotonic()
        changed_note: str | None = None
        asked = action  # the model's own; a person's edit replaces ``action`` below
        action = resolved_navigation(action, snapshot)
        refused = self._paste_refusal(action, snapshot)
        if refused is not None:
            return ActionResult.failure(refused), ApprovalRecord.refused(refused), started
        for _attempt in range(MAX_REAPPROVALS + 1):
            hit = await self._point_hit(action, snapshot)
            if isinstance(hit, ActionResult):
                # Nothing was sent: no screenshot, a point off it or out of view now.
                return self._for_model(hit), ApprovalRecord.refused(hit.message), started
            assessment = self.gate.assess(action, snapshot, hit=hit)
            if assessment.refused:
                if assessment.sensitive:
                    self._withhold(asked, action)
                return (
                    ActionResult.failure(assessment.refused),
                    ApprovalRecord.refused(assessment.refused, assessment.rule),
                    started,
                )
            if assessment.hand_over and assessment.rule is not None:
                return (
                    await self._rule_hands_over(n, action, snapshot, assessment.rule),
                    (ApprovalRecord.handed_over(assessment.rule)),
                    started,
                )
            decision, approval = await self._decide(
                n, action, snapshot, assessment, changed_note, hit
            )
            if decision is not None and decision.decision == "denied":
                note = decision.note or "no reason given"
                return (
                    ActionResult.failure(
                        f"{DENIED_BY_PERSON} ({note}). Take that into account and choose "
                        "another way, or call finish if the task cannot go on."
                    ),
                    approval,
                    started,
                )
            if decision is not None and decision.decision == "edited" and decision.edited_params:
                action = replace(action, params={**action.params, **decision.edited_params})
                action = resolved_navigation(action, snapshot)
                hit = await self._point_hit(action, snapshot)
                if isinstance(hit, ActionResult):
                    return self._for_model(hit), approval, started
                assessment = self.gate.assess(action, snapshot, hit=hit)
                if assessment.refused:
                    if assessment.sensitive:
                        self._withhold(asked, action)
                    return ActionResult.failure(assessment.refused), approval, started
                if assessment.hand_over:
                    # The person's edit made an action their policy hands to them: it is
                    # not run, and their approval of the other one does not stand for it.
                    return (
                        ActionResult.failure(
                            f"not done: the edited action is one the approval policy hands "
                            f"to the person ({assessment.rule.label if assessment.rule else 'a rule'})"
                        ),
                        approval,
                        started,
                    )
            try:
                dispatched = self._with_secrets(action, snapshot)
            except SecretsError as exc:
                return ActionResult.failure(str(exc)), approval, started
            self._emit(
                ActionIntent(round=n, action=withheld(action), sensitive=assessment.sensitive)
            )
            started = time.monotonic()
            expect = self._expectation(action, snapshot, hit)
            secret = action.name == "type" and only_placeholders(str(action.params.get("text")))
            result = await self._dispatch(
                dispatched,
                expect,
                secret=secret,
                expect_to=self._expectation_to(action, snapshot),
                at=hit.index if hit is not None and action.name == "drag" else None,
            )
            if result.code == "sensitive_field":
                # Judged at dispatch on the field as it was then: what the model meant to type
                # is withheld for good, and the page is a hand-over.
                self._withhold(asked, action)
                kind = _SENSITIVE_HANDOVER.get(
                    str((result.data or {}).get("sensitive")), "password"
                )
                finding = Finding(kind, result.error or result.message)
                await self.hand_over(n, finding, snapshot.url, snapshot.title)
                self.acknowledged.add(handled_key(snapshot.url, finding.kind))
                self._note(
                    "The person was asked to fill in a password, code or card field and has handed "
                    "control back. Do not type into such fields yourself."
                )
                return self._for_model(result), approval, started
            if result.code == "target_changed" and self.gate.asks():
                # The page changed between the person's decision and dispatch: ask again
                # about what is there now, never act on a target the person did not see.
                changed_note = result.message
                snapshot, _ = await self._observe(n)
                continue
            return self._for_model(result), approval, started
        return (
            ActionResult.failure(
                "the target kept changing between approval and dispatch; not done"
            ),
            ApprovalRecord.refused(),
            started,
        )

    async def _point_hit(
        self, action: Action, snapshot: Snapshot
    ) -> PointHit | ActionResult | None:
        """What is at the point a ``click_at`` clicks, or a drag by an offset ends on, read
        now for the gate (None for other actions); the failure when it cannot be read."""
        p = action.params
        if action.name == "click_at":
            return await self.page.locate(float(p["x"]), float(p["y"]))
        if action.name == "drag" and "dx" in p and isinstance(p.get("index"), int):
            source = snapshot.elements.get(p["index"])
            if source is None:
                return None  # the gate refuses the unknown index
            x, y, w, h = source.rect
            return await self.page.hit_test(
                x + w / 2 + float(p["dx"]), y + h / 2 + float(p.get("dy", 0))
            )
        return None

    async def _decide(
        self,
        n: int,
        action: Action,
        snapshot: Snapshot,
        assessment: Assessment,
        changed_note: str | None,
        hit: PointHit | None = None,
    ) -> tuple[ApprovalDecision | None, ApprovalRecord]:
        # After the target changed under an approval, the person is asked about what is there
        # now, even for an action the policy would have let through on its own.
        must_ask = changed_note is not None and self.gate.asks()
        approval: ApprovalRecord | None = None
        if not assessment.needs_approval and not must_ask:
            approval = (
                ApprovalRecord.automatic(assessment.rule, by=self.gate.allowed_by(assessment.rule))
                if assessment.page_changing
                else ApprovalRecord.not_needed()
            )
        elif not assessment.risky and not must_ask and self.gate.kind_preapproved(action.name):
            approval = ApprovalRecord.kind_approved(assessment.rule)
        if approval is not None:
            self._emit(
                ApprovalGiven(round=n, decision=ApprovalDecision("approved", by=approval.by))
            )
            return None, approval
        details = list(assessment.details)
        if changed_note:
            details.insert(0, f"The page changed since the previous request: {changed_note}")
        line, name = shown_target(action, snapshot, hit)
        request = ApprovalRequest(
            round=n,
            action=action,
            url=self.secrets.mask_for_model(snapshot.url),
            title=self.secrets.mask_for_model(snapshot.title),
            why=assessment.why,
            element_line=line,
            target_name=name,
            risky=assessment.risky,
            details=tuple(details),
            crop=await self._target_crop(action, snapshot, hit),
            reason_by=self.reason_by,
            asked_by=self._asked_by(assessment.rule),
            once=assessment.once,
            site=self._site(action, snapshot, assessment),
            remembered=self._remembered(action, snapshot, assessment),
        )
        self._emit(ApprovalNeeded(request=request))
        target = self._target_rect(action, snapshot, hit)
        if target is not None:
            await self._mark(lambda badge: badge.pending(target))
        try:
            decision = await self.supervisor.approve(request)
        except NoSupervisor as exc:
            raise StopRun(
                self._finished(
                    "human_needed",
                    f"{action.name} needs approval ({assessment.why}) and nobody can give it in a "
                    f"non-interactive run: {exc}. Waiting action: {describe(withheld(action))}",
                    3,
                )
            ) from exc
        if decision.approve_kind_for_run and assessment.risky:
            # A risky action asks every time (the dialog says so), whoever answered: "all of
            # this kind" does not apply, and the record must not say that it did.
            decision = replace(decision, approve_kind_for_run=False)
        edited = decision.edited_params
        shown = decision
        if edited and isinstance(edited.get("text"), str) and not only_placeholders(edited["text"]):
            # The person's own text for the field is withheld like the model's, until typed.
            shown = replace(
                decision, edited_params={**edited, "text": withheld_mark(edited["text"])}
            )
        self._emit(ApprovalGiven(round=n, decision=shown))
        await self._mark(lambda badge: badge.driving())
        if decision.decision == "abort":
            raise StopRun(
                self._finished("aborted", "the person aborted the run at an approval", 130)
            )
        if decision.approve_kind_for_run and decision.decision in ("approved", "edited"):
            self.gate.preapprove_kind(action.name)
        if decision.decision == "approved":
            self.gate.remember_once(action, assessment)
        if decision.remember_for_site:
            site = request.site if decision.decision == "approved" else None
            if site is None or self.permissions is None:
                # Offered only where it may be kept: the record must not say it was.
                decision = replace(decision, remember_for_site=False)
            else:
                given = self.permissions.add(site, action.name)
                if given is not None:
                    self.gate.remember(given.rule())
        return decision, ApprovalRecord.of(decision, assessment.rule)

    def _site(self, action: Action, snapshot: Snapshot, assessment: Assessment) -> str | None:
        """The host ``s`` would remember this kind of action on, or None when it may not."""
        if self.permissions is None or assessment.risky or action.name not in REMEMBERABLE:
            return None
        if not snapshot.url.startswith(("http:", "https:")):
            return None
        return host_of(snapshot.url) or None

    def _remembered(self, action: Action, snapshot: Snapshot, assessment: Assessment) -> str | None:
        """A permission that covers this kind of action here but not this one (it is risky)."""
        rule = self.gate.remembered(snapshot.url, action.name)
        if rule is None or not assessment.risky:
            return None
        return (
            f"{action.name} on {host_of(snapshot.url)} is allowed since {rule.remembered}, "
            "but not this one: it is risky"
        )

    def _asked_by(self, rule: RuleRef | None) -> str | None:
        """ "rule 3 (pay/send/delete)" for the approval; None where saying it adds nothing
        (``--approve ask``: the default of a built-in policy asks for everything)."""
        if rule is None or (rule.index == 0 and self.gate.policy.builtin):
            return None
        return rule.label

    def _paste_refusal(self, action: Action, snapshot: Snapshot) -> str | None:
        """Why a paste must not run here, or None. A run's clipboard is its own: a secret
        typed on its own site can be copied there (by the page, or by the model's Control+C),
        so while a scoped secret is configured, pasting is refused wherever that secret may
        not be typed (the focused field's own document decides, as for typing)."""
        if not _pastes(action):
            return None
        focused = snapshot.elements.get(snapshot.focused_index or -1)
        where = field_document(focused, snapshot.url) if focused else snapshot.url
        names = [
            name
            for name in self.secrets.names()
            if (secret := self.secrets.get(name)) is not None
            and secret.domains
            and not secret.allows(where)
        ]
        if not names:
            return None
        held = ", ".join(f"<secret:{name}>" for name in names)
        return (
            f"pasting is refused on this page: the clipboard may hold {held}, which may not be "
            "used here. Type the text instead (a secret goes in as <secret:NAME>, where it may)."
        )

    def _withhold(self, *actions: Action) -> None:
        """The text (or keys) these actions meant for a field judged sensitive was not typed,
        and must not be seen again: not in a record, a log line, a model request or a screen.
        (The model's action and the person's edit of it, when they differ.)"""
        for action in actions:
            for key in ("text", "keys"):
                value = action.params.get(key)
                if isinstance(value, str):
                    self.secrets.withhold(value)

    def _with_secrets(self, action: Action, snapshot: Snapshot) -> Action:
        """The action with its ``<secret:NAME>`` put in, checked against the origin of the
        document that holds the field (:func:`field_document`), not the top page's: a frame
        from another site inside an allowed page must not receive the value."""
        text = action.params.get("text")
        if (
            action.name != "type"
            or not isinstance(text, str)
            or not self.secrets.contains_placeholder(text)
        ):
            return action
        # An index the digest does not list has no known document: no scope passes there.
        element = target_of(action, snapshot)
        where = field_document(element, snapshot.url) if element is not None else ""
        return replace(
            action, params={**action.params, "text": self.secrets.substitute(text, where)}
        )

    def _expectation(
        self, action: Action, snapshot: Snapshot, hit: PointHit | None = None
    ) -> TargetExpectation | None:
        if action.name == "click_at" and hit is not None:
            # The element the browser hit at the point, as the person was shown it.
            return TargetExpectation(
                url=snapshot.url, index=hit.index, name=hit.name, rect=hit.rect
            )
        index = action.params.get("index")
        if not isinstance(index, int):
            return None
        element = snapshot.elements.get(index)
        if element is None:
            return None
        return TargetExpectation(
            url=snapshot.url, index=index, name=element.name, rect=element.rect
        )

    def _expectation_to(self, action: Action, snapshot: Snapshot) -> TargetExpectation | None:
        """A drag's destination as the person approved it."""
        to = action.params.get("to")
        if action.name != "drag" or not isinstance(to, int) or to not in snapshot.elements:
            return None
        element = snapshot.elements[to]
        return TargetExpectation(url=snapshot.url, index=to, name=element.name, rect=element.rect)

    async def _dispatch(
        self,
        action: Action,
        expect: TargetExpectation | None,
        *,
        secret: bool = False,
        expect_to: TargetExpectation | None = None,
        at: int | None = None,
    ) -> ActionResult:
        # The hands have their own timeouts; this outer bound guards against anything that
        # escapes them. What happened then is unknown, and is never retried.
        limit = self.action_timeout + 15
        if expect is not None:
            x, y, w, h = expect.rect
            await self._mark(lambda badge: badge.pointer(x + w / 2, y + h / 2))
        try:
            async with asyncio.timeout(limit):
                return await self.page.dispatch(
                    action, expect=expect, secret=secret, expect_to=expect_to, at=at
                )
        except TimeoutError:
            return ActionResult.unknown(
                f"{action.name} did not finish within {limit:g} s; whether it took effect is unknown. "
                "Look at the page state before doing anything else."
            )

    def _for_model(self, result: ActionResult) -> ActionResult:
        """A page may echo a secret back (a confirmation page, a field's read-back)."""
        message = self.secrets.mask_for_model(result.message)
        error = self.secrets.mask_for_model(result.error) if result.error else None
        notices = tuple(self.secrets.mask_for_model(x) for x in result.notices)
        return replace(result, message=message, error=error, notices=notices)

    async def decide_dialog(self, dialog: DialogInfo) -> tuple[bool, str | None]:
        """Confirm and prompt dialogs opened by a page: the person decides, credentials go to them."""
        if dialog.type == "prompt" and looks_like_credential_prompt(dialog.message):
            self.dialog_finding = Finding(
                "password", f"the page asked for credentials in a prompt(): {dialog.message!r}"
            )
            return False, None
        action = Action(
            name="answer_dialog",
            params={"type": dialog.type, "message": dialog.message, "accept": True},
            reason="the page opened a dialog during the last action",
        )
        if not self.gate.asks_for_dialogs():
            return True, dialog.default_prompt or None
        request = ApprovalRequest(
            round=self.round,
            action=action,
            url=dialog.url,
            title="",
            why=f"the page opened a {dialog.type} dialog; approving accepts it, denying dismisses it",
            risky=True,
            details=(f"Dialog text: {dialog.message}",),
        )
        self._emit(ApprovalNeeded(request=request))
        try:
            decision = await self.supervisor.approve(request)
        except NoSupervisor:
            return False, None
        # Not an ApprovalGiven: that belongs to the round's action. The dialog's answer is
        # reported in the action's result.
        accept = decision.decision in ("approved", "edited")
        text = None
        if decision.edited_params and isinstance(decision.edited_params.get("text"), str):
            text = str(decision.edited_params["text"])
        return accept, text if text is not None else (dialog.default_prompt or None)

    # -- hand-over ---------------------------------------------------------------------

    async def _rule_hands_over(
        self, n: int, action: Action, snapshot: Snapshot, rule: RuleRef
    ) -> ActionResult:
        """A rule of the approval policy hands this action to the person: they get the page
        (and may do it themselves), and the model hears that it was not done by it."""
        await self.hand_over(
            n,
            Finding(
                "other",
                f"{rule.label} of your approval policy hands this to you: "
                f"{describe(withheld(action))}",
            ),
            snapshot.url,
            snapshot.title,
        )
        return ActionResult.failure(
            f"not done by you: the person's approval policy hands this action to the person "
            f"({rule.label}). They had the page and have handed it back; look at the new page "
            "state before going on, and do not repeat the action."
        )

    async def hand_over(self, n: int, finding: Finding, url: str, title: str) -> None:
        mask = self.secrets.mask_for_model
        request = HumanRequest(
            round=n,
            kind=finding.kind,
            detail=mask(finding.detail),
            url=mask(url),
            title=mask(title),
            headless=self.headless,
        )
        self._emit(HumanNeeded(request=request))
        await self._mark(lambda badge: badge.your_turn())
        try:
            response = await self.supervisor.human(request)
        except NoSupervisor as exc:
            raise StopRun(
                self._finished(
                    "human_needed",
                    f"stopped for a person: {finding.kind} on {url} ({finding.detail}); {exc}",
                    3,
                )
            ) from exc
        self._emit(HumanReturned(round=n, response=response))
        await self._mark(lambda badge: badge.driving())
        if response == "abort":
            raise StopRun(
                self._finished(
                    "aborted", f"the person aborted the run at a hand-over ({finding.kind})", 130
                )
            )

    # -- the approval's picture ---------------------------------------------------------

    def _target_rect(
        self, action: Action, snapshot: Snapshot, hit: PointHit | None = None
    ) -> tuple[float, float, float, float] | None:
        if action.name == "click_at" and hit is not None:
            return _around(hit)
        index = action.params.get("index")
        element = snapshot.elements.get(index) if isinstance(index, int) else None
        return element.rect if element is not None and element.in_viewport else None

    async def _target_crop(
        self, action: Action, snapshot: Snapshot, hit: PointHit | None = None
    ) -> TargetCrop | None:
        """The picture of the action's target for the approval (None: no target): the
        element; around the point for click_at; both ends of a drag."""
        tab = self.page.browser.current
        if tab is None:
            return None
        rects = [e.rect for e in _ends(action, snapshot)]
        if action.name == "click_at" and hit is not None:
            rects = [_around(hit)]
        elif action.name == "drag" and hit is not None:
            rects.append(_around(hit))
        if not rects:
            return None
        left = min(r[0] for r in rects)
        top = min(r[1] for r in rects)
        right = max(r[0] + r[2] for r in rects)
        bottom = max(r[1] + r[3] for r in rects)
        return await crop_target(
            self.page.browser,
            tab,
            (left, top, right - left, bottom - top),
            timeout=min(5.0, self.action_timeout),
        )


def typed_text(action: Action | None) -> str | None:
    """The text ``action`` would type, when it is more than ``<secret:NAME>`` placeholders."""
    if action is None or action.name != "type":
        return None
    text = action.params.get("text")
    return text if isinstance(text, str) and text and not only_placeholders(text) else None


@overload
def withheld(subject: Action) -> Action: ...
@overload
def withheld(
    subject: Sequence[dict[str, Any]], action: Action | None
) -> tuple[dict[str, Any], ...]: ...
def withheld(
    subject: Action | Sequence[dict[str, Any]], action: Action | None = None
) -> Action | tuple[dict[str, Any], ...]:
    """``subject`` (an action, or the model output that asked for ``action``) with the text
    to type shown as ``«withheld: N characters»``."""
    if isinstance(subject, Action):
        text = typed_text(subject)
        if text is None:
            return subject
        return replace(subject, params={**subject.params, "text": withheld_mark(text)})
    text = typed_text(action)
    if text is None:
        return tuple(subject)
    return tuple(replace_texts(list(subject), {text: withheld_mark(text)}))


def _pastes(action: Action) -> bool:
    if action.name != "press_key":
        return False
    try:
        return pastes(parse_keys(str(action.params.get("keys", ""))))
    except KeySpecError:
        return False  # the hands refuse it, saying why


def field_document(element: ElementInfo, page_url: str) -> str:
    """The URL whose origin a secret's scope is checked against, for typing into ``element``.

    The innermost document holding the element decides (:attr:`ElementInfo.frame`). A
    document without a host of its own (``about:srcdoc``, ``about:blank``, ``data:``...)
    inherits its creator's origin, which the digest only knows for sure in the top page's
    own tree: our world there reads only frames of the top page's origin, so the top
    page's URL stands for it. Inside a cross-origin frame such a document gets its
    URL as it is, which names no host and so passes no scope (fail closed)."""
    if not element.frame:
        return page_url
    if urlsplit(element.frame).hostname or element.frame_key is not None:
        return element.frame
    return page_url


POINT_BOX = 16.0
"""CSS pixels of the box drawn around a click_at point in the approval's picture."""


def _around(hit: PointHit) -> tuple[float, float, float, float]:
    half = POINT_BOX / 2
    return (hit.x - half, hit.y - half, POINT_BOX, POINT_BOX)


def _ends(action: Action, snapshot: Snapshot) -> list[ElementInfo]:
    """The listed elements an action acts on: its ``index``, and a drag's ``to``."""
    keys = ("index", "to") if action.name == "drag" else ("index",)
    indexes = [action.params.get(k) for k in keys]
    return [snapshot.elements[i] for i in indexes if isinstance(i, int) and i in snapshot.elements]


def shown_target(
    action: Action, snapshot: Snapshot, hit: PointHit | None = None
) -> tuple[str | None, str | None]:
    """The digest line(s) and name(s) a person is shown for an action's target: a drag's
    two ends (``line → line``, ``name → name``), or what click_at hits at its point."""
    if action.name == "click_at":
        if hit is None:
            return None, None
        listed = next((snapshot.elements[i] for i in hit.chain if i in snapshot.elements), None)
        line = listed.line if listed is not None else hit.describe
        return line, hit.name or (listed.name if listed is not None else "")
    if action.name == "drag":
        source = target_of(action, snapshot)
        to = action.params.get("to")
        dest = snapshot.elements.get(to) if isinstance(to, int) else None
        first = source.line if source is not None else f"file {action.params.get('path')}"
        first_name = source.name if source is not None else str(action.params.get("path"))
        if dest is not None:
            return f"{first}\n→ {dest.line}", f"{first_name} → {dest.name}"
        if hit is not None:
            return f"{first}\n→ {hit.describe}", f"{first_name} → {hit.name}"
        return first, first_name
    element = target_of(action, snapshot)
    return (element.line, element.name) if element is not None else (None, None)


def target_of(action: Action, snapshot: Snapshot) -> ElementInfo | None:
    """The element of ``snapshot`` that ``action`` targets by index, if any."""
    index = action.params.get("index")
    return snapshot.elements.get(index) if isinstance(index, int) else None


def describe(action: Action) -> str:
    params = ", ".join(
        f"{k}={json.dumps(v, ensure_ascii=False)[:80]}" for k, v in action.params.items()
    )
    return f"{action.name}({params})"


_RELATIVE = re.compile(r"^(?:/(?!/)|\./|\.\./|\?|#|[^/.:?#\s]+(?:/|$))")
"""A link as the digest prints it against the page's address: a path ("/admin/"), one under
the page's folder ("6/change/", "add/"), a query ("?o=2") or a fragment. Not "example.com/x"
(a host without its scheme, which navigate refuses with a hint) nor "//host/x"."""


def resolved_navigation(action: Action, snapshot: Snapshot) -> Action:
    """``navigate`` to a link written as the digest prints it (relative to the page), made
    whole against the page's address, as a click on that link would resolve it; the gate
    then judges, and the person approves, the whole URL."""
    if action.name != "navigate":
        return action
    url = str(action.params.get("url") or "").strip()
    if not _RELATIVE.match(url) or urlsplit(snapshot.url).scheme not in ("http", "https"):
        return action
    return replace(action, params={**action.params, "url": urljoin(snapshot.url, url)})
