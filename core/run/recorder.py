"""The audit recorder: an event sink that turns agent events into audit records."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from core.actions import Action
from core.audit.records import ApprovalRecord
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

    @property
    def writer(self) -> AuditWriter:
        return self._writer

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
                start: dict[str, Any] = {
                    "type": "run_start",
                    "schema": SCHEMA,
                    "run_id": self._writer.run_id,
                    "ts": _now_iso(),
                    "task": event.task,
                    "model": event.model,
                    "settings": dict(event.settings),
                    "browser": event.browser,
                    "max_rounds": event.max_rounds,
                }
                if event.rerun_of is not None:
                    start["rerun_of"] = event.rerun_of.to_json()
                self._write(start)
            case RoundStarted():
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
                self._write(
                    {
                        "type": "intent",
                        "run_id": self._writer.run_id,
                        "round": event.round,
                        "ts": _now_iso(),
                        "action": action,
                    }
                )
            case ActionDone():
                if event.result.code == "sensitive_field":
                    self.mark_sensitive(event.round)
                    self._remember_sensitive(event.action)
                found = self._drafts.pop(event.round, None)
                draft = found if found is not None else self._new_draft(event.round)
                self._write_round(draft, event)
            case HumanNeeded():
                req = event.request
                self._write(
                    {
                        "type": "human_pause",
                        "run_id": self._writer.run_id,
                        "round": req.round,
                        "ts": _now_iso(),
                        "kind": req.kind,
                        "detail": req.detail,
                        "url": req.url,
                        "title": req.title,
                        "headless": req.headless,
                    }
                )
            case HumanReturned():
                self._write(
                    {
                        "type": "human_resume",
                        "run_id": self._writer.run_id,
                        "round": event.round,
                        "ts": _now_iso(),
                        "response": event.response,
                    }
                )
            case RunFinished():
                self.flush_pending()
                self._write(
                    {
                        "type": "run_end",
                        "run_id": self._writer.run_id,
                        "ts": _now_iso(),
                        "outcome": event.outcome,
                        "answer": event.answer,
                        "rounds": event.rounds,
                        "exit_code": event.exit_code,
                        "reason": event.reason,
                    }
                )
                self._writer.close()
            case _:
                pass  # ApprovalNeeded: the decision (ApprovalGiven) is what the log keeps.

    def flush_pending(self) -> None:
        """Write every round that started but got no ActionDone, its result ``unknown``.

        Called at run end; a supervisor that stops the run abnormally may call it too.
        """
        for rnd in sorted(self._drafts):
            draft = self._drafts.pop(rnd)
            if draft.has_content():
                self._write_round(draft, None)

    # -- internals --

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

    def _write_round(self, draft: _Draft, done: ActionDone | None) -> None:
        parsed = draft.parsed
        action: dict[str, Any] | None
        if parsed is not None and parsed.action is None:
            action = {"error": parsed.error or "the reply could not be parsed into an action"}
        elif done is not None and done.action is not None:
            # The action as the result left it: typed text shown once it is known harmless.
            action = self._action_json(done.action, draft.sensitive)
        elif parsed is not None and parsed.action is not None:
            action = self._action_json(parsed.action, draft.sensitive)
        elif draft.intent is not None:
            action = self._action_json(draft.intent, draft.sensitive)
        else:
            action = None

        approval: ApprovalRecord | None
        if done is not None:
            approval = done.approval
            result: dict[str, Any] = done.result.to_json()
        else:
            approval = ApprovalRecord.of(draft.approval.decision) if draft.approval else None
            if draft.intent is not None:
                message = (
                    "the action was dispatched but the run ended before its result was read; "
                    "its effect is unknown"
                )
            else:
                message = "the run ended before this round's action ran"
            result = {"ok": False, "message": message, "outcome": "unknown"}
        approval_json = approval.to_json() if approval is not None else None
        if (
            draft.sensitive
            and approval_json
            and isinstance(approval_json.get("edited_params"), dict)
        ):
            ep = dict(approval_json["edited_params"])
            if isinstance(ep.get("text"), str) and not only_placeholders(ep["text"]):
                self._sensitive_texts.add(ep["text"])
                ep["text"] = REDACTED
            approval_json["edited_params"] = ep

        obs, model = draft.observed, draft.model
        output = model.output if model else None
        if done is not None and done.model_output is not None:
            output = done.model_output
        timing: dict[str, float] = {}
        if obs is not None:
            timing["observe"] = round(obs.duration_ms, 1)
        if model is not None:
            timing["model"] = round(model.duration_ms, 1)
        if done is not None:
            timing["action"] = round(done.duration_ms, 1)
        timing["round"] = round(_monotonic_ms() - draft.started, 1)

        record: dict[str, Any] = {
            "type": "round",
            "run_id": self._writer.run_id,
            "round": draft.round,
            "ts": draft.ts,
            "url": obs.url if obs else None,
            "title": obs.title if obs else None,
            "observation": obs.digest if obs else None,
            "model_output": list(output) if output is not None else None,
            "action": action,
            "approval": approval_json,
            "result": result,
            "timing_ms": timing,
            "usage": dict(model.usage) if model else None,
        }
        if parsed is not None and parsed.element_line is not None:
            record["element"] = parsed.element_line
        if model is not None and model.origin is not None:
            record["source_round"] = model.origin.source_round
            record["decided_by"] = model.origin.decided_by
        if obs is not None and obs.screenshot is not None:
            record["screenshot"] = obs.screenshot.to_json()
        self._write(record)
        self._rounds_written += 1

    def _write(self, record: dict[str, Any]) -> None:
        if self._sensitive_texts:
            record = _redact_texts(plain(record), self._sensitive_texts)
        self._writer.write(record)


def _typed_text(action: Action | None) -> str | None:
    if action is None:
        return None
    text = action.params.get("text")
    return text if isinstance(text, str) and text else None


def _redact_texts(obj: Any, texts: set[str]) -> Any:
    return replace_texts(obj, dict.fromkeys(texts, REDACTED))


def _monotonic_ms() -> float:
    return time.monotonic() * 1000.0
