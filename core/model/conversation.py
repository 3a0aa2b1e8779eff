"""The conversation sent to the model each round, kept bounded over long runs.

The task and the system prompt are always there; the last few rounds are kept whole (the
model's verbatim turn and its results); older rounds shrink to one line each (action and
result); only the newest page state is sent in full, older ones and screenshots become
short placeholders. A 60-round run therefore sends requests about as large as a 5-round one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.model.base import image_block

if TYPE_CHECKING:
    from anthropic.types import MessageParam, TextBlockParam, ToolResultBlockParam

KEEP_WHOLE_ROUNDS = 3
OLD_STATE_PLACEHOLDER = "[page state of this round omitted: a newer one follows]"
OLD_SCREENSHOT_PLACEHOLDER = "[screenshot omitted: an older round]"
MAX_SUMMARY_CHARS = 240


@dataclass(slots=True)
class ToolOutcome:
    """The answer to one tool_use id of a turn."""

    tool_use_id: str
    text: str
    is_error: bool = False
    screenshot_png: bytes | None = None


@dataclass(slots=True)
class Turn:
    """One finished round as the conversation remembers it."""

    round: int
    assistant: tuple[dict[str, Any], ...]
    outcomes: list[ToolOutcome] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Text the next user turn carries besides results (reminders, warnings, resumes)."""
    summary: str = ""


class Context:
    """Builds the message list for each model call."""

    def __init__(self, task: str, *, vision: bool, keep_whole: int = KEEP_WHOLE_ROUNDS) -> None:
        self.task = task
        self.vision = vision
        self.keep_whole = max(1, keep_whole)
        self.turns: list[Turn] = []

    def add(self, turn: Turn) -> None:
        self.turns.append(turn)

    def messages(self, observation: str, notes: Sequence[str] = ()) -> list[MessageParam]:
        """The request's messages: task, summaries, whole recent rounds, fresh observation."""
        older = self.turns[: -self.keep_whole] if len(self.turns) > self.keep_whole else []
        whole = self.turns[len(older) :]
        opening = f"Task from the person:\n{self.task}"
        if older:
            lines = "\n".join(_clip(t.summary) for t in older)
            opening += f"\n\nEarlier rounds, summarised (oldest first):\n{lines}"
        if not whole:
            return [_user([*notes, opening, observation])]
        messages: list[MessageParam] = [_user([opening])]
        for i, turn in enumerate(whole):
            last = i == len(whole) - 1
            assistant: list[Any] = list(turn.assistant) or [
                {"type": "text", "text": "(empty reply)"}
            ]
            reply: MessageParam = {"role": "assistant", "content": assistant}
            messages.append(reply)
            blocks: list[ToolResultBlockParam | TextBlockParam] = [
                self._result_block(o, current=last) for o in turn.outcomes
            ]
            texts = list(turn.notes)
            if last:
                texts += [*notes, observation]
            else:
                texts.append(OLD_STATE_PLACEHOLDER)
            blocks += [{"type": "text", "text": t} for t in texts if t]
            messages.append({"role": "user", "content": blocks})
        return messages

    def _result_block(self, outcome: ToolOutcome, *, current: bool) -> ToolResultBlockParam:
        block: ToolResultBlockParam = {
            "type": "tool_result",
            "tool_use_id": outcome.tool_use_id,
            "content": outcome.text,
        }
        if outcome.is_error:
            block["is_error"] = True
        if outcome.screenshot_png is not None:
            if current and self.vision:
                block["content"] = [
                    {"type": "text", "text": outcome.text},
                    image_block(outcome.screenshot_png),
                ]
            else:
                block["content"] = (
                    f"{outcome.text}\n{OLD_SCREENSHOT_PLACEHOLDER if self.vision else ''}".strip()
                )
        return block


def _user(texts: Sequence[str]) -> MessageParam:
    return {"role": "user", "content": "\n\n".join(t for t in texts if t)}


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_SUMMARY_CHARS else text[: MAX_SUMMARY_CHARS - 1] + "…"
