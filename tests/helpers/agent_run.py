"""A run of the agent in tests: a supervisor that answers as told, and one action acted out
on a real page.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.guard.decision import ApprovalDecision
from core.model.scripted import latest_browser_state, parse_digest, resolve_target
from core.run.events import ApprovalRequest, HumanRequest, HumanResponse
from tests.helpers.fake_anthropic import tool_use_block

MODEL = "anthropic:claude-sonnet-5-5"


_ids = iter(range(1, 1_000_000))


def act(
    name: str, target: str | None = None, **params: Any
) -> Callable[[dict[str, Any]], list[dict[str, Any]]]:
    """A reply calling ``name``; ``target`` is resolved against the digest just sent."""

    def reply(body: dict[str, Any]) -> list[dict[str, Any]]:
        args = dict(params)
        if target is not None:
            state = latest_browser_state(body["messages"]) or ""
            found = resolve_target(target, parse_digest(state))
            assert found is not None, f"{target!r} not in the digest:\n{state}"
            args["index"] = found.index
        args.setdefault("reason", f"test step: {name}")
        return [tool_use_block(name, args, f"toolu_{next(_ids):05d}")]

    return reply


class Supervisor:
    """Approves everything (or answers from a queue) and records what it was asked."""

    def __init__(self, decisions: list[ApprovalDecision] | None = None) -> None:
        self.requests: list[ApprovalRequest] = []
        self.humans: list[HumanRequest] = []
        self.decisions = decisions or []

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        self.requests.append(request)
        return self.decisions.pop(0) if self.decisions else ApprovalDecision("approved")

    async def human(self, request: HumanRequest) -> HumanResponse:
        self.humans.append(request)
        return "resume"
