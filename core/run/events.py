"""Typed events the agent loop emits, and the supervisor seam it awaits.

The TUI, the console supervisor and the audit writer are consumers of the same events.
Everything here is a frozen dataclass so an event can be handed across tasks safely.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from core.actions import Action
from core.guard.decision import ApprovalDecision, HumanKind
from core.result import ActionResult

if TYPE_CHECKING:
    from core.audit.records import ApprovalRecord, ScreenshotRef
    from core.model.base import ReplyOrigin
    from core.run.budget import Spent

RunState = Literal["starting", "thinking", "awaiting_approval", "acting", "paused", "finished"]


@dataclass(frozen=True, slots=True)
class TargetCrop:
    """The viewport around an action's target as the person sees it, masked like every
    screenshot (:func:`core.run.target_picture.crop_target`), or why there is no picture."""

    png: bytes | None
    outline: tuple[int, int, int, int] = (0, 0, 0, 0)
    """The target's box in the image, in image pixels: x, y, width, height."""
    missing: str | None = None
    """Why there is no picture (the mask was refused, the target is off-screen...)."""


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """Everything a person needs to decide on one action."""

    round: int
    action: Action
    url: str
    title: str
    why: str
    """Why this action needs approval (``every page-changing action asks``, ``new host``...)."""
    element_line: str | None = None
    """The digest line of the targeted element, as the model saw it."""
    risky: bool = False
    """Risky actions (commitments, new hosts, sensitive fields, run_js) always ask,
    even after the person approved every action of this kind."""
    details: tuple[str, ...] = ()
    """Extra facts shown with the request: the form's submit destination, a field's label,
    what changed since the person last saw the target."""
    crop: TargetCrop | None = None
    """A picture of the target, for the person only (never the model or the log)."""
    target_name: str | None = None
    """The targeted element's accessible name (the eyes' ``ElementInfo.name``, not escaped);
    None when the action targets no index."""
    reason_by: str = "the model's"
    """Whose reason the action gives: "the model's", or "recorded" for a rerun's replayed
    step (no model was asked)."""
    asked_by: str | None = None
    """Which rule of the approval policy asks: ``rule 3 (pay/send/delete)``; None for a
    page's dialog."""
    once: bool = False
    """Asked under a ``once`` rule: approving lets the same action through for the run."""
    site: str | None = None
    """The host ``s`` would allow this kind of action on from now on; None when it may not
    (a risky action, an action that is never remembered, no http(s) page)."""
    remembered: str | None = None
    """What the person already allows here: ``clicks on rail.example are allowed since
    2026-12-03``, said when a risky one asks anyway."""


@dataclass(frozen=True, slots=True)
class HumanRequest:
    """The agent stopped for a person (sensitive page, or the model's ``ask_human``)."""

    round: int
    kind: HumanKind
    detail: str
    url: str
    title: str = ""
    headless: bool = False
    """The browser has no window: the person cannot act in it, only abort."""


HumanResponse = Literal["resume", "abort"]


class NoSupervisor(Exception):
    """Raised by a supervisor that cannot ask anyone (a non-interactive run).

    The agent does not execute the waiting action; it ends the run with exit code 3 and
    says which action (or which hand-over) waited.
    """


class Supervisor(Protocol):
    """What the agent awaits. Nothing happens by timeout: the loop waits for an answer."""

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision: ...

    async def human(self, request: HumanRequest) -> HumanResponse: ...


# --- events -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunStarted:
    run_id: str
    task: str
    model: str
    """The model label as shown to people: ``anthropic:claude-...`` or ``scripted plan: FILE``."""
    browser: str
    """``launched, headless`` / ``connected to ws://...``."""
    max_rounds: int
    settings: dict[str, Any] = field(default_factory=dict)
    audit_path: str | None = None
    rerun_of: RerunOf | None = None
    """Set when the run repeats a recorded one (``handrail rerun``)."""


@dataclass(frozen=True, slots=True)
class RerunOf:
    """The recorded run a rerun repeats: ``run_start.rerun_of`` in the rerun's own log."""

    run_id: str
    head: str
    """SHA-256 hex of the source log's last record line (its chain head)."""
    log: str
    """The source log's path as given, so a replay can show the recorded rounds."""

    def to_json(self) -> dict[str, str]:
        return {"run_id": self.run_id, "head": self.head, "log": self.log}


@dataclass(frozen=True, slots=True)
class RoundStarted:
    round: int
    max_rounds: int


@dataclass(frozen=True, slots=True)
class Observed:
    round: int
    url: str
    title: str
    digest: str
    """The observation exactly as the model receives it (inside ``<browser_state>``)."""
    tabs: tuple[str, ...] = ()
    duration_ms: float = 0.0
    hidden_instructions: int = 0
    """Instruction-like text the page hid from people (left out of the digest): shown to
    the person as a warning, never to the model."""
    screenshot: ScreenshotRef | None = None
    """The viewport as observed, saved in the run folder (None: screenshots are off)."""


@dataclass(frozen=True, slots=True)
class ModelReplied:
    round: int
    output: tuple[dict[str, Any], ...]
    """The reply's content blocks (text and tool_use blocks), verbatim except that the text
    a ``type`` action asks for reads ``«withheld: N characters»`` (see ``core.secrets``) until
    the hands have typed it into an ordinary field; :class:`ActionDone` then carries it."""
    usage: dict[str, Any] = field(default_factory=dict)
    duration_ms: float = 0.0
    origin: ReplyOrigin | None = None
    """A rerun's round: which recorded round it stands for, and who decided it."""


@dataclass(frozen=True, slots=True)
class ModelWriting:
    """The reply's text so far, while a streaming backend writes it (before
    :class:`ModelReplied`): for the person's screen only, never recorded. Scrubbed like the
    reply (text withheld earlier reads «redacted»)."""

    round: int
    text: str


@dataclass(frozen=True, slots=True)
class ActionParsed:
    round: int
    action: Action | None
    error: str | None = None
    element_line: str | None = None
    """The digest line of the element the action targets by index, as the model saw it."""
    target_name: str | None = None
    """That element's accessible name (the eyes' ``ElementInfo.name``, not escaped), kept in
    the round record as ``target_name``; None when the action targets no index."""


@dataclass(frozen=True, slots=True)
class ApprovalNeeded:
    request: ApprovalRequest


@dataclass(frozen=True, slots=True)
class ApprovalGiven:
    round: int
    decision: ApprovalDecision


@dataclass(frozen=True, slots=True)
class ActionIntent:
    """Emitted after the gate and just before the hands act: the action as it will be
    dispatched, its typed text withheld (nobody knows yet whether the field will turn out
    to be sensitive).

    Consumers that persist it (the audit log) must do so synchronously, before returning.
    """

    round: int
    action: Action
    sensitive: bool = False
    """The target is a password, one-time-code or payment field: whatever is typed into it
    is written to the log as «redacted»."""


@dataclass(frozen=True, slots=True)
class HumanNeeded:
    request: HumanRequest


@dataclass(frozen=True, slots=True)
class HumanReturned:
    round: int
    response: HumanResponse


@dataclass(frozen=True, slots=True)
class ActionDone:
    round: int
    action: Action | None
    result: ActionResult
    approval: ApprovalRecord
    """How the action was decided, as the audit log records it."""
    duration_ms: float = 0.0
    model_output: tuple[dict[str, Any], ...] | None = None
    """The round's model output as it may now be kept, when it differs from what
    :class:`ModelReplied` showed: the text the model asked to type, withheld there, is put
    back once it went into an ordinary field (and stays «redacted» when it did not)."""


@dataclass(frozen=True, slots=True)
class RunFinished:
    outcome: Literal[
        "success",
        "failure",
        "gave_up",
        "round_limit",
        "aborted",
        "human_needed",
        "error",
        "budget",
    ]
    answer: str
    rounds: int
    exit_code: int
    reason: str = ""
    spent: Mapping[str, Any] | None = None
    """What the run spent against its budget (:meth:`core.run.budget.Spent.to_json`); None
    when it had none."""


@dataclass(frozen=True, slots=True)
class BudgetSpent:
    """After each model reply of a run with a budget: what is spent, beside the limits.
    ``warn``: the limits (``tokens``, ``cost``, ``time``) that have just passed 80%."""

    round: int
    spent: Spent
    warn: tuple[str, ...] = ()


Event = (
    RunStarted
    | BudgetSpent
    | RoundStarted
    | Observed
    | ModelWriting
    | ModelReplied
    | ActionParsed
    | ApprovalNeeded
    | ApprovalGiven
    | ActionIntent
    | HumanNeeded
    | HumanReturned
    | ActionDone
    | RunFinished
)


class EventSink(Protocol):
    def __call__(self, event: Event) -> None: ...
