"""The committed sample log works out of the box: it verifies, and replay opens it."""

from __future__ import annotations

from pathlib import Path

from core.audit import key_from_file, read_log, verify
from tests.helpers.tui_driver import wait_until
from tui.screens.replay import ReplayApp

SAMPLE = Path(__file__).resolve().parents[2] / "audit_logs" / "sample-demo.jsonl"
SAMPLE_KEY = SAMPLE.with_suffix(".key")
"""The demo key, public on purpose: it seals the sample and nothing else."""


def test_the_sample_is_a_whole_demo_run_and_verifies() -> None:
    report = verify(SAMPLE, key_from_file(SAMPLE_KEY))
    assert report.status == "sealed", report.summary()
    log = read_log(SAMPLE)
    assert log.problems == []
    kinds = [r["type"] for r in log.records]
    assert kinds[0] == "run_start" and kinds[-1] == "run_end"
    assert "scripted plan" in log.records[0]["model"]
    pauses = [r for r in log.records if r["type"] == "human_pause"]
    assert [p["kind"] for p in pauses] == ["payment"]
    approvals = [(r["approval"] or {}).get("decision") for r in log.records if r["type"] == "round"]
    assert approvals.count("approved") >= 15


async def test_replay_opens_the_sample(tmp_path: Path) -> None:
    app = ReplayApp(SAMPLE, follow=False, config_dir=tmp_path / "config", persist_theme=False)
    async with app.run_test(size=(140, 44)) as pilot:
        await wait_until(
            pilot, lambda: app.replay_screen is not None and app.replay_screen.scan_done
        )
        screen = app.replay_screen
        assert screen is not None
        rounds = [e for e in screen.rows.entries if e.kind == "round"]
        assert len(rounds) == sum(1 for r in read_log(SAMPLE).records if r["type"] == "round")
        assert not [e for e in screen.rows.entries if e.kind == "problem"]
