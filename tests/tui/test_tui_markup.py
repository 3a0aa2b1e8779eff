"""Page text and model output are shown as text: markup in them is never parsed."""

from __future__ import annotations

from pathlib import Path

from core.actions import Action
from core.result import ActionResult
from tests.helpers.tui_driver import (
    MARKUP_DIGEST,
    RoundScript,
    UiTestDriver,
    still_clock,
    wait_until,
)
from tui.app import HandrailApp
from tui.screens.approval import ApprovalScreen

MODEL_TEXT = "I see [/path] and [bold]Files[/bold] and an unclosed [red tag and [/]."


def markup_driver() -> UiTestDriver:
    return UiTestDriver(
        rounds=[
            RoundScript(
                digest=MARKUP_DIGEST,
                url="http://127.0.0.1:8765/files?q=[/x]",
                title="[bold]Files[/bold]",
                text=MODEL_TEXT,
                action=Action("type", {"index": 5, "text": "[/path]"}, "Type [bold]it[/]", "tu_m"),
                element_line="[5]<a href=/x>[bold]open[/bold]</a>",
                ask="every page-changing action asks [/ask]",
                result=ActionResult.failure("No element [/5] here; [bold]try[/bold] again"),
            )
        ],
    )


async def test_markup_in_page_and_model_text_is_shown_verbatim(tmp_path: Path) -> None:
    driver = markup_driver()
    app = HandrailApp(driver, config_dir=tmp_path, clock=still_clock, persist_theme=False)
    async with app.run_test(size=(160, 50)) as pilot:
        # The driver says "approval" before the modal is pushed: wait for it to be composed.
        await wait_until(pilot, lambda: bool(app.screen.query("#approval-target")))
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        assert "[bold]open[/bold]" in str(screen.query_one("#approval-target").render())
        assert "[/ask]" in str(screen.query_one("#approval-why").render())
        await pilot.press("a")
        await wait_until(pilot, lambda: app.exit_code is not None)
        run_screen = app.run_screen
        assert run_screen is not None
        panes = run_screen.panes
        assert "Path: [/path] and [/] and [red]not red[/red]" in panes.pane("digest").plain
        assert MODEL_TEXT in panes.pane("model").plain
        assert "[/path]" in panes.pane("action").plain
        assert "No element [/5] here; [bold]try[/bold] again" in panes.pane("result").plain
        assert app.is_running


async def test_markup_in_the_task_and_answer_is_shown_verbatim(tmp_path: Path) -> None:
    driver = UiTestDriver(rounds=[], task="Open [/path] and [bold]x")
    app = HandrailApp(driver, config_dir=tmp_path, clock=still_clock, persist_theme=False)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, lambda: app.exit_code is not None)
        assert app.run_screen is not None
        header = app.run_screen.header.render()
        assert "Open [/path] and [bold]x" in str(header)
