"""The run header: task, model, browser, state, round n of max, elapsed, tokens, following.

The task, the model's label and a replay's state come from outside (a fleet file, a log from
elsewhere), so they are drawn with their control characters shown (:func:`core.visible.visible`).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from core.visible import visible
from tui.labels import STATE_LABELS, elapsed_text
from tui.themes import meaning_variable, outcome_style


@dataclass(frozen=True, slots=True)
class HeaderFacts:
    task: str = ""
    model: str = ""
    browser: str = ""
    state: str = "starting"
    """A key of ``STATE_LABELS`` or free text (replay: ``replay · verified``)."""
    state_meaning: str = ""
    """An outcome (``approved``, ``error``, ``paused``...) that colours the state, or ``""``."""
    round: int = 0
    max_rounds: int = 0
    elapsed_s: float | None = None
    elapsed_note: str = ""
    """Said after the elapsed time when it does not move (a dialog covers the run)."""
    tokens: int = 0
    budget: str = ""
    """Spent against the budget's limits (``tokens 1,200/5,000 · $0.02/$0.50``); "" without."""
    budget_meaning: str = ""
    """``paused`` past 80% of a limit, ``denied`` at it: colours the budget."""
    following: bool | None = True
    """None: following does not apply (replay of a finished log)."""


_STATE_MEANING = {
    "awaiting_approval": "denied",
    "paused": "paused",
}


class RunHeader(Widget):
    """Two or more lines; the task is cut with an ellipsis, facts wrap rather than vanish."""

    DEFAULT_CSS = """
    RunHeader {
        height: auto;
        padding: 0 1;
        background: $panel;
        color: $foreground;
    }
    """

    facts: reactive[HeaderFacts] = reactive(HeaderFacts, layout=True)

    def render(self) -> Content:
        facts = self.facts
        width = max(10, self.size.width - 2)
        task_line = Content.assemble(
            ("handrail ", "bold $primary"), ("· ", "dim"), visible(facts.task or "—")
        )
        task_line = task_line.truncate(width, ellipsis=True)
        state = visible(STATE_LABELS.get(facts.state, facts.state))
        meaning = facts.state_meaning or _STATE_MEANING.get(facts.state, "")
        state_style = f"bold {outcome_style(meaning)}" if meaning else "bold"
        if meaning == "paused":
            state_style = f"bold ${meaning_variable('paused')}"
        facts_parts: list[Content] = [
            Content.styled(state, state_style),
            Content(f"round {facts.round} of {facts.max_rounds or '?'}"),
        ]
        if facts.elapsed_s is not None:
            clock = Content(elapsed_text(facts.elapsed_s))
            if facts.elapsed_note:
                clock = Content.assemble(clock, (f" {facts.elapsed_note}", "dim"))
            facts_parts.append(clock)
        if facts.budget:
            style = f"bold {outcome_style(facts.budget_meaning)}" if facts.budget_meaning else ""
            facts_parts.append(Content.styled(visible(f"budget {facts.budget}"), style))
        else:
            facts_parts.append(Content(f"{facts.tokens:,} tokens"))
        if facts.model:
            facts_parts.append(Content(visible(facts.model)))
        if facts.browser:
            facts_parts.append(Content(visible(facts.browser)))
        if facts.following is not None:
            facts_parts.append(
                Content.styled("● following", "$success")
                if facts.following
                else Content.styled("◌ not following (f: live)", "$warning")
            )
        return task_line + "\n" + Content("  ·  ").join(facts_parts)
