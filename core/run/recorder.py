"""The audit recorder: an event sink that turns agent events into audit records.

It writes the typed records of :mod:`core.audit.records` (their ``to_json``), the same
dataclasses replay reads back, so the log has one schema.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from core.actions import Action
from core.audit.records import (
    ApprovalRecord,
    IntentRecord,
    PauseRecord,
    RequestsRecord,
    RoundRecord,
    RunEndRecord,
    RunStartRecord,
)
from core.audit.trace_ids import trace_hex
from core.audit.writer import SCHEMA, AuditWriter, plain
from core.run.events import (
    ActionDone,
    ActionIntent,
    ActionParsed,
    ApprovalGiven,
    Event,
    HumanNeeded,
    HumanReturned,
    ModelReplied,
    Observed,
    RoundStarted,
    RunFinished,
    RunStarted,
)
from core.secrets import REDACTED, only_placeholders, replace_texts, withheld_mark


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class _Draft:
    round: int
    ts: str
    started: float
    observed: Observed | None = None
    model: ModelReplied | None = None
    parsed: ActionParsed | None = None
    approval: ApprovalGiven | None = None
    intent: Action | None = None
    sensitive: bool = False

    def has_content(self) -> bool:
        return any(x is not None for x in (self.observed, self.model, self.parsed, self.intent))


class NetworkTap(Protocol):
    """What the recorder needs of core/run/netlog.py's NetworkLog."""

    round: int
    handover: bool

    def take(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]: ...

    def end(self) -> None: ...


class AuditRecorder:
    """An event sink that turns agent events into the audit records of docs/architecture.md.

    Writes synchronously: when a call returns, its record is on disk. Errors from the writer
    (``OSError``, :class:`AuditError`) propagate, so the agent never acts on an intent that
    was not recorded.

    Typed text: the intent is written before the hands act, when nobody knows yet whether
    the field will turn out to be a password, code or card field (a field may turn
    ``type=password`` on focus). So the intent never carries the text the model asked to
    type, only ``«withheld: N characters»``; the round record, written after the result,
    carries the text when it went into an ordinary field.

    Password and payment fields: an :class:`~core.run.events.ActionIntent` with ``sensitive``
    set, an :class:`~core.run.events.ActionDone` whose result is ``sensitive_field``, or an
    earlier :meth:`mark_sensitive` call for its round redacts the round. The text that round
    types is then written as ``«redacted»`` — in the round's action, its approval's edited
    params and the model output — and is scrubbed from every later record of the run (a page
    may echo it). Text made only of ``<secret:NAME>`` placeholders is kept: the placeholder
    is not the secret. (The agent also withholds such text from its events and registers it
    with :meth:`core.secrets.Secrets.withhold`, which the writer scrubs; this is the second
    lock.)
    """

    def __init__(self, writer: AuditWriter) -> None:
        self._writer = writer
        self._drafts: dict[int, _Draft] = {}
        self._sensitive_rounds: set[int] = set()
        self._sensitive_texts: set[str] = set()
        self._rounds_written = 0
        self.network: NetworkTap | None = None
        """The run's requests: written as a ``requests`` record after each round."""
        self.finish_har: Callable[[], Mapping[str, Any] | None] | None = None
        """``run --har``: writes the HAR file at the end; its entry goes into ``run_end``."""

    @property
    def writer(self) -> AuditWriter:
        return self._writer

    def scrubbed(self, obj: Any) -> Any:
        """``obj`` as a record of this log would carry it: secrets and redacted text out."""
        obj = self._writer.scrub(obj)
        return _redact_texts(obj, self._sensitive_texts) if self._sensitive_texts else obj

    def mark_sensitive(self, round: int) -> None:
        """Redact the text typed in ``round`` (see the class doc). Call before its intent."""
        self._sensitive_rounds.add(round)
        draft = self._drafts.get(round)
        if draft is not None:
            draft.sensitive = True
            for action in (draft.intent, draft.parsed.action if draft.parsed else None):
                self._remember_sensitive(action)

    def __call__(self, event: Event) -> None:
        match event:
            case RunStarted():
                self._write(self._run_start(event).to_json())
            case RoundStarted():
                self._write_requests()
                if self.network is not None:
                    self.network.round = event.round
                self._draft(event.round)
            case Observed():
                self._draft(event.round).observed = event
            case ModelReplied():
                self._draft(event.round).model = event
            case ActionParsed():
                draft = self._draft(event.round)
                draft.parsed = event
                if draft.sensitive:
                    self._remember_sensitive(event.action)
            case ApprovalGiven():
                self._draft(event.round).approval = event
            case ActionIntent():
                if event.sensitive:
                    self.mark_sensitive(event.round)
                draft = self._draft(event.round)
                draft.intent = event.action
                if draft.sensitive:
                    self._remember_sensitive(event.action)
                action = self._intent_json(event.action, draft.sensitive)
                intent = IntentRecord(event.round, action, _now_iso(), self._writer.run_id)
                self._write(intent.to_json())
            case ActionDone():
                if event.result.code == "sensitive_field":
                    self.mark_sensitive(event.round)
                    self._remember_sensitive(event.action)
                found = self._drafts.pop(event.round, None)
                draft = found if found is not None else self._new_draft(event.round)
                self._write_round(draft, event)
                self._write_requests()
            case HumanNeeded():
                req = event.request
                pause = PauseRecord.pause(
                    req.round, req.kind, req.detail, req.url, req.title, req.headless,
                    ts=_now_iso(), run_id=self._writer.run_id,
                )  # fmt: skip
                self._write(pause.to_json())
                if self.network is not None:
                    self.network.handover = True
            case HumanReturned():
                if self.network is not None:
                    self.network.handover = False
                back = PauseRecord.resume(
                    event.round, event.response, ts=_now_iso(), run_id=self._writer.run_id
                )
                self._write(back.to_json())
            case RunFinished():
                self.flush_pending()
                har = self._end_network()
                self._write(self._run_end(event, har).to_json())
                self._writer.close()
            case _:
                pass  # ApprovalNeeded: the decision (ApprovalGiven) is what the log keeps.

    def flush_pending(self) -> None:
        """Write every round that started but got no ActionDone: its result ``unknown`` when
        its action was dispatched, else ``error`` saying it did not run.

        Called at run end; a supervisor that stops the run abnormally may call it too.
        """
        for rnd in sorted(self._drafts):
            draft = self._drafts.pop(rnd)
            if draft.has_content():
                self._write_round(draft, None)

    # -- internals --

    def _write_requests(self) -> None:
        if self.network is None:
            return
        pages, entries = self.network.take()
        if pages or entries:
            record = RequestsRecord(
                self.network.round, tuple(entries), tuple(pages), _now_iso(), self._writer.run_id
            )
            self._write(record.to_json())

    def _end_network(self) -> Mapping[str, Any] | None:
        """The last requests, and the HAR file's entry for ``run_end`` (``run --har``)."""
        if self.network is None:
            return None
        self.network.end()
        self._write_requests()
        self.network = None
        if self.finish_har is None:
            return None
        try:
            return self.finish_har()
        except OSError as exc:
            return {"missing": f"network.har could not be written: {exc.strerror or exc}"}

    def _new_draft(self, rnd: int) -> _Draft:
        return _Draft(
            round=rnd,
            ts=_now_iso(),
            started=_monotonic_ms(),
            sensitive=rnd in self._sensitive_rounds,
        )

    def _draft(self, rnd: int) -> _Draft:
        draft = self._drafts.get(rnd)
        if draft is None:
            draft = self._drafts[rnd] = self._new_draft(rnd)
        return draft

    def _remember_sensitive(self, action: Action | None) -> None:
        text = _typed_text(action)
        if text and not only_placeholders(text) and text not in (REDACTED, withheld_mark(text)):
            self._sensitive_texts.add(text)

    def _intent_json(self, action: Action, sensitive: bool) -> dict[str, Any]:
        out = self._action_json(action, sensitive)
        text = out["params"].get("text")
        if (
            action.name == "type"
            and isinstance(text, str)
            and text != REDACTED
            and not only_placeholders(text)
        ):
            out["params"]["text"] = text if text == withheld_mark(text) else withheld_mark(text)
        return out

    def _action_json(self, action: Action, sensitive: bool) -> dict[str, Any]:
        out = action.to_json()
        text = out["params"].get("text")
        if sensitive and isinstance(text, str) and not only_placeholders(text):
            out["params"]["text"] = REDACTED
        return out

    def _run_start(self, event: RunStarted) -> RunStartRecord:
        return RunStartRecord(
            task=event.task,
            model=event.model,
            browser=event.browser,
            max_rounds=event.max_rounds,
            ts=_now_iso(),
            schema=SCHEMA,
            settings=dict(event.settings),
            rerun_of=event.rerun_of.to_json() if event.rerun_of is not None else None,
            run_id=self._writer.run_id,
            trace_id=trace_hex(self._writer.run_id),
        )

    def _run_end(self, event: RunFinished, har: Mapping[str, Any] | None) -> RunEndRecord:
        return RunEndRecord(
            outcome=event.outcome,
            answer=event.answer,
            reason=event.reason,
            ts=_now_iso(),
            rounds=event.rounds,
            exit_code=event.exit_code,
            run_id=self._writer.run_id,
            spent=event.spent,
            har=har,
        )

    def _write_round(self, draft: _Draft, done: ActionDone | None) -> None:
        self._write(self._round(draft, done).to_json())
        self._rounds_written += 1

    def _round(self, draft: _Draft, done: ActionDone | None) -> RoundRecord:
        """The round record for ``draft``; ``done`` None: the run ended before its result."""
        obs, model, parsed = draft.observed, draft.model, draft.parsed
        action, action_error = self._round_action(draft, done)
        approval = self._round_approval(draft, done)
        output = model.output if model else None
        if done is not None and done.model_output is not None:
            output = done.model_output
        origin = model.origin if model is not None else None
        return RoundRecord(
            round=draft.round,
            ts=draft.ts,
            url=obs.url if obs else "",
            title=obs.title if obs else "",
            observation=obs.digest if obs else None,
            model_output=list(output) if output is not None else None,
            action=action,
            action_error=action_error,
            element=parsed.element_line if parsed is not None else None,
            target_name=parsed.target_name if parsed is not None else None,
            approval=approval,
            result=done.result.to_json() if done is not None else _unknown_result(draft),
            timing_ms=_timing(draft, done),
            usage=dict(model.usage) if model else {},
            replied=model is not None,
            screenshot=obs.screenshot if obs else None,
            source_round=origin.source_round if origin is not None else None,
            decided_by=origin.decided_by if origin is not None else None,
            run_id=self._writer.run_id,
        )

    def _round_action(
        self, draft: _Draft, done: ActionDone | None
    ) -> tuple[dict[str, Any] | None, str | None]:
        """The round's action as the log keeps it, or why the reply gave none."""
        parsed = draft.parsed
        if parsed is not None and parsed.action is None:
            return None, parsed.error or "the reply could not be parsed into an action"
        if done is not None and done.action is not None:
            # The action as the result left it: typed text shown once it is known harmless.
            return self._action_json(done.action, draft.sensitive), None
        if parsed is not None and parsed.action is not None:
            return self._action_json(parsed.action, draft.sensitive), None
        if draft.intent is not None:
            return self._action_json(draft.intent, draft.sensitive), None
        return None, None

    def _round_approval(self, draft: _Draft, done: ActionDone | None) -> ApprovalRecord | None:
        """How the round was decided; in a redacted round, the person's own text for the
        field is redacted too (and scrubbed from every later record)."""
        if done is not None:
            approval: ApprovalRecord | None = done.approval
        else:
            approval = ApprovalRecord.of(draft.approval.decision) if draft.approval else None
        if not draft.sensitive or approval is None or approval.edited_params is None:
            return approval
        edited = dict(approval.edited_params)
        if isinstance(edited.get("text"), str) and not only_placeholders(edited["text"]):
            self._sensitive_texts.add(edited["text"])
            edited["text"] = REDACTED
        return replace(approval, edited_params=edited)

    def _write(self, record: dict[str, Any]) -> None:
        if self._sensitive_texts:
            record = _redact_texts(plain(record), self._sensitive_texts)
        self._writer.write(record)


def _unknown_result(draft: _Draft) -> dict[str, Any]:
    """The result of a round the run left before its result was read: ``unknown`` once its
    action was dispatched (its effect cannot be known), ``error`` when it never was (the
    run ended at its approval, or before the model's reply became an action)."""
    if draft.intent is not None:
        message = (
            "the action was dispatched but the run ended before its result was read; "
            "its effect is unknown"
        )
        return {"ok": False, "message": message, "outcome": "unknown"}
    if draft.parsed is not None and draft.parsed.action is not None and draft.approval is None:
        message = "not run: the run ended while this action waited for approval"
    else:
        message = "not run: the run ended before this round's action was dispatched"
    return {"ok": False, "message": message, "error": message, "outcome": "error"}


def _timing(draft: _Draft, done: ActionDone | None) -> dict[str, float]:
    """Each part of the round in milliseconds, and the whole round up to now."""
    timing: dict[str, float] = {}
    if draft.observed is not None:
        timing["observe"] = round(draft.observed.duration_ms, 1)
    if draft.model is not None:
        timing["model"] = round(draft.model.duration_ms, 1)
    if done is not None:
        timing["action"] = round(done.duration_ms, 1)
    timing["round"] = round(_monotonic_ms() - draft.started, 1)
    return timing


def _typed_text(action: Action | None) -> str | None:
    if action is None:
        return None
    text = action.params.get("text")
    return text if isinstance(text, str) and text else None


def _redact_texts(obj: Any, texts: set[str]) -> Any:
    return replace_texts(obj, dict.fromkeys(texts, REDACTED))


def _monotonic_ms() -> float:
    return time.monotonic() * 1000.0
