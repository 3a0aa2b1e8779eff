"""Replay of audit logs: rounds shown, problems shown as such, search and jumps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.audit import AuditWriter, LogIndex
from core.audit.key import DATA_DIR_ENV
from tests.helpers.tui_driver import UiTestDriver, wait_until, write_driver_log
from tui.screens.replay import ReplayApp, ReplayScreen, entry_for
from tui.widgets.lazy_text import LazyText


def make_app(path: Path, tmp_path: Path, *, follow: bool = False) -> ReplayApp:
    return ReplayApp(path, follow=follow, config_dir=tmp_path / "config", persist_theme=False)


def screen_of(app: ReplayApp) -> ReplayScreen:
    assert app.replay_screen is not None
    return app.replay_screen


async def test_replay_shows_the_first_round_and_verifies(tmp_path: Path) -> None:
    log = await write_driver_log(tmp_path / "run.jsonl")
    app = make_app(log, tmp_path)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(
            pilot, lambda: app.replay_screen is not None and app.replay_screen.scan_done
        )
        screen = screen_of(app)
        await wait_until(pilot, lambda: screen.verify_report is not None)
        assert screen.verify_report is not None and screen.verify_report.ok
        kinds = [entry.kind for entry in screen.rows.entries]
        assert kinds == ["start", "round", "round", "round", "end"]
        assert screen.first_round_shown_at is not None
        assert screen.timeline.cursor == 1
        assert 'Typed "Paris"' in screen.panes.pane("result").plain
        assert "verified" in str(screen.header.render())


async def test_torn_last_line_and_junk_lines_are_rows_not_crashes(tmp_path: Path) -> None:
    log = await write_driver_log(tmp_path / "run.jsonl")
    lines = log.read_bytes().splitlines(keepends=True)
    junk = [b"this is not json [/path] [bold]\n", b"[1, 2, 3]\n"]
    torn = lines[-1][: len(lines[-1]) // 2]  # the run_end record, cut mid-line
    log.write_bytes(b"".join(lines[:2] + junk + lines[2:-1]) + torn)
    app = make_app(log, tmp_path)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(
            pilot, lambda: app.replay_screen is not None and app.replay_screen.scan_done
        )
        screen = screen_of(app)
        entries = screen.rows.entries
        problems = [entry for entry in entries if entry.kind == "problem"]
        assert [p.row.label.split(":")[0] for p in problems] == [
            "line 3 is not JSON",
            "line 4 is JSON but not an object",
            "line 10 is torn (the writer stopped mid-line)",
        ]
        assert all(p.row.meaning == "problem" for p in problems)
        # Jumping to errors visits the problem rows; showing them does not crash.
        screen.select_row(0)
        await pilot.press("e")
        assert entries[screen.timeline.cursor].kind == "problem"
        assert "this is not json [/path] [bold]" in screen.panes.pane("digest").plain
        await wait_until(pilot, lambda: screen.verify_report is not None)
        assert screen.verify_report is not None and not screen.verify_report.ok
        assert app.is_running


def notices(app: ReplayApp) -> list[str]:
    return [n.message for n in app._notifications]


async def test_search_and_jumps(tmp_path: Path) -> None:
    driver = UiTestDriver()
    log = await write_driver_log(tmp_path / "run.jsonl", driver)
    app = make_app(log, tmp_path)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(
            pilot, lambda: app.replay_screen is not None and app.replay_screen.scan_done
        )
        screen = screen_of(app)
        await pilot.press("slash")
        await pilot.press(*"search trains", "enter")
        entry = screen.rows.entries[screen.timeline.cursor]
        assert entry.kind == "round" and entry.round == 2
        assert notices(app)[-1] == "match 1/1"
        await pilot.press("n")  # only one match: stays, and says it went round
        assert screen.rows.entries[screen.timeline.cursor].round == 2
        assert notices(app)[-1] == "match 1/1, from the top again"
        # A word in every round: which of how many, forwards and back, round the ends.
        await pilot.press("slash", *"params", "enter")  # from round 2
        assert notices(app)[-1] == "match 3/3"
        await pilot.press("n")
        assert notices(app)[-1] == "match 1/3, from the top again"
        assert screen.rows.entries[screen.timeline.cursor].round == 1
        await pilot.press("N")
        assert notices(app)[-1] == "match 3/3, from the bottom again"
        screen.select_row(0)
        await pilot.press("a")  # next approval by the person
        assert screen.rows.entries[screen.timeline.cursor].round == 1


async def test_follow_picks_up_appended_lines_and_completes_a_torn_tail(tmp_path: Path) -> None:
    log = await write_driver_log(tmp_path / "run.jsonl")
    lines = log.read_bytes().splitlines(keepends=True)
    # start, intent 1, round 1, and half of intent 2
    log.write_bytes(b"".join(lines[:3]) + lines[3][:40])
    app = make_app(log, tmp_path, follow=True)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(
            pilot, lambda: app.replay_screen is not None and app.replay_screen.scan_done
        )
        screen = screen_of(app)
        assert screen.rows.entries[-1].kind == "problem"
        with log.open("ab") as out:
            out.write(lines[3][40:])
            out.write(b"".join(lines[4:]))
        await wait_until(pilot, lambda: screen.rows.entries[-1].kind == "end", timeout=5)
        assert [e.kind for e in screen.rows.entries] == ["start", "round", "round", "round", "end"]
        assert screen.timeline.cursor == len(screen.rows.entries) - 1  # following


def test_an_intent_without_its_round_is_unknown(tmp_path: Path) -> None:
    record = {"type": "intent", "round": 4, "action": {"name": "click", "params": {"index": 3}}}
    entry = entry_for(9, record)
    assert entry.kind == "intent"
    assert entry.row.meaning == "unknown"
    assert "no result recorded" in entry.row.label


async def test_missing_file_is_reported(tmp_path: Path) -> None:
    app = make_app(tmp_path / "nope.jsonl", tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause(0.1)
        assert app.is_running  # a notification, not a crash


def test_log_index_reads_what_we_wrote(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps({"type": "run_start", "task": "t"}) + "\n")
    with LogIndex(path) as index:
        assert index.scan_all() == 1


async def test_a_reply_of_megabytes_shows_its_start_and_scrolls_to_its_end(
    tmp_path: Path,
) -> None:
    reply = "FIRST LINE of the reply\n" + "the model goes on and on\n" * 80_000 + "LAST LINE"
    path = tmp_path / "long.jsonl"
    with AuditWriter(path) as writer:
        writer.write({"type": "run_start", "schema": 2, "task": "read", "settings": {}})
        writer.write({"type": "round", "round": 1, "action": {"name": "wait", "params": {}},
                      "model_output": [{"type": "text", "text": reply}],
                      "result": {"ok": True, "message": "waited"}})  # fmt: skip
        writer.write({"type": "run_end", "outcome": "success"})
    app = make_app(path, tmp_path)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: screen_of(app).first_round_shown_at is not None)
        await pilot.pause()
        long_text = screen_of(app).panes.pane("model").query_one(LazyText)

        def on_screen() -> str:
            return "\n".join(long_text.render_line(y).text for y in range(long_text.size.height))

        assert "FIRST LINE of the reply" in on_screen()
        long_text.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        assert "LAST LINE" in on_screen() and "FIRST LINE" not in on_screen()


async def test_a_log_from_another_machine_says_its_seal_was_not_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = await write_driver_log(tmp_path / "run.jsonl")
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "another-machine"))
    app = make_app(log, tmp_path)
    async with app.run_test(size=(200, 40)) as pilot:
        await wait_until(pilot, lambda: screen_of(app).verify_report is not None)
        await pilot.pause()
        header = str(screen_of(app).header.render())
        assert "seal not checked (no key)" in header and "sealed (" not in header
