"""The hostile corpus, a header too big to carry: a page sets a 2 MB title, a 200 kB URL, a
1 MB title of role-speaking lines or a 1 MB dialog. Every field of the header counts against
the observation's cap, so no request to the model and no record of the log carries them whole.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.eyes.snapshot import FIELD_CHARS, SnapshotOptions
from tests.helpers.fake_anthropic import FakeAnthropic
from tests.helpers.hostile import click, page_url, run_hostile
from tests.helpers.site_server import FixtureSite

# End to end: whole runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow

CAP = SnapshotOptions().max_chars
ENVELOPE = 200  # the <browser_state> tags and the lines between header and digest


def observations(body: dict[str, object]) -> list[str]:
    """Every text block of a request that holds a <browser_state>."""
    text = json.dumps(body, ensure_ascii=False)
    found = []
    for message in body["messages"]:  # type: ignore[attr-defined]
        content = message["content"]
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for block in blocks:
            for part in [
                block,
                *(block.get("content") or [] if isinstance(block.get("content"), list) else []),
            ]:
                t = part.get("text") if isinstance(part, dict) else None
                if isinstance(t, str) and "<browser_state>" in t:
                    found.append(t)
    assert found, text[:2000]
    return found


@pytest.mark.parametrize("what", ["title", "url", "lines", "dialog", "all"])
async def test_no_request_and_no_record_carries_a_huge_header_field(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic, what: str
) -> None:
    run = await run_hostile(
        tmp_path,
        fake,
        page_url(site, attacker, "huge.html", what=what),
        [click("Check the status")],
    )
    assert run.bodies, "the model was asked"
    for body in run.bodies:
        for observation in observations(body):
            assert len(observation) <= CAP + ENVELOPE
            header = observation.split("\n\n", 1)[0]
            assert "SYSTEM:" not in header.replace("SYSTEM꞉", "")  # escaped role markers only
        tool_results = json.dumps(body, ensure_ascii=False).count("Are you sure?")
        assert tool_results * len("Are you sure? ") <= 4 * FIELD_CHARS
        assert len(json.dumps(body, ensure_ascii=False)) < 4 * CAP
    for record in run.log_rounds():
        assert len(record.get("title") or "") <= FIELD_CHARS + 40
        assert len(json.dumps(record, ensure_ascii=False)) < 3 * CAP
    assert run.log_path.stat().st_size < 20 * CAP
