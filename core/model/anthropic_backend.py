"""Claude through the official ``anthropic`` SDK: the default backend."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anthropic
from anthropic import AsyncAnthropic
from anthropic.types import Message, MessageParam, TextBlockParam, ToolParam

from core.model.base import DEFAULT_MAX_TOKENS, ModelConfigError, ModelError, ModelReply
from core.model.defaults import ANTHROPIC_KEY_HELP as _KEY_HELP
from core.model.defaults import DEFAULT_ANTHROPIC_MODEL

DEFAULT_BASE_URL = "https://api.anthropic.com"
MAX_RETRIES = 4
"""The SDK retries 408/409/429/5xx/529 itself, honouring ``retry-after`` headers."""
TIMEOUT_S = 120.0
CHECK_TIMEOUT_S = 15.0


class AnthropicModel:
    """A Claude model. Prompt caching: the system prompt and the last tool definition
    carry ``cache_control``, so the stable prefix of every request is cached."""

    vision: bool

    def __init__(
        self,
        model_id: str = DEFAULT_ANTHROPIC_MODEL,
        *,
        api_key: str | None = None,
        auth_token: str | None = None,
        base_url: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        max_retries: int = MAX_RETRIES,
        timeout: float = TIMEOUT_S,
    ) -> None:
        """Raises :class:`ModelConfigError` when neither a key nor a token is given."""
        if not api_key and not auth_token:
            raise ModelConfigError(
                f"No Anthropic API key: ANTHROPIC_API_KEY is not set. {_KEY_HELP}"
            )
        self.model_id = model_id
        self.label = f"anthropic:{model_id}"
        if base_url:
            self.label += f" @ {base_url}"
        self.base_url = base_url or DEFAULT_BASE_URL
        self.vision = True  # every current Claude model reads images
        self.max_tokens = max_tokens
        self.max_retries = max_retries
        # Only one credential may be passed; the key wins, as it does in the SDK.
        self._client = AsyncAnthropic(
            api_key=api_key or None,
            auth_token=None if api_key else auth_token,
            base_url=base_url,
            max_retries=max_retries,
            timeout=timeout,
        )

    @classmethod
    def from_env(
        cls, model_id: str, env: Mapping[str, str], *, base_url: str | None = None
    ) -> AnthropicModel:
        """Read ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN / ANTHROPIC_BASE_URL as the SDK does."""
        return cls(
            model_id,
            api_key=env.get("ANTHROPIC_API_KEY") or None,
            auth_token=env.get("ANTHROPIC_AUTH_TOKEN") or None,
            base_url=base_url or env.get("ANTHROPIC_BASE_URL") or None,
        )

    async def aclose(self) -> None:
        """Close the HTTP client; the model cannot be used afterwards."""
        await self._client.close()

    async def check(self) -> None:
        """Endpoint reachable, key accepted, model known. Transient errors pass."""
        client = self._client.with_options(max_retries=1, timeout=CHECK_TIMEOUT_S)
        try:
            info = await client.models.retrieve(self.model_id)
        except anthropic.APIConnectionError as err:
            raise ModelConfigError(
                f"Cannot reach the Anthropic API at {self.base_url} ({err}). Check the network, "
                "or ANTHROPIC_BASE_URL if you set it."
            ) from err
        except anthropic.AuthenticationError as err:
            raise ModelConfigError(
                f"The Anthropic API at {self.base_url} rejected the key (401). {_KEY_HELP}"
            ) from err
        except anthropic.PermissionDeniedError as err:
            raise ModelConfigError(
                f"The key may not use {self.model_id} (403 from {self.base_url}): "
                f"{_error_text(err)}"
            ) from err
        except anthropic.NotFoundError as err:
            if _error_type(err) != "not_found_error":
                return  # a gateway without /v1/models: it cannot tell, the first call will
            raise ModelConfigError(
                f"Unknown model {self.model_id!r}: the Anthropic API at {self.base_url} does not "
                f"know it. Use an id like --model anthropic:{DEFAULT_ANTHROPIC_MODEL}."
            ) from err
        except anthropic.APIStatusError:
            return  # overloaded or failing right now: not a configuration problem
        caps = info.capabilities
        if caps is not None:
            self.vision = self.vision and caps.image_input.supported

    async def reply(
        self,
        *,
        system: str,
        messages: Sequence[MessageParam],
        tools: Sequence[ToolParam],
        on_text: Callable[[str], None] | None = None,
    ) -> ModelReply:
        """One turn. Raises :class:`ModelError` after the SDK's retries. ``on_text``: the
        reply is streamed, and each time its text grows it is called with the text so far
        (the text blocks joined; tool calls are not text).

        No ``temperature``: API version 2026-10-21 (sent by anthropic SDK 2.x) rejects every
        sampling parameter with a 400, and the SDK no longer offers them.
        """
        system_blocks: list[TextBlockParam] = [
            {"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}
        ]
        tool_list = list(tools)
        if tool_list:
            last = tool_list[-1].copy()  # never mark the caller's definition
            last["cache_control"] = {"type": "ephemeral"}
            tool_list[-1] = last
        request: dict[str, Any] = {
            "model": self.model_id,
            "max_tokens": self.max_tokens,
            "system": system_blocks,
            "messages": list(messages),
            "tools": tool_list if tool_list else anthropic.omit,
            "tool_choice": {"type": "auto"} if tool_list else anthropic.omit,
        }
        try:
            if on_text is None:
                message = await self._client.messages.create(**request)
            else:
                async with self._client.messages.stream(**request) as stream:
                    written = ""
                    async for event in stream:
                        if event.type == "text":
                            written += event.text
                            on_text(written)
                    message = await stream.get_final_message()
        except anthropic.APIConnectionError as err:
            raise ModelError(
                f"Lost the connection to the Anthropic API at {self.base_url} ({err}) after "
                "retrying. Check the network and run again."
            ) from err
        except anthropic.AuthenticationError as err:
            raise ModelError(f"The Anthropic API rejected the key (401). {_KEY_HELP}") from err
        except anthropic.APIStatusError as err:
            if err.status_code == 200:  # an error event inside a stream that had begun
                raise ModelError(
                    f"The Anthropic API's reply broke off: {_error_text(err)}. Run again; if "
                    "it recurs, try again in a few minutes."
                ) from err
            raise ModelError(_status_message(err, self.model_id, self.max_retries)) from err
        except anthropic.APIError as err:
            # A stream that broke off midway (an error event, a cut connection).
            raise ModelError(
                f"The Anthropic API's reply broke off ({err}). Run again; if it recurs, check "
                f"the network to {self.base_url}."
            ) from err
        return _to_reply(message)


def _to_reply(message: Message) -> ModelReply:
    content = tuple(block.model_dump(mode="json", exclude_none=True) for block in message.content)
    usage: dict[str, int] = {
        "input_tokens": message.usage.input_tokens,
        "output_tokens": message.usage.output_tokens,
    }
    if message.usage.cache_read_input_tokens is not None:
        usage["cache_read_input_tokens"] = message.usage.cache_read_input_tokens
    if message.usage.cache_creation_input_tokens is not None:
        usage["cache_creation_input_tokens"] = message.usage.cache_creation_input_tokens
    return ModelReply(
        content=content,
        usage=usage,
        stop_reason=message.stop_reason,
        raw={"id": message.id, "model": message.model, "stop_reason": message.stop_reason},
    )


def _error_type(err: anthropic.APIStatusError) -> str | None:
    body: Any = err.body
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        kind = body["error"].get("type")
        return kind if isinstance(kind, str) else None
    return None


def _error_text(err: anthropic.APIStatusError) -> str:
    body: Any = err.body
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    return str(err.message)


def _status_message(err: anthropic.APIStatusError, model_id: str, retries: int) -> str:
    status = err.status_code
    detail = _error_text(err)
    if status == 529 or isinstance(err, anthropic.OverloadedError):
        return (
            f"Anthropic's API is overloaded (529) and stayed so after {retries} retries: "
            f"{detail}. Try again in a few minutes."
        )
    if status == 429:
        return f"Rate limited by the Anthropic API (429) after retries: {detail}. Wait and retry."
    if status >= 500:
        return f"The Anthropic API failed ({status}) after retries: {detail}. Try again later."
    if status == 404:
        return f"The Anthropic API does not know model {model_id!r} (404): {detail}."
    return f"The Anthropic API refused the request ({status}): {detail}."
