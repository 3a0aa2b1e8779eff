"""The live run: the agent runs in a worker; its events arrive as messages and fill the view.

The worker never touches widgets. The event sink posts ``AgentEvent`` messages to this
screen; ``@on`` handlers fold them into a ``RunView`` and refresh what changed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace
from typing import ClassVar

from textual import on, work
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.worker import Worker, WorkerState

from core.run.budget import WARN_AT, spent_line
from core.run.events import (
    BudgetSpent,
    Event,
    EventSink,
    ModelWriting,
    Observed,
    RunFinished,
    Supervisor,
)
from core.visible import visible
from tui.exit_codes import EXIT_CRASHED, EXIT_INTERRUPTED
from tui.observatory import PaletteCommand
from tui.rounds import RoundView, RunView, duration_text, round_label
from tui.screens.approval import ApprovalScreen
from tui.screens.confirm import ConfirmScreen
from tui.screens.help_screen import HelpSection
from tui.screens.human_pause import HumanPauseScreen
from tui.screens.rounds_screen import RoundsScreen
from tui.screens.supervisor import TuiSupervisor
from tui.widgets.header import HeaderFacts
from tui.widgets.panes import PANE_IDS, PaneText, dim, model_pane_text, thinking_for
from tui.widgets.timeline import TimelineRow

RunFactory = Callable[[EventSink, Supervisor], Awaitable[RunFinished]]
"""Starts one run: given the TUI's event sink and supervisor, returns how it finished."""


_OUTCOME_MEANING = {
    "success": "approved",
    "failure": "error",
    "gave_up": "error",
    "round_limit": "error",
    "aborted": "denied",
    "human_needed": "paused",
    "error": "error",
    "budget": "denied",
}


class PhaseChanged(Message):
    """What the run is doing outside its rounds: ``starting Chrome…``, ``closing Chrome…``,
    ``closed`` (see ``core.run.session.PhaseSink``)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class AgentEvent(Message):
    """One core event, delivered to the UI thread of control."""

    def __init__(self, event: Event) -> None:
        super().__init__()
        self.event = event


class LiveRows:
    """``TimelineSource`` over the live run's rounds."""

    def __init__(self, view: RunView) -> None:
        self.view = view

    def __len__(self) -> int:
        return len(self.view.rounds)

    def row(self, index: int) -> TimelineRow:
        round_view = self.view.rounds[index]
        return TimelineRow(
            number=str(round_view.number),
            label=round_label(round_view),
            meaning=round_view.meaning(),
            duration=duration_text(round_view.duration_ms),
        )


THINKING_TICK = 0.125
"""Seconds between the model pane's moves while the model is thinking (its indicator's
frame rate; only that pane is redrawn)."""


class RunScreen(RoundsScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("x", "abort", "Abort run", id="run.abort"),
        Binding("escape", "dismiss_toasts", "Close notices", show=False, id="run.dismiss"),
    ]

    FINISH_TOAST_S = 10.0
    """Seconds the "Run finished" notice stays (Esc closes it sooner)."""

    def __init__(
        self,
        run: RunFactory,
        *,
        exit_on_finish: bool = False,
        task: str = "",
        model: str = "",
        phase: str | None = None,
    ) -> None:
        """``task``, ``model``: the header's until the run says its own (``RunStarted``).
        ``phase``: the header's state until the run reports its first phase."""
        self.run_view = RunView(task=task, model=model)
        super().__init__(LiveRows(self.run_view))
        self._run = run
        self.exit_on_finish = exit_on_finish
        self.exit_code: int | None = None
        """Set once the run is over: the run's own code, 130 when aborted, 1 when it crashed."""
        self.crash: BaseException | None = None
        self._started_at: float | None = None
        self._ended_at: float | None = None
        self._worker: Worker[RunFinished] | None = None
        self._run_task: asyncio.Task[object] | None = None
        self.phase: str | None = phase
        """The latest ``PhaseChanged`` text (before the first: the one the app expects)."""
        self._leave_when_closed = False
        self._aborting = False
        self._covered_at: float | None = None
        """The app's clock when a modal covered this screen (None: uncovered)."""
        self._budget_at: float | None = None
        """The app's clock when the run last said what its budget has spent."""

    # --- the run -------------------------------------------------------------------------

    def on_mount(self) -> None:
        self.panes.show({key: PaneText(dim("waiting for the first round")) for key in PANE_IDS})
        self._started_at = self.app_clock()
        self.set_interval(1.0, self._tick)
        self.set_interval(THINKING_TICK, self._thinking_tick)
        # The run starts once this screen is painted: its start-up (core.run.session, the
        # model's SDK, Chrome) loads in threads that would otherwise hold the GIL while the
        # first frame is drawn, and the person would look at a blank terminal meanwhile.
        self.call_after_refresh(self._start_run)

    def _tick(self) -> None:
        """The header's clock, every second; not while a modal (the approval, the
        hand-over, a question) covers this screen: Textual repaints the whole modal for any
        change underneath, so a 1 s clock sent the terminal the whole approval, its picture
        included (about 27 kB), every second while the person decided. The header then
        says the time it shows is the time the modal opened (``covered_at``); the modal
        counts its own wait."""
        if self.app.screen is self:
            self.refresh_header()

    def on_screen_suspend(self) -> None:
        super().on_screen_suspend()
        self._covered_at = self.app_clock()
        self.refresh_header()

    def on_screen_resume(self) -> None:
        super().on_screen_resume()
        self._covered_at = None
        self.refresh_header()

    def _shown_view(self) -> RoundView | None:
        """The round whose panes are on show, if any."""
        cursor = self.timeline.cursor
        if cursor is None or not 0 <= cursor < len(self.run_view.rounds):
            return None
        return self.run_view.rounds[cursor]

    def _thinking_tick(self) -> None:
        """While the round on show waits for the model, its pane counts the time (not while
        a modal covers this screen: Textual would repaint the whole modal)."""
        if self.app.screen is not self:
            return
        view = self._shown_view()
        if view is None:
            return
        now = self.app_clock()
        if thinking_for(view, now) is not None:
            self.panes.pane("model").show(model_pane_text(view, now))

    def _start_run(self) -> None:
        if self._worker is None and not self._aborting:
            self._worker = self._run_agent()

    def app_clock(self) -> float:
        clock = getattr(self.app, "clock", None)
        return clock() if callable(clock) else 0.0

    def _sink(self, event: Event) -> None:
        self.post_message(AgentEvent(event))

    @work(exit_on_error=False, group="agent", name="agent run")
    async def _run_agent(self) -> RunFinished:
        self._run_task = asyncio.current_task()
        return await self._run(self._sink, TuiSupervisor(self.app))

    @property
    def running(self) -> bool:
        return self.exit_code is None

    def phase_sink(self, text: str) -> None:
        """A ``core.run.session.PhaseSink`` for this screen (safe to call from the worker)."""
        self.post_message(PhaseChanged(text))

    @on(PhaseChanged)
    def _phase_changed(self, message: PhaseChanged) -> None:
        self.phase = message.text
        self.refresh_header()

    @property
    def closing(self) -> bool:
        """The run is over or aborted, but its worker still runs (closing the browser)."""
        return self._worker is not None and self._worker.state in (
            WorkerState.PENDING,
            WorkerState.RUNNING,
        )

    def leave_when_closed(self) -> None:
        """Exit the app with the run's code once the browser is closed; at once if it is.
        The screen stays meanwhile and says "closing Chrome…" rather than going blank."""
        if self._leave_when_closed or not self.closing:
            # Asked twice (the person will not wait), or nothing left to wait for.
            self.app.exit(self.exit_code if self.exit_code is not None else EXIT_INTERRUPTED)
            return
        self._leave_when_closed = True
        self.refresh_header()

    @on(AgentEvent)
    def _agent_event(self, message: AgentEvent) -> None:
        event = message.event
        touched = self.run_view.apply(event)
        if isinstance(event, ModelWriting):
            # Many a second while a model streams: only the model pane of that round, and
            # only when it is the one on show (the next tick redraws it anyway).
            if touched is not None and self._shown_view() is touched:
                self.panes.pane("model").show(model_pane_text(touched, self.app_clock()))
            return
        if isinstance(event, Observed) and touched is not None:
            touched.asked_at = self.app_clock()  # the observation goes to the model now
        if isinstance(event, BudgetSpent):
            self._budget_at = self.app_clock()
            for limit in event.warn:
                self.app.notify(
                    visible(
                        f"{int(WARN_AT * 100)}% of the {limit} budget is spent: "
                        f"{event.spent.line()}. At the limit the run stops before its next "
                        "model call."
                    ),
                    title="Budget",
                    severity="warning",
                    markup=False,
                    timeout=10,
                )
        if isinstance(event, RunFinished):
            self._finished(event.exit_code, event)
        if isinstance(event, RunFinished):
            self.rows_changed()
        elif touched is not None:
            self.rows_changed(changed=self.run_view.rounds.index(touched))
        else:
            self.refresh_header()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self._worker:
            return
        if self._leave_when_closed and not self.closing:
            self.app.exit(self.exit_code if self.exit_code is not None else EXIT_INTERRUPTED)
        if event.state == WorkerState.SUCCESS:
            result = event.worker.result
            if self.exit_code is None and isinstance(result, RunFinished):
                self.run_view.apply(result)
                self._finished(result.exit_code, result)
                self.rows_changed()
        elif event.state == WorkerState.CANCELLED:
            self._finished(EXIT_INTERRUPTED, None)
        elif event.state == WorkerState.ERROR:
            self.crash = event.worker.error
            self.run_view.state = "finished"
            self._finished(EXIT_CRASHED, None)
            self.app.notify(
                visible(
                    f"The run stopped with an error: {type(self.crash).__name__}: {self.crash}"
                ),
                title="Run crashed",
                severity="error",
                markup=False,
                timeout=30,
            )

    def _finished(self, code: int, finished: RunFinished | None) -> None:
        if self.exit_code is not None:
            return
        self.exit_code = code
        self._ended_at = self.app_clock()
        if finished is not None:
            self.app.notify(finish_text(finished), markup=False, timeout=self.FINISH_TOAST_S)
        elif code == EXIT_INTERRUPTED:
            self.run_view.state = "finished"
        self.refresh_header()
        self.refresh_bindings()
        if self.exit_on_finish:
            self.app.exit(code)

    def action_dismiss_toasts(self) -> None:
        self.app.clear_notifications()

    # --- header --------------------------------------------------------------------------

    def header_facts(self) -> HeaderFacts:
        view = self.run_view
        state: str = view.state
        meaning = ""
        if view.finished is not None:
            state = f"finished · {view.finished.outcome}"
            meaning = _OUTCOME_MEANING.get(view.finished.outcome, "")
        elif self.crash is not None:
            state, meaning = "crashed", "error"
        elif self.exit_code == EXIT_INTERRUPTED or self._aborting:
            state, meaning = "aborted", "denied"
        if self.phase is not None and self.phase != "closed":
            if view.state == "starting" and not self._aborting:
                state = self.phase
            elif self.exit_code is not None or self._aborting:
                state = f"{state} · {self.phase}"
        elapsed = None
        note = ""
        if self._started_at is not None:
            end = self._ended_at if self._ended_at is not None else self.app_clock()
            if self._ended_at is None and self._covered_at is not None:
                end, note = self._covered_at, "when this dialog opened"
            elapsed = end - self._started_at
        return HeaderFacts(
            task=view.task,
            model=view.model,
            browser=view.browser,
            state=state,
            state_meaning=meaning,
            round=view.rounds[-1].number if view.rounds else 0,
            max_rounds=view.max_rounds,
            elapsed_s=elapsed,
            elapsed_note=note,
            tokens=view.tokens,
            following=self.following,
            **self._budget_facts(),
        )

    def _budget_facts(self) -> dict[str, str]:
        """The header's budget: spent/limit, the time part moving with the clock while the
        run is live."""
        spent = self.run_view.budget
        if spent is None:
            return {}
        if self._budget_at is not None and self.exit_code is None:
            spent = replace(spent, seconds=spent.seconds + self.app_clock() - self._budget_at)
        share = max(spent.shares().values(), default=0.0)
        meaning = "denied" if share >= 1 else "paused" if share >= WARN_AT else ""
        return {"budget": spent.line(), "budget_meaning": meaning}

    def show_row(self, index: int) -> None:
        self.panes.show_round(self.run_view.rounds[index], self.app_clock())

    # --- stopping ------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "abort":
            return self.running
        return super().check_action(action, parameters)

    def action_abort(self) -> None:
        if not self.running:
            self.app.notify("The run is over; q quits.", markup=False)
            return
        refusal = getattr(self.app, "abort_refusal", None)
        why = refusal() if callable(refusal) else None
        if isinstance(why, str):
            self.app.notify(visible(why), markup=False)  # an attached terminal that watches
            return
        question = "Abort the run? The agent stops now and its audit log is closed."
        self.app.push_screen(ConfirmScreen(question), self._abort_answered)

    def _abort_answered(self, yes: bool | None) -> None:
        if yes:
            self.abort()

    def abort(self, by: str | None = None) -> None:
        """Cancel the run (its worker); the exit code becomes 130. ``by``: who ended it, for
        the log's ``run_end`` reason (default: the person, from this screen)."""
        if not self.running:
            return
        self._aborting = True
        if self._run_task is not None:
            # The worker's own task, cancelled with the reason the run records.
            self._run_task.cancel(by or "the person aborted the run")
        elif self._worker is not None:
            self._worker.cancel()
        else:
            self._finished(EXIT_INTERRUPTED, None)  # before it started: nothing to close
        self.refresh_header()

    def help_sections(self) -> Iterable[HelpSection]:
        yield ("Run", RunScreen.BINDINGS)
        yield from super().help_sections()
        if self.running:  # what is still to come in this run
            yield ("Approval (when the agent asks)", ApprovalScreen.BINDINGS)
            yield ("Paused for you", HumanPauseScreen.BINDINGS)

    def palette_commands(self) -> Iterable[PaletteCommand]:
        if self.running:
            yield ("Abort run", "Stop the agent now (x)", self.action_abort)
        yield from super().palette_commands()


def finish_text(finished: RunFinished) -> str:
    """The "Run finished" notice: the outcome, the answer, and the reason when it adds to
    the answer (the agent's answer falls back to the reason, so they are often the same).
    The answer and the reason are the model's words: their control characters are shown,
    not sent to the terminal."""
    lines = [f"Run finished: {finished.outcome}"]
    if finished.answer:
        lines.append(finished.answer)
    if finished.reason and finished.reason != finished.answer:
        lines.append(finished.reason)
    if finished.spent is not None:
        lines.append(f"spent: {spent_line(finished.spent)}")
    lines.append("q quits · Esc closes this")
    return visible("\n".join(lines))
