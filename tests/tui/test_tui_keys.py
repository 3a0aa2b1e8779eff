"""Keys and screen edges of the observatory: ctrl+c, the finish notice, the footer at 80 and
120 columns, timeline rows at 80 columns, the start-up and closing states."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Static
from textual.widgets._footer import FooterKey

from core.run.events import EventSink, RunFinished, Supervisor
from tests.helpers.tui_driver import (
    UiTestDriver,
    booking_rounds,
    shown_run_screen,
    still_clock,
    wait_until,
    write_fixed_log,
)
from tui.app import HandrailApp
from tui.observatory import ObservatoryApp
from tui.screens.approval import ApprovalScreen
from tui.screens.confirm import ConfirmScreen
from tui.screens.help_screen import HelpScreen
from tui.screens.human_pause import HumanPauseScreen
from tui.screens.replay import ReplayApp
from tui.screens.rounds_screen import RoundsScreen
from tui.widgets.footer import HandrailFooter
from tui.widgets.panes import Pane
from tui.widgets.timeline import RoundTimeline

SIZES = [(80, 24), (120, 40)]


def live_app(driver: Any, tmp_path: Path, clock: Callable[[], float] = still_clock) -> HandrailApp:
    return HandrailApp(driver, config_dir=tmp_path, clock=clock, persist_theme=False)


def holding_driver() -> UiTestDriver:
    return UiTestDriver(rounds=[replace(r, ask=None) for r in booking_rounds()[:2]], hold=True)


def finishing_driver() -> UiTestDriver:
    return UiTestDriver(rounds=[replace(r, ask=None) for r in booking_rounds()])


# --- ctrl+c ---------------------------------------------------------------------------------


async def test_ctrl_c_during_a_live_run_asks_then_aborts_with_130(tmp_path: Path) -> None:
    driver = holding_driver()
    app = live_app(driver, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "hold")
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert not driver.cancelled  # nothing happens before the answer
        await pilot.press("y")
        await wait_until(pilot, lambda: driver.cancelled)
    assert app.return_value == 130


def pausing_driver() -> UiTestDriver:
    [first, *_] = booking_rounds()
    return UiTestDriver(rounds=[replace(first, ask=None, human="password", human_detail="[3]")])


# The modal screens a live run shows: Textual asks only the top modal for a key's binding,
# so each must pass ctrl+c on, or it does nothing while the person is being asked.
async def _ask_at_approval(pilot: Pilot[Any], driver: UiTestDriver) -> None:
    await wait_until(pilot, lambda: driver.waiting == "approval")
    assert isinstance(pilot.app.screen, ApprovalScreen)


async def _ask_at_hand_over(pilot: Pilot[Any], driver: UiTestDriver) -> None:
    await wait_until(pilot, lambda: driver.waiting == "human")
    assert isinstance(pilot.app.screen, HumanPauseScreen)


async def _ask_in_help(pilot: Pilot[Any], driver: UiTestDriver) -> None:
    await wait_until(pilot, lambda: driver.waiting == "hold")
    await pilot.press("question_mark")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, HelpScreen))


@pytest.mark.parametrize(
    ("make_driver", "reach"),
    [
        (UiTestDriver, _ask_at_approval),
        (pausing_driver, _ask_at_hand_over),
        (holding_driver, _ask_in_help),
    ],
    ids=["approval", "hand-over", "help"],
)
async def test_ctrl_c_on_a_modal_screen_asks_then_aborts_with_130(
    tmp_path: Path, make_driver: Any, reach: Any
) -> None:
    driver = make_driver()
    app = live_app(driver, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await reach(pilot, driver)
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert not driver.cancelled and not driver.decisions  # nothing before the answer
        await pilot.press("y")
        await wait_until(pilot, lambda: driver.cancelled)
    assert not driver.decisions and not driver.human_responses  # aborted, not answered
    assert app.return_value == 130


async def test_ctrl_c_answered_no_leaves_the_run_going(tmp_path: Path) -> None:
    driver = holding_driver()
    app = live_app(driver, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "hold")
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
        assert app.run_screen is not None and app.run_screen.running
        assert not driver.cancelled


async def test_ctrl_c_after_the_run_quits_at_once_with_the_runs_code(tmp_path: Path) -> None:
    driver = finishing_driver()
    app = live_app(driver, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.exit_code is not None)
        await wait_until(pilot, lambda: app.run_screen is not None and not app.run_screen.closing)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)
    assert app.return_value == 0


async def test_ctrl_c_in_replay_quits(tmp_path: Path) -> None:
    log = write_fixed_log(tmp_path / "run.jsonl")
    app = ReplayApp(log, config_dir=tmp_path, persist_theme=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+c")
    assert app.return_value == 0


# --- the finish notice ----------------------------------------------------------------------


def _finish_notices(app: ObservatoryApp) -> list[str]:
    return [n.message for n in app._notifications if n.message.startswith("Run finished")]


async def test_the_finish_notice_is_shown_once_says_the_answer_once_and_times_out(
    tmp_path: Path,
) -> None:
    async def finish(sink: EventSink, _supervisor: Supervisor) -> RunFinished:
        # The agent's answer falls back to its reason: both are the same text.
        finished = RunFinished("gave_up", "five failures in a row", 7, 1, "five failures in a row")
        sink(finished)
        return finished

    app = live_app(finish, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.exit_code is not None)
        await pilot.pause()
        (notice,) = _finish_notices(app)
        assert notice.count("five failures in a row") == 1
        (shown,) = [n for n in app._notifications if n.message == notice]
        assert shown.timeout == app.run_screen.FINISH_TOAST_S if app.run_screen else False


async def test_escape_closes_the_finish_notice(tmp_path: Path) -> None:
    driver = finishing_driver()
    app = live_app(driver, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: bool(_finish_notices(app)))
        await pilot.press("escape")
        await wait_until(pilot, lambda: not _finish_notices(app))


# --- footer and timeline at 80 and 120 columns ----------------------------------------------


async def _footer_keys(pilot: Pilot[Any]) -> dict[str, tuple[int, int]]:
    """Each footer key's description and its cells on screen, once laid out."""

    def laid_out() -> bool:
        keys = list(pilot.app.screen.query(FooterKey))
        return bool(keys) and all(k.region.width for k in keys if k.display)

    await wait_until(pilot, laid_out)
    return {
        k.description: (k.region.x, k.region.right)
        for k in pilot.app.screen.query(FooterKey)
        if not k.has_class("-command-palette")
    }


def _palette_left(pilot: Pilot[Any]) -> int:
    palette = [k for k in pilot.app.screen.query(FooterKey) if k.has_class("-command-palette")]
    return min((k.region.x for k in palette), default=pilot.app.size.width)


@pytest.mark.parametrize("size", SIZES)
async def test_live_footer_always_shows_help_and_quit(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    driver = holding_driver()
    app = live_app(driver, tmp_path)
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "hold")
        keys = await _footer_keys(pilot)
        for name in ("Help", "Quit"):
            assert keys[name][1] <= _palette_left(pilot), (name, keys)


@pytest.mark.parametrize("size", SIZES)
async def test_replay_footer_always_shows_help_and_quit(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    log = write_fixed_log(tmp_path / "run.jsonl")
    app = ReplayApp(log, config_dir=tmp_path, persist_theme=False)
    async with app.run_test(size=size) as pilot:
        keys = await _footer_keys(pilot)
        for name in ("Help", "Quit"):
            assert keys[name][1] <= _palette_left(pilot), (name, keys)


async def test_timeline_rows_at_80_columns_show_the_action_and_its_target(tmp_path: Path) -> None:
    driver = holding_driver()
    app = live_app(driver, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "hold")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RoundsScreen)
        timeline = screen.query_one(RoundTimeline)
        row = timeline.render_line(0).text
        assert "type [13] From" in row, row


# --- start-up and closing states ------------------------------------------------------------


async def test_the_screen_says_starting_chrome_before_the_first_round(tmp_path: Path) -> None:
    go = asyncio.Event()

    async def slow_start(sink: EventSink, supervisor: Supervisor) -> RunFinished:
        app.show_phase("starting Chrome…")
        await go.wait()
        return await holding_driver()(sink, supervisor)

    app = HandrailApp(
        slow_start,
        config_dir=tmp_path,
        clock=still_clock,
        persist_theme=False,
        task="book a train",
    )
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await shown_run_screen(pilot, app)
        await wait_until(pilot, lambda: screen.header_facts().state == "starting Chrome…")
        assert screen.header_facts().task == "book a train"
        go.set()


async def test_the_run_starts_once_the_observatory_is_on_screen(tmp_path: Path) -> None:
    # The run's start-up (core.run.session, the model's SDK, Chrome) competes for the CPU:
    # begun before the first frame, it kept the terminal blank for a second or more.
    on_screen_at_start: list[tuple[bool, bool, str]] = []

    async def start(sink: EventSink, supervisor: Supervisor) -> RunFinished:
        screen = await shown_run_screen(pilot, app)
        digest = screen.panes.pane("digest")
        on_screen_at_start.append(
            (bool(screen.header.region.area), bool(digest.region.area), digest.plain)
        )
        return await holding_driver()(sink, supervisor)

    app = live_app(start, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: bool(on_screen_at_start))
    assert on_screen_at_start == [(True, True, "waiting for the first round")]


async def test_quitting_waits_for_chrome_to_close_and_says_so(tmp_path: Path) -> None:
    closed = asyncio.Event()

    async def run_then_close(sink: EventSink, supervisor: Supervisor) -> RunFinished:
        try:
            return await holding_driver()(sink, supervisor)
        finally:
            app.show_phase("closing Chrome…")
            await closed.wait()
            app.show_phase("closed")

    app = live_app(run_then_close, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await shown_run_screen(pilot, app)
        await wait_until(pilot, lambda: screen.run_view.state == "thinking")
        await pilot.press("q")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_until(pilot, lambda: "closing Chrome…" in screen.header_facts().state)
        assert app.is_running  # the screen stays while Chrome closes
        closed.set()
    assert app.return_value == 130


# --- replay --follow's verified badge ---------------------------------------------------------


async def test_follow_re_verifies_as_records_arrive_and_when_junk_appears(tmp_path: Path) -> None:
    from tests.helpers.tui_driver import write_driver_log

    log = await write_driver_log(tmp_path / "run.jsonl")
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:3]))  # start, intent 1, round 1: a run still going
    app = ReplayApp(log, follow=True, config_dir=tmp_path, persist_theme=False)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.replay_screen
        assert screen is not None

        def records() -> int:
            report = screen.verify_report
            return report.records if report is not None else -1

        await wait_until(pilot, lambda: records() == 3)
        assert "run incomplete" in screen.header_facts().state
        with log.open("ab") as out:
            out.write(b"".join(lines[3:]))
        await wait_until(pilot, lambda: records() == len(lines))
        assert screen.header_facts().state.startswith("replay · verified")
        assert "run incomplete" not in screen.header_facts().state
        with log.open("ab") as out:
            out.write(b"<html>not a record</html>\n")
        await wait_until(pilot, lambda: "NOT verified" in screen.header_facts().state)


# --- the palette's Screenshot ------------------------------------------------------------------


async def test_the_palettes_screenshot_names_the_file_it_saved(tmp_path: Path) -> None:
    driver = holding_driver()
    app = live_app(driver, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "hold")
        saved = app.save_screen_picture(tmp_path)
        assert saved is not None and saved.read_text().startswith("<svg")
        await wait_until(pilot, lambda: any(str(saved) in n.message for n in app._notifications))


async def test_a_screenshot_that_cannot_be_saved_says_where_and_why(tmp_path: Path) -> None:
    driver = holding_driver()
    app = live_app(driver, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "hold")
        assert app.save_screen_picture(tmp_path / "missing" / "folder") is None
        await wait_until(pilot, lambda: any(n.title == "Screenshot" for n in app._notifications))
        (note,) = [n for n in app._notifications if n.title == "Screenshot"]
        assert str(tmp_path / "missing" / "folder") in note.message
        assert "No such file or directory" in note.message


async def test_the_palette_offers_our_screenshot(tmp_path: Path) -> None:
    driver = holding_driver()
    app = live_app(driver, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "hold")
        (shot,) = [c for c in app.get_system_commands(app.screen) if c.title == "Screenshot"]
        assert str(app.screenshot_dir()) in shot.help


# --- the header's clock -----------------------------------------------------------------------


async def test_under_the_approval_the_header_clock_stands_still(tmp_path: Path) -> None:
    # Under a modal, Textual repaints the whole modal (the approval, its picture included)
    # for any change beneath it, so the header does not move there at all (it says so, and
    # the approval counts its own wait: test_the_header_says_when_its_clock_stands_still...).
    now = [1000.0]
    driver = UiTestDriver()
    app = live_app(driver, tmp_path, clock=lambda: now[0])
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "approval")
        screen = app.run_screen
        assert screen is not None
        screen._tick()  # the timer's call
        shown = screen.header.facts
        for step in (5, 11, 60):
            now[0] += step
            screen._tick()
            assert screen.header.facts == shown


async def test_with_nothing_over_the_run_the_header_clock_moves_every_second(
    tmp_path: Path,
) -> None:
    now = [1000.0]
    driver = holding_driver()
    app = live_app(driver, tmp_path, clock=lambda: now[0])
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "hold")
        screen = app.run_screen
        assert screen is not None and app.screen is screen
        screen._tick()
        shown = screen.header.facts.elapsed_s
        assert shown is not None
        now[0] += 1
        screen._tick()
        assert screen.header.facts.elapsed_s == shown + 1


async def test_the_model_pane_counts_the_time_while_the_model_thinks(tmp_path: Path) -> None:
    now = [100.0]
    driver = UiTestDriver(rounds=[replace(booking_rounds()[0], ask=None)], thinking=True)
    app = live_app(driver, tmp_path, clock=lambda: now[0])
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await shown_run_screen(pilot, app)
        await wait_until(pilot, lambda: driver.waiting == "model")
        pane = screen.query_one("#pane-model", Pane)
        await wait_until(pilot, lambda: "the model is thinking · 0.0 s" in pane.plain)
        now[0] += 3.25
        await wait_until(pilot, lambda: "the model is thinking · 3.2 s" in pane.plain)
        # The round before it, once picked, shows its reply and how long the model took.
        await pilot.press("up")
        await wait_until(pilot, lambda: "fill in where the trip starts" in pane.plain)
        assert "0.9 s" in str(pane.border_subtitle)
        await pilot.press("down")
        await wait_until(pilot, lambda: "the model is thinking · 3.2 s" in pane.plain)


# --- one table per context: keys, footer and help agree -------------------------------------


def _help_text(app: Any) -> str:
    screen = app.screen
    assert isinstance(screen, HelpScreen)
    return str(screen.query_one(Static).render())


async def _footer_shown(pilot: Pilot[Any], screen: Any) -> list[str]:
    await pilot.pause()
    footer = screen.query_one(HandrailFooter)
    if not footer.display:
        return []
    return [str(k.description) for k in footer.query(FooterKey)]


@pytest.mark.parametrize(
    ("make_driver", "reach", "title", "key"),
    [
        (UiTestDriver, _ask_at_approval, "Approval", "Edit, then approve"),
        (pausing_driver, _ask_at_hand_over, "Paused for you", "Resume"),
    ],
    ids=["approval", "hand-over"],
)
async def test_question_mark_on_a_decision_lists_its_keys_and_the_footer_stands_aside(
    tmp_path: Path, make_driver: Any, reach: Any, title: str, key: str
) -> None:
    driver = make_driver()
    app = live_app(driver, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        run = await shown_run_screen(pilot, app)
        await reach(pilot, driver)
        # The run screen's footer (t Theme, f Follow live...) does not reach through the modal.
        assert await _footer_shown(pilot, run) == []
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        text = _help_text(app)
        assert title in text and key in text and "ctrl+c" in text, text
        assert "Everywhere" not in text and "Theme" not in text, text
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, HelpScreen))


async def test_after_the_run_help_and_footer_offer_no_abort(tmp_path: Path) -> None:
    driver = finishing_driver()
    app = live_app(driver, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        run = await shown_run_screen(pilot, app)
        await wait_until(pilot, lambda: run.exit_code is not None)
        app.clear_notifications()
        assert "Abort run" not in await _footer_shown(pilot, run)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        text = _help_text(app)
        assert "Abort run" not in text and "Approval" not in text, text
        assert "Quit" in text


async def test_replay_without_follow_offers_no_follow_live(tmp_path: Path) -> None:
    log = write_fixed_log(tmp_path / "run.jsonl")
    app = ReplayApp(log, config_dir=tmp_path, persist_theme=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, RoundsScreen))
        assert "Follow live" not in await _footer_shown(pilot, app.screen)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        text = _help_text(app)
        assert "Follow live" not in text and "Search" in text, text
        # The key column is as wide as its widest keys: no key runs into its words.
        assert "up/down/pageup/pagedown  " in text, text


# --- one measure per time -------------------------------------------------------------------


async def test_a_round_shows_the_same_times_live_and_in_replay(tmp_path: Path) -> None:
    """The timeline's figure is the action's (850 ms) live and in replay, not the action
    live and the whole round in replay; the panes say what each time measures."""
    driver = holding_driver()
    app = live_app(driver, tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        run = await shown_run_screen(pilot, app)
        await wait_until(pilot, lambda: driver.waiting == "hold")
        live_row = run.source.row(0)
        run.select_row(0)
        await pilot.pause()
        live_result = str(run.panes.pane("result").border_subtitle)
        live_model = str(run.panes.pane("model").border_subtitle)
    log = write_fixed_log(tmp_path / "run.jsonl")
    replay_app = ReplayApp(log, config_dir=tmp_path, persist_theme=False)
    async with replay_app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: isinstance(replay_app.screen, RoundsScreen))
        screen = replay_app.screen
        assert isinstance(screen, RoundsScreen)
        rows = [screen.source.row(k) for k in range(len(screen.source))]
        first = next(r for r in rows if r.number == "1")
        screen.select_row(rows.index(first))
        await pilot.pause()
        replay_result = str(screen.panes.pane("result").border_subtitle)
        replay_model = str(screen.panes.pane("model").border_subtitle)
    assert live_row.duration == first.duration == "850ms"
    assert live_result == "action 0.8 s" or live_result == "action 0.9 s", live_result
    assert replay_result.startswith(live_result) and "round 1.9 s" in replay_result
    assert live_model.split(" · ")[0] == replay_model.split(" · ")[0] == "0.9 s"


async def test_the_header_says_when_its_clock_stands_still_and_the_dialog_counts(
    tmp_path: Path,
) -> None:
    now = [100.0]
    driver = UiTestDriver(rounds=[booking_rounds()[0]])
    app = live_app(driver, tmp_path, clock=lambda: now[0])
    async with app.run_test(size=(160, 45)) as pilot:
        run = await shown_run_screen(pilot, app)
        now[0] += 31
        await _ask_at_approval(pilot, driver)
        await pilot.pause()
        facts = run.header_facts()
        assert facts.elapsed_note == "when this dialog opened"
        stood = facts.elapsed_s
        dialog = app.screen.query_one("#approval-dialog")
        assert str(dialog.border_subtitle) == "waiting 00:00"
        now[0] += 42
        await wait_until(pilot, lambda: str(dialog.border_subtitle) == "waiting 00:42")
        assert run.header_facts().elapsed_s == stood  # the header does not move under it
        await pilot.press("a")
        await wait_until(pilot, lambda: not isinstance(app.screen, ApprovalScreen))
        facts = run.header_facts()
        assert facts.elapsed_note == "" and facts.elapsed_s is not None
        assert stood is not None and facts.elapsed_s >= stood + 42
