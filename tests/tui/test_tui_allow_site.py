"""`s` in the approval: allow this kind of action on this site from now on. Offered (and
taken) only where it may be kept; the dialog names the rule that asks and what the person
already allows."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from core.actions import Action
from core.guard.decision import ApprovalDecision
from core.run.events import ApprovalRequest
from tui import observatory
from tui.observatory import ObservatoryApp
from tui.screens.approval import ApprovalScreen


class ApprovalOnly(ObservatoryApp):
    CSS_PATH = Path(observatory.__file__).with_name("observatory.tcss")

    def __init__(self, request: ApprovalRequest, config_dir: Path) -> None:
        super().__init__(config_dir=config_dir, persist_theme=False)
        self.request = request
        self.answer: ApprovalDecision | None = None

    def on_mount(self) -> None:
        super().on_mount()
        self.push_screen(ApprovalScreen(self.request), self._answered)

    def _answered(self, decision: ApprovalDecision | None) -> None:
        self.answer = decision


def request(**kw: object) -> ApprovalRequest:
    base: dict[str, object] = {
        "round": 1,
        "action": Action("click", {"index": 3}, "search", "tu_1"),
        "url": "https://rail.example/search",
        "title": "Search",
        "why": "every page-changing action asks",
    }
    base.update(kw)
    return ApprovalRequest(**base)  # type: ignore[arg-type]


async def test_s_approves_and_remembers_the_kind_on_the_site(tmp_path: Path) -> None:
    app = ApprovalOnly(request(site="rail.example", asked_by="rule 2 (search)"), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        keys = str(app.screen.query_one("#approval-keys", Static).render())
        assert "s allow click on rail.example from now on" in keys
        why = str(app.screen.query_one("#approval-why", Static).render())
        assert "asked by rule 2 (search)" in why
        await pilot.press("s")
        await pilot.pause()
    assert app.answer == ApprovalDecision("approved", remember_for_site=True)


async def test_a_risky_action_offers_no_s_and_says_what_is_allowed(tmp_path: Path) -> None:
    said = "click on rail.example is allowed since 2026-12-03, but not this one: it is risky"
    app = ApprovalOnly(request(risky=True, site=None, remembered=said), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        keys = str(app.screen.query_one("#approval-keys", Static).render())
        assert "from now on" not in keys
        assert said in str(app.screen.query_one("#approval-why", Static).render())
        await pilot.press("s")  # not taken
        await pilot.pause()
        assert isinstance(app.screen, ApprovalScreen)
        await pilot.press("a")
        await pilot.pause()
    assert app.answer == ApprovalDecision("approved")
