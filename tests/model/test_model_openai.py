"""The OpenAI-compatible backend, with the real SDK over HTTP against a fake chat-completions server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from anthropic.types import MessageParam

from core.actions import parse_reply, tool_definitions
from core.model import ModelConfigError, OpenAIModel, build_model, image_block
from core.model.openai_backend import NO_VISION_NOTE
from core.model.spec import spec_label
from tests.helpers.fake_openai import FakeOpenAI

SYSTEM = "You drive a browser for a person."
STATE = "<browser_state>\n[3]<button>Book now</button>\n</browser_state>"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(models=["llama3.1:latest", "qwen2.5:7b"]) as server:
        yield server


def conversation() -> list[MessageParam]:
    return [
        {"role": "user", "content": [{"type": "text", "text": "Task: book a seat."}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me look."},
                {
                    "type": "tool_use",
                    "id": "call_1",
                    "name": "screenshot",
                    "input": {"reason": "r"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_1",
                    "content": [
                        {"type": "text", "text": "Took a screenshot."},
                        image_block(b"png"),
                    ],
                },
                {"type": "text", "text": STATE},
            ],
        },
    ]


async def test_a_tool_call_round_trip_converts_both_ways(fake: FakeOpenAI) -> None:
    fake.add_tool_call("click", {"index": 3, "reason": "Book it."}, text="Found the button.")
    model = build_model("openai:llama3.1", base_url=fake.base_url, env={})
    assert isinstance(model, OpenAIModel)
    assert model.label == f"openai:llama3.1 @ {fake.base_url}" and not model.vision

    reply = await model.reply(
        system=SYSTEM, messages=conversation(), tools=tool_definitions(allow_js=False)
    )

    # The response comes back as Anthropic-shaped blocks the parser understands.
    assert reply.content == (
        {"type": "text", "text": "Found the button."},
        {
            "type": "tool_use",
            "id": "call_fake_001",
            "name": "click",
            "input": {"index": 3, "reason": "Book it."},
        },
    )
    assert reply.stop_reason == "tool_use" and reply.usage["output_tokens"] == 20
    action = parse_reply(reply.content, allow_js=False).action
    assert action is not None and action.name == "click" and action.params == {"index": 3}

    # The request is chat-completions: function tools, assistant tool_calls, tool messages.
    (body,) = fake.completion_bodies
    assert (
        body["model"] == "llama3.1" and body["temperature"] == 0 and body["tool_choice"] == "auto"
    )
    click = next(t for t in body["tools"] if t["function"]["name"] == "click")
    assert click["type"] == "function"
    assert click["function"]["parameters"]["required"] == ["index", "reason"]
    assert "cache_control" not in json.dumps(body["tools"])
    assert body["messages"] == [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": [{"type": "text", "text": "Task: book a seat."}]},
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "screenshot", "arguments": '{"reason": "r"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "Took a screenshot."},
        # Without vision the screenshot becomes a note; the digest follows.
        {
            "role": "user",
            "content": [{"type": "text", "text": NO_VISION_NOTE}, {"type": "text", "text": STATE}],
        },
    ]
    await model.aclose()


async def test_with_vision_a_screenshot_is_a_data_url(fake: FakeOpenAI) -> None:
    fake.add_text("Nothing to do.")
    model = OpenAIModel("llama3.1", base_url=fake.base_url, vision=True)
    reply = await model.reply(system=SYSTEM, messages=conversation(), tools=[])
    assert parse_reply(reply.content, allow_js=False).no_tool_call
    user = fake.completion_bodies[0]["messages"][-1]
    assert user["content"][0] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,cG5n"},
    }
    await model.aclose()


async def test_an_error_result_is_marked_for_the_model(fake: FakeOpenAI) -> None:
    fake.add_text("ok")
    model = OpenAIModel("llama3.1", base_url=fake.base_url)
    messages: list[MessageParam] = [
        *conversation()[:2],
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_1",
                    "content": "No such element.",
                    "is_error": True,
                }
            ],
        },
    ]
    await model.reply(system=SYSTEM, messages=messages, tools=[])
    assert fake.completion_bodies[0]["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "Error: No such element.",
    }
    await model.aclose()


async def test_arguments_that_are_not_json_reach_the_model_as_an_error(fake: FakeOpenAI) -> None:
    fake.add_tool_call("click", '{"index": 3,', id="call_x")
    model = OpenAIModel("llama3.1", base_url=fake.base_url)
    reply = await model.reply(
        system=SYSTEM, messages=conversation(), tools=tool_definitions(allow_js=False)
    )
    parsed = parse_reply(reply.content, allow_js=False)
    assert parsed.action is None
    assert parsed.errors[0].tool_use_id == "call_x"
    assert "must be a JSON object" in parsed.errors[0].message
    await model.aclose()


async def test_check_accepts_an_ollama_name_without_its_tag(fake: FakeOpenAI) -> None:
    model = OpenAIModel("llama3.1", base_url=fake.base_url)
    await model.check()
    assert any("4096" in note for note in model.notes)  # owned_by "library": Ollama
    await model.aclose()


async def test_check_rejects_a_model_the_server_does_not_serve(fake: FakeOpenAI) -> None:
    model = OpenAIModel("llama3.2", base_url=fake.base_url)
    with pytest.raises(ModelConfigError) as caught:
        await model.check()
    message = str(caught.value)
    assert "Unknown model 'llama3.2'" in message
    assert "llama3.1:latest, qwen2.5:7b" in message
    assert "ollama pull llama3.2" in message and "4096-token context" in message
    await model.aclose()


async def test_check_passes_when_the_server_has_no_model_list() -> None:
    with FakeOpenAI(models=None) as server:
        model = OpenAIModel("anything", base_url=server.base_url)
        await model.check()
        await model.aclose()


def test_openai_spec_needs_a_base_url() -> None:
    with pytest.raises(ModelConfigError, match="--base-url URL or OPENAI_BASE_URL"):
        build_model("openai:llama3.1", base_url=None, env={})


def test_openai_base_url_from_the_environment() -> None:
    env: dict[str, Any] = {"OPENAI_BASE_URL": "http://localhost:8000/v1"}
    model = build_model("openai:qwen", base_url=None, env=env)
    assert model.label == "openai:qwen @ http://localhost:8000/v1"


def test_the_header_knows_the_model_label_before_the_sdk_loads() -> None:
    env = {"OPENAI_BASE_URL": "http://localhost:8000/v1"}
    model = build_model("openai:qwen", base_url=None, env=env)
    assert spec_label("openai:qwen", base_url=None, env=env) == model.label
