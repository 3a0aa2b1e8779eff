"""Reading a recorded run out of its audit log: the steps a rerun repeats, and what it is.

A step is a ``round`` record whose action ran and succeeded: a round without an action, one
the person denied, one the policy refused and one whose action failed changed nothing on
the page, so repeating it would repeat nothing (or the same failure). Nor is the question the
model asked the person right after a denial (a rerun asks its approvals afresh). Each skipped round is
kept with the reason, for the person reading why the rerun has fewer steps.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.audit import verify  # not core.audit.verify: that binds the module over the name
from core.audit.chain import line_hash
from core.audit.reader import read_log
from core.model.base import RecordedView
from core.run.events import RerunOf


class RerunError(Exception):
    """The recorded run cannot be repeated as given. The message says what to change."""


@dataclass(frozen=True, slots=True)
class RecordedStep:
    """One recorded round that a rerun repeats."""

    round: int
    url: str
    observation: str
    name: str
    """The tool: ``click``, ``type``, ``navigate``..."""
    params: dict[str, Any]
    """As the action ran: the person's edit at the approval applied over the model's."""
    reason: str
    element: str | None
    """The target's digest line as the model saw it (``[41]<button>Continue</button>``)."""
    result: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        """``click [41]<button>Continue</button>`` / ``navigate http://…``: as a person reads it."""
        if self.element:
            return f"{self.name} {self.element.lstrip('*~ ')}"
        shown = ", ".join(f"{k}={v!r}" for k, v in self.params.items() if k != "reason")
        return f"{self.name} {shown}".strip()

    def action_json(self) -> dict[str, Any]:
        return {"name": self.name, "params": dict(self.params), "reason": self.reason}

    def view(self) -> RecordedView:
        return RecordedView(
            round=self.round,
            url=self.url,
            observation=self.observation,
            action=self.action_json(),
            result=dict(self.result),
            element=self.element,
        )


@dataclass(frozen=True, slots=True)
class RecordedRun:
    path: Path
    run_id: str
    head: str
    """SHA-256 hex of the log's last complete record line."""
    task: str
    start_url: str | None
    allow_domains: tuple[str, ...]
    max_rounds: int
    steps: tuple[RecordedStep, ...]
    skipped: tuple[tuple[int, str], ...]
    """Rounds not repeated, and why (``(3, "the person denied it")``)."""
    ending: str
    """How the recorded run ended, from its ``run_end`` (or that it has none)."""
    sealed_here: bool = True
    """Sealed by this installation's key. A log that is not (chain only, another
    installation's, a made-up key) is repeated only with ``--trust-log``, and never
    supplies the start URL or the allowlist (:meth:`core.rerun.rerun.Rerun.settings`)."""
    seal: str = "sealed"
    """What verify said of the seal (``VerifyReport.seal_text``), for the person."""

    @property
    def source(self) -> RerunOf:
        return RerunOf(run_id=self.run_id, head=self.head, log=str(self.path.resolve()))


def load_recorded(path: Path, *, trust_log: bool = False) -> RecordedRun:
    """Read the run recorded in ``path``. Raises :class:`RerunError` when the file is not a
    log, fails verification (edited, forged, reordered: a plan nobody recorded must never be
    repeated), is not sealed by this installation's key (a chain-only log, another
    installation's, one sealed under a made-up key: anyone can write those) unless
    ``trust_log``, or holds no step to repeat. A log cut short (no ``run_end``) is accepted:
    its complete records are what ran."""
    if not path.is_file():
        raise RerunError(f"{path} is not an audit log file (give a run's .jsonl)")
    report = verify(path)
    if report.exit_code in (1, 2):
        raise RerunError(
            f"{path} does not verify ({report.summary()}); a rerun repeats only a log "
            "handrail wrote and nobody changed. Check it with `handrail verify`."
        )
    sealed_here = report.seal == "checked"
    if not sealed_here and not trust_log:
        raise RerunError(
            f"{path} is not sealed by this installation's key ({report.seal_text()}), so "
            "anyone could have written it, and a rerun drives your browser from it. If you "
            "know where it comes from, add --trust-log: its steps are then repeated (every "
            "page-changing one still asks), but its start URL and allowlist are not used."
        )
    data = path.read_bytes()
    lines = [line for line in data.split(b"\n") if line.strip()]
    records = read_log(path).records
    if not records or records[0].get("type") != "run_start":
        raise RerunError(f"{path} does not start with a run_start record: not a run's log")
    complete = lines[: len(records)] if len(lines) > len(records) else lines
    start = records[0]
    settings = start.get("settings") if isinstance(start.get("settings"), dict) else {}
    assert isinstance(settings, dict)
    steps: list[RecordedStep] = []
    skipped: list[tuple[int, str]] = []
    ending = "the log has no run_end (the recorded run was cut short)"
    denied: int | None = None  # the round the person denied just before, if any
    for record in records[1:]:
        kind = record.get("type")
        if kind == "run_end":
            ending = f"{record.get('outcome')}: {record.get('reason') or record.get('answer')}"
        if kind != "round":
            continue
        after_denial, denied = denied, _denied_round(record)
        step_or_why = _step_of(record)
        if after_denial is not None and _asks_the_person(record):
            # The model asked about the denial; a rerun asks its own approvals afresh, and a
            # question about a denial it did not meet would be a stale one.
            step_or_why = f"it asked the person about round {after_denial}'s denial"
        if isinstance(step_or_why, RecordedStep):
            steps.append(step_or_why)
        else:
            skipped.append((_int(record.get("round")), step_or_why))
    if not steps:
        raise RerunError(f"{path} holds no round whose action ran: nothing to repeat")
    allow = settings.get("allow_domains")
    return RecordedRun(
        path=path,
        run_id=str(start.get("run_id") or "?"),
        head=line_hash(complete[-1]),
        task=str(start.get("task") or ""),
        start_url=_str(settings.get("start_url")),
        allow_domains=tuple(str(x) for x in allow) if isinstance(allow, list) else (),
        max_rounds=_int(start.get("max_rounds")) or 30,
        steps=tuple(steps),
        skipped=tuple(skipped),
        ending=ending,
        sealed_here=sealed_here,
        seal=report.seal_text(),
    )


def source_views(rerun_of: Mapping[str, Any] | None) -> dict[int, RecordedView]:
    """A rerun log's recorded rounds by number, read from ``rerun_of["log"]`` when that file
    is still the one the rerun repeated (its last record hashes to ``rerun_of["head"]``);
    empty otherwise. Never raises."""
    if not rerun_of or not isinstance(rerun_of.get("log"), str):
        return {}
    try:
        recorded = load_recorded(Path(rerun_of["log"]))
    except (RerunError, OSError):
        return {}
    if recorded.head != rerun_of.get("head"):
        return {}
    return {step.round: step.view() for step in recorded.steps}


def _step_of(record: Mapping[str, Any]) -> RecordedStep | str:
    action = record.get("action")
    result = record.get("result")
    if not isinstance(action, dict) or not isinstance(action.get("name"), str):
        return "the round has no action"
    if not isinstance(result, dict) or result.get("ok") is not True:
        message = result.get("error") or result.get("message") if isinstance(result, dict) else ""
        return f"its action did not succeed ({message or 'no result'})"
    params = dict(action.get("params") or {})
    approval = record.get("approval")
    if isinstance(approval, dict) and approval.get("decision") == "edited":
        edited = approval.get("edited_params")
        if isinstance(edited, dict):
            params.update(edited)
    params.pop("reason", None)
    return RecordedStep(
        round=_int(record.get("round")),
        url=str(record.get("url") or ""),
        observation=str(record.get("observation") or ""),
        name=action["name"],
        params=params,
        reason=str(action.get("reason") or ""),
        element=_str(record.get("element")),
        result=dict(result),
    )


def _denied_round(record: Mapping[str, Any]) -> int | None:
    """The round's number when the person denied its action at the approval."""
    approval = record.get("approval")
    if isinstance(approval, dict) and approval.get("decision") == "denied":
        return _int(record.get("round"))
    return None


def _asks_the_person(record: Mapping[str, Any]) -> bool:
    action = record.get("action")
    return isinstance(action, dict) and action.get("name") == "ask_human"


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
