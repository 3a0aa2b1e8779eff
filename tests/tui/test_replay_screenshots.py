"""Replay's fifth pane: each round's screenshot from the run folder, checked against the log."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw
from textual.pilot import Pilot
from textual.widgets import Static

from core.audit import AuditWriter
from tests.helpers.tui_driver import booking_rounds, fixed_round_record, wait_until
from tui.screens.replay import ReplayApp

GREEN = (0x1A, 0x7F, 0x37)
REFUSED = (
    "no screenshot: the screenshot was refused: the page shows a frame from another site "
    "(http://127.0.0.2:9/) that handrail cannot read"
)


def page_picture() -> bytes:
    """A stand-in for a round's JPEG: a white page with a heading bar and a green button."""
    image = Image.new("RGB", (800, 500), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    draw.rectangle((40, 30, 500, 70), fill=(40, 40, 40))
    draw.rectangle((40, 200, 260, 260), fill=GREEN)
    data = io.BytesIO()
    image.save(data, format="JPEG", quality=80)
    return data.getvalue()


def write_log(tmp_path: Path) -> Path:
    """Round 1 has its picture in the run folder; round 2's mask was refused."""
    log = tmp_path / "run.jsonl"
    picture = page_picture()
    (tmp_path / "run" / "rounds").mkdir(parents=True)
    (tmp_path / "run" / "rounds" / "round-001.jpg").write_bytes(picture)
    rounds = booking_rounds()
    first = fixed_round_record(1, rounds[0])
    first["screenshot"] = {
        "file": "run/rounds/round-001.jpg",
        "sha256": hashlib.sha256(picture).hexdigest(),
    }
    second = fixed_round_record(2, rounds[1])
    second["screenshot"] = {"missing": REFUSED}
    with AuditWriter(log, run_id="run-ui-test") as writer:
        writer.write({"type": "run_start", "schema": 1, "run_id": "run-ui-test",
                      "ts": "2026-01-05T10:00:00+00:00", "task": "Find the cheapest train",
                      "model": "scripted plan: ui-test", "settings": {}, "browser": "launched",
                      "max_rounds": 20})  # fmt: skip
        writer.write(first)
        writer.write(second)
    return log


def replay(tmp_path: Path, log: Path) -> ReplayApp:
    return ReplayApp(log, config_dir=tmp_path / "config", persist_theme=False)


def on_row(app: ReplayApp, row: int) -> Any:
    async def run_before(pilot: Pilot[Any]) -> None:
        await wait_until(
            pilot, lambda: app.replay_screen is not None and app.replay_screen.scan_done
        )
        assert app.replay_screen is not None
        app.replay_screen.select_row(row)
        await pilot.pause(0.1)

    return run_before


def note(app: ReplayApp) -> str:
    assert app.replay_screen is not None
    shown = app.replay_screen.screenshot_pane.query_one("#screenshot-note", Static)
    return str(shown.render())


def test_the_round_screenshot_is_a_fifth_pane(snap_compare: Any, tmp_path: Path) -> None:
    app = replay(tmp_path, write_log(tmp_path))
    assert snap_compare(app, terminal_size=(160, 40), run_before=on_row(app, 1))


def test_at_80_columns_the_screenshot_is_tab_5(snap_compare: Any, tmp_path: Path) -> None:
    app = replay(tmp_path, write_log(tmp_path))

    async def run_before(pilot: Pilot[Any]) -> None:
        await on_row(app, 1)(pilot)
        await pilot.press("5")
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


async def test_a_refused_mask_is_said_in_the_pane(tmp_path: Path) -> None:
    app = replay(tmp_path, write_log(tmp_path))
    async with app.run_test(size=(160, 40)) as pilot:
        await on_row(app, 2)(pilot)
        assert note(app) == f"no screenshot for this round: {REFUSED}"


async def test_a_swapped_picture_is_not_shown(tmp_path: Path) -> None:
    log = write_log(tmp_path)
    swapped = Image.new("RGB", (800, 500), (255, 0, 0))
    swapped.save(tmp_path / "run" / "rounds" / "round-001.jpg", format="JPEG")
    app = replay(tmp_path, log)
    async with app.run_test(size=(160, 40)) as pilot:
        await on_row(app, 1)(pilot)
        assert "is not the file the log recorded" in note(app)
        assert not app.screen.query(".screenshot-image")


async def test_a_picture_outside_the_run_folder_is_not_read(tmp_path: Path) -> None:
    log = write_log(tmp_path)
    text = log.read_text().replace("run/rounds/round-001.jpg", "../outside.jpg")
    log.write_text(text)
    app = replay(tmp_path, log)
    async with app.run_test(size=(160, 40)) as pilot:
        await on_row(app, 1)(pilot)
        assert "lies outside this run's folder" in note(app)


async def test_at_120_columns_a_url_fits_and_z_shows_the_picture_whole(tmp_path: Path) -> None:
    """The screenshot pane takes a share of the width, not 42 columns: at 120x40 a URL stays
    on one line in the text panes (issue 27: it wrapped as `http://127.0.0`); `z` shows the
    focused pane alone, the picture drawn at its new width, and `z` again goes back."""
    app = replay(tmp_path, write_log(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await on_row(app, 1)(pilot)
        screen = app.replay_screen
        assert screen is not None
        digest = screen.panes.pane("digest")
        assert digest.content_size.width >= len("URL: http://127.0.0.1:32913/")
        shot = screen.screenshot_pane
        small = shot.query_one(".screenshot-image").size.width

        await pilot.press("5", "z")
        await wait_until(pilot, lambda: shot.query_one(".screenshot-image").size.width > 100)
        assert not screen.timeline.display and not digest.display
        assert shot.query_one(".screenshot-image").size.width > 4 * small

        await pilot.press("z")
        await wait_until(pilot, lambda: shot.query_one(".screenshot-image").size.width == small)
        assert screen.timeline.display and digest.display


async def test_at_80_columns_every_tab_is_shown_whole(tmp_path: Path) -> None:
    from textual.widgets import Tab, Tabs

    app = replay(tmp_path, write_log(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await on_row(app, 1)(pilot)
        for key in ("5", "1", "2"):
            await pilot.press(key)
            await pilot.pause()
            tabs = app.screen.query_one(Tabs)
            bar = tabs.query_one("#tabs-scroll")
            labels = [str(tab.label) for tab in tabs.query(Tab)]
            assert labels[0].startswith("1 ") and len(labels) == 5, labels
            # Nothing of the bar scrolled off: "1 Observation" was cut to "vation".
            assert bar.max_scroll_x == 0 and bar.scroll_x == 0, (labels, bar.virtual_size)
