"""The loop: observe -> ask the model -> parse -> gate -> act -> read back -> record.

The gate, the approvals, the dispatch and the hand-overs are :mod:`core.run.checkpoint`.

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
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import structlog

from core.actions import NO_TOOL_CALL_REMINDER, Action, ParsedReply, parse_reply, tool_definitions
from core.audit.records import ApprovalRecord, ScreenshotRef
from core.browser.errors import BrowserError
from core.cdp import CDPError
from core.eyes.snapshot import (
    FIELD_CHARS,
    HEADER_CHARS,
    MAX_TABS_SHOWN,
    URL_CHARS,
    Snapshot,
    SnapshotOptions,
    cut_field,
    fit_header,
    header_field,
)
from core.guard.allowlist import DomainGuard
from core.guard.policy import (
    Finding,
    Gate,
    detect_handover,
    handled_key,
    host_allowed,
    host_of,
)
from core.guard.rules import Budget
from core.hands import AuthChallenge, Page
from core.hands.badge import Badge
from core.model.base import Model, ModelError
from core.model.conversation import Context, ToolOutcome, Turn
from core.model.envelope import wrap
from core.model.prompt import REPEATED_FAILURE, SYSTEM_PROMPT
from core.result import ActionResult, first_line
from core.run.budget import EXIT_BUDGET, BudgetKeeper
from core.run.checkpoint import (
    Checkpoint,
    Outcome,
    StopRun,
    describe,
    shown_target,
    typed_text,
    withheld,
)
from core.run.events import (
    ActionDone,
    ActionParsed,
    BudgetSpent,
    Event,
    EventSink,
    ModelReplied,
    ModelWriting,
    Observed,
    RerunOf,
    RoundStarted,
    RunFinished,
    RunStarted,
    Supervisor,
)
from core.run.permissions import PermissionStore
from core.run.round_shots import SENSITIVE_ON_SCREEN, RoundShots
from core.secrets import Secrets
from core.world.errors import WorldError

if TYPE_CHECKING:
    from anthropic.types import ToolParam

log = structlog.get_logger("handrail.agent")

MAX_CONSECUTIVE_FAILURES = 5
MAX_NOTICES = 10
"""Notices a tool result lists (a dialog storm or a download storm could make thousands)."""
SAME_FAILURE_WARNING = 3


@dataclass(frozen=True, slots=True)
class AgentConfig:
    task: str
    max_rounds: int = 30
    allow_js: bool = False
    action_timeout: float = 45.0
    headless: bool = False
    """Whether the person can see and use the browser window (shown on hand-overs)."""
    give_up_after: int | None = MAX_CONSECUTIVE_FAILURES
    """Failed actions in a row that end the run (``gave_up``); None: never (an MCP client
    decides for itself when to stop, and a refusal must not end its session)."""


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
        budget: BudgetKeeper | None = None,
        shared_budget: BudgetKeeper | None = None,
        permissions: PermissionStore | None = None,
    ) -> None:
        self.config = config
        self.keeper = budget if budget is not None else BudgetKeeper(Budget())
        """Counts what the model spends (priced when the model is)."""
        self.budget = self.keeper if self.keeper.active else None
        """The run's own limits; None when it has none."""
        self.shared_budget = (
            shared_budget if shared_budget is not None and shared_budget.active else None
        )
        """A fleet's budget, which every run of the fleet spends against."""
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
        self._notes: list[str] = []
        self._failures = 0
        self._last_failure: tuple[str, str] | None = None
        self._same_failures = 0
        self.checkpoint = Checkpoint(
            page=page,
            gate=gate,
            supervisor=supervisor,
            secrets=self.secrets,
            action_timeout=config.action_timeout,
            headless=config.headless,
            emit=self.emit,
            mark=self._mark,
            observe=self._observe,
            note=self._notes.append,
            finished=self._finished,
            permissions=permissions,
        )
        page.dialog_decider = self.checkpoint.decide_dialog

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
        if self.budget is not None:
            # The limits, for the header, before any model call spends against them.
            self.emit(BudgetSpent(round=0, spent=self.budget.spent()))
        try:
            finished = await self._loop()
        except StopRun as stop:
            finished = stop.finished
        except asyncio.CancelledError as cancelled:
            # Who ended it, when the canceller said (``task.cancel(msg)``): the person's
            # abort key, ``handrail serve`` stopped on its terminal...
            said = cancelled.args[0] if cancelled.args else None
            by = said if isinstance(said, str) and said else "the run was interrupted"
            self.emit(self._finished("aborted", by, 130))
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
            self.round = self.checkpoint.round = n
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
            spent=self.budget.spent().to_json() if self.budget is not None else None,
        )

    # -- one round ---------------------------------------------------------------------

    async def _one_round(self, n: int) -> RunFinished | None:
        try:
            snapshot, observation = await self._observe_with_handover(n)
        except (WorldError, TimeoutError) as exc:
            return self._unobserved(n, exc)
        for keeper in (self.budget, self.shared_budget):
            if keeper is not None and (over := keeper.stop_reason()) is not None:
                # Before the call: the run never spends past its limit by one more call.
                return self._finished(
                    "budget", f"stopped before the model call: {over}", EXIT_BUDGET
                )
        reserved = self.shared_budget.reserve() if self.shared_budget is not None else (0, 0.0)
        notes = list(self._notes)
        self._notes.clear()  # the checkpoint appends to this same list
        started = time.monotonic()
        try:
            reply = await self.model.reply(
                system=SYSTEM_PROMPT,
                messages=self.context.messages(observation, notes),
                tools=self.tools,
                on_text=lambda text: self.emit(
                    ModelWriting(round=n, text=self.secrets.scrub(text))
                ),
            )
        except BaseException:
            if self.shared_budget is not None:
                self.shared_budget.release(reserved)
            raise
        self.keeper.add(reply.usage)
        if self.shared_budget is not None:
            self.shared_budget.record(self.keeper.last_tokens, self.keeper.last_cost, reserved)
        if self.budget is not None:
            self.emit(
                BudgetSpent(
                    round=n, spent=self.budget.spent(), warn=tuple(self.budget.new_warnings())
                )
            )
        parsed = parse_reply(reply.content, allow_js=self.config.allow_js)
        # Text withheld in an earlier round may come back in the model's words.
        content = tuple(self.secrets.scrub_json(list(reply.content)))
        # Text the model asks to type is withheld from every event until the hands say where
        # it went: a field can turn out to be a password field only at dispatch.
        self.emit(
            ModelReplied(
                round=n,
                output=withheld(content, parsed.action),
                usage=dict(reply.usage),
                duration_ms=(time.monotonic() - started) * 1000,
                origin=reply.origin,
            )
        )
        replayed = reply.origin is not None and reply.origin.decided_by == "replayed"
        self.checkpoint.reason_by = "recorded" if replayed else "the model's"
        turn = Turn(round=n, assistant=content)
        turn.outcomes += [
            ToolOutcome(e.tool_use_id or "", e.message, is_error=True) for e in parsed.errors
        ]
        action = parsed.action
        if action is None:
            self._unparsed(n, parsed, turn)
            return None
        line, name = shown_target(action, snapshot)
        self.emit(
            ActionParsed(
                round=n,
                action=withheld(action),
                element_line=line,
                target_name=name,
            )
        )

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
            await self.checkpoint.hand_over(
                n, Finding("ask_human", question), snapshot.url, snapshot.title
            )
            result = ActionResult.success(
                "the person has handed control back; the page state below is fresh "
                "(it may have changed while the person acted)"
            )
            self._done(n, action, result, ApprovalRecord.not_needed(), turn, 0.0)
            return None

        result, approval, started = await self.checkpoint.act(n, action, snapshot)
        self._done(n, action, result, approval, turn, (time.monotonic() - started) * 1000)
        return self._after_result(action, result)

    async def _observe_with_handover(self, n: int) -> tuple[Snapshot, str]:
        snapshot, observation = await self._observe(n)
        for _ in range(10):
            checkpoint = self.checkpoint
            finding = (
                checkpoint.dialog_finding
                or _auth_finding(self.page.take_auth_challenge())
                or detect_handover(snapshot, checkpoint.acknowledged)
            )
            checkpoint.dialog_finding = None
            if finding is None:
                return snapshot, observation
            await self.checkpoint.hand_over(n, finding, snapshot.url, snapshot.title)
            self.checkpoint.acknowledged.add(handled_key(snapshot.url, finding.kind))
            self._notes.append(
                f"The person was asked to handle this page ({finding.kind}: {finding.detail}) and has "
                "handed control back. The page state below is fresh. Do not type into password, "
                "code or card fields yourself."
            )
            snapshot, observation = await self._observe(n)
        return snapshot, observation

    def _snapshot_options(self) -> SnapshotOptions:
        """The eyes' options for this run: the digest leaves room for the header within the
        observation's cap; with an allowlist, a frame that did not load and whose host the run
        may not visit is listed as blocked (and may call for a hand-over)."""
        room = SnapshotOptions().max_chars - HEADER_CHARS
        patterns = self.gate.allow_domains
        if not patterns:
            return SnapshotOptions(max_chars=room)
        return SnapshotOptions(
            max_chars=room, url_allowed=lambda url: host_allowed(host_of(url), patterns)
        )

    async def _observe(self, n: int) -> tuple[Snapshot, str]:
        started = time.monotonic()
        snapshot, notices = await self.page.observe(self._snapshot_options())
        if self.guard is not None:
            notices = [*notices, *self.guard.drain()]
        self.gate.note_visit(snapshot.url)
        tabs = [self.secrets.mask_for_model(t) for t in self.page.tab_descriptions()]
        lines = snapshot.header(tabs).splitlines()
        dialog = self.page.open_dialog
        if dialog is not None:
            lines.append(f"Open dialog: {dialog.type}: {header_field(dialog.message)}")
        lines += [f"Notice: {header_field(notice)}" for notice in notices]
        observation = wrap(fit_header(lines), snapshot.text)
        observation = self.secrets.mask_for_model(observation)
        shot = await self._round_shot(n, snapshot)
        await self._mark(lambda badge: badge.driving())
        self.emit(
            Observed(
                round=n,
                url=cut_field(self.secrets.mask_for_model(snapshot.url), URL_CHARS),
                title=cut_field(self.secrets.mask_for_model(snapshot.title), FIELD_CHARS),
                digest=observation,
                tabs=tuple(cut_field(t, FIELD_CHARS) for t in tabs[:MAX_TABS_SHOWN]),
                duration_ms=(time.monotonic() - started) * 1000,
                hidden_instructions=snapshot.hidden_instruction_fragments,
                screenshot=shot,
            )
        )
        return snapshot, observation

    def _unobserved(self, n: int, exc: BaseException) -> RunFinished:
        """The page could not be read (our walk failed on it, or it never answered): the
        round is recorded with that as its error, and the run ends cleanly. Nothing is asked
        of the model, which would have no page to act on."""
        log.warning("agent.observe_failed", round=n, error=repr(exc))
        reason = f"the page could not be read: {first_line(exc)}"
        self.emit(ActionParsed(round=n, action=None, error=reason))
        result = ActionResult.failure(reason)
        self.emit(
            ActionDone(round=n, action=None, result=result, approval=ApprovalRecord.not_needed())
        )
        return self._finished("error", reason, 1)

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
        if typed_text(action) is not None:
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
        turn.summary = f"{n}. {describe(action) if action else '(no valid action)'} -> " + (
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
        limit = self.config.give_up_after
        if limit is not None and self._failures >= limit:
            return self._finished(
                "gave_up",
                f"{self._failures} actions failed in a row; the last: {describe(action)} -> "
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
        changed.append(f"dialog: {cut_field(c.dialog, FIELD_CHARS)}")
    if changed:
        lines.append("Changed: " + ", ".join(changed))
    # A page names its downloads and writes its dialogs: each notice is cut to its share.
    lines += [f"Notice: {cut_field(n, FIELD_CHARS)}" for n in result.notices[:MAX_NOTICES]]
    if len(result.notices) > MAX_NOTICES:
        lines.append(f"Notice: … and {len(result.notices) - MAX_NOTICES} more notices")
    if result.screenshot and not vision:
        lines.append(
            f"Screenshot saved to {result.screenshot}. This model cannot see images: rely on the page digest."
        )
    return "\n".join(lines)


def _auth_finding(challenge: AuthChallenge | None) -> Finding | None:
    """An HTTP authentication challenge as a hand-over: the person signs in (in the browser
    window); handrail never asks for, types or keeps the credentials. The host and the realm
    are shown; the realm is the server's own words, escaped and cut like page text."""
    if challenge is None:
        return None
    split = urlsplit(challenge.url)
    host = split.netloc.rsplit("@", 1)[-1] or challenge.url
    realm = f', realm "{header_field(challenge.realm, 100)}"' if challenge.realm else ""
    who = "a proxy on the way to " if challenge.status == 407 else ""
    return Finding(
        "password",
        f"{who}{header_field(host, 200)} asks for a user name and password (HTTP "
        f"{header_field(challenge.scheme, 20)} authentication{realm}); sign in in the browser "
        "window, then resume",
    )


def _rerun_of(model: Model) -> RerunOf | None:
    """The recorded run a rerun's backend repeats (``core.rerun``); None for a model."""
    source = getattr(model, "rerun_of", None)
    return source if isinstance(source, RerunOf) else None
