"""The protocol every model backend implements, and what a reply looks like.

Conversations are Anthropic-shaped whatever the backend: ``MessageParam`` dicts in, content
blocks (``{"type": "text", ...}`` / ``{"type": "tool_use", ...}``) out. A backend that speaks
another protocol converts at its edge.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from anthropic.types import ImageBlockParam, MessageParam, ToolParam


DEFAULT_MAX_TOKENS = 2048
"""Enough for a short thought plus one tool call; a reply is one step, not an essay."""


DecidedBy = Literal["replayed", "model", "stopped"]
"""Who chose a rerun round's action: the recorded step replayed as it was, the model (the
step no longer fitted), or the rerun itself stopping because nothing could."""


@dataclass(frozen=True, slots=True)
class RecordedView:
    """A recorded round as a rerun showed it beside the live one (for the observatory)."""

    round: int
    url: str
    observation: str
    action: dict[str, Any]
    result: dict[str, Any]
    element: str | None = None
    heading: str | None = None
    """What the pane calls it, when it is not a rerun's recorded round (``replay A --against
    B``: ``B's round 4 (differs: page)``)."""


@dataclass(frozen=True, slots=True)
class ReplyOrigin:
    """Where a rerun's reply came from: written to the round record as ``source_round`` and
    ``decided_by``. Plain model backends leave :attr:`ModelReply.origin` None."""

    decided_by: DecidedBy
    source_round: int | None
    recorded: RecordedView | None = None
    """The recorded round this reply stands for (None when the recorded steps ran out)."""


@dataclass(frozen=True, slots=True)
class ModelReply:
    content: tuple[dict[str, Any], ...]
    """The reply's content blocks verbatim, as JSON dicts in Anthropic's shape. Sent back
    unchanged as the assistant turn, and written unchanged to the audit log."""
    usage: dict[str, int] = field(default_factory=dict)
    """``input_tokens``, ``output_tokens``, ``cache_read_input_tokens``,
    ``cache_creation_input_tokens``: those the backend knows."""
    stop_reason: str | None = None
    raw: Any = None
    """The backend's own form of the reply (JSON-serialisable), for the log; may be None."""
    origin: ReplyOrigin | None = None
    """Set by a rerun (:mod:`core.rerun`): which recorded round this reply stands for."""


class ModelError(Exception):
    """A model call failed. The message is for a person: what failed and what to do."""


class ModelConfigError(ModelError):
    """The model cannot be used as configured (missing key, bad spec, unknown model,
    unreachable endpoint at check time). The CLI exits with code 2."""


class Model(Protocol):
    label: str
    """How the model is shown to people: ``anthropic:claude-...``,
    ``openai:llama3.1 @ http://...``, or ``scripted plan: demo.jsonl``."""
    vision: bool
    """Whether screenshots may be sent as image blocks (see :func:`image_block`).
    Otherwise send the file path and a hint to rely on the digest."""

    async def check(self) -> None:
        """Cheap pre-flight before the browser starts. Raises :class:`ModelConfigError`."""
        ...

    async def reply(
        self,
        *,
        system: str,
        messages: Sequence[MessageParam],
        tools: Sequence[ToolParam],
        on_text: Callable[[str], None] | None = None,
    ) -> ModelReply:
        """One model turn. Raises :class:`ModelError` when the call fails after retries.
        ``on_text``: a backend that streams calls it with the reply's text so far as it
        grows (for the person's screen only); others ignore it."""
        ...


def image_block(png: bytes) -> ImageBlockParam:
    """A PNG screenshot as an Anthropic image block, for a tool_result's content list.

    Only for models with ``vision``; the OpenAI-compatible backend turns it into an
    ``image_url`` data URL.
    """
    return {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": "image/png",
            "data": base64.b64encode(png).decode("ascii"),
        },
    }
