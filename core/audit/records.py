"""The audit records as typed values, shared by the recorder (which writes them) and replay
(which reads them back): one schema. ``to_json`` is the record exactly as the log keeps it,
key order included (the chain hashes the bytes); ``from_json(to_json(x)) == x``.
``from_json`` never raises: a log is evidence, and a field of the wrong type reads as missing
rather than hiding the rest of the record.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from core.guard.decision import ApprovalDecision, RuleRef

DecisionName = Literal["approved", "edited", "denied", "abort", "auto", "not_needed", "handed_over"]
RoundOutcome = Literal["ok", "error", "unknown"]

BY_POLICY = "policy"
BY_APPROVE_NONE = "--approve none"
BY_KIND = "person (approved all of this kind)"
"""Who approved an action the person had approved for its whole kind earlier in the run."""


@dataclass(frozen=True, slots=True)
class ApprovalRecord:
    """How a round's action was decided: the ``approval`` of a round record.

    Made only by the agent (through these constructors) and read by the recorder, the live
    view and replay, so every reader sees the same words.
    """

    decision: DecisionName
    by: str
    edited_params: Mapping[str, Any] | None = None
    note: str | None = None
    approve_kind_for_run: bool = False
    rule: RuleRef | None = None
    """The approval policy's rule that let it through, asked, refused or handed it over."""
    remember_for_site: bool = False
    """The person allowed this kind of action on this site from now on (``s``)."""

    @classmethod
    def not_needed(cls) -> ApprovalRecord:
        """The action changes nothing: no approval was asked for."""
        return cls("not_needed", BY_POLICY)

    @classmethod
    def automatic(cls, rule: RuleRef | None = None, *, by: str = BY_APPROVE_NONE) -> ApprovalRecord:
        """A page-changing action the approval policy let through (``rule``)."""
        return cls("auto", by, rule=rule)

    @classmethod
    def kind_approved(cls, rule: RuleRef | None = None) -> ApprovalRecord:
        """Let through because the person approved all actions of this kind for the run."""
        return cls("auto", BY_KIND, rule=rule)

    @classmethod
    def refused(cls, note: str | None = None, rule: RuleRef | None = None) -> ApprovalRecord:
        """Denied by the policy (the gate refused, a rule refused, or the target kept
        changing)."""
        return cls("denied", BY_POLICY, note=note, rule=rule)

    @classmethod
    def handed_over(cls, rule: RuleRef) -> ApprovalRecord:
        """Not run: a rule handed the page to the person instead."""
        return cls("handed_over", BY_POLICY, rule=rule)

    @classmethod
    def of(cls, decision: ApprovalDecision, rule: RuleRef | None = None) -> ApprovalRecord:
        """The person's (or a supervisor's) own decision, on an action ``rule`` asked about."""
        return cls(
            decision.decision,
            decision.by,
            dict(decision.edited_params) if decision.edited_params is not None else None,
            decision.note or None,
            decision.approve_kind_for_run,
            rule,
            decision.remember_for_site,
        )

    @property
    def by_person(self) -> bool:
        """A person decided this one, at this round (not policy, not an earlier blanket yes)."""
        return self.by == "person"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"decision": self.decision, "by": self.by}
        if self.edited_params is not None:
            out["edited_params"] = dict(self.edited_params)
        if self.note is not None:
            out["note"] = self.note
        if self.approve_kind_for_run:
            out["approve_kind_for_run"] = True
        if self.rule is not None:
            out["rule"] = self.rule.to_json()
        if self.remember_for_site:
            out["remember_for_site"] = True
        return out

    @classmethod
    def from_json(cls, value: object) -> ApprovalRecord | None:
        if not isinstance(value, dict) or not isinstance(value.get("decision"), str):
            return None
        edited = value.get("edited_params")
        note = value.get("note")
        return cls(
            value["decision"],
            str(value.get("by", "")),
            edited if isinstance(edited, dict) else None,
            note if isinstance(note, str) else None,
            value.get("approve_kind_for_run") is True,
            RuleRef.from_json(value.get("rule")),
            value.get("remember_for_site") is True,
        )


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _dict(value: object) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _run_id(rec: Mapping[str, Any]) -> str:
    return _str(rec.get("run_id")) or ""


@dataclass(frozen=True, slots=True)
class RunStartRecord:
    """``run_start``: what the run was asked and how it was set up."""

    task: str = ""
    model: str = ""
    browser: str = ""
    max_rounds: int = 0
    ts: str | None = None
    schema: int | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    rerun_of: Mapping[str, Any] | None = None
    """A rerun's source: ``{"run_id", "head", "log"}``."""
    run_id: str = ""
    trace_id: str | None = None
    """The run's OpenTelemetry trace id (32 hex digits, derived from the run id:
    core/audit/trace_ids.py), so an exported trace and its log name each other."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "run_start",
            "schema": self.schema,
            "run_id": self.run_id,
            "ts": self.ts,
            "task": self.task,
            "model": self.model,
            "settings": dict(self.settings),
            "browser": self.browser,
            "max_rounds": self.max_rounds,
        }
        if self.rerun_of is not None:
            out["rerun_of"] = dict(self.rerun_of)
        if self.trace_id is not None:
            out["trace_id"] = self.trace_id
        return out

    @classmethod
    def from_json(cls, rec: Mapping[str, Any]) -> RunStartRecord:
        settings = _dict(rec.get("settings")) or {}
        max_rounds = _int(rec.get("max_rounds", settings.get("max_rounds")))
        return cls(
            task=str(rec.get("task", "")),
            model=str(rec.get("model", "")),
            browser=str(rec.get("browser", "")),
            max_rounds=max_rounds or 0,
            ts=_str(rec.get("ts")),
            schema=_int(rec.get("schema")),
            settings=settings,
            rerun_of=_dict(rec.get("rerun_of")),
            run_id=_run_id(rec),
            trace_id=_str(rec.get("trace_id")),
        )


@dataclass(frozen=True, slots=True)
class IntentRecord:
    """Written just before the hands act. Alone (no round record after it) it means the
    run stopped while acting: the action's effect is unknown."""

    round: int | None
    action: Mapping[str, Any] | None
    ts: str | None = None
    run_id: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "intent",
            "run_id": self.run_id,
            "round": self.round,
            "ts": self.ts,
            "action": dict(self.action) if self.action is not None else None,
        }

    @classmethod
    def from_json(cls, rec: Mapping[str, Any]) -> IntentRecord:
        return cls(
            _int(rec.get("round")), _dict(rec.get("action")), _str(rec.get("ts")), _run_id(rec)
        )


@dataclass(frozen=True, slots=True)
class ScreenshotRef:
    """A round's screenshot: the ``screenshot`` of a round record.

    ``file`` is relative to the log's folder (the JPEG lives in the run folder beside the
    log); ``sha256`` lets a reader tell that the file is the one written with the record
    (the chain covers the record, not the file). Without a picture, ``missing`` says why.
    """

    file: str | None = None
    sha256: str | None = None
    missing: str | None = None
    masked: int = 0
    """Boxes covering a secret in the picture: it is not the page as it was (0: none)."""

    def to_json(self) -> dict[str, Any]:
        if self.file is None:
            return {"missing": self.missing or "no screenshot"}
        out: dict[str, Any] = {"file": self.file, "sha256": self.sha256}
        if self.masked:
            out["masked"] = self.masked
        return out

    @classmethod
    def from_json(cls, value: object) -> ScreenshotRef | None:
        if not isinstance(value, dict):
            return None
        file, digest, missing = value.get("file"), value.get("sha256"), value.get("missing")
        if isinstance(file, str) and file:
            masked = value.get("masked")
            count = masked if isinstance(masked, int) and not isinstance(masked, bool) else 0
            return cls(file, digest if isinstance(digest, str) else None, masked=max(0, count))
        return cls(missing=missing if isinstance(missing, str) else "no screenshot")


@dataclass(frozen=True, slots=True)
class RoundRecord:
    """One finished round as the log keeps it.

    A round that observed nothing (``observation`` None) has ``url`` and ``title`` written
    as null; one that got no reply from the model (``replied`` False) has ``usage`` null.
    """

    round: int
    ts: str | None = None
    url: str = ""
    title: str = ""
    observation: str | None = None
    model_output: Any = None
    action: Mapping[str, Any] | None = None
    action_error: str | None = None
    """Why the reply gave no action (then ``action`` is ``None``)."""
    element: str | None = None
    """The digest line of the element the action targets by index."""
    target_name: str | None = None
    """That element's accessible name (None: no index, or a log older than the field)."""
    approval: ApprovalRecord | None = None
    result: Mapping[str, Any] | None = None
    timing_ms: Mapping[str, Any] | float | None = None
    """``{"observe", "model", "action", "round"}`` in milliseconds (a number in older logs)."""
    usage: Mapping[str, Any] = field(default_factory=dict)
    replied: bool = True
    """The model replied in this round (its ``usage`` is written, if empty as ``{}``)."""
    screenshot: ScreenshotRef | None = None
    """The page as the round observed it (None: screenshots were off, or an older log)."""
    source_round: int | None = None
    """A rerun's round: the recorded round it stands for (``handrail rerun``)."""
    decided_by: str | None = None
    """A rerun's round: ``replayed``, ``model`` or ``stopped``."""
    run_id: str = ""

    @property
    def duration_ms(self) -> float | None:
        """How long the round took, in milliseconds (None: not recorded)."""
        return _duration(self.timing_ms)

    @property
    def model_ms(self) -> float | None:
        """How long the model took to answer, in milliseconds (None: not recorded)."""
        return self._part_ms("model")

    @property
    def action_ms(self) -> float | None:
        """How long the hands took to act, in milliseconds (None: not recorded or not run)."""
        return self._part_ms("action")

    def _part_ms(self, part: str) -> float | None:
        timing = self.timing_ms
        value = timing.get(part) if isinstance(timing, Mapping) else None
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        return None

    @property
    def outcome(self) -> RoundOutcome:
        """``ok``, ``error``, or ``unknown`` (no readable result: never read as ``ok``)."""
        result = self.result
        if result is None:
            return "unknown"
        outcome = result.get("outcome")
        if outcome in ("ok", "error", "unknown"):
            return outcome  # type: ignore[no-any-return]
        if result.get("ok") is True:
            return "ok"
        if result.get("ok") is False:
            return "error"
        return "unknown"

    def to_json(self) -> dict[str, Any]:
        observed = self.observation is not None
        out: dict[str, Any] = {
            "type": "round",
            "run_id": self.run_id,
            "round": self.round,
            "ts": self.ts,
            "url": self.url if observed else None,
            "title": self.title if observed else None,
            "observation": self.observation,
            "model_output": self.model_output,
            "action": self._action_json(),
            "approval": self.approval.to_json() if self.approval is not None else None,
            "result": dict(self.result) if self.result is not None else None,
            "timing_ms": dict(self.timing_ms)
            if isinstance(self.timing_ms, Mapping)
            else self.timing_ms,
            "usage": dict(self.usage) if self.replied else None,
        }
        if self.element is not None:
            out["element"] = self.element
        if self.target_name is not None:
            out["target_name"] = self.target_name
        if self.decided_by is not None:
            out["source_round"] = self.source_round
            out["decided_by"] = self.decided_by
        if self.screenshot is not None:
            out["screenshot"] = self.screenshot.to_json()
        return out

    def _action_json(self) -> dict[str, Any] | None:
        if self.action_error is not None:
            return {"error": self.action_error}
        return dict(self.action) if self.action is not None else None

    @classmethod
    def from_json(cls, rec: Mapping[str, Any]) -> RoundRecord:
        action = _dict(rec.get("action"))
        action_error = None
        if action is not None and "error" in action and "name" not in action:
            action_error, action = str(action["error"]), None
        observation = rec.get("observation")
        if observation is not None and not isinstance(observation, str):
            observation = str(observation)
        return cls(
            round=_int(rec.get("round")) or 0,
            ts=_str(rec.get("ts")),
            url=str(rec.get("url") or ""),
            title=str(rec.get("title") or ""),
            observation=observation,
            model_output=rec.get("model_output"),
            action=action,
            action_error=action_error,
            element=_str(rec.get("element", rec.get("element_line"))),
            target_name=_str(rec.get("target_name")),
            approval=ApprovalRecord.from_json(rec.get("approval")),
            result=_dict(rec.get("result")),
            timing_ms=_timing(rec.get("timing_ms")),
            usage=_dict(rec.get("usage")) or {},
            replied=rec.get("usage") is not None,
            screenshot=ScreenshotRef.from_json(rec.get("screenshot")),
            source_round=_int(rec.get("source_round")),
            decided_by=_str(rec.get("decided_by")),
            run_id=_run_id(rec),
        )


def _timing(value: object) -> dict[str, Any] | float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    return _dict(value)


def _duration(timing: object) -> float | None:
    if isinstance(timing, int | float) and not isinstance(timing, bool):
        return float(timing)
    if isinstance(timing, Mapping):
        whole = timing.get("round")
        if isinstance(whole, int | float):
            return float(whole)
        parts = [v for v in timing.values() if isinstance(v, int | float)]
        if parts:
            return float(sum(parts))
    return None


@dataclass(frozen=True, slots=True)
class PauseRecord:
    """``human_pause`` (``kind``, ``detail``, ``url``, ``title``, ``headless``) or
    ``human_resume`` (``response``). Made by :meth:`pause` and :meth:`resume`, which leave
    the other kind's fields as a reader finds them missing (``?``)."""

    round: int | None
    resumed: bool
    kind: str = ""
    detail: str = ""
    url: str = ""
    response: str = ""
    ts: str | None = None
    title: str = ""
    headless: bool = False
    run_id: str = ""

    @classmethod
    def pause(
        cls,
        round: int,
        kind: str,
        detail: str,
        url: str,
        title: str = "",
        headless: bool = False,
        *,
        ts: str | None = None,
        run_id: str = "",
    ) -> PauseRecord:
        """The agent stopped for a person."""
        return cls(round, False, kind, detail, url, "?", ts, title, headless, run_id)

    @classmethod
    def resume(
        cls, round: int, response: str, *, ts: str | None = None, run_id: str = ""
    ) -> PauseRecord:
        """The person handed control back (or aborted)."""
        return cls(round, True, "?", response=response, ts=ts, run_id=run_id)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "human_resume" if self.resumed else "human_pause",
            "run_id": self.run_id,
            "round": self.round,
            "ts": self.ts,
        }
        if self.resumed:
            out["response"] = self.response
            return out
        out |= {"kind": self.kind, "detail": self.detail, "url": self.url}
        out |= {"title": self.title, "headless": self.headless}
        return out

    @classmethod
    def from_json(cls, rec: Mapping[str, Any]) -> PauseRecord:
        return cls(
            _int(rec.get("round")),
            rec.get("type") == "human_resume",
            str(rec.get("kind", "?")),
            str(rec.get("detail", "")),
            str(rec.get("url") or ""),
            str(rec.get("response", "?")),
            _str(rec.get("ts")),
            str(rec.get("title") or ""),
            rec.get("headless") is True,
            _run_id(rec),
        )


@dataclass(frozen=True, slots=True)
class RunEndRecord:
    """``run_end``: how the run ended. (The writer adds ``records`` and ``head``.)"""

    outcome: str = "?"
    answer: str = ""
    reason: str = ""
    ts: str | None = None
    rounds: int | None = None
    exit_code: int | None = None
    run_id: str = ""
    spent: Mapping[str, Any] | None = None
    """A run with a budget: ``{"tokens", "cost_usd", "seconds", "limits"}`` at its end."""
    har: Mapping[str, Any] | None = None
    """``run --har``: ``{"file", "sha256", "entries"}`` of the run's ``network.har`` (``file``
    relative to the log's folder), so ``verify`` covers the file too."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "run_end",
            "run_id": self.run_id,
            "ts": self.ts,
            "outcome": self.outcome,
            "answer": self.answer,
            "rounds": self.rounds,
            "exit_code": self.exit_code,
            "reason": self.reason,
        }
        if self.spent is not None:
            out["spent"] = dict(self.spent)
        if self.har is not None:
            out["har"] = dict(self.har)
        return out

    @classmethod
    def from_json(cls, rec: Mapping[str, Any]) -> RunEndRecord:
        return cls(
            str(rec.get("outcome", "?")),
            str(rec.get("answer") or ""),
            str(rec.get("reason") or ""),
            _str(rec.get("ts")),
            _int(rec.get("rounds")),
            _int(rec.get("exit_code")),
            _run_id(rec),
            _dict(rec.get("spent")),
            _dict(rec.get("har")),
        )


@dataclass(frozen=True, slots=True)
class RequestsRecord:
    """``requests``: the requests the run's pages made that finished since the last such
    record, written after the round ``round`` (0: before the first). Each entry names the
    round it started in; ``pages`` are the documents tabs' main frames began loading.
    The shapes are core/audit/har.py's (the short form: no headers, no bodies)."""

    round: int | None
    entries: tuple[Mapping[str, Any], ...] = ()
    pages: tuple[Mapping[str, Any], ...] = ()
    ts: str | None = None
    run_id: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "requests",
            "run_id": self.run_id,
            "round": self.round,
            "ts": self.ts,
            "pages": [dict(p) for p in self.pages],
            "entries": [dict(e) for e in self.entries],
        }

    @classmethod
    def from_json(cls, rec: Mapping[str, Any]) -> RequestsRecord:
        def dicts(value: object) -> tuple[Mapping[str, Any], ...]:
            items = value if isinstance(value, list) else []
            return tuple(item for item in items if isinstance(item, dict))

        return cls(
            _int(rec.get("round")),
            dicts(rec.get("entries")),
            dicts(rec.get("pages")),
            _str(rec.get("ts")),
            _run_id(rec),
        )


@dataclass(frozen=True, slots=True)
class OtherRecord:
    """A record type this version does not know (readers ignore unknown types)."""

    type: str
    round: int | None = None
    ts: str | None = None


Record = (
    RunStartRecord
    | IntentRecord
    | RoundRecord
    | PauseRecord
    | RunEndRecord
    | RequestsRecord
    | OtherRecord
)


def record_of(rec: Mapping[str, Any]) -> Record:
    """The typed record for one parsed log line."""
    match rec.get("type"):
        case "run_start":
            return RunStartRecord.from_json(rec)
        case "intent":
            return IntentRecord.from_json(rec)
        case "round":
            return RoundRecord.from_json(rec)
        case "human_pause" | "human_resume":
            return PauseRecord.from_json(rec)
        case "run_end":
            return RunEndRecord.from_json(rec)
        case "requests":
            return RequestsRecord.from_json(rec)
        case kind:
            return OtherRecord(str(kind), _int(rec.get("round")), _str(rec.get("ts")))


class IntentPairing:
    """Pairs each round record with the intent written before it, reading in file order.

    An intent and its own round record are one round; an intent left open at the end of the
    log is a round whose action ran with no result recorded.
    """

    def __init__(self) -> None:
        self._open: dict[int, int] = {}

    def intent(self, round: int | None, line: int) -> None:
        """An intent for ``round`` is on ``line``."""
        if round is not None:
            self._open[round] = line

    def complete(self, round: int) -> int | None:
        """A round record for ``round`` arrived: the line of its intent, if one is open."""
        return self._open.pop(round, None)


@dataclass(frozen=True, slots=True)
class RoundEntry:
    """One round of a run: its record, its intent, and the outcome to show."""

    round: int
    record: RoundRecord | None
    intent: IntentRecord | None
    outcome: RoundOutcome


def rounds_of(records: Iterable[Mapping[str, Any]]) -> list[RoundEntry]:
    """Every round of a run in order, each round record paired with its intent.

    A round with an intent but no round record (the run was killed while acting) has outcome
    ``unknown``.
    """
    intents: dict[int, IntentRecord] = {}
    entries: dict[int, RoundEntry] = {}
    for rec in records:
        typed = record_of(rec)
        if isinstance(typed, IntentRecord) and typed.round is not None:
            intents[typed.round] = typed
            entries.setdefault(typed.round, RoundEntry(typed.round, None, typed, "unknown"))
        elif isinstance(typed, RoundRecord):
            intent = intents.get(typed.round)
            entries[typed.round] = RoundEntry(typed.round, typed, intent, typed.outcome)
    return list(entries.values())
