"""The scripted plan's inputs in tests: a digest, the browser-state message that carries it,
and the plan's next call.
"""

from __future__ import annotations

from pathlib import Path

from anthropic.types import MessageParam

from core.actions import parse_reply, tool_definitions
from core.model import ScriptedPlan, build_model

DIGEST = """<browser_state>
URL: http://127.0.0.1:8000/results
Title: Journeys
Lyon to Paris, Friday
[10]<a href=/journey/1>Details</a>
[11]<button type=submit>Book now and pay later</button>
*[12]<input type=text name=from placeholder="From" value="Lyon">From</input>
~[13]<button>Book now</button>
[14]<button aria-label="Sort by price">Sort</button>
[15]<button>Book now</button>
</browser_state>"""


def state_message(digest: str = DIGEST) -> list[MessageParam]:
    return [
        {"role": "user", "content": [{"type": "text", "text": "Task: book."}]},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "t0",
                    "name": "wait",
                    "input": {"seconds": 1, "reason": "r"},
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t0", "content": "Waited 1 s."},
                {"type": "text", "text": digest},
            ],
        },
    ]


def plan(tmp_path: Path, text: str) -> ScriptedPlan:
    path = tmp_path / "demo.jsonl"
    path.write_text(text, encoding="utf-8")
    model = build_model(f"scripted:{path}", base_url=None, env={})
    assert isinstance(model, ScriptedPlan)
    return model


async def next_call(
    model: ScriptedPlan, messages: list[MessageParam]
) -> tuple[str, dict[str, object]]:
    reply = await model.reply(system="", messages=messages, tools=tool_definitions(allow_js=False))
    action = parse_reply(reply.content, allow_js=False).action
    assert action is not None, reply.content
    return action.name, {**action.params, "reason": action.reason}
