"""A drag's approval and its timeline label name both ends; a click_at's names the point
and what is there (issue 26)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from core.actions import Action
from core.run.events import ApprovalRequest
from tui import observatory
from tui.observatory import ObservatoryApp
from tui.rounds import action_target
from tui.screens.approval import ApprovalScreen

DRAG_LINE = "[3]<div role=button>Write report</div>\n→ [7]<section>Doing</section>"


class ApprovalOnly(ObservatoryApp):
    CSS_PATH = Path(observatory.__file__).with_name("observatory.tcss")

    def __init__(self, request: ApprovalRequest, config_dir: Path) -> None:
        super().__init__(config_dir=config_dir, persist_theme=False)
        self.request = request

    def on_mount(self) -> None:
        super().on_mount()
        self.push_screen(ApprovalScreen(self.request))


async def test_the_approval_shows_the_source_and_the_destination(tmp_path: Path) -> None:
    request = ApprovalRequest(
        round=2,
        action=Action("drag", {"index": 3, "to": 7}, "Start the report", "tu_1"),
        url="http://127.0.0.1:8000/board.html",
        title="Board",
        why="every page-changing action asks",
        element_line=DRAG_LINE,
        target_name="Write report → Doing",
        details=(
            "Drag: [3]<div role=button>Write report</div>",
            "Drop on: [7]<section>Doing</section>",
        ),
    )
    app = ApprovalOnly(request, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        target = app.screen.query_one("#approval-target", Static)
        shown = str(target.render())
        assert "Write report" in shown and "Doing" in shown, shown
        assert "→" in shown, shown


def test_the_timeline_names_both_ends_and_the_point() -> None:
    drag = {"name": "drag", "params": {"index": 3, "to": 7}}
    assert action_target(drag, "Write report → Doing") == "[3] → [7] Write report → Doing"
    offset = {"name": "drag", "params": {"index": 5, "dx": 120, "dy": 0}}
    assert action_target(offset, "Maximum price") == "[5] by (120, 0) Maximum price"
    dropped = {"name": "drag", "params": {"path": "a.txt", "to": 9}}
    assert action_target(dropped) == "file a.txt → [9]"
    point = {"name": "click_at", "params": {"x": 410, "y": 233}}
    assert action_target(point, "Delete account") == "(410, 233) Delete account"
