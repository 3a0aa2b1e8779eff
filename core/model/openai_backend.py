"""OpenAI-compatible chat-completions servers (Ollama, vLLM, DeepSeek...) with function calling.

The conversation stays Anthropic-shaped everywhere else in handrail; this module converts
requests to chat-completions messages and the response back to Anthropic content blocks.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, cast
from urllib.parse import urlsplit

import openai
from anthropic.types import MessageParam, ToolParam
from openai import AsyncOpenAI
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionContentPartParam,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageFunctionToolCallParam,
    ChatCompletionMessageParam,
)

from core.model.base import DEFAULT_MAX_TOKENS, ModelConfigError, ModelError, ModelReply

MAX_RETRIES = 4
TIMEOUT_S = 300.0
"""Local models on a CPU can take minutes for one turn."""
CHECK_TIMEOUT_S = 10.0
LOCAL_API_KEY = "not-needed"
"""Sent when OPENAI_API_KEY is unset: local servers ignore the key but the SDK wants one."""

OLLAMA_CONTEXT_NOTE = (
    "Ollama gives models a 4096-token context by default and silently cuts longer prompts, "
    "which loses the task and the page. Start it with a larger context, e.g. "
    "`OLLAMA_CONTEXT_LENGTH=32768 ollama serve`, or set num_ctx in a Modelfile."
)
NO_VISION_NOTE = (
    "[A screenshot was taken, but this model is run without image input; rely on the "
    "<browser_state> digest.]"
)

_FINISH_TO_STOP = {"tool_calls": "tool_use", "stop": "end_turn", "length": "max_tokens"}


def is_ollama_like(base_url: str) -> bool:
    """Ollama's default port or name in the URL (its /v1/models says ``owned_by: library``)."""
    parts = urlsplit(base_url)
    return parts.port == 11434 or "ollama" in (parts.hostname or "")


class OpenAIModel:
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint."""

    def __init__(
        self,
        model_id: str,
        *,
        base_url: str,
        api_key: str | None = None,
        vision: bool = False,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        max_retries: int = MAX_RETRIES,
        timeout: float = TIMEOUT_S,
    ) -> None:
        self.model_id = model_id
        self.base_url = base_url
        self.label = f"openai:{model_id} @ {base_url}"
        self.vision = vision
        self.max_tokens = max_tokens
        self.notes: tuple[str, ...] = ()
        """Advice found by :meth:`check` for the person (e.g. Ollama's context size)."""
        self._ollama = is_ollama_like(base_url)
        self._client = AsyncOpenAI(
            api_key=api_key or LOCAL_API_KEY,
            base_url=base_url,
            max_retries=max_retries,
            timeout=timeout,
        )

    async def aclose(self) -> None:
        """Close the HTTP client; the model cannot be used afterwards."""
        await self._client.close()

    async def check(self) -> None:
        """The server answers and lists the model (Ollama and vLLM list what they serve).

        A server without ``/models`` passes: the first real call will tell.
        """
        client = self._client.with_options(max_retries=1, timeout=CHECK_TIMEOUT_S)
        served: list[str] = []
        try:
            async for model in client.models.list():
                served.append(model.id)
                self._ollama = self._ollama or model.owned_by == "library"
        except openai.APIConnectionError as err:
            raise ModelConfigError(
                f"Cannot reach the model server at {self.base_url} ({err}). Is it running "
                "(`ollama serve`, `vllm serve MODEL`)? Check --base-url or OPENAI_BASE_URL; "
                "it usually ends in /v1."
            ) from err
        except openai.AuthenticationError as err:
            raise ModelConfigError(
                f"The server at {self.base_url} rejected the key (401). Set OPENAI_API_KEY."
            ) from err
        except openai.APIStatusError:
            return
        if self._ollama:
            self.notes = (OLLAMA_CONTEXT_NOTE,)
        if served and not _served(self.model_id, served):
            listed = ", ".join(served[:20]) + (" ..." if len(served) > 20 else "")
            fix = f" Pull it first: `ollama pull {self.model_id}`." if self._ollama else ""
            raise ModelConfigError(
                f"Unknown model {self.model_id!r}: the server at {self.base_url} serves "
                f"{listed}. Use one of those with --model openai:ID.{fix}"
                + (f" Note: {OLLAMA_CONTEXT_NOTE}" if self._ollama else "")
            )

    async def reply(
        self,
        *,
        system: str,
        messages: Sequence[MessageParam],
        tools: Sequence[ToolParam],
        on_text: Callable[[str], None] | None = None,
    ) -> ModelReply:
        """One turn at temperature 0 with ``tool_choice`` auto. Raises :class:`ModelError`."""
        converted = to_openai_messages(system, messages, vision=self.vision)
        functions = to_openai_tools(tools)
        try:
            completion = await self._client.chat.completions.create(
                model=self.model_id,
                messages=converted,
                tools=functions if functions else openai.omit,
                tool_choice="auto" if functions else openai.omit,
                temperature=0,
                max_tokens=self.max_tokens,
            )
        except openai.APIConnectionError as err:
            raise ModelError(
                f"Lost the connection to the model server at {self.base_url} ({err}). "
                "Is it still running?"
            ) from err
        except openai.APIStatusError as err:
            hint = f" {OLLAMA_CONTEXT_NOTE}" if self._ollama else ""
            raise ModelError(
                f"The model server at {self.base_url} answered {err.status_code}: "
                f"{err.message}.{hint}"
            ) from err
        return from_openai_completion(completion)


def _served(model_id: str, served: Sequence[str]) -> bool:
    # Ollama lists "llama3.1:latest" for what people call "llama3.1".
    return model_id in served or f"{model_id}:latest" in served


# --- conversion -------------------------------------------------------------------------


def to_openai_tools(tools: Iterable[ToolParam]) -> list[ChatCompletionFunctionToolParam]:
    """Anthropic tool definitions as chat-completions function tools (cache marks dropped)."""
    out: list[ChatCompletionFunctionToolParam] = []
    for tool in tools:
        out.append(
            {
                "type": "function",
                "function": {
                    "name": tool["name"],
                    "description": tool.get("description", ""),
                    "parameters": dict(tool["input_schema"]),
                },
            }
        )
    return out


def to_openai_messages(
    system: str, messages: Iterable[MessageParam], *, vision: bool
) -> list[ChatCompletionMessageParam]:
    """An Anthropic conversation as chat-completions messages.

    Assistant tool_use blocks become ``tool_calls``; each tool_result becomes a ``tool``
    message right after them; images (which ``tool`` messages cannot carry) follow in a
    user message as ``image_url`` data URLs, or as a text note when ``vision`` is off.
    """
    out: list[ChatCompletionMessageParam] = [{"role": "system", "content": system}]
    for message in messages:
        msg = cast(Mapping[str, Any], message)
        role, content = msg["role"], msg["content"]
        if role == "system":
            out.append({"role": "system", "content": _plain_text(content)})
        elif role == "assistant":
            out.append(_assistant(content))
        else:
            out.extend(_user(content, vision=vision))
    return out


def _assistant(content: Any) -> ChatCompletionMessageParam:
    if isinstance(content, str):
        return {"role": "assistant", "content": content}
    texts: list[str] = []
    calls: list[ChatCompletionMessageFunctionToolCallParam] = []
    for block in content:
        if block.get("type") == "text":
            texts.append(block["text"])
        elif block.get("type") == "tool_use":
            raw = block.get("input")
            # A call whose arguments were not JSON keeps them as the raw string.
            arguments = raw if isinstance(raw, str) else json.dumps(raw)
            calls.append(
                {
                    "id": block["id"],
                    "type": "function",
                    "function": {"name": block["name"], "arguments": arguments},
                }
            )
    if calls:
        return {"role": "assistant", "content": "\n\n".join(texts) or None, "tool_calls": calls}
    return {"role": "assistant", "content": "\n\n".join(texts)}


def _user(content: Any, *, vision: bool) -> list[ChatCompletionMessageParam]:
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    out: list[ChatCompletionMessageParam] = []
    parts: list[ChatCompletionContentPartParam] = []
    for block in content:
        kind = block.get("type")
        if kind == "tool_result":
            inner = block.get("content", "")
            text = _plain_text(inner)
            if block.get("is_error"):
                text = f"Error: {text}"
            out.append({"role": "tool", "tool_call_id": block["tool_use_id"], "content": text})
            if not isinstance(inner, str):
                parts.extend(_image_parts(inner, vision=vision))
        elif kind == "text":
            parts.append({"type": "text", "text": block["text"]})
        elif kind == "image":
            parts.extend(_image_parts([block], vision=vision))
    if parts:
        out.append({"role": "user", "content": parts})
    return out


def _image_parts(blocks: Iterable[Any], *, vision: bool) -> list[ChatCompletionContentPartParam]:
    parts: list[ChatCompletionContentPartParam] = []
    for block in blocks:
        if block.get("type") != "image":
            continue
        source = block.get("source", {})
        if not vision:
            parts.append({"type": "text", "text": NO_VISION_NOTE})
        elif source.get("type") == "base64":
            url = f"data:{source['media_type']};base64,{source['data']}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
        elif source.get("type") == "url":
            parts.append({"type": "image_url", "image_url": {"url": source["url"]}})
    return parts


def _plain_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n\n".join(b["text"] for b in content if b.get("type") == "text")


def from_openai_completion(completion: ChatCompletion) -> ModelReply:
    """The first choice as Anthropic-shaped content blocks (text, then tool_use)."""
    if not completion.choices:
        raise ModelError("The model server returned no choices. Try again, or another model.")
    choice = completion.choices[0]
    message = choice.message
    content: list[dict[str, Any]] = []
    if message.content and message.content.strip():
        content.append({"type": "text", "text": message.content})
    for n, call in enumerate(message.tool_calls or ()):
        if call.type == "function":
            name, arguments = call.function.name, call.function.arguments
        else:
            name, arguments = call.custom.name, call.custom.input
        try:
            parsed: Any = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            parsed = arguments  # parse_reply tells the model its arguments were not JSON
        content.append(
            {
                "type": "tool_use",
                # Some local servers leave ids empty; every tool_use needs one for its result.
                "id": call.id or f"call_{completion.id}_{n}",
                "name": name,
                "input": parsed,
            }
        )
    usage: dict[str, int] = {}
    if completion.usage is not None:
        usage["input_tokens"] = completion.usage.prompt_tokens
        usage["output_tokens"] = completion.usage.completion_tokens
        details = completion.usage.prompt_tokens_details
        if details is not None and details.cached_tokens is not None:
            usage["cache_read_input_tokens"] = details.cached_tokens
    return ModelReply(
        content=tuple(content),
        usage=usage,
        stop_reason=_FINISH_TO_STOP.get(choice.finish_reason, choice.finish_reason),
        raw=completion.model_dump(mode="json", exclude_none=True),
    )
