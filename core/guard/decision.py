"""The gate's vocabulary: what a person (or a supervisor) decides about one action, and the
kinds of page a person is handed.

The policy (:mod:`core.guard.policy`) names hand-over kinds, the audit records
(:mod:`core.audit.records`) keep decisions, and the run's events (:mod:`core.run.events`)
carry both; so these live here, below all three. Imports nothing of core.
"""

from __future__ import annotations

from collections.abc import Mapping
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
    remember_for_site: bool = False
    """Allow this kind of action on this site from now on (``s``): kept between runs, and
    never for risky actions (core/run/permissions.py)."""


@dataclass(frozen=True, slots=True)
class RuleRef:
    """Which rule of the run's approval policy decided an action (:mod:`core.guard.rules`).

    ``index`` counts the policy's rules from 1, remembered permissions after them; 0 is the
    policy's ``default`` (no rule matched). ``policy_sha256`` names the policy file's bytes.
    """

    index: int
    text: str
    note: str | None
    policy_sha256: str
    remembered: str | None = None
    """A remembered permission's date (``2026-12-03``); None for a rule of the file."""

    @property
    def label(self) -> str:
        """``rule 3 (pay/send/delete)``, ``the policy's default``, or for a remembered
        permission ``your permission since 2026-12-03``."""
        if self.remembered is not None:
            return f"your permission since {self.remembered}"
        if self.index == 0:
            return "the policy's default"
        return f"rule {self.index}" + (f" ({self.note})" if self.note else "")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"index": self.index, "text": self.text}
        if self.note is not None:
            out["note"] = self.note
        if self.remembered is not None:
            out["remembered"] = self.remembered
        out["policy_sha256"] = self.policy_sha256
        return out

    @classmethod
    def from_json(cls, value: object) -> RuleRef | None:
        """The record's ``rule``; None when it is missing or not a rule (never raises)."""
        if not isinstance(value, Mapping):
            return None
        index, text, sha = value.get("index"), value.get("text"), value.get("policy_sha256")
        if not isinstance(index, int) or not isinstance(text, str) or not isinstance(sha, str):
            return None
        note, since = value.get("note"), value.get("remembered")
        return cls(
            index,
            text,
            note if isinstance(note, str) else None,
            sha,
            since if isinstance(since, str) else None,
        )
