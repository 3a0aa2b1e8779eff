"""The approval gate's keys: each test checks the decision object the run received."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.tui_driver import UiTestDriver, still_clock, wait_until
from tui.app import HandrailApp
from tui.screens.approval import ApprovalScreen


def make_app(driver: UiTestDriver, tmp_path: Path) -> HandrailApp:
    return HandrailApp(driver, config_dir=tmp_path, clock=still_clock, persist_theme=False)


async def test_a_approves(tmp_path: Path) -> None:
    driver = UiTestDriver()
    app = make_app(driver, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "approval")
        assert isinstance(app.screen, ApprovalScreen)
        await pilot.press("a")
        await wait_until(pilot, lambda: len(driver.decisions) == 1)
        decision = driver.decisions[0]
        assert decision.decision == "approved"
        assert decision.by == "person"
        assert decision.approve_kind_for_run is False


async def test_y_approves_too(tmp_path: Path) -> None:
    driver = UiTestDriver()
    app = make_app(driver, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "approval")
        await pilot.press("y")
        await wait_until(pilot, lambda: len(driver.decisions) == 1)
        assert driver.decisions[0].decision == "approved"


async def test_deny_with_a_note_sends_the_note(tmp_path: Path) -> None:
    driver = UiTestDriver()
    app = make_app(driver, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "approval")
        await pilot.press("d")
        # Letters typed now belong to the note, not to the a/d/e keys.
        await pilot.press(*"type Lyon, not Paris")
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(driver.decisions) == 1)
        decision = driver.decisions[0]
        assert decision.decision == "denied"
        assert decision.note == "type Lyon, not Paris"
        # The denied round shows as denied in the timeline.
        await wait_until(
            pilot, lambda: app.run_screen is not None and bool(app.run_screen.run_view.rounds)
        )
        assert app.run_screen is not None
        assert app.run_screen.run_view.rounds[0].meaning() == "denied"


async def test_n_denies_without_a_note(tmp_path: Path) -> None:
    driver = UiTestDriver()
    app = make_app(driver, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "approval")
        await pilot.press("n", "enter")
        await wait_until(pilot, lambda: len(driver.decisions) == 1)
        assert driver.decisions[0].decision == "denied"
        assert driver.decisions[0].note is None


async def test_escape_leaves_the_note_and_decides_nothing(tmp_path: Path) -> None:
    driver = UiTestDriver()
    app = make_app(driver, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "approval")
        await pilot.press("d", "x", "escape")
        await pilot.pause(0.1)
        assert driver.decisions == []
        assert isinstance(app.screen, ApprovalScreen)
        await pilot.press("a")
        await wait_until(pilot, lambda: len(driver.decisions) == 1)
        assert driver.decisions[0].decision == "approved"


async def test_edit_changes_the_typed_text(tmp_path: Path) -> None:
    driver = UiTestDriver()
    app = make_app(driver, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "approval")
        await pilot.press("e")
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        # The first parameter is the index (13), the second the text ("Paris").
        text_input = screen.query_one("#edit-1")
        text_input.focus()  # focusing selects the whole value: typing replaces it
        await pilot.pause()
        await pilot.press(*"Lyon Part-Dieu")
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(driver.decisions) == 1)
        decision = driver.decisions[0]
        assert decision.decision == "edited"
        assert decision.edited_params == {"index": 13, "text": "Lyon Part-Dieu", "clear": True}


async def test_edit_rejects_a_bad_json_value(tmp_path: Path) -> None:
    driver = UiTestDriver()
    app = make_app(driver, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "approval")
        await pilot.press("e")
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        screen.query_one("#edit-0").focus()  # index: a number
        await pilot.pause()
        await pilot.press(*"thirteen", "enter")
        await pilot.pause(0.1)
        assert driver.decisions == []
        assert "not a JSON value" in str(screen.query_one("#approval-error").render())


async def test_shift_a_approves_the_kind_for_the_run(tmp_path: Path) -> None:
    driver = UiTestDriver()
    app = make_app(driver, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "approval")
        await pilot.press("A")
        await wait_until(pilot, lambda: len(driver.decisions) == 1)
        assert driver.decisions[0].decision == "approved"
        assert driver.decisions[0].approve_kind_for_run is True


async def test_a_risky_request_says_so_and_does_not_offer_approving_its_kind(
    tmp_path: Path,
) -> None:
    driver = UiTestDriver()
    app = make_app(driver, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "approval")
        await pilot.press("a")
        await wait_until(pilot, lambda: driver.waiting == "approval" and len(driver.decisions) == 1)
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        assert screen.request.risky
        assert screen.has_class("-risky")
        said = str(screen.query_one("#approval-risky").render())
        assert "RISKY" in said and "approving all of its kind does not apply" in said
        assert "approve every" not in str(screen.query_one("#approval-keys").render())
        await pilot.press("A")  # not offered, and not taken
        await pilot.pause()
        assert len(driver.decisions) == 1 and app.screen is screen
        await pilot.press("a")
        await wait_until(pilot, lambda: len(driver.decisions) == 2)
        assert driver.decisions[1].approve_kind_for_run is False


async def test_x_aborts_the_run(tmp_path: Path) -> None:
    driver = UiTestDriver()
    app = make_app(driver, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "approval")
        await pilot.press("x")
        await wait_until(pilot, lambda: app.exit_code is not None)
        assert driver.decisions[0].decision == "abort"
        assert app.exit_code == 130
        assert app.run_screen is not None
        assert app.run_screen.run_view.finished is not None
        assert app.run_screen.run_view.finished.outcome == "aborted"


async def test_aborting_from_the_run_screen_cancels_the_run(tmp_path: Path) -> None:
    driver = UiTestDriver(rounds=[], hold=True)
    app = make_app(driver, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "hold")
        await pilot.press("x")  # asks first
        await pilot.pause(0.05)
        assert app.exit_code is None
        await pilot.press("y")
        await wait_until(pilot, lambda: app.exit_code is not None)
        assert driver.cancelled
        assert app.exit_code == 130
        # Who ended it reaches the run (its run_end reason), not a bare cancellation.
        assert driver.cancelled_by == "the person aborted the run"


async def test_quitting_during_approval_cancels_and_takes_the_modal_down(tmp_path: Path) -> None:
    driver = UiTestDriver()
    app = make_app(driver, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "approval")
        await app.action_quit()  # ctrl+q / q while the run waits
        await pilot.pause(0.05)
        await pilot.press("y")
        await wait_until(pilot, lambda: driver.cancelled)
    assert app.return_value == 130


async def test_finished_run_exit_code_is_the_runs(tmp_path: Path) -> None:
    driver = UiTestDriver()
    app = make_app(driver, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        for answered in range(2):
            await wait_until(
                pilot,
                lambda answered=answered: (
                    driver.waiting == "approval" and len(driver.decisions) == answered
                ),
            )
            await pilot.press("a")
        await wait_until(pilot, lambda: app.exit_code is not None)
        assert app.exit_code == 0
        await pilot.press("q")
    assert app.return_value == 0
