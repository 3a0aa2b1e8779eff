"""click_at through the whole loop (issue 26): the model finds the red square in the
screenshot it was sent and clicks its pixels; the person is asked with the crop around
the point and the name of what is there; before any screenshot the model is told to take
one. The canvas's own record says where the click landed."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from core.audit import read_log
from core.run.session import RunSettings, run_session
from tests.helpers.agent_run import MODEL, Supervisor
from tests.helpers.fake_anthropic import FakeAnthropic, tool_use_block
from tests.helpers.site_server import FixtureSite

pytestmark = pytest.mark.slow


def last_image(body: dict[str, Any]) -> Image.Image:
    """The latest screenshot the model was sent (an image block in a tool_result)."""
    for message in reversed(body["messages"]):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            inner = block.get("content") if block.get("type") == "tool_result" else None
            for part in inner if isinstance(inner, list) else []:
                if part.get("type") == "image":
                    data = base64.b64decode(part["source"]["data"])
                    return Image.open(io.BytesIO(data)).convert("RGB")
    raise AssertionError("no screenshot was sent to the model")


def click_the_red_square(body: dict[str, Any]) -> list[dict[str, Any]]:
    image = last_image(body)
    pixels = image.load()
    assert pixels is not None
    red = [
        (x, y)
        for y in range(0, image.height, 2)
        for x in range(0, image.width, 2)
        if pixels[x, y] == (255, 0, 0)
    ]
    x = (min(p[0] for p in red) + max(p[0] for p in red)) / 2
    y = (min(p[1] for p in red) + max(p[1] for p in red)) / 2
    args = {"x": x, "y": y, "reason": "the red square is the target"}
    return [tool_use_block("click_at", args, "toolu_click_at")]


async def test_click_at_in_a_run_asks_with_the_point_and_clicks_the_canvas(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    fake.add_tool_use("click_at", {"x": 10, "y": 10, "reason": "too early"})
    fake.add_tool_use("screenshot", {"reason": "see the canvas"})
    fake.add(click_the_red_square)
    fake.add_tool_use("finish", {"success": True, "answer": "clicked", "reason": "done"})
    supervisor = Supervisor()
    settings = RunSettings(
        task="Click the red square",
        start_url=site.url("/hands/drag/canvas.html"),
        model_spec=MODEL,
        approve="ask",
        headless=True,
        profile=tmp_path / "profile",
        audit_dir=tmp_path / "logs",
    )
    site.clear()
    finished = await run_session(settings, supervisor=supervisor)
    assert finished.outcome == "success", finished
    # The canvas saved one click, on the square.
    assert [p.json_body["square"] for p in site.posts("/clicks")] == [True]
    # Before any screenshot: an error result telling the model what to do, nothing asked.
    early = fake.message_bodies[1]["messages"][-1]["content"]
    assert "take one with `screenshot` first" in str(early), early
    (asked,) = [r for r in supervisor.requests if r.action.name == "click_at"]
    assert asked.element_line is not None and "canvas" in asked.element_line, asked.element_line
    assert any("At (" in d and "canvas" in d for d in asked.details), asked.details
    assert asked.crop is not None and asked.crop.png is not None, asked.crop
    (log,) = sorted((tmp_path / "logs").glob("*.jsonl"))
    rounds = [r for r in read_log(log).records if r["type"] == "round"]
    clicked = [r for r in rounds if (r.get("action") or {}).get("name") == "click_at"]
    assert clicked[-1]["result"]["ok"], clicked[-1]["result"]
    assert "on <canvas" in clicked[-1]["result"]["message"], clicked[-1]["result"]
