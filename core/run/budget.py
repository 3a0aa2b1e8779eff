"""Budgets with a hard stop: tokens, US dollars and wall-clock time, for one run.

The limits come from ``--max-tokens``, ``--max-cost`` and ``--max-time`` over a policy
file's ``[budget]`` (:class:`core.guard.rules.Budget`). Tokens are the backends' own
``usage`` figures (a scripted plan reports none); cost prices them from
core/model/prices.toml. Before each model call the keeper says whether the run must stop:
when a limit is reached, or when the call about to be made would cross it, judged by the
last call (each call sends the whole conversation again, so the next costs at least about
what the last one did). The run then ends with outcome ``budget`` and exit code 5.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from core.guard.rules import Budget
from core.model.prices import Price

EXIT_BUDGET = 5
"""The exit code of a run a budget stopped (tui/exit_codes.py lists them all)."""
WARN_AT = 0.8
"""The share of a limit at which the person is warned (once per limit)."""


@dataclass(frozen=True, slots=True)
class Spent:
    """What a run has spent so far, beside its limits."""

    tokens: int
    cost: float | None
    """US dollars; None when the model has no price (no ``--max-cost``)."""
    seconds: float
    limits: Budget

    def to_json(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "cost_usd": round(self.cost, 6) if self.cost is not None else None,
            "seconds": round(self.seconds, 3),
            "limits": self.limits.to_json(),
        }

    def shares(self) -> dict[str, float]:
        """Each set limit's share spent (1.0: reached)."""
        out: dict[str, float] = {}
        if self.limits.max_tokens:
            out["tokens"] = self.tokens / self.limits.max_tokens
        if self.limits.max_cost and self.cost is not None:
            out["cost"] = self.cost / self.limits.max_cost
        if self.limits.max_time:
            out["time"] = self.seconds / self.limits.max_time
        return out

    def line(self) -> str:
        """``tokens 12,400/50,000 · $0.21/$0.50 · 1:12/10:00``: what is set, spent/limit."""
        parts = []
        if self.limits.max_tokens:
            parts.append(f"tokens {self.tokens:,}/{self.limits.max_tokens:,}")
        if self.limits.max_cost and self.cost is not None:
            parts.append(f"${self.cost:.2f}/${self.limits.max_cost:.2f}")
        if self.limits.max_time:
            parts.append(f"{_clock(self.seconds)}/{_clock(self.limits.max_time)}")
        return " · ".join(parts)


def spent_line(spent: Mapping[str, Any]) -> str:
    """``tokens 12,400 of 50,000 · $0.21 of $0.50 · 1:12 of 10:00`` from a record's
    ``spent`` (:meth:`Spent.to_json`); what has no limit is said without one."""
    limits = spent.get("limits") or {}
    parts = []
    tokens, max_tokens = spent.get("tokens"), limits.get("max_tokens")
    if isinstance(tokens, int):
        parts.append(
            f"tokens {tokens:,}" + (f" of {max_tokens:,}" if isinstance(max_tokens, int) else "")
        )
    cost, max_cost = spent.get("cost_usd"), limits.get("max_cost")
    if isinstance(cost, (int, float)):
        parts.append(
            f"${cost:.2f}" + (f" of ${max_cost:.2f}" if isinstance(max_cost, (int, float)) else "")
        )
    seconds, max_time = spent.get("seconds"), limits.get("max_time")
    if isinstance(seconds, (int, float)):
        parts.append(
            _clock(seconds)
            + (f" of {_clock(max_time)}" if isinstance(max_time, (int, float)) else "")
        )
    return " · ".join(parts)


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return (
        f"{minutes}:{secs:02d}"
        if minutes < 60
        else f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}"
    )


@dataclass
class BudgetKeeper:
    """Counts one run's spending against its limits."""

    limits: Budget
    price: Price | None = None
    clock: Callable[[], float] = time.monotonic
    priced: bool | None = None
    """Whether costs are counted (None: when ``price`` is set). A fleet's shared keeper is
    priced without a price of its own: each run adds what its own model cost."""
    name: str = ""
    """Whose budget, in the stop reason: "" for the run's own, ``the fleet's`` for a shared one."""
    started: float = field(default=0.0)
    tokens: int = 0
    cost: float = 0.0
    last_tokens: int = 0
    last_cost: float = 0.0
    flying_tokens: int = 0
    flying_cost: float = 0.0
    """What the calls let through but not yet answered are expected to spend (a fleet's
    runs call at once: each is judged with the others' calls in flight counted)."""
    _warned: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        if not self.started:
            self.started = self.clock()
        if self.priced is None:
            self.priced = self.price is not None

    @property
    def active(self) -> bool:
        return any(
            v is not None
            for v in (self.limits.max_tokens, self.limits.max_cost, self.limits.max_time)
        )

    def add(self, usage: Mapping[str, int]) -> None:
        """One model reply's ``usage``."""
        tokens = sum(
            int(usage.get(k, 0) or 0)
            for k in (
                "input_tokens",
                "output_tokens",
                "cache_creation_input_tokens",
                "cache_read_input_tokens",
            )
        )
        self.record(tokens, self.price.cost(usage) if self.price is not None else 0.0)

    def record(self, tokens: int, cost: float, reserved: tuple[int, float] = (0, 0.0)) -> None:
        """One model call's tokens and cost (a fleet's keeper hears each run's);
        ``reserved``: what :meth:`reserve` set aside for it."""
        self.flying_tokens -= reserved[0]
        self.flying_cost -= reserved[1]
        self.tokens += tokens
        self.cost += cost
        self.last_tokens, self.last_cost = tokens, cost

    def release(self, reserved: tuple[int, float]) -> None:
        """A reserved call spent nothing we know of (it failed, or was cancelled)."""
        self.flying_tokens -= reserved[0]
        self.flying_cost -= reserved[1]

    def reserve(self) -> tuple[int, float]:
        """A call is about to be made: set aside what it is expected to spend (the last
        call's figures) until :meth:`record` hears what it did."""
        self.flying_tokens += self.last_tokens
        self.flying_cost += self.last_cost
        return self.last_tokens, self.last_cost

    def spent(self) -> Spent:
        return Spent(
            tokens=self.tokens,
            cost=self.cost if self.priced else None,
            seconds=self.clock() - self.started,
            limits=self.limits,
        )

    def stop_reason(self) -> str | None:
        """Why the next model call must not be made, or None."""
        spent = self.spent()
        b = self.limits
        whose = f"{self.name} " if self.name else "the "
        option = "fleet_max_" if self.name else "--max-"
        if b.max_time is not None and spent.seconds >= b.max_time:
            return f"{whose}time budget is spent ({spent.line()}); raise it with {option}time"
        if b.max_tokens is not None and (
            self.tokens + self.flying_tokens + self.last_tokens > b.max_tokens
        ):
            return (
                f"{whose}token budget would be crossed by the next model call ({self.tokens:,} "
                f"of {b.max_tokens:,} spent, the last call took {self.last_tokens:,}); raise it "
                f"with {option}tokens"
            )
        if b.max_cost is not None and self.cost + self.flying_cost + self.last_cost > b.max_cost:
            return (
                f"{whose}cost budget would be crossed by the next model call (${self.cost:.4f} "
                f"of ${b.max_cost:.2f} spent, the last call cost ${self.last_cost:.4f}); raise "
                f"it with {option}cost"
            )
        return None

    def new_warnings(self) -> list[str]:
        """Limits that have just passed :data:`WARN_AT` of their share (each said once)."""
        out = []
        for name, share in self.spent().shares().items():
            if share >= WARN_AT and name not in self._warned:
                self._warned.add(name)
                out.append(name)
        return out
