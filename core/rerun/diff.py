"""Two runs, step by step (``handrail diff A B``): did they do the same?

A run is read from its log as steps, one per round that acted: the action, its target
(the element's role, name and frame, read from the digest line the model saw: never its
index, which changes with the page), its arguments (without the index and the reason; a
URL by its path and query), the page it acted on (its path and query: the origin may
differ, as a rebased rerun's or a demo site's port does), how the action ended, and how it was approved. The two runs' steps are aligned on
what they did (action, target, arguments); aligned steps may still differ in page,
outcome or approval. Rounds that only looked (``wait`` for the page, an MCP ``observe``)
are left out, so a run that waited once more is not a different run.
"""

from __future__ import annotations

import difflib
import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from core.audit.records import RoundRecord, RunEndRecord, record_of
from core.rerun.match import recorded_entry

Kind = Literal["action", "page", "outcome", "approval"]
KINDS: tuple[Kind, ...] = ("action", "page", "outcome", "approval")
LOOKING = frozenset({"wait"})
"""Actions that change nothing: not steps."""
SKIPPED_ARGS = frozenset({"index", "reason"})


@dataclass(frozen=True, slots=True)
class Step:
    """One round that acted, as two runs are compared."""

    round: int
    action: str
    target: tuple[str, str, str] | None
    """(role, name, frame) of the element acted on; None when the action has no target."""
    args: str
    """The arguments, as canonical JSON, without the index and the reason."""
    page: str
    outcome: str
    approval: str
    """The round's approval decision: ``auto`` (the policy let it through), ``approved``
    (a person did), ``denied``..."""

    @property
    def key(self) -> tuple[str, tuple[str, str, str] | None, str]:
        """What the step did: the part the alignment matches on."""
        return (self.action, self.target, self.args)

    def describe(self) -> str:
        said = self.action
        if self.target is not None:
            role, name, frame = self.target
            said += f' {role} "{name}"' + (f" in frame {frame}" if frame else "")
        if self.args != "{}":
            said += f" {self.args}"
        return said

    def to_json(self) -> dict[str, Any]:
        return {
            "round": self.round,
            "action": self.action,
            "target": list(self.target) if self.target else None,
            "args": json.loads(self.args),
            "page": self.page,
            "outcome": self.outcome,
            "approval": self.approval,
        }


@dataclass(frozen=True, slots=True)
class Difference:
    """Where the runs part: a step of each (None where one run has no such step), and in
    what they differ."""

    kinds: tuple[Kind, ...]
    a: Step | None
    b: Step | None

    def to_json(self) -> dict[str, Any]:
        return {
            "kinds": list(self.kinds),
            "a": self.a.to_json() if self.a else None,
            "b": self.b.to_json() if self.b else None,
        }


@dataclass(frozen=True, slots=True)
class RunSteps:
    """A run, read for comparison."""

    run_id: str
    steps: tuple[Step, ...]
    outcome: str
    """The run's ``run_end`` outcome, or ``unfinished``."""


@dataclass(frozen=True)
class RunDiff:
    a: RunSteps
    b: RunSteps
    differences: tuple[Difference, ...]
    same_steps: int
    counts: dict[Kind, int] = field(default_factory=dict)
    pairs: tuple[Difference, ...] = ()
    """Every aligned pair in order, the same ones with no kinds (``replay --against``)."""

    @property
    def outcomes_differ(self) -> bool:
        return self.a.outcome != self.b.outcome

    @property
    def equivalent(self) -> bool:
        return not self.differences and not self.outcomes_differ

    @property
    def first(self) -> Difference | None:
        return self.differences[0] if self.differences else None

    def to_json(self) -> dict[str, Any]:
        return {
            "equivalent": self.equivalent,
            "a": {"run_id": self.a.run_id, "steps": len(self.a.steps), "outcome": self.a.outcome},
            "b": {"run_id": self.b.run_id, "steps": len(self.b.steps), "outcome": self.b.outcome},
            "same_steps": self.same_steps,
            "different": {kind: self.counts.get(kind, 0) for kind in KINDS},
            "outcomes_differ": self.outcomes_differ,
            "differences": [d.to_json() for d in self.differences],
        }


def steps_of(records: Iterable[Mapping[str, Any]]) -> RunSteps:
    """The steps of a run from its records (a verified log's)."""
    run_id = ""
    outcome = "unfinished"
    steps: list[Step] = []
    for raw in records:
        typed = record_of(raw)
        if isinstance(typed, RunEndRecord):
            outcome = typed.outcome or "unfinished"
        if raw.get("type") == "run_start" and isinstance(raw.get("run_id"), str):
            run_id = raw["run_id"]
        if not isinstance(typed, RoundRecord) or typed.action is None:
            continue
        name = str(typed.action.get("name", ""))
        if name in LOOKING or name in ("finish", ""):
            continue
        steps.append(_step(typed, name))
    return RunSteps(run_id, tuple(steps), outcome)


def _step(record: RoundRecord, name: str) -> Step:
    params = record.action.get("params") if record.action is not None else None
    args = {k: v for k, v in (params or {}).items() if k not in SKIPPED_ARGS}
    if isinstance(args.get("url"), str):
        args["url"] = _page(args["url"])  # as pages are: a rebased run goes to its own origin
    target = None
    if record.element:
        entry = recorded_entry(record.element, record.observation or "")
        if entry is not None:
            role = entry.attrs.get("role") or entry.element.tag
            target = (role, entry.element.name, entry.frame)
    approval = record.approval.decision if record.approval is not None else "none"
    return Step(
        round=record.round,
        action=name,
        target=target,
        args=json.dumps(args, sort_keys=True, ensure_ascii=False),
        page=_page(record.url),
        outcome=record.outcome,
        approval=approval,
    )


def _page(url: str) -> str:
    parts = urlsplit(url)
    if not parts.scheme.startswith("http"):
        return url
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def diff_runs(a: RunSteps, b: RunSteps) -> RunDiff:
    """Align ``a``'s and ``b``'s steps on what they did, and say where they differ."""
    matcher = difflib.SequenceMatcher(
        a=[s.key for s in a.steps], b=[s.key for s in b.steps], autojunk=False
    )
    differences: list[Difference] = []
    pairs: list[Difference] = []
    counts: dict[Kind, int] = {}
    same = 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for x, y in zip(a.steps[i1:i2], b.steps[j1:j2], strict=True):
                kinds = _differ(x, y)
                pairs.append(Difference(kinds, x, y))
                if kinds:
                    differences.append(Difference(kinds, x, y))
                    for kind in kinds:
                        counts[kind] = counts.get(kind, 0) + 1
                else:
                    same += 1
            continue
        for x, y in itertools.zip_longest(a.steps[i1:i2], b.steps[j1:j2]):
            differences.append(Difference(("action",), x, y))
            pairs.append(differences[-1])
            counts["action"] = counts.get("action", 0) + 1
    return RunDiff(a, b, tuple(differences), same, counts, tuple(pairs))


def _differ(x: Step, y: Step) -> tuple[Kind, ...]:
    kinds: list[Kind] = []
    if x.page != y.page:
        kinds.append("page")
    if x.outcome != y.outcome:
        kinds.append("outcome")
    if x.approval != y.approval:
        kinds.append("approval")
    return tuple(kinds)


def summary_lines(diff: RunDiff) -> list[str]:
    """The diff in words: the first divergence, then the counts."""
    lines: list[str] = []
    if diff.equivalent:
        lines.append(
            f"equivalent: the same {len(diff.a.steps)} steps, the same outcome ({diff.a.outcome})"
        )
    else:
        first = diff.first
        if first is not None:
            where_a = f"round {first.a.round}" if first.a else "no step"
            where_b = f"round {first.b.round}" if first.b else "no step"
            lines.append(f"first divergence ({', '.join(first.kinds)}): A {where_a}, B {where_b}")
            lines.append(f"  A: {_shown(first.a, first.kinds)}")
            lines.append(f"  B: {_shown(first.b, first.kinds)}")
        elif diff.outcomes_differ:
            lines.append("the same steps, but the runs ended differently")
    lines.append(
        f"steps: A {len(diff.a.steps)}, B {len(diff.b.steps)}; the same {diff.same_steps}; "
        + ", ".join(f"different {kind}s {diff.counts.get(kind, 0)}" for kind in KINDS)
    )
    lines.append(
        f"outcome: A {diff.a.outcome}, B {diff.b.outcome}"
        + (" (different)" if diff.outcomes_differ else "")
    )
    return lines


def _shown(step: Step | None, kinds: Sequence[Kind]) -> str:
    if step is None:
        return "(nothing here)"
    said = f"{step.describe()} on {step.page}"
    if "outcome" in kinds or step.outcome != "ok":
        said += f" -> {step.outcome}"
    if "approval" in kinds:
        said += f" [{step.approval}]"
    return said
