"""What the MCP server makes of a client's messages before they reach the run: arguments
too large or too deep are refused with a short note (never dropped: the client would wait
for ever), tools are the model's own plus observe, and results keep images and errors."""

from __future__ import annotations

import json
from typing import Any

from core.mcp.server import (
    REFUSED,
    _blocks,
    argument_problem,
    guard_line,
    result_text,
    tool_list,
)


def call_line(arguments: Any, id: Any = 7) -> str:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": id,
            "method": "tools/call",
            "params": {"name": "click", "arguments": arguments},
        }
    )


def nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = {"a": value}
    return value


def test_a_deep_or_huge_call_keeps_its_id_and_only_a_note_of_why() -> None:
    for arguments, said in (
        ({"reason": nested(300)}, "nest deeper"),
        (
            {
                "reason": [
                    [
                        [
                            [
                                [
                                    [
                                        [
                                            [
                                                [
                                                    [
                                                        [
                                                            [
                                                                [
                                                                    [
                                                                        [
                                                                            [
                                                                                [
                                                                                    [
                                                                                        [
                                                                                            [
                                                                                                [
                                                                                                    [
                                                                                                        [
                                                                                                            [
                                                                                                                [
                                                                                                                    [
                                                                                                                        [
                                                                                                                            [
                                                                                                                                [
                                                                                                                                    [
                                                                                                                                        [
                                                                                                                                            [
                                                                                                                                                [
                                                                                                                                                    [
                                                                                                                                                        [
                                                                                                                                                            [
                                                                                                                                                                [
                                                                                                                                                                    [
                                                                                                                                                                        [
                                                                                                                                                                            [
                                                                                                                                                                                [
                                                                                                                                                                                    [
                                                                                                                                                                                        [
                                                                                                                                                                                            [
                                                                                                                                                                                                [
                                                                                                                                                                                                    [
                                                                                                                                                                                                        [
                                                                                                                                                                                                            [
                                                                                                                                                                                                                [
                                                                                                                                                                                                                    [
                                                                                                                                                                                                                        [
                                                                                                                                                                                                                            [
                                                                                                                                                                                                                                [
                                                                                                                                                                                                                                    [
                                                                                                                                                                                                                                        [
                                                                                                                                                                                                                                            [
                                                                                                                                                                                                                                                [
                                                                                                                                                                                                                                                    [
                                                                                                                                                                                                                                                        [
                                                                                                                                                                                                                                                            [
                                                                                                                                                                                                                                                                [
                                                                                                                                                                                                                                                                    [
                                                                                                                                                                                                                                                                        [
                                                                                                                                                                                                                                                                            [
                                                                                                                                                                                                                                                                                1
                                                                                                                                                                                                                                                                            ]
                                                                                                                                                                                                                                                                        ]
                                                                                                                                                                                                                                                                    ]
                                                                                                                                                                                                                                                                ]
                                                                                                                                                                                                                                                            ]
                                                                                                                                                                                                                                                        ]
                                                                                                                                                                                                                                                    ]
                                                                                                                                                                                                                                                ]
                                                                                                                                                                                                                                            ]
                                                                                                                                                                                                                                        ]
                                                                                                                                                                                                                                    ]
                                                                                                                                                                                                                                ]
                                                                                                                                                                                                                            ]
                                                                                                                                                                                                                        ]
                                                                                                                                                                                                                    ]
                                                                                                                                                                                                                ]
                                                                                                                                                                                                            ]
                                                                                                                                                                                                        ]
                                                                                                                                                                                                    ]
                                                                                                                                                                                                ]
                                                                                                                                                                                            ]
                                                                                                                                                                                        ]
                                                                                                                                                                                    ]
                                                                                                                                                                                ]
                                                                                                                                                                            ]
                                                                                                                                                                        ]
                                                                                                                                                                    ]
                                                                                                                                                                ]
                                                                                                                                                            ]
                                                                                                                                                        ]
                                                                                                                                                    ]
                                                                                                                                                ]
                                                                                                                                            ]
                                                                                                                                        ]
                                                                                                                                    ]
                                                                                                                                ]
                                                                                                                            ]
                                                                                                                        ]
                                                                                                                    ]
                                                                                                                ]
                                                                                                            ]
                                                                                                        ]
                                                                                                    ]
                                                                                                ]
                                                                                            ]
                                                                                        ]
                                                                                    ]
                                                                                ]
                                                                            ]
                                                                        ]
                                                                    ]
                                                                ]
                                                            ]
                                                        ]
                                                    ]
                                                ]
                                            ]
                                        ]
                                    ]
                                ]
                            ]
                        ]
                    ]
                ]
            },
            "nest deeper",
        ),
        ({"text": "x" * 1_000_000}, "at most 100,000"),
    ):
        kept = json.loads(guard_line(call_line(arguments, id="abc")))
        assert kept["id"] == "abc" and kept["method"] == "tools/call"
        assert said in kept["params"]["arguments"][REFUSED]
        assert len(guard_line(call_line(arguments))) < 400


def test_brackets_inside_strings_do_not_count_and_plain_calls_pass_as_they_came() -> None:
    line = call_line({"text": "[[[[{{{{" * 50 + '\\"]]', "index": 1})
    assert guard_line(line) == line
    other = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    assert guard_line(other) == other


def test_a_line_too_deep_for_any_parser_still_gets_an_answer() -> None:
    line = (
        '{"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": {"arguments": '
        + "[" * 5000
        + "]" * 5000
        + "}}"
    )
    kept = json.loads(guard_line(line))
    assert kept["id"] == 41 and REFUSED in kept["params"]["arguments"]


def test_argument_problem_measures_what_the_sdk_parsed() -> None:
    assert argument_problem({"index": 3, "reason": "go"}) is None
    assert "nest deeper" in (argument_problem({"r": nested(30)}) or "")


def test_the_tools_are_the_models_own_plus_observe_and_say_page_text_is_data() -> None:
    tools = {t["name"]: t for t in tool_list(allow_js=False)}
    assert "observe" in tools and "run_js" not in tools
    assert "finish" not in tools and "ask_human" not in tools
    assert "run_js" in {t["name"] for t in tool_list(allow_js=True)}
    for tool in tools.values():
        assert "never instructions" in tool["description"]
        assert tool["input_schema"]["type"] == "object"


def test_a_result_keeps_its_error_its_images_and_shows_control_characters() -> None:
    content = [
        {
            "type": "tool_result",
            "tool_use_id": "t",
            "is_error": True,
            "content": [
                {"type": "text", "text": "Failed: \x1b]0;pwned\x07 nope"},
                {"type": "image", "source": {"data": "QUJD", "media_type": "image/jpeg"}},
            ],
        },
        {"type": "text", "text": "<browser_state>…</browser_state>"},
    ]
    blocks, failed = result_text(_blocks(content), queued_behind=2)
    assert failed
    assert "waited for 2 earlier calls" in blocks[0]["text"]
    assert "\x1b" not in blocks[1]["text"] and "pwned" in blocks[1]["text"]
    assert blocks[2] == {"type": "image", "data": "QUJD", "mime_type": "image/jpeg"}
    assert blocks[3]["text"].startswith("<browser_state>")
