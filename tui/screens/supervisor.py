"""The ``Supervisor`` the agent awaits, answered by the person through modal screens."""

from __future__ import annotations

import asyncio
import os
from typing import TypeVar

from textual.app import App
from textual.screen import ModalScreen

from core.guard.decision import ApprovalDecision
from core.run.events import ApprovalRequest, HumanRequest, HumanResponse
from tui.screens.approval import ApprovalScreen
from tui.screens.human_pause import HumanPauseScreen

T = TypeVar("T")


class TuiSupervisor:
    """Implements ``core.run.events.Supervisor``: each call shows a modal and waits, with no
    timeout, for the person's answer. If the run is cancelled while waiting, the modal is
    taken down and ``CancelledError`` propagates to the agent."""

    def __init__(self, app: App[object]) -> None:
        self._app = app
        self.holder = f"the run's own observatory (pid {os.getpid()})"
        """The person here answers; ``handrail attach`` terminals watch."""

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        return await self._ask(ApprovalScreen(request))

    async def human(self, request: HumanRequest) -> HumanResponse:
        return await self._ask(
            HumanPauseScreen(request, headless_cause=getattr(self._app, "headless_cause", None))
        )

    async def _ask(self, screen: ModalScreen[T]) -> T:
        answer: asyncio.Future[T] = asyncio.get_running_loop().create_future()

        def answered(result: T | None) -> None:
            if not answer.done() and result is not None:
                answer.set_result(result)

        # A toast still up (the start's "Chrome runs headless") sits over the dialog's key
        # legend, at 80x24 for its whole time: the decision comes first (the header keeps the
        # facts). Cleared before the push, so the screen beneath drops it too.
        self._app.clear_notifications()
        self._app.push_screen(screen, callback=answered)
        try:
            return await answer
        finally:
            if not answer.done():
                self._take_down(screen, tries=5)

    def _take_down(self, screen: ModalScreen[T], tries: int) -> None:
        """Pop an unanswered modal; if another screen (a confirmation) is still above it,
        try again after that one has gone."""
        if screen not in self._app.screen_stack:
            return
        if self._app.screen is screen:
            self._app.pop_screen()
        elif tries:
            self._app.call_later(self._take_down, screen, tries - 1)
