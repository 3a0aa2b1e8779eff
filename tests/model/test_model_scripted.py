"""The scripted plan: lines replayed as tool calls, targets found by text in the digest."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.model import ModelConfigError, ModelError, build_model
from core.model.spec import spec_label
from tests.helpers.scripted import (
    DIGEST,
    next_call,
    plan,
    state_message,
)


async def test_target_text_resolves_to_the_index_in_the_latest_digest(tmp_path: Path) -> None:
    model = plan(
        tmp_path,
        "// the demo plan\n"
        "\n"
        '{"tool": "click", "target": "book now", "reason": "Take the cheapest."}\n'
        "# sort first\n"
        '{"tool": "click", "target": "Sort by price"}\n'
        '{"tool": "type", "target": "from", "input": {"text": "Lyon"}}\n'
        '{"tool": "click", "target": "Details"}\n',
    )
    messages = state_message()
    # Exact name beats "contains"; in the viewport beats ~off-screen: [15], not [11] or [13].
    assert await next_call(model, messages) == (
        "click",
        {"index": 15, "reason": "Take the cheapest."},
    )
    # An attribute (aria-label) matches when no name does.
    assert await next_call(model, messages) == (
        "click",
        {"index": 14, "reason": "Step 2 of the scripted plan."},
    )
    name, params = await next_call(model, messages)
    assert (name, params["index"], params["text"]) == ("type", 12, "Lyon")
    # Only the latest <browser_state> counts.
    later = [
        *messages,
        {
            "role": "user",
            "content": DIGEST.replace("[10]<a href=/journey/1>", "[70]<a href=/journey/1>"),
        },
    ]
    assert (await next_call(model, later))[1]["index"] == 70


async def test_a_target_missing_from_the_page_stops_the_run(tmp_path: Path) -> None:
    model = plan(tmp_path, '{"tool": "click", "target": "Pay now"}\n')
    with pytest.raises(ModelError, match=r"demo.jsonl:1: no element matching 'Pay now'") as caught:
        await model.reply(system="", messages=state_message(), tools=[])
    assert "'Book now'" in str(caught.value)  # what is on the page instead


async def test_plan_exhaustion_finishes_unsuccessfully(tmp_path: Path) -> None:
    model = plan(tmp_path, '{"tool": "navigate", "input": {"url": "http://127.0.0.1:8000/"}}\n')
    assert (await next_call(model, state_message()))[0] == "navigate"
    name, params = await next_call(model, state_message())
    assert name == "finish"
    assert params["success"] is False and params["answer"] == "scripted plan ended"


def test_label_says_scripted_plan_not_model(tmp_path: Path) -> None:
    model = plan(tmp_path, "")
    assert model.label == "scripted plan: demo.jsonl"
    assert "model" not in model.label and not model.vision


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("{not json", "demo.jsonl:1: not JSON"),
        ('{"tool": "clik", "input": {"index": 1}}', "no tool `clik`. Did you mean `click`?"),
        ('{"tool": "click", "input": {"index": "1"}}', "click.index must be an integer"),
        (
            '{"tool": "click", "target": "A", "input": {"index": 1}}',
            'either "target" or input.index',
        ),
        ('{"tool": "click", "taget": "A"}', "unknown keys ['taget']"),
    ],
)
def test_a_broken_plan_is_a_config_error_naming_the_line(
    tmp_path: Path, line: str, said: str
) -> None:
    with pytest.raises(ModelConfigError) as caught:
        plan(tmp_path, line + "\n")
    assert said in str(caught.value)


def test_a_missing_plan_file(tmp_path: Path) -> None:
    with pytest.raises(ModelConfigError, match="not found"):
        build_model(f"scripted:{tmp_path / 'nope.jsonl'}", base_url=None, env={})


def test_a_spec_without_a_prefix_lists_the_three_forms() -> None:
    with pytest.raises(ModelConfigError) as caught:
        build_model("claude-sonnet-5-5", base_url=None, env={})
    message = str(caught.value)
    assert (
        "anthropic:MODEL_ID" in message
        and "openai:MODEL_ID" in message
        and "scripted:PLAN.jsonl" in message
    )


def test_the_header_knows_the_plan_label_before_it_is_loaded(tmp_path: Path) -> None:
    model = plan(tmp_path, "")
    assert spec_label(f"scripted:{model.path}", base_url=None, env={}) == model.label


async def test_a_drag_names_both_ends_by_their_text(tmp_path: Path) -> None:
    model = plan(tmp_path, '{"tool": "drag", "target": "Details", "to_target": "Sort by price"}\n')
    name, params = await next_call(model, state_message())
    assert (name, params["index"], params["to"]) == ("drag", 10, 14)


def test_a_drag_plan_line_with_to_target_and_input_to_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelConfigError, match="to_target"):
        plan(
            tmp_path,
            '{"tool": "drag", "target": "Details", "to_target": "x", "input": {"to": 3}}\n',
        )
