"""The tool set and reply parsing: what the model is offered, and what it is told when wrong."""

from __future__ import annotations

from typing import Any

import pytest

from core.actions import (
    PAGE_CHANGING,
    Action,
    ParseError,
    parse_call,
    parse_reply,
    tool_definitions,
)


def call(name: str, **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{name}", "name": name, "input": input}


def rejected(name: str, *, allow_js: bool = False, **input: Any) -> str:
    parsed = parse_reply([call(name, **input)], allow_js=allow_js)
    assert parsed.action is None
    assert len(parsed.errors) == 1 and parsed.errors[0].tool_use_id == f"toolu_{name}"
    return parsed.errors[0].message


# --- definitions ------------------------------------------------------------------------


def test_every_tool_is_strict_and_requires_a_reason() -> None:
    tools = tool_definitions(allow_js=True)
    names = [t["name"] for t in tools]
    assert names == [
        "navigate", "click", "hover", "type", "press_key", "select_option", "drag", "click_at", "scroll",
        "go_back", "wait", "switch_tab", "close_tab", "find_text", "upload_file", "screenshot",
        "ask_human", "finish", "run_js",
    ]  # fmt: skip
    for tool in tools:
        schema: Any = tool["input_schema"]
        assert schema["additionalProperties"] is False
        assert "reason" in schema["required"]
        assert tool.get("description")


def test_run_js_is_offered_only_when_allowed() -> None:
    assert "run_js" not in [t["name"] for t in tool_definitions(allow_js=False)]


def test_descriptions_tell_the_model_about_indices_secrets_and_commitments() -> None:
    tools = {t["name"]: t for t in tool_definitions(allow_js=False)}
    click: Any = tools["click"]
    type_: Any = tools["type"]
    assert "[N]" in click["input_schema"]["properties"]["index"]["description"]
    assert "<secret:NAME>" in type_["input_schema"]["properties"]["text"]["description"]
    assert "only when the task" in click["description"]


def test_scroll_does_not_count_as_changing_the_page() -> None:
    assert "scroll" not in PAGE_CHANGING and "screenshot" not in PAGE_CHANGING
    assert {"navigate", "click", "type", "run_js", "switch_tab"} <= PAGE_CHANGING


def test_hover_goes_through_the_gate_like_a_click() -> None:
    # The page reacts to a hover (menus open): the gate sees it, and ask mode asks.
    assert "hover" in PAGE_CHANGING


# --- valid calls ------------------------------------------------------------------------


def test_a_valid_call_becomes_the_action_with_documented_defaults() -> None:
    parsed = parse_reply(
        [
            {"type": "text", "text": "The From field is empty."},
            call("type", index=13, text="Lyon", reason="Fill in the origin."),
        ],
        allow_js=False,
    )
    assert parsed.action == Action(
        name="type",
        params={"index": 13, "text": "Lyon", "clear": True, "submit": False},
        reason="Fill in the origin.",
        tool_use_id="toolu_type",
    )
    assert parsed.errors == () and parsed.text == "The From field is empty."
    assert not parsed.no_tool_call


def test_scroll_by_page_defaults_to_one_page() -> None:
    parsed = parse_reply([call("scroll", direction="down", reason="See more.")], allow_js=False)
    assert parsed.action is not None and parsed.action.params == {"direction": "down", "pages": 1}


def test_scroll_to_an_element() -> None:
    parsed = parse_reply([call("scroll", index=40, reason="Reach the footer.")], allow_js=False)
    assert parsed.action is not None and parsed.action.params == {"index": 40}


def test_scroll_a_scrolling_area_sideways_by_one_of_its_widths() -> None:
    parsed = parse_reply(
        [call("scroll", index=12, direction="right", reason="See more tags.")], allow_js=False
    )
    assert parsed.action is not None
    assert parsed.action.params == {"index": 12, "direction": "right", "pages": 1}


# --- rejections: each names the fix -----------------------------------------------------


def test_unknown_tool_lists_the_valid_ones() -> None:
    message = rejected("fill", index=3, text="x", reason="r")
    assert "no tool `fill`" in message
    assert "navigate, click, hover, type" in message and "finish" in message
    assert "run_js" not in message  # not offered in this run


def test_missing_parameter_is_named() -> None:
    message = rejected("click", reason="Open it.")
    assert "click is missing `index`" in message


def test_missing_reason_is_rejected() -> None:
    assert "`reason`" in rejected("click", index=3)


def test_index_as_a_string_is_not_coerced() -> None:
    message = rejected("click", index="5", reason="Open it.")
    assert "click.index must be an integer" in message
    assert "without quotes: 5" in message


def test_boolean_as_a_string_is_not_coerced() -> None:
    message = rejected("finish", success="true", answer="Booked.", reason="Done.")
    assert "finish.success must be true or false" in message


def test_parameter_of_another_tool_points_to_that_tool() -> None:
    message = rejected("click", url="https://example.com", reason="Go there.")
    assert "click takes index" in message
    assert "to open a URL, use navigate" in message


def test_unknown_parameter_lists_what_the_tool_takes() -> None:
    message = rejected("click", index=3, force=True, reason="r")
    assert (
        "`force` is not a parameter of click; click takes index, count, button, reason" in message
    )


@pytest.mark.parametrize(
    ("input", "said"),
    [
        ({}, "You gave neither"),
        ({"pages": 2}, "`pages` alone is not enough"),
        ({"direction": "left"}, "give its `index` too"),
    ],
)
def test_scroll_needs_a_direction_or_an_index(input: dict[str, Any], said: str) -> None:
    message = rejected("scroll", reason="r", **input)
    assert said in message


def test_wait_is_bounded() -> None:
    assert "between 0 and 30" in rejected("wait", seconds=120, reason="r")


def test_direction_outside_the_enum() -> None:
    message = rejected("scroll", direction="sideways", reason="r")
    assert 'must be "up" or "down" or "left" or "right"' in message


def test_run_js_when_not_allowed_says_so() -> None:
    message = rejected("run_js", code="1+1", reason="r")
    assert "did not allow JavaScript" in message
    assert parse_reply([call("run_js", code="1+1", reason="r")], allow_js=True).action


def test_arguments_that_are_not_an_object() -> None:
    parsed = parse_reply(
        [{"type": "tool_use", "id": "t1", "name": "click", "input": '{"index": 3'}],
        allow_js=False,
    )
    assert parsed.action is None
    assert "must be a JSON object" in parsed.errors[0].message


def test_null_for_an_optional_parameter_explains_itself() -> None:
    message = rejected("type", index=3, text="x", submit=None, reason="r")
    assert "Leave out an optional parameter" in message


def test_every_rejection_says_the_call_was_not_run() -> None:
    assert rejected("click", index="5", reason="r").endswith("This call was not run.")


# --- several calls, no call -------------------------------------------------------------


def test_several_calls_run_the_first_and_answer_every_other() -> None:
    parsed = parse_reply(
        [
            {"type": "tool_use", "id": "a", "name": "click", "input": {"index": 1, "reason": "r"}},
            {"type": "tool_use", "id": "b", "name": "click", "input": {"index": 2, "reason": "r"}},
            {"type": "tool_use", "id": "c", "name": "nope", "input": {}},
        ],
        allow_js=False,
    )
    assert parsed.action is not None and parsed.action.tool_use_id == "a"
    assert [e.tool_use_id for e in parsed.errors] == ["b", "c"]
    assert all("only one action per round" in e.message.lower() for e in parsed.errors)
    assert all("call it again next round" in e.message.lower() for e in parsed.errors)


def test_an_invalid_first_call_is_not_replaced_by_a_later_valid_one() -> None:
    parsed = parse_reply(
        [
            {"type": "tool_use", "id": "a", "name": "click", "input": {"index": "1"}},
            {"type": "tool_use", "id": "b", "name": "click", "input": {"index": 2, "reason": "r"}},
        ],
        allow_js=False,
    )
    assert parsed.action is None
    assert [e.tool_use_id for e in parsed.errors] == ["a", "b"]


def test_text_only_reply_is_no_tool_call() -> None:
    parsed = parse_reply([{"type": "text", "text": "Let me think."}], allow_js=False)
    assert parsed.no_tool_call and parsed.action is None and parsed.errors == ()
    assert parsed.text == "Let me think."


def test_error_becomes_an_is_error_tool_result() -> None:
    assert ParseError("t1", "bad").tool_result() == {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": "bad",
        "is_error": True,
    }


def test_parse_call_validates_a_persons_edit() -> None:
    edited = parse_call("type", {"index": 3, "text": "Paris", "reason": "r"}, allow_js=False)
    assert isinstance(edited, Action) and edited.params["text"] == "Paris"
    assert isinstance(parse_call("type", {"index": 3, "reason": "r"}, allow_js=False), ParseError)
