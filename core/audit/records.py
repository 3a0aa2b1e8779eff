"""The audit records as typed values, shared by the recorder (which writes them) and replay
(which reads them back). ``from_json`` never raises: a log is evidence, and a field of the
wrong type reads as missing rather than hiding the rest of the record.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from core.guard.decision import ApprovalDecision

DecisionName = Literal["approved", "edited", "denied", "abort", "auto", "not_needed"]
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

    @classmethod
    def not_needed(cls) -> ApprovalRecord:
        """The action changes nothing: no approval was asked for."""
        return cls("not_needed", BY_POLICY)

    @classmethod
    def automatic(cls) -> ApprovalRecord:
        """A page-changing action let through by ``--approve none``."""
        return cls("auto", BY_APPROVE_NONE)

    @classmethod
    def kind_approved(cls) -> ApprovalRecord:
        """Let through because the person approved all actions of this kind for the run."""
        return cls("auto", BY_KIND)

    @classmethod
    def refused(cls, note: str | None = None) -> ApprovalRecord:
        """Denied by the policy (the gate refused, or the target kept changing)."""
        return cls("denied", BY_POLICY, note=note)

    @classmethod
    def of(cls, decision: ApprovalDecision) -> ApprovalRecord:
        """The person's (or a supervisor's) own decision."""
        return cls(
            decision.decision,
            decision.by,
            dict(decision.edited_params) if decision.edited_params is not None else None,
            decision.note or None,
            decision.approve_kind_for_run,
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
        )


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _dict(value: object) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


@dataclass(frozen=True, slots=True)
class RunStartRecord:
    task: str = ""
    model: str = ""
    browser: str = ""
    max_rounds: int = 0
    ts: str | None = None
    schema: int | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    rerun_of: Mapping[str, Any] | None = None
    """A rerun's source: ``{"run_id", "head", "log"}``."""

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
        )


@dataclass(frozen=True, slots=True)
class IntentRecord:
    """Written just before the hands act. Alone (no round record after it) it means the
    run stopped while acting: the action's effect is unknown."""

    round: int | None
    action: Mapping[str, Any] | None
    ts: str | None = None

    @classmethod
    def from_json(cls, rec: Mapping[str, Any]) -> IntentRecord:
        return cls(_int(rec.get("round")), _dict(rec.get("action")), _str(rec.get("ts")))


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

    def to_json(self) -> dict[str, Any]:
        if self.file is None:
            return {"missing": self.missing or "no screenshot"}
        return {"file": self.file, "sha256": self.sha256}

    @classmethod
    def from_json(cls, value: object) -> ScreenshotRef | None:
        if not isinstance(value, dict):
            return None
        file, digest, missing = value.get("file"), value.get("sha256"), value.get("missing")
        if isinstance(file, str) and file:
            return cls(file, digest if isinstance(digest, str) else None)
        return cls(missing=missing if isinstance(missing, str) else "no screenshot")


@dataclass(frozen=True, slots=True)
class RoundRecord:
    """One finished round as the log keeps it."""

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
    approval: ApprovalRecord | None = None
    result: Mapping[str, Any] | None = None
    duration_ms: float | None = None
    usage: Mapping[str, Any] = field(default_factory=dict)
    screenshot: ScreenshotRef | None = None
    """The page as the round observed it (None: screenshots were off, or an older log)."""
    source_round: int | None = None
    """A rerun's round: the recorded round it stands for (``handrail rerun``)."""
    decided_by: str | None = None
    """A rerun's round: ``replayed``, ``model`` or ``stopped``."""

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
            approval=ApprovalRecord.from_json(rec.get("approval")),
            result=_dict(rec.get("result")),
            duration_ms=_duration(rec.get("timing_ms")),
            usage=_dict(rec.get("usage")) or {},
            screenshot=ScreenshotRef.from_json(rec.get("screenshot")),
            source_round=_int(rec.get("source_round")),
            decided_by=_str(rec.get("decided_by")),
        )


def _duration(timing: object) -> float | None:
    if isinstance(timing, int | float) and not isinstance(timing, bool):
        return float(timing)
    if isinstance(timing, dict):
        whole = timing.get("round")
        if isinstance(whole, int | float):
            return float(whole)
        parts = [v for v in timing.values() if isinstance(v, int | float)]
        if parts:
            return float(sum(parts))
    return None


@dataclass(frozen=True, slots=True)
class PauseRecord:
    """``human_pause`` (``kind``, ``detail``) or ``human_resume`` (``response``)."""

    round: int | None
    resumed: bool
    kind: str = ""
    detail: str = ""
    url: str = ""
    response: str = ""
    ts: str | None = None

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
        )


@dataclass(frozen=True, slots=True)
class RunEndRecord:
    outcome: str = "?"
    answer: str = ""
    reason: str = ""
    ts: str | None = None

    @classmethod
    def from_json(cls, rec: Mapping[str, Any]) -> RunEndRecord:
        return cls(
            str(rec.get("outcome", "?")),
            str(rec.get("answer") or ""),
            str(rec.get("reason") or ""),
            _str(rec.get("ts")),
        )


@dataclass(frozen=True, slots=True)
class OtherRecord:
    """A record type this version does not know (readers ignore unknown types)."""

    type: str
    round: int | None = None
    ts: str | None = None


Record = RunStartRecord | IntentRecord | RoundRecord | PauseRecord | RunEndRecord | OtherRecord


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
