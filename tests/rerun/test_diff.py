"""``handrail diff``: two runs compared step by step, on what they did rather than on
indices; a run against its own rerun is equivalent, against a run on a changed site it
diverges at the changed step."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from core.rerun.diff import diff_runs, steps_of
from tests.helpers.cli import handrail
from tests.helpers.fake_anthropic import FakeAnthropic
from tests.helpers.site_server import FixtureSite
from tests.rerun.test_rerun import PARCELS, click_named, rerun_on
from tests.rerun.test_rerun import parcel_log as parcel_log  # a fixture, shared


def round_(n: int, name: str, element: str | None, url: str, **more: Any) -> dict[str, Any]:
    params = more.pop("params", {})
    return {
        "type": "round",
        "round": n,
        "url": url,
        "observation": f"<browser_state>\nURL: {url}\n\n{element or ''}\n</browser_state>",
        "action": {"name": name, "params": params, "reason": "r"},
        "element": element,
        "approval": {"decision": more.pop("decision", "auto"), "by": "policy"},
        "result": {"ok": more.pop("ok", True)},
    }


def test_steps_align_on_what_they_did_not_on_indices_and_waits_do_not_count() -> None:
    a = [
        {"type": "run_start", "run_id": "a"},
        round_(1, "type", '[3]<input placeholder="City">', "http://x:1/f", params={"index": 3, "text": "Lyon"}),
        round_(2, "click", "[5]<button>Send</button>", "http://x:1/f", params={"index": 5}),
        {"type": "run_end", "outcome": "success"},
    ]  # fmt: skip
    b = [
        {"type": "run_start", "run_id": "b"},
        round_(1, "wait", None, "http://y:2/f", params={"seconds": 1}),
        round_(2, "type", '[9]<input placeholder="City">', "http://y:2/f", params={"index": 9, "text": "Lyon"}),
        round_(3, "click", "[12]<button>Send</button>", "http://y:2/f", params={"index": 12}),
        {"type": "run_end", "outcome": "success"},
    ]  # fmt: skip
    same = diff_runs(steps_of(a), steps_of(b))
    assert same.equivalent and same.same_steps == 2
    c = [*b[:3], round_(3, "click", "[12]<button>Cancel</button>", "http://y:2/f"), b[-1]]
    c[-1] = {"type": "run_end", "outcome": "failure"}
    other = diff_runs(steps_of(a), steps_of(c))
    assert not other.equivalent and other.outcomes_differ
    first = other.first
    assert first is not None and first.kinds == ("action",)
    assert first.a is not None and first.a.target == ("button", "Send", "")
    assert first.b is not None and first.b.target == ("button", "Cancel", "")
    d = [*b[:3], round_(3, "click", "[12]<button>Send</button>", "http://y:2/g", ok=False), b[-1]]
    moved = diff_runs(steps_of(a), steps_of(d))
    assert moved.first is not None and moved.first.kinds == ("page", "outcome")


def handrail_diff(a: Path, b: Path, *more: str) -> subprocess.CompletedProcess[str]:
    return handrail("diff", str(a), str(b), *more, timeout=60)


@pytest.mark.slow
def test_a_run_and_its_rerun_are_equivalent_and_a_changed_site_diverges_where_it_changed(
    tmp_path: Path,
    parcel_log: Path,
    fake: FakeAnthropic,
) -> None:
    same_site = FixtureSite(root=PARCELS / "original")
    renamed = FixtureSite(root=PARCELS / "renamed")
    try:
        rerun_on(tmp_path / "same", parcel_log, same_site.origin)
        fake.respond_with(click_named("Next: delivery options"))
        rerun_on(tmp_path / "renamed", parcel_log, renamed.origin)
    finally:
        same_site.stop()
        renamed.stop()
    (again,) = (tmp_path / "same" / "logs-rerun").glob("*.jsonl")
    (changed,) = (tmp_path / "renamed" / "logs-rerun").glob("*.jsonl")

    equivalent = handrail_diff(parcel_log, again)
    assert equivalent.returncode == 0, equivalent.stdout + equivalent.stderr
    assert "equivalent: the same 6 steps" in equivalent.stdout

    diverged = handrail_diff(parcel_log, changed, "--json")
    assert diverged.returncode == 1, diverged.stderr
    found = json.loads(diverged.stdout)
    assert not found["equivalent"] and found["different"]["action"] >= 1
    first = found["differences"][0]
    assert first["a"]["target"][1] == "Continue to delivery"
    assert first["b"]["target"][1] == "Next: delivery options"
    text = handrail_diff(parcel_log, changed).stdout
    assert "first divergence (action): A round 4, B round 4" in text


def test_an_input_that_is_not_a_verifiable_log_is_exit_2(tmp_path: Path) -> None:
    junk = tmp_path / "junk.jsonl"
    junk.write_text('{"type": "run_start"}\nnot json\n')
    done = handrail_diff(junk, junk)
    assert done.returncode == 2 and "A (" in done.stderr and "not a verifiable" in done.stderr


def _sealed(path: Path, run_id: str, records: list[dict[str, Any]]) -> Path:
    from core.audit import AuditWriter

    with AuditWriter(path, run_id=run_id) as writer:
        writer.write({"type": "run_start", "schema": 1, "run_id": run_id, "task": "t",
                      "model": "m", "settings": {}, "browser": "b", "max_rounds": 5})  # fmt: skip
        for record in records:
            writer.write({**record, "run_id": run_id})
        writer.write({"type": "run_end", "run_id": run_id, "outcome": "success"})
    return path


def test_a_log_from_elsewhere_shows_its_words_and_never_sends_its_terminal_codes(
    tmp_path: Path,
) -> None:
    """A page named its button, and its URL, with terminal codes; both runs' logs verify."""
    hostile = "[4]<button>Pay\x1b]52;c;SGVsbG8=\x07\x1b[2J</button>"
    a = _sealed(tmp_path / "a.jsonl", "a", [round_(1, "click", hostile, "http://x/\x1b[31mpay")])
    b = _sealed(tmp_path / "b.jsonl", "b", [round_(1, "click", "[4]<button>Pay</button>", "http://x/pay")])  # fmt: skip
    for extra in ((), ("--json",)):
        done = handrail_diff(a, b, *extra)
        assert done.returncode == 1, done.stderr
        assert "\x1b" not in done.stdout and "\x07" not in done.stdout
        assert "Pay" in done.stdout


async def test_replay_against_marks_the_divergent_round_and_shows_the_other_runs_step(
    tmp_path: Path,
) -> None:
    from tests.helpers.tui_driver import wait_until
    from tui.screens.replay import ReplayApp

    city = '[3]<input placeholder="City">'
    a = _sealed(tmp_path / "a.jsonl", "a", [
        round_(1, "type", city, "http://x/f", params={"index": 3, "text": "Lyon"}),
        round_(2, "click", "[5]<button>Send</button>", "http://x/f"),
    ])  # fmt: skip
    b = _sealed(tmp_path / "b.jsonl", "b", [
        round_(1, "type", city, "http://y/f", params={"index": 3, "text": "Lyon"}),
        round_(2, "click", "[5]<button>Cancel</button>", "http://y/f"),
    ])  # fmt: skip
    app = ReplayApp(a, against=b, config_dir=tmp_path / "config", persist_theme=False)
    async with app.run_test(size=(160, 44)) as pilot:
        await wait_until(pilot, lambda: bool(app.replay_screen and app.replay_screen._against))
        screen = app.replay_screen
        assert screen is not None
        labels = [screen.rows.row(i).label for i in range(len(screen.rows))]
        assert [x.startswith("≠") for x in labels if "click" in x or "type" in x] == [False, True]
        screen.timeline.focus()
        await pilot.press("home", "right_square_bracket")
        await pilot.pause()
        entry = screen.rows.entries[screen.timeline.cursor]
        assert entry.round == 2
        shown = screen.panes.pane("model").plain
        assert "b.jsonl, round 2 (differs: action)" in shown and "Cancel" in shown
        await pilot.press("left_square_bracket")  # no earlier divergence: it stays
        await pilot.pause()
        assert screen.rows.entries[screen.timeline.cursor].round == 2
