"""A recorded drag repeated by ``handrail rerun`` (issue 26): both ends are found again by
their recorded digest lines, without a model, and the board saves the same move."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from core.rerun.rerun import NO_MODEL, Rerun, run_rerun
from core.run.session import RunSettings, run_session
from tests.helpers.agent_run import Supervisor
from tests.helpers.site_server import FixtureSite

pytestmark = pytest.mark.slow

PLAN = [
    {"tool": "drag", "target": "Write report", "to_target": "Doing"},
    {"tool": "finish", "input": {"success": True, "answer": "moved"}},
]


def settings(tmp: Path, name: str, **kw: object) -> RunSettings:
    return RunSettings(
        task="Move 'Write report' to Doing",
        approve="none",
        headless=True,
        profile=tmp / f"profile-{name}",
        audit_dir=tmp / f"logs-{name}",
        allow_domains=("127.0.0.1",),
        screenshots=False,
        **kw,  # type: ignore[arg-type]
    )


def test_a_recorded_drag_is_repeated_onto_the_same_column(tmp_path: Path) -> None:
    site = FixtureSite()
    try:
        plan = tmp_path / "plan.jsonl"
        plan.write_text("".join(json.dumps(step) + "\n" for step in PLAN))
        start = site.url("/hands/drag/kanban.html")
        recorded = settings(tmp_path, "recorded", start_url=start, model_spec=f"scripted:{plan}")
        finished = asyncio.run(run_session(recorded, supervisor=Supervisor()))
        assert finished.outcome == "success", finished.reason
        moved = {"todo": ["c2"], "doing": ["c1"], "done": ["c3"]}
        assert [p.json_body for p in site.posts("/board")] == [moved]
        (log,) = (tmp_path / "logs-recorded").glob("*.jsonl")

        rerun = Rerun.load(log, [site.origin])

        async def again() -> str:
            finished, _plan = await run_rerun(
                rerun,
                rerun.settings(settings(tmp_path, "rerun", model_spec=NO_MODEL)),
                supervisor=Supervisor(),
            )
            return finished.outcome

        assert asyncio.run(again()) == "success"
        assert [p.json_body for p in site.posts("/board")] == [moved, moved]
    finally:
        site.stop()
