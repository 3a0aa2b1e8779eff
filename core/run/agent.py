"""The loop: observe -> ask the model -> parse -> gate -> act -> read back -> record.

:class:`Agent` knows nothing about terminals. It emits typed events (``core.run.events``) to
its sinks and awaits its :class:`~core.run.events.Supervisor` for approvals and hand-overs.
Nothing that changes a page runs without the gate's decision; the page is observed afresh
every round; the context sent to the model stays bounded however long the run.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload
from urllib.parse import urlsplit

import structlog

from core.actions import NO_TOOL_CALL_REMINDER, Action, ParsedReply, parse_reply, tool_definitions
from core.audit.records import ApprovalRecord, ScreenshotRef
from core.browser.browser import BrowserError
from core.cdp import CDPError
from core.eyes.snapshot import Snapshot, SnapshotOptions, escape_page_text
from core.guard.allowlist import DomainGuard
from core.guard.decision import ApprovalDecision, HumanKind
from core.guard.policy import (
    Assessment,
    Finding,
    Gate,
    detect_handover,
    handled_key,
    host_allowed,
    host_of,
    looks_like_credential_prompt,
)
from core.hands import DialogInfo, Page, TargetExpectation
from core.hands.badge import Badge
from core.model.base import Model, ModelError
from core.model.conversation import Context, ToolOutcome, Turn
from core.model.envelope import wrap
from core.model.prompt import REPEATED_FAILURE, SYSTEM_PROMPT
from core.result import DENIED_BY_PERSON, ActionResult, first_line
from core.run.events import (
    ActionDone,
    ActionIntent,
    ActionParsed,
    ApprovalGiven,
    ApprovalNeeded,
    ApprovalRequest,
    Event,
    EventSink,
    HumanNeeded,
    HumanRequest,
    HumanReturned,
    ModelReplied,
    NoSupervisor,
    Observed,
    RerunOf,
    RoundStarted,
    RunFinished,
    RunStarted,
    Supervisor,
    TargetCrop,
)
from core.run.round_shots import SENSITIVE_ON_SCREEN, RoundShots
from core.run.target_picture import crop_target
from core.secrets import Secrets, SecretsError, only_placeholders, replace_texts, withheld_mark

if TYPE_CHECKING:
    from anthropic.types import ToolParam

log = structlog.get_logger("handrail.agent")

MAX_CONSECUTIVE_FAILURES = 5
SAME_FAILURE_WARNING = 3
MAX_REAPPROVALS = 3
# What the hands call a sensitive field → the kind of hand-over it becomes.
_SENSITIVE_HANDOVER: dict[str, HumanKind] = {
    "password": "password",
    "one-time code": "otp",
    "card": "payment",
}
Outcome = Literal[
    "success", "failure", "gave_up", "round_limit", "aborted", "human_needed", "error"
]


@dataclass(frozen=True, slots=True)
class AgentConfig:
    task: str
    max_rounds: int = 30
    allow_js: bool = False
    action_timeout: float = 45.0
    headless: bool = False
    """Whether the person can see and use the browser window (shown on hand-overs)."""


class _Stop(Exception):
    """Ends the run from deep inside a round."""

    def __init__(self, finished: RunFinished) -> None:
        super().__init__(finished.reason)
        self.finished = finished


class Agent:
    """Runs one task to its end. Create one per run."""

    def __init__(
        self,
        *,
        config: AgentConfig,
        model: Model,
        page: Page,
        gate: Gate,
        supervisor: Supervisor,
        sinks: Sequence[EventSink] = (),
        secrets: Secrets | None = None,
        run_id: str | None = None,
        browser_label: str = "",
        settings: dict[str, object] | None = None,
        audit_path: Path | None = None,
        guard: DomainGuard | None = None,
        round_shots: RoundShots | None = None,
        badge: Badge | None = None,
    ) -> None:
        self.config = config
        self.round_shots = round_shots
        self.badge = badge
        self.model = model
        self.page = page
        self.gate = gate
        self.supervisor = supervisor
        self.sinks = list(sinks)
        self.secrets = secrets or Secrets()
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.browser_label = browser_label
        self.settings = settings or {}
        self.audit_path = audit_path
        self.guard = guard
        self.tools: list[ToolParam] = tool_definitions(allow_js=config.allow_js)
        self.context = Context(config.task, vision=model.vision)
        self.round = 0
        self._acknowledged: set[tuple[str, str]] = set()
        self._notes: list[str] = []
        self._failures = 0
        self._last_failure: tuple[str, str] | None = None
        self._same_failures = 0
        self._dialog_finding: Finding | None = None
        page.dialog_decider = self._decide_dialog

    # -- events ------------------------------------------------------------------------

    def emit(self, event: Event) -> None:
        for sink in self.sinks:
            sink(event)

    # -- the run -----------------------------------------------------------------------

    async def run(self) -> RunFinished:
        """Run until the model finishes, the round limit, too many failures, or an abort.

        Cancellation (Ctrl-C, the person's abort key) ends the run with outcome ``aborted``
        and exit code 130; the RunFinished event is emitted before CancelledError propagates.
        """
        self.emit(
            RunStarted(
                run_id=self.run_id,
                task=self.config.task,
                model=self.model.label,
                browser=self.browser_label,
                max_rounds=self.config.max_rounds,
                settings=dict(self.settings),
                audit_path=str(self.audit_path) if self.audit_path else None,
                rerun_of=_rerun_of(self.model),
            )
        )
        try:
            finished = await self._loop()
        except _Stop as stop:
            finished = stop.finished
        except asyncio.CancelledError:
            self.emit(self._finished("aborted", "the run was interrupted", 130))
            raise
        except ModelError as exc:
            finished = self._finished("error", f"the model call failed: {exc}", 1)
        except (BrowserError, CDPError, OSError) as exc:
            # Whatever a page does, the run ends with its record, never with a traceback.
            log.warning("agent.browser_failed", error=repr(exc))
            finished = self._finished(
                "error", f"the browser stopped answering: {first_line(exc)}", 1
            )
        self.emit(finished)
        return finished

    async def _loop(self) -> RunFinished:
        for n in range(1, self.config.max_rounds + 1):
            self.round = n
            self.emit(RoundStarted(round=n, max_rounds=self.config.max_rounds))
            finished = await self._one_round(n)
            if finished is not None:
                return finished
        return self._finished(
            "round_limit",
            f"reached the round limit ({self.config.max_rounds} rounds) without finishing; "
            "raise it with --max-rounds or give a narrower task",
            1,
        )

    def _finished(
        self, outcome: Outcome, reason: str, exit_code: int, answer: str = ""
    ) -> RunFinished:
        return RunFinished(
            outcome=outcome,
            answer=answer or reason,
            rounds=self.round,
            exit_code=exit_code,
            reason=reason,
        )

    # -- one round ---------------------------------------------------------------------

    async def _one_round(self, n: int) -> RunFinished | None:
        snapshot, observation = await self._observe_with_handover(n)
        notes, self._notes = self._notes, []
        started = time.monotonic()
        reply = await self.model.reply(
            system=SYSTEM_PROMPT,
            messages=self.context.messages(observation, notes),
            tools=self.tools,
        )
        parsed = parse_reply(reply.content, allow_js=self.config.allow_js)
        # Text withheld in an earlier round may come back in the model's words.
        content = tuple(self.secrets.scrub_json(list(reply.content)))
        # Text the model asks to type is withheld from every event until the hands say where
        # it went: a field can turn out to be a password field only at dispatch.
        self.emit(
            ModelReplied(
                round=n,
                output=_withheld(content, parsed.action),
                usage=dict(reply.usage),
                duration_ms=(time.monotonic() - started) * 1000,
                origin=reply.origin,
            )
        )
        turn = Turn(round=n, assistant=content)
        turn.outcomes += [
            ToolOutcome(e.tool_use_id or "", e.message, is_error=True) for e in parsed.errors
        ]
        action = parsed.action
        if action is None:
            self._unparsed(n, parsed, turn)
            return None
        element = self._element_line(action, snapshot)
        self.emit(ActionParsed(round=n, action=_withheld(action), element_line=element))

        if action.name == "finish":
            success = bool(action.params.get("success"))
            answer = str(action.params.get("answer", ""))
            result = ActionResult.success(
                f"finished ({'success' if success else 'not successful'})"
            )
            self._done(n, action, result, ApprovalRecord.not_needed(), turn, 0.0)
            return self._finished(
                "success" if success else "failure", answer, 0 if success else 1, answer=answer
            )
        if action.name == "ask_human":
            question = str(action.params.get("question", ""))
            await self._hand_over(n, Finding("ask_human", question), snapshot.url, snapshot.title)
            result = ActionResult.success(
                "the person has handed control back; the page state below is fresh "
                "(it may have changed while the person acted)"
            )
            self._done(n, action, result, ApprovalRecord.not_needed(), turn, 0.0)
            return None

        result, approval, started = await self._gate_and_act(n, action, snapshot)
        self._done(n, action, result, approval, turn, (time.monotonic() - started) * 1000)
        return self._after_result(action, result)

    async def _observe_with_handover(self, n: int) -> tuple[Snapshot, str]:
        snapshot, observation = await self._observe(n)
        for _ in range(10):
            finding = self._dialog_finding or detect_handover(snapshot, self._acknowledged)
            self._dialog_finding = None
            if finding is None:
                return snapshot, observation
            await self._hand_over(n, finding, snapshot.url, snapshot.title)
            self._acknowledged.add(handled_key(snapshot.url, finding.kind))
            self._notes.append(
                f"The person was asked to handle this page ({finding.kind}: {finding.detail}) and has "
                "handed control back. The page state below is fresh. Do not type into password, "
                "code or card fields yourself."
            )
            snapshot, observation = await self._observe(n)
        return snapshot, observation

    def _snapshot_options(self) -> SnapshotOptions | None:
        """The eyes' options for this run: with an allowlist, a frame that did not load and
        whose host the run may not visit is listed as blocked (and may call for a hand-over)."""
        patterns = self.gate.allow_domains
        if not patterns:
            return None
        return SnapshotOptions(url_allowed=lambda url: host_allowed(host_of(url), patterns))

    async def _observe(self, n: int) -> tuple[Snapshot, str]:
        started = time.monotonic()
        snapshot, notices = await self.page.observe(self._snapshot_options())
        if self.guard is not None:
            notices = [*notices, *self.guard.drain()]
        self.gate.note_visit(snapshot.url)
        tabs = [self.secrets.mask_for_model(t) for t in self.page.tab_descriptions()]
        lines = [snapshot.header(tabs)]
        dialog = self.page.open_dialog
        if dialog is not None:
            lines.append(f"Open dialog: {dialog.type}: {escape_page_text(dialog.message)}")
        lines += [f"Notice: {escape_page_text(notice)}" for notice in notices]
        observation = wrap(lines, snapshot.text)
        observation = self.secrets.mask_for_model(observation)
        shot = await self._round_shot(n, snapshot)
        await self._mark(lambda badge: badge.driving())
        self.emit(
            Observed(
                round=n,
                url=self.secrets.mask_for_model(snapshot.url),
                title=self.secrets.mask_for_model(snapshot.title),
                digest=observation,
                tabs=tuple(tabs),
                duration_ms=(time.monotonic() - started) * 1000,
                hidden_instructions=snapshot.hidden_instruction_fragments,
                screenshot=shot,
            )
        )
        return snapshot, observation

    def _unparsed(self, n: int, parsed: ParsedReply, turn: Turn) -> None:
        if parsed.no_tool_call:
            error = "the reply had no tool call"
            turn.notes.append(NO_TOOL_CALL_REMINDER)
        else:
            error = (
                parsed.errors[0].message if parsed.errors else "the tool call could not be parsed"
            )
        self.emit(ActionParsed(round=n, action=None, error=error))
        result = ActionResult.failure(error)
        self._done(n, None, result, ApprovalRecord.not_needed(), turn, 0.0)
        self._count(("(unparsed)", error[:80]), result)

    # -- gate and hands ----------------------------------------------------------------

    async def _gate_and_act(
        self, n: int, action: Action, snapshot: Snapshot
    ) -> tuple[ActionResult, ApprovalRecord, float]:
        started = time.monotonic()
        changed_note: str | None = None
        asked = action  # the model's own; a person's edit replaces ``action`` below
        for _attempt in range(MAX_REAPPROVALS + 1):
            assessment = self.gate.assess(action, snapshot)
            if assessment.refused:
                if assessment.sensitive:
                    self._withhold(asked, action)
                return (
                    ActionResult.failure(assessment.refused),
                    ApprovalRecord.refused(assessment.refused),
                    started,
                )
            decision, approval = await self._decide(n, action, snapshot, assessment, changed_note)
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
                assessment = self.gate.assess(action, snapshot)
                if assessment.refused:
                    if assessment.sensitive:
                        self._withhold(asked, action)
                    return ActionResult.failure(assessment.refused), approval, started
            try:
                dispatched = self._with_secrets(action, snapshot.url)
            except SecretsError as exc:
                return ActionResult.failure(str(exc)), approval, started
            self.emit(
                ActionIntent(round=n, action=_withheld(action), sensitive=assessment.sensitive)
            )
            started = time.monotonic()
            expect = self._expectation(action, snapshot)
            secret = action.name == "type" and only_placeholders(str(action.params.get("text")))
            result = await self._dispatch(dispatched, expect, secret=secret)
            if result.code == "sensitive_field":
                # Judged at dispatch on the field as it was then: what the model meant to type
                # is withheld for good, and the page is a hand-over.
                self._withhold(asked, action)
                kind = _SENSITIVE_HANDOVER.get(
                    str((result.data or {}).get("sensitive")), "password"
                )
                finding = Finding(kind, result.error or result.message)
                await self._hand_over(n, finding, snapshot.url, snapshot.title)
                self._acknowledged.add(handled_key(snapshot.url, finding.kind))
                self._notes.append(
                    "The person was asked to fill in a password, code or card field and has handed "
                    "control back. Do not type into such fields yourself."
                )
                return self._for_model(result), approval, started
            if result.code == "target_changed" and self.gate.mode != "none":
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

    async def _decide(
        self,
        n: int,
        action: Action,
        snapshot: Snapshot,
        assessment: Assessment,
        changed_note: str | None,
    ) -> tuple[ApprovalDecision | None, ApprovalRecord]:
        # After the target changed under an approval, the person is asked about what is there
        # now, even for an action the policy would have let through on its own.
        must_ask = changed_note is not None and self.gate.mode != "none"
        approval: ApprovalRecord | None = None
        if not assessment.needs_approval and not must_ask:
            approval = (
                ApprovalRecord.automatic()
                if assessment.page_changing
                else ApprovalRecord.not_needed()
            )
        elif not assessment.risky and not must_ask and self.gate.kind_preapproved(action.name):
            approval = ApprovalRecord.kind_approved()
        if approval is not None:
            self.emit(ApprovalGiven(round=n, decision=ApprovalDecision("approved", by=approval.by)))
            return None, approval
        details = list(assessment.details)
        if changed_note:
            details.insert(0, f"The page changed since the previous request: {changed_note}")
        request = ApprovalRequest(
            round=n,
            action=action,
            url=self.secrets.mask_for_model(snapshot.url),
            title=self.secrets.mask_for_model(snapshot.title),
            why=assessment.why,
            element_line=self._element_line(action, snapshot),
            risky=assessment.risky,
            details=tuple(details),
            crop=await self._target_crop(action, snapshot),
        )
        self.emit(ApprovalNeeded(request=request))
        target = self._target_rect(action, snapshot)
        if target is not None:
            await self._mark(lambda badge: badge.pending(target))
        try:
            decision = await self.supervisor.approve(request)
        except NoSupervisor as exc:
            raise _Stop(
                self._finished(
                    "human_needed",
                    f"{action.name} needs approval ({assessment.why}) and nobody can give it in a "
                    f"non-interactive run: {exc}. Waiting action: {_describe(_withheld(action))}",
                    3,
                )
            ) from exc
        edited = decision.edited_params
        shown = decision
        if edited and isinstance(edited.get("text"), str) and not only_placeholders(edited["text"]):
            # The person's own text for the field is withheld like the model's, until typed.
            shown = replace(
                decision, edited_params={**edited, "text": withheld_mark(edited["text"])}
            )
        self.emit(ApprovalGiven(round=n, decision=shown))
        await self._mark(lambda badge: badge.driving())
        if decision.decision == "abort":
            raise _Stop(self._finished("aborted", "the person aborted the run at an approval", 130))
        if decision.approve_kind_for_run and decision.decision in ("approved", "edited"):
            self.gate.preapprove_kind(action.name)
        return decision, ApprovalRecord.of(decision)

    def _withhold(self, *actions: Action) -> None:
        """The text (or keys) these actions meant for a field judged sensitive was not typed,
        and must not be seen again: not in a record, a log line, a model request or a screen.
        (The model's action and the person's edit of it, when they differ.)"""
        for action in actions:
            for key in ("text", "keys"):
                value = action.params.get(key)
                if isinstance(value, str):
                    self.secrets.withhold(value)

    def _with_secrets(self, action: Action, url: str) -> Action:
        text = action.params.get("text")
        if (
            action.name != "type"
            or not isinstance(text, str)
            or not self.secrets.contains_placeholder(text)
        ):
            return action
        host = urlsplit(url).hostname or ""
        return replace(
            action, params={**action.params, "text": self.secrets.substitute(text, host)}
        )

    def _expectation(self, action: Action, snapshot: Snapshot) -> TargetExpectation | None:
        index = action.params.get("index")
        if not isinstance(index, int):
            return None
        element = snapshot.elements.get(index)
        if element is None:
            return None
        return TargetExpectation(
            url=snapshot.url, index=index, name=element.name, rect=element.rect
        )

    async def _dispatch(
        self, action: Action, expect: TargetExpectation | None, *, secret: bool = False
    ) -> ActionResult:
        # The hands have their own timeouts; this outer bound guards against anything that
        # escapes them. What happened then is unknown, and is never retried.
        limit = self.config.action_timeout + 15
        if expect is not None:
            x, y, w, h = expect.rect
            await self._mark(lambda badge: badge.pointer(x + w / 2, y + h / 2))
        try:
            async with asyncio.timeout(limit):
                return await self.page.dispatch(action, expect=expect, secret=secret)
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

    async def _decide_dialog(self, dialog: DialogInfo) -> tuple[bool, str | None]:
        """Confirm and prompt dialogs opened by a page: the person decides, credentials go to them."""
        if dialog.type == "prompt" and looks_like_credential_prompt(dialog.message):
            self._dialog_finding = Finding(
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
        self.emit(ApprovalNeeded(request=request))
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

    async def _hand_over(self, n: int, finding: Finding, url: str, title: str) -> None:
        mask = self.secrets.mask_for_model
        request = HumanRequest(
            round=n,
            kind=finding.kind,
            detail=mask(finding.detail),
            url=mask(url),
            title=mask(title),
            headless=self.config.headless,
        )
        self.emit(HumanNeeded(request=request))
        await self._mark(lambda badge: badge.your_turn())
        try:
            response = await self.supervisor.human(request)
        except NoSupervisor as exc:
            raise _Stop(
                self._finished(
                    "human_needed",
                    f"stopped for a person: {finding.kind} on {url} ({finding.detail}); {exc}",
                    3,
                )
            ) from exc
        self.emit(HumanReturned(round=n, response=response))
        await self._mark(lambda badge: badge.driving())
        if response == "abort":
            raise _Stop(
                self._finished(
                    "aborted", f"the person aborted the run at a hand-over ({finding.kind})", 130
                )
            )

    # -- bookkeeping -------------------------------------------------------------------

    def _done(
        self,
        n: int,
        action: Action | None,
        result: ActionResult,
        approval: ApprovalRecord,
        turn: Turn,
        duration_ms: float,
    ) -> None:
        # After the result: typed text is shown again if it went into an ordinary field, and
        # scrubbed everywhere (history included) if it was withheld.
        model_output: tuple[dict[str, Any], ...] | None = None
        if _typed_text(action) is not None:
            turn.assistant = tuple(self.secrets.scrub_json(list(turn.assistant)))
            model_output = turn.assistant
        if action is not None:
            action = self._scrubbed(action)
        if approval.edited_params:
            approval = replace(
                approval, edited_params=self.secrets.scrub_json(dict(approval.edited_params))
            )
        if action is not None and action.tool_use_id:
            turn.outcomes.insert(0, self._outcome(action.tool_use_id, result))
        turn.summary = f"{n}. {_describe(action) if action else '(no valid action)'} -> " + (
            f"ok: {result.message}"
            if result.ok
            else f"{result.outcome}: {result.error or result.message}"
        )
        self.context.add(turn)
        self.emit(
            ActionDone(
                round=n,
                action=action,
                result=result,
                approval=approval,
                duration_ms=duration_ms,
                model_output=model_output,
            )
        )

    def _scrubbed(self, action: Action) -> Action:
        return replace(action, params=self.secrets.scrub_json(dict(action.params)))

    def _outcome(self, tool_use_id: str, result: ActionResult) -> ToolOutcome:
        png: bytes | None = None
        if result.screenshot:
            try:
                png = Path(result.screenshot).read_bytes()
            except OSError:
                png = None
        text = format_result(result, vision=self.model.vision)
        return ToolOutcome(tool_use_id, text, is_error=not result.ok, screenshot_png=png)

    def _after_result(self, action: Action, result: ActionResult) -> RunFinished | None:
        self._count((action.name, json.dumps(action.params, sort_keys=True)), result)
        if self._failures >= MAX_CONSECUTIVE_FAILURES:
            return self._finished(
                "gave_up",
                f"{self._failures} actions failed in a row; the last: {_describe(action)} -> "
                f"{result.error or result.message}",
                1,
            )
        return None

    def _count(self, signature: tuple[str, str], result: ActionResult) -> None:
        if result.ok:
            self._failures = 0
            self._same_failures = 0
            self._last_failure = None
            return
        self._failures += 1
        key = (signature[0] + signature[1], (result.error or "")[:80])
        self._same_failures = self._same_failures + 1 if key == self._last_failure else 1
        self._last_failure = key
        if self._same_failures >= SAME_FAILURE_WARNING:
            what = f"{signature[0]} -> {(result.error or result.message)[:120]}"
            self._notes.append(REPEATED_FAILURE.format(n=self._same_failures, what=what))

    async def _round_shot(self, n: int, snapshot: Snapshot) -> ScreenshotRef | None:
        """The round's screenshot for the run folder, unless a password, one-time code or
        card field is on screen: what the person typed there must not be kept in a file."""
        if self.round_shots is None:
            return None
        if any(e.sensitive and e.in_viewport for e in snapshot.elements.values()):
            return ScreenshotRef(missing=SENSITIVE_ON_SCREEN)
        return await self.round_shots.take(n)

    async def _mark(self, how: Callable[[Badge], Awaitable[bool]]) -> None:
        """Update the in-page marks (headed runs only). Never while a JavaScript dialog is
        open: the page answers nothing then, and a badge must not hold up the run."""
        if self.badge is not None and self.page.open_dialog is None:
            await how(self.badge)

    def _target_rect(
        self, action: Action, snapshot: Snapshot
    ) -> tuple[float, float, float, float] | None:
        index = action.params.get("index")
        element = snapshot.elements.get(index) if isinstance(index, int) else None
        return element.rect if element is not None and element.in_viewport else None

    async def _target_crop(self, action: Action, snapshot: Snapshot) -> TargetCrop | None:
        """The picture of the action's target for the approval (None: no target)."""
        index = action.params.get("index")
        element = snapshot.elements.get(index) if isinstance(index, int) else None
        tab = self.page.browser.current
        if element is None or tab is None:
            return None
        return await crop_target(
            self.page.browser, tab, element.rect, timeout=min(5.0, self.config.action_timeout)
        )

    def _element_line(self, action: Action, snapshot: Snapshot) -> str | None:
        index = action.params.get("index")
        if isinstance(index, int) and index in snapshot.elements:
            return snapshot.elements[index].line
        return None


def format_result(result: ActionResult, *, vision: bool) -> str:
    """The tool_result text the model reads: what happened, what changed, what to know."""
    lines = [
        result.message
        if result.ok
        else f"Failed ({result.outcome}): {result.error or result.message}"
    ]
    if not result.ok and result.error and result.message != result.error:
        lines.append(result.message)
    c = result.changes
    changed = [
        name
        for name, flag in (
            ("URL", c.url_changed),
            ("title", c.title_changed),
            ("page content", c.dom_changed),
            ("a new tab opened", c.new_tab),
        )
        if flag
    ]
    if c.new_elements:
        changed.append(f"{c.new_elements} new interactive elements (marked * below)")
    if c.dialog:
        changed.append(f"dialog: {c.dialog}")
    if changed:
        lines.append("Changed: " + ", ".join(changed))
    lines += [f"Notice: {n}" for n in result.notices]
    if result.screenshot and not vision:
        lines.append(
            f"Screenshot saved to {result.screenshot}. This model cannot see images: rely on the page digest."
        )
    return "\n".join(lines)


def _typed_text(action: Action | None) -> str | None:
    """The text ``action`` would type, when it is more than ``<secret:NAME>`` placeholders."""
    if action is None or action.name != "type":
        return None
    text = action.params.get("text")
    return text if isinstance(text, str) and text and not only_placeholders(text) else None


@overload
def _withheld(subject: Action) -> Action: ...
@overload
def _withheld(
    subject: Sequence[dict[str, Any]], action: Action | None
) -> tuple[dict[str, Any], ...]: ...
def _withheld(
    subject: Action | Sequence[dict[str, Any]], action: Action | None = None
) -> Action | tuple[dict[str, Any], ...]:
    """``subject`` (an action, or the model output that asked for ``action``) with the text
    to type shown as ``«withheld: N characters»``."""
    if isinstance(subject, Action):
        text = _typed_text(subject)
        if text is None:
            return subject
        return replace(subject, params={**subject.params, "text": withheld_mark(text)})
    text = _typed_text(action)
    if text is None:
        return tuple(subject)
    return tuple(replace_texts(list(subject), {text: withheld_mark(text)}))


def _rerun_of(model: Model) -> RerunOf | None:
    """The recorded run a rerun's backend repeats (``core.rerun``); None for a model."""
    source = getattr(model, "rerun_of", None)
    return source if isinstance(source, RerunOf) else None


def _describe(action: Action) -> str:
    params = ", ".join(
        f"{k}={json.dumps(v, ensure_ascii=False)[:80]}" for k, v in action.params.items()
    )
    return f"{action.name}({params})"
