"""A fake OpenAI-compatible chat-completions server on 127.0.0.1 (what Ollama or vLLM serve).

Same shape as :mod:`tests.helpers.fake_anthropic`; the SDK's base URL is ``fake.base_url``
(``http://127.0.0.1:PORT/v1``)::

    @pytest.fixture
    def fake_openai():
        with FakeOpenAI(models=["llama3.1:latest"]) as fake:
            yield fake

    fake.add_tool_call("click", {"index": 3, "reason": "Open the form."})
    model = OpenAIModel("llama3.1", base_url=fake.base_url)
    fake.completion_bodies      # every POST /v1/chat/completions body

``models=None`` makes ``/v1/models`` answer 404, like a server without that endpoint.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tests.helpers.fake_anthropic import Failure, FakeApiServer, Recorded


@dataclass(frozen=True)
class ChatReply:
    content: str | None
    tool_calls: list[dict[str, Any]]
    finish_reason: str | None = None
    usage: dict[str, int] | None = None


class FakeOpenAI(FakeApiServer):
    """``POST /v1/chat/completions`` and ``GET /v1/models``."""

    def __init__(
        self,
        *,
        models: Iterable[str] | None = ("llama3.1:latest",),
        owned_by: str = "library",
        api_key: str | None = None,
    ) -> None:
        super().__init__(api_key=api_key)
        self.models = None if models is None else list(models)
        self.owned_by = owned_by
        """``library`` is what Ollama reports; vLLM says ``vllm``."""
        self._ids = itertools.count(1)

    def __enter__(self) -> FakeOpenAI:
        self.start()
        return self

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def add_chat(
        self,
        content: str | None,
        tool_calls: list[dict[str, Any]] | None = None,
        *,
        finish_reason: str | None = None,
        usage: dict[str, int] | None = None,
    ) -> None:
        """Queue a reply: assistant text and raw ``tool_calls`` entries, verbatim."""
        self.add(ChatReply(content, tool_calls or [], finish_reason, usage))

    def add_text(self, text: str) -> None:
        self.add_chat(text)

    def add_tool_call(
        self,
        name: str,
        arguments: dict[str, Any] | str,
        *,
        text: str | None = None,
        id: str | None = None,
    ) -> str:
        """Queue a reply calling one function; ``arguments`` is sent as a JSON string
        (or as the given string, verbatim). Returns the call id."""
        call_id = id if id is not None else f"call_fake_{next(self._ids):03d}"
        args = arguments if isinstance(arguments, str) else json.dumps(arguments)
        call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
        self.add_chat(text, [call])
        return call_id

    @property
    def completion_bodies(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r.body for r in self.requests if r.path.startswith("/v1/chat/completions")]

    def route(self, request: Recorded) -> tuple[int, dict[str, str], Any]:
        path = request.path.split("?", 1)[0]
        if request.method == "POST" and path == "/v1/chat/completions":
            return self._completion(request)
        if request.method == "GET" and path == "/v1/models" and self.models is not None:
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": self.owned_by}
                for m in self.models
            ]
            return 200, {}, {"object": "list", "data": data}
        return self.error(Failure(404, "not_found_error", f"no route {request.method} {path}", {}))

    def error(self, failure: Failure) -> tuple[int, dict[str, str], Any]:
        body = {"error": {"message": failure.message, "type": failure.error_type, "code": None}}
        return failure.status, failure.headers, body

    def _completion(self, request: Recorded) -> tuple[int, dict[str, str], Any]:
        body = request.body if isinstance(request.body, dict) else {}
        item = self._next_item(body)
        if item is None:
            return self.exhausted(f"POST /v1/chat/completions #{len(self.completion_bodies)}")
        if isinstance(item, Failure):
            return self.error(item)
        assert isinstance(item, ChatReply), f"unexpected reply item {item!r}"
        message: dict[str, Any] = {"role": "assistant", "content": item.content}
        if item.tool_calls:
            message["tool_calls"] = item.tool_calls
        finish = item.finish_reason or ("tool_calls" if item.tool_calls else "stop")
        usage = item.usage or {
            "prompt_tokens": len(request.raw) // 4,
            "completion_tokens": 20,
            "total_tokens": len(request.raw) // 4 + 20,
        }
        return (
            200,
            {},
            {
                "id": f"chatcmpl-fake{len(self.requests)}",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", "fake"),
                "choices": [
                    {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
                ],
                "usage": usage,
            },
        )
