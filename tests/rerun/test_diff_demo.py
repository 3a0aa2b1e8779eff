"""``handrail diff`` on the demo itself: the scripted demo against its own rerun on the demo
site is equivalent (exit 0); against its rerun on a demo site whose seat page renamed its
button, it diverges at that step (exit 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.demo import server as demo_server
from core.demo import start_demo_site
from core.rerun.rerun import NO_MODEL
from tests.audit.test_otel_export import demo_log as demo_log  # the scripted demo's log
from tests.rerun.test_diff import handrail_diff
from tests.rerun.test_rerun import rerun_on
from tui.console import ConsoleSupervisor

pytestmark = pytest.mark.slow

NOBODY = ConsoleSupervisor(interactive=False)
RENAMED = ("Continue to passenger details", "Next: who is travelling")


def test_the_demo_against_its_rerun_is_equivalent(tmp_path: Path, demo_log: Path) -> None:
    site = start_demo_site()
    try:
        # Nobody takes the payment page, as in the recorded run: it ends there too.
        rerun_on(tmp_path, demo_log, site.url.rstrip("/"), model=NO_MODEL, person=NOBODY)
    finally:
        site.stop()
    (again,) = (tmp_path / "logs-rerun").glob("*.jsonl")
    done = handrail_diff(demo_log, again)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "equivalent" in done.stdout


def test_the_demo_against_a_changed_demo_site_diverges_at_the_changed_step(
    tmp_path: Path, demo_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = demo_server._site_file

    def renamed(name: str) -> str:
        return original(name).replace(*RENAMED)

    monkeypatch.setattr(demo_server, "_site_file", renamed)
    site = start_demo_site()
    try:
        rerun_on(tmp_path, demo_log, site.url.rstrip("/"), model=NO_MODEL, person=NOBODY)
    finally:
        site.stop()
    (changed,) = (tmp_path / "logs-rerun").glob("*.jsonl")
    done = handrail_diff(demo_log, changed, "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    found = json.loads(done.stdout)
    first = found["differences"][0]
    assert first["a"]["target"][1] == RENAMED[0]
    recorded = [
        json.loads(line) for line in demo_log.read_text().splitlines() if '"type":"round"' in line
    ]
    at = next(r["round"] for r in recorded if r.get("target_name") == RENAMED[0])
    assert "first divergence (" in handrail_diff(demo_log, changed).stdout
    assert first["a"]["round"] == at
