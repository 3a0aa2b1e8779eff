"""A run's budget in the observatory: spent/limit in the header from the start, a warning
at 80%, and a budget stop said in the finish notice and the exit summary."""

from __future__ import annotations

from pathlib import Path

from core.guard.rules import Budget
from core.run.budget import Spent
from core.run.events import (
    BudgetSpent,
    EventSink,
    ModelReplied,
    RoundStarted,
    RunFinished,
    RunStarted,
    Supervisor,
)
from tests.helpers.tui_driver import still_clock, wait_until
from tui.app import HandrailApp
from tui.cli.launch import summary_of

LIMITS = Budget(max_tokens=50_000, max_cost=0.50)


class BudgetRun:
    """A run that spends 41 cents in one model call, then is stopped by its budget (held
    until ``go`` is set, so the test sees the live header first)."""

    def __init__(self) -> None:
        import asyncio

        self.go = asyncio.Event()
        self.waiting = False

    async def __call__(self, sink: EventSink, supervisor: Supervisor) -> RunFinished:
        sink(RunStarted("run-budget", "spend", "anthropic:claude-x", "launched, headless", 5))
        sink(BudgetSpent(0, Spent(0, 0.0, 0.0, LIMITS)))
        sink(RoundStarted(1, 5))
        sink(ModelReplied(1, ({"type": "text", "text": "hm"},), {"input_tokens": 12_000}, 50))
        spent = Spent(12_000, 0.41, 3.0, LIMITS)
        sink(BudgetSpent(1, spent, warn=("cost",)))
        self.waiting = True
        await self.go.wait()
        finished = RunFinished(
            "budget",
            "stopped before the model call: the cost budget would be crossed",
            1,
            5,
            "stopped before the model call: the cost budget would be crossed",
            spent=spent.to_json(),
        )
        sink(finished)
        return finished


async def test_the_header_shows_spent_against_the_limits_and_warns_at_80_percent(
    tmp_path: Path,
) -> None:
    run = BudgetRun()
    app = HandrailApp(run, config_dir=tmp_path, clock=still_clock, persist_theme=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: run.waiting)
        await pilot.pause()
        screen = app.run_screen
        assert screen is not None
        facts = screen.header.facts
        assert facts.budget.startswith("tokens 12,000/50,000 · $0.41/$0.50")
        assert facts.budget_meaning == "paused"  # past 80%
        warnings = [n.message for n in app._notifications if n.title == "Budget"]
        assert len(warnings) == 1 and "80% of the cost budget" in warnings[0]
        run.go.set()
        await wait_until(pilot, lambda: screen.exit_code == 5)
        finish = [n.message for n in app._notifications if "Run finished" in n.message]
        assert finish and "Run finished: budget" in finish[0]
        assert "spent: tokens 12,000 of 50,000 · $0.41 of $0.50" in finish[0]
    summary = summary_of(app, 5)
    assert "handrail: budget (exit code 5)" in summary
    assert "spent:     tokens 12,000 of 50,000 · $0.41 of $0.50" in summary
