"""The gate's vocabulary: what a person (or a supervisor) decides about one action, and the
kinds of page a person is handed.

The policy (:mod:`core.guard.policy`) names hand-over kinds, the audit records
(:mod:`core.audit.records`) keep decisions, and the run's events (:mod:`core.run.events`)
carry both; so these live here, below all three. Imports nothing of core.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

HumanKind = Literal["password", "otp", "captcha", "payment", "ask_human", "dialog", "other"]
"""Why a person was handed the page: a sensitive field or widget, the model's
``ask_human``, a page dialog, or something else the policy found."""


@dataclass(frozen=True, slots=True)
class ApprovalDecision:
    """A supervisor's answer to one :class:`~core.run.events.ApprovalRequest`.

    ``approved`` runs the action as asked; ``edited`` runs it with ``edited_params``
    merged over the model's parameters (checked by the gate again); ``denied`` does not run
    it and tells the model ``note``; ``abort`` ends the run.
    """

    decision: Literal["approved", "denied", "edited", "abort"]
    by: str = "person"
    edited_params: dict[str, Any] | None = None
    note: str | None = None
    """For a denial: sent to the model as the reason."""
    approve_kind_for_run: bool = False
    """Approve every further non-risky action of this tool for the rest of the run."""
