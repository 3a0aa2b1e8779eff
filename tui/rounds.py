"""What the observatory shows about a round, built from live events or from audit records.

Plain Python, no widgets: the live run folds events into ``RunView``; replay turns one
audit record into a ``RoundView``. The panes and the timeline render from these.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from core.audit.records import ApprovalRecord, RoundRecord
from core.model.base import RecordedView
from core.run.events import (
    ActionDone,
    ActionIntent,
    ActionParsed,
    ApprovalGiven,
    ApprovalNeeded,
    BudgetSpent,
    Event,
    HumanNeeded,
    HumanReturned,
    ModelReplied,
    ModelWriting,
    Observed,
    RoundStarted,
    RunFinished,
    RunStarted,
    RunState,
)
from tui.labels import STATE_LABELS

if TYPE_CHECKING:
    from core.run.budget import Spent

Phase = Literal["observing", "thinking", "awaiting_approval", "acting", "paused", "done"]
Meaning = Literal[
    "approved", "denied", "error", "paused", "pending", "ok", "unknown", "skipped", "problem"
]

MARKS: dict[str, str] = {
    "ok": "✓",
    "approved": "✓",
    "denied": "⊘",
    "error": "✗",
    "unknown": "?",
    "paused": "‖",
    "pending": "…",
    "skipped": "–",
    "problem": "!",
}


@dataclass
class RoundView:
    """One round as far as it is known. Fields stay ``None`` until their part happened."""

    number: int
    url: str = ""
    title: str = ""
    digest: str | None = None
    model_output: Any = None
    """The reply verbatim: a list of content blocks, or text."""
    usage: Mapping[str, Any] = field(default_factory=dict)
    action: Mapping[str, Any] | None = None
    """``{"name", "params", "reason"?}`` as parsed."""
    action_error: str | None = None
    element_line: str | None = None
    target_name: str | None = None
    """The targeted element's accessible name, as the event or the round record gives it."""
    why: str | None = None
    """Why the action needed approval, when it did."""
    risky: bool = False
    approval: ApprovalRecord | None = None
    result: Mapping[str, Any] | None = None
    pauses: list[dict[str, Any]] = field(default_factory=list)
    duration_ms: float | None = None
    """How long the hands took to act: core's one measure (``ActionDone.duration_ms``, the
    record's ``timing_ms.action``), the same live and in replay."""
    round_ms: float | None = None
    """Replay: the whole round, observation to result, the person's wait included."""
    phase: Phase = "observing"
    line: int | None = None
    """Replay: the log line this round was read from (0-based)."""
    decided_by: str | None = None
    """A rerun's round: ``replayed``, ``model`` or ``stopped`` (None in an ordinary run)."""
    source_round: int | None = None
    recorded: RecordedView | None = None
    """A rerun's round: the recorded round it stands for, shown beside the live one."""
    asked_at: float | None = None
    """Live: the app's clock when the model was asked (the round's observation went out),
    for the time it has been thinking; None in replay."""
    model_ms: float | None = None
    """How long the model took to answer (the request, as core measured it)."""
    writing: str | None = None
    """Live, while a streaming model writes: its text so far (None once it has replied)."""

    def meaning(self) -> Meaning:
        """The round's outcome in the words the colours use."""
        decision = self.approval.decision if self.approval is not None else None
        if self.phase == "paused":
            return "paused"
        if self.phase != "done" and self.result is None and decision != "denied":
            return "pending"
        if decision == "denied":
            return "denied"
        if self.action_error is not None:
            return "error"
        if self.result is not None and not self.result.get("ok", False):
            return "unknown" if self.result.get("outcome") == "unknown" else "error"
        if self.pauses:
            return "paused"
        if self.result is None:
            return "skipped"
        if decision in ("approved", "edited"):
            return "approved"
        return "ok"

    def action_json(self) -> dict[str, Any] | None:
        """The action as the parsed-action pane shows it (edited parameters win)."""
        if self.action is None:
            return None
        out = dict(self.action)
        if self.approval is not None and self.approval.edited_params is not None:
            out["params"] = dict(self.approval.edited_params)
        return out


@dataclass
class RunView:
    """The live run: header facts and the rounds so far, folded from core events."""

    task: str = ""
    model: str = ""
    browser: str = ""
    max_rounds: int = 0
    run_id: str = ""
    audit_path: str | None = None
    state: RunState = "starting"
    rounds: list[RoundView] = field(default_factory=list)
    tokens: int = 0
    finished: RunFinished | None = None
    budget: Spent | None = None
    """The run's budget as last reported (after each model reply); None: it has none."""

    def round(self, number: int) -> RoundView:
        """The round with this number, created (with any gap filled) when it is new."""
        while not self.rounds or self.rounds[-1].number < number:
            next_number = self.rounds[-1].number + 1 if self.rounds else max(number, 1)
            self.rounds.append(RoundView(next_number))
        for view in reversed(self.rounds):
            if view.number == number:
                return view
        return self.rounds[-1]

    def apply(self, event: Event) -> RoundView | None:
        """Fold one event in; returns the round it touched, if any."""
        match event:
            case RunStarted():
                self.task, self.model, self.browser = event.task, event.model, event.browser
                self.max_rounds, self.run_id = event.max_rounds, event.run_id
                self.audit_path = event.audit_path
                return None
            case BudgetSpent():
                self.budget = event.spent
                return None
            case RoundStarted():
                self.max_rounds = event.max_rounds or self.max_rounds
                self.state = "thinking"
                return self.round(event.round)
            case Observed():
                view = self.round(event.round)
                view.url, view.title, view.digest = event.url, event.title, event.digest
                view.phase = "thinking"
                return view
            case ModelWriting():
                view = self.round(event.round)
                view.writing = event.text
                return view
            case ModelReplied():
                view = self.round(event.round)
                view.writing = None
                view.model_output = list(event.output)
                view.usage = dict(event.usage)
                view.model_ms = event.duration_ms or None
                if event.origin is not None:
                    view.decided_by = event.origin.decided_by
                    view.source_round = event.origin.source_round
                    view.recorded = event.origin.recorded
                self.tokens += usage_tokens(event.usage)
                return view
            case ActionParsed():
                view = self.round(event.round)
                view.action = event.action.to_json() if event.action is not None else None
                view.action_error = event.error
                view.element_line = event.element_line
                view.target_name = event.target_name
                return view
            case ApprovalNeeded():
                request = event.request
                view = self.round(request.round)
                view.why, view.risky = request.why, request.risky
                if request.element_line:
                    view.element_line, view.target_name = request.element_line, request.target_name
                view.phase = "awaiting_approval"
                self.state = "awaiting_approval"
                return view
            case ApprovalGiven():
                view = self.round(event.round)
                decision = event.decision
                view.approval = ApprovalRecord.of(decision)
                view.phase = "thinking" if decision.decision in ("denied", "abort") else "acting"
                self.state = "thinking"
                return view
            case ActionIntent():
                view = self.round(event.round)
                view.action = event.action.to_json()
                view.phase = "acting"
                self.state = "acting"
                return view
            case HumanNeeded():
                human = event.request
                view = self.round(human.round)
                view.pauses.append({"kind": human.kind, "detail": human.detail, "url": human.url})
                view.phase = "paused"
                self.state = "paused"
                return view
            case HumanReturned():
                view = self.round(event.round)
                if view.pauses:
                    view.pauses[-1]["response"] = event.response
                view.phase = "thinking"
                self.state = "thinking"
                return view
            case ActionDone():
                view = self.round(event.round)
                if event.action is not None:
                    view.action = event.action.to_json()
                view.result = event.result.to_json()
                view.approval = event.approval
                view.duration_ms = event.duration_ms
                view.phase = "done"
                self.state = "thinking"
                return view
            case RunFinished():
                self.finished = event
                self.state = "finished"
                for view in self.rounds:
                    view.phase = "done"
                return self.rounds[-1] if self.rounds else None
        return None


def usage_tokens(usage: Mapping[str, Any]) -> int:
    """Input plus output tokens from an Anthropic- or OpenAI-shaped usage dict."""
    total = 0
    for key in ("input_tokens", "output_tokens", "prompt_tokens", "completion_tokens"):
        value = usage.get(key)
        if isinstance(value, int):
            total += value
    return total


def round_view(
    record: RoundRecord, line: int | None = None, recorded: RecordedView | None = None
) -> RoundView:
    """A finished round as replay shows it, from its audit-log record (and, for a rerun's
    round, the recorded round it stands for, when the source log is at hand)."""
    return RoundView(
        number=record.round,
        url=record.url,
        title=record.title,
        digest=record.observation,
        model_output=record.model_output,
        usage=record.usage,
        action=record.action,
        action_error=record.action_error,
        element_line=record.element,
        target_name=record.target_name,
        approval=record.approval,
        result=record.result,
        duration_ms=record.action_ms,
        round_ms=record.duration_ms,
        model_ms=record.model_ms,
        phase="done",
        line=line,
        decided_by=record.decided_by,
        source_round=record.source_round,
        recorded=recorded,
    )


# --- short texts for the timeline and the header -----------------------------------------

# Only for logs written before round records carried ``target_name``: the name is read back
# from between the tags of the digest line. Logs are evidence; old ones must still replay.
_ACCESSIBLE_NAME = re.compile(r">([^<]*)</")


def pretty(value: Any) -> str:
    """JSON for people: indented, unicode kept, never raising on odd values."""
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def target_label(view: RoundView) -> str:
    """The name of the element a round's action targets: its ``target_name``, else (an old
    log, written before the field) the name read from its digest line."""
    if view.target_name is not None:
        return view.target_name
    return element_name(view.element_line)


def element_name(element_line: str | None) -> str:
    """The accessible name between the tags of a digest line, or ``""`` (old logs only)."""
    if not element_line:
        return ""
    found = _ACCESSIBLE_NAME.search(element_line)
    return found.group(1).strip() if found else ""


def action_target(action: Mapping[str, Any] | None, target_name: str = "") -> str:
    """A few words naming what an action aims at: ``[12] Book now``, ``example.com/a``
    (``target_name``: the targeted element's name, shown after its index)."""
    if not action:
        return ""
    params = action.get("params") or {}
    if not isinstance(params, dict):
        return ""
    name = action.get("name")
    parts: list[str] = []
    if name == "drag":
        # Both ends: ``[3] → [7] Alpha → Charlie``, ``[3] by (120, 0)``, ``file a.txt → [7]``.
        source = f"[{params['index']}]" if "index" in params else f"file {params.get('path')}"
        end = (
            f"[{params['to']}]"
            if "to" in params
            else f"by ({params.get('dx')}, {params.get('dy')})"
        )
        parts += [source, "→" if "to" in params else "", end, target_name.strip()]
    elif "index" in params:
        parts.append(f"[{params['index']}]")
        parts.append(target_name.strip())
    if name == "click_at":
        parts += [f"({params.get('x')}, {params.get('y')})", target_name.strip()]
    elif name == "navigate" and isinstance(params.get("url"), str):
        split = urlsplit(params["url"])
        parts.append((split.netloc + split.path) or params["url"])
    elif name == "type" and "text" in params:
        parts.append(json.dumps(str(params["text"]), ensure_ascii=False))
    elif name == "press_key":
        parts.append(str(params.get("keys", "")))
    elif name == "select_option":
        parts.append(json.dumps(str(params.get("option", "")), ensure_ascii=False))
    elif name == "scroll" and "direction" in params:
        parts.append(str(params["direction"]))
    elif name == "wait":
        parts.append(f"{params.get('seconds', '')}s")
    elif name in ("switch_tab", "close_tab"):
        parts.append(f"tab {params.get('tab', '')}")
    elif name == "find_text":
        parts.append(json.dumps(str(params.get("text", "")), ensure_ascii=False))
    elif name == "finish":
        parts.append("success" if params.get("success") else "failure")
    elif name == "ask_human":
        parts.append(str(params.get("question", "")))
    return " ".join(part for part in parts if part)


def round_label(view: RoundView) -> str:
    """The timeline text of a round, without its number and mark; a rerun's round starts
    with who decided it (``replayed ·``, ``model ·``, ``stopped ·``)."""
    by = f"{view.decided_by} · " if view.decided_by else ""
    if view.action_error is not None:
        return f"{by}unparsable reply"
    action = view.action_json()
    if action is None:
        return STATE_LABELS.get(view.phase, view.phase) if view.phase != "done" else "no action"
    target = action_target(action, target_label(view))
    return f"{by}{action.get('name', '?')} {target}".strip()


def duration_text(ms: float | None) -> str:
    if ms is None:
        return ""
    if ms < 1000:
        return f"{ms:.0f}ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f}s"
    return f"{ms / 60_000:.0f}m"


def result_summary(result: Mapping[str, Any]) -> list[str]:
    """The result pane's lines: message, error, what changed, notices."""
    lines = [str(result.get("message", ""))]
    if result.get("error") and result.get("error") != result.get("message"):
        lines.append(f"error: {result['error']}")
    outcome = result.get("outcome")
    if outcome and outcome != "ok":
        lines.append(f"outcome: {outcome}")
    changes = result.get("changes")
    if isinstance(changes, dict):
        changed = [key.replace("_", " ") for key, value in changes.items() if value is True]
        if changes.get("new_elements"):
            changed.append(f"{changes['new_elements']} new elements")
        if changes.get("dialog"):
            changed.append(f"dialog: {changes['dialog']}")
        lines.append("changed: " + (", ".join(changed) if changed else "nothing"))
    for notice in result.get("notices") or ():
        lines.append(f"notice: {notice}")
    if result.get("screenshot"):
        lines.append(f"screenshot: {result['screenshot']}")
    if "data" in result:
        lines.append("data: " + pretty(result["data"]))
    return lines
