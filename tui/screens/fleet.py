"""``handrail fleet``: several runs at once, each in its own pool slot, under one observatory.

The app owns the runs (one worker each, on the app) and folds every run's events into that
run's ``RunView``. Its first screen is the pool screen; Enter opens a run's four-pane
screen, Esc goes back. Every run's approvals and hand-overs go into one queue, shown one at
a time, oldest first; a run that waits holds only its own worker, so the others go on.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from textual import on
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.worker import Worker

from core.guard.decision import ApprovalDecision
from core.guard.rules import Budget
from core.run.budget import BudgetKeeper
from core.run.events import (
    ApprovalRequest,
    Event,
    HumanRequest,
    HumanResponse,
    ModelWriting,
    RunFinished,
)
from core.run.fleet import FleetSecrets
from core.visible import visible
from tui.cli.command import typed_commands
from tui.exit_codes import EXIT_CRASHED, EXIT_INTERRUPTED, EXIT_POOL_FULL, EXIT_USAGE
from tui.observatory import ObservatoryApp
from tui.rounds import RunView
from tui.screens.approval import ApprovalScreen
from tui.screens.confirm import ConfirmScreen
from tui.screens.help_screen import HelpSection
from tui.screens.human_pause import HumanPauseScreen
from tui.screens.pool_screen import PoolRow, PoolScreen, round_text
from tui.screens.rounds_screen import RoundsScreen
from tui.screens.run_screen import LiveRows
from tui.widgets.header import HeaderFacts

if TYPE_CHECKING:
    from core.pool.state import SlotInfo
    from core.run.session import RunSettings

T = TypeVar("T")

FLEET_HINT = "enter: open the run · q: quit · every run's approvals come up here, oldest first"


@dataclass(eq=False)
class FleetRun:
    """One run of the fleet as the screens see it."""

    number: int
    """1-based, in the tasks file's order."""
    settings: RunSettings
    view: RunView
    exit_code: int | None = None
    problem: str | None = None
    """Why the run did not run (pool full, a configuration error) or crashed."""
    waiting: list[str] = field(default_factory=list)
    """What it waits for, oldest first: ``approve click``, ``hand-over: password``."""
    slot: int | None = None

    @property
    def run_id(self) -> str:
        return self.settings.run_id

    @property
    def label(self) -> str:
        where = f"slot {self.slot}" if self.slot is not None else "no slot yet"
        return f"run {self.number} ({self.run_id[:8]}, {where})"


@dataclass(eq=False)
class Pending:
    """One question in the queue: whose, what to show, and where the answer goes."""

    run: FleetRun
    screen: ModalScreen[Any]
    answer: asyncio.Future[Any]
    waiting: str
    asked_at: float = field(default_factory=time.monotonic)


class FleetEvent(Message):
    """One core event of one run, delivered to the UI's thread of control."""

    def __init__(self, run: FleetRun, event: Event) -> None:
        super().__init__()
        self.run = run
        self.event = event


class FleetApproval(ApprovalScreen):
    """The usual approval, titled with the run and the slot that ask."""

    def __init__(self, request: ApprovalRequest, asker: FleetRun) -> None:
        super().__init__(request)
        self.asker = asker

    def on_mount(self) -> None:
        title = f"{self.asker.label}: approve round {self.request.round}?"
        self.query_one("#approval-dialog", Widget).border_title = title


class FleetHandOver(HumanPauseScreen):
    """The usual hand-over, titled with the run and the slot that wait."""

    def __init__(self, request: HumanRequest, asker: FleetRun) -> None:
        super().__init__(request)
        self.asker = asker

    def on_mount(self) -> None:
        title = f"{self.asker.label}: paused for you, round {self.request.round}"
        self.query_one("#human-dialog", Widget).border_title = title


class FleetSupervisor:
    """``core.run.events.Supervisor`` for one run: its questions go into the app's queue."""

    def __init__(self, app: FleetApp, run: FleetRun) -> None:
        self._app = app
        self._run = run
        self.holder = f"the fleet's observatory (pid {os.getpid()})"

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        screen = FleetApproval(request, self._run)
        result: ApprovalDecision = await self._app.ask(
            self._run, screen, f"approve {request.action.name}"
        )
        return result

    async def human(self, request: HumanRequest) -> HumanResponse:
        screen = FleetHandOver(request, self._run)
        result: HumanResponse = await self._app.ask(self._run, screen, f"hand-over: {request.kind}")
        return result


class FleetRunScreen(RoundsScreen):
    """One fleet run's four panes, fed by the app as its events arrive; Esc goes back."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Pool", id="fleet.back"),
    ]

    def __init__(self, run: FleetRun, clock: Callable[[], float]) -> None:
        super().__init__(LiveRows(run.view))
        self.run = run
        self._clock = clock

    def on_mount(self) -> None:
        self.rows_changed()

    def show_row(self, index: int) -> None:
        self.panes.show_round(self.run.view.rounds[index])

    def header_facts(self) -> HeaderFacts:
        view = self.run.view
        state: str = view.state
        if view.finished is not None:
            state = f"finished · {view.finished.outcome}"
        elif self.run.problem:
            state = self.run.problem
        return HeaderFacts(
            task=f"{self.run.label} · {view.task or self.run.settings.task}",
            model=view.model,
            browser=view.browser,
            state=state,
            round=view.rounds[-1].number if view.rounds else 0,
            max_rounds=view.max_rounds,
            tokens=view.tokens,
            following=self.following,
        )

    def action_back(self) -> None:
        self.app.pop_screen()

    def help_sections(self) -> Iterable[HelpSection]:
        yield ("Fleet run", FleetRunScreen.BINDINGS)
        yield from super().help_sections()


class FleetApp(ObservatoryApp):
    """The observatory for a fleet. ``run()`` returns :func:`fleet_exit_code` of the runs."""

    def __init__(
        self,
        runs: Sequence[RunSettings],
        *,
        pool: str,
        start: Callable[[RunSettings, FleetSupervisor, Callable[[Event], None]], Any] | None = None,
        poll_interval: float = 0.5,
        budget: Budget | None = None,
        max_parallel: int | None = None,
        **options: Any,
    ) -> None:
        """``runs``: one settings each (their ``pool`` is set to ``pool`` here). ``start``:
        how one run is started (default :func:`core.run.session.run_session`); tests keep it.
        ``max_parallel``: runs at once (default: the pool's usable slots); the others wait
        their turn, in file order. ``options``: see ``ObservatoryApp``."""
        super().__init__(**options)
        self.pool = pool
        self.runs = [
            FleetRun(number, replace(s, pool=pool), RunView(task=s.task))
            for number, s in enumerate(runs, 1)
        ]
        self._start = start
        self._poll_interval = poll_interval
        self.queue: list[Pending] = []
        self.showing: Pending | None = None
        self._order = itertools.count()
        self._run_workers: dict[Worker[None], FleetRun] = {}
        self._leaving = False
        self.pool_screen: PoolScreen | None = None
        self.log_secrets = FleetSecrets()
        limits = budget or Budget()
        self.budget = BudgetKeeper(limits, priced=limits.max_cost is not None, name="the fleet's")
        """The whole fleet's budget (``fleet_max_*``), spent by every run together."""
        self.max_parallel = max_parallel
        self.queued: list[FleetRun] = []
        """Runs waiting for their turn, in the order they will start."""
        self._turns: asyncio.Semaphore | None = None
        self._active: set[FleetRun] = set()
        """Runs started and not ended (each holds a slot or is claiming one)."""
        self._ended = asyncio.Condition()
        """Told whenever a run ends: a run the pool was too full for claims again."""
        self._ends = 0

    # --- the runs ------------------------------------------------------------------------

    def on_mount(self) -> None:
        if self._start is None:
            self._open_oplog()
        self.pool_screen = PoolScreen(
            self.pool_rows,
            open_run=self.open_run,
            interval=self._poll_interval,
            hint=FLEET_HINT,
        )
        self.push_screen(self.pool_screen)
        self._turns = asyncio.Semaphore(self.max_parallel or self._usable_slots())
        self.queued = list(self.runs)
        for run in self.runs:
            worker = self.run_worker(
                self._run_one(run), name=f"fleet run {run.number}", exit_on_error=False
            )
            self._run_workers[worker] = run

    def _open_oplog(self) -> None:
        """One operational log for every run (the log is process-wide), beside the first
        run's audit logs, scrubbing every run's secrets (``core.run.fleet.FleetSecrets``)."""
        from core.run import oplog

        folder = self.runs[0].settings.audit_dir
        stamp = time.strftime("%Y%m%d-%H%M%S")
        try:
            folder.mkdir(parents=True, exist_ok=True)
            oplog.configure(
                folder / f"fleet-{stamp}-{os.getpid()}.log", console=False, secrets=self.log_secrets
            )
        except OSError as exc:
            self.note(f"No operational log for this fleet: {exc}", "warning")
            oplog.configure(None, console=False)

    def _usable_slots(self) -> int:
        """How many runs the pool can hold at once: its slots that are not lost."""
        from core.pool.pool import status
        from core.pool.state import PoolError

        try:
            usable = sum(1 for s in status(self.pool).slots if s.state != "lost")
        except PoolError:
            usable = len(self.runs)
        return max(1, usable)

    async def _run_one(self, run: FleetRun) -> None:
        from core.pool.state import PoolFull

        assert self._turns is not None
        try:
            async with self._turns:
                self.queued.remove(run)
                while True:
                    self._active.add(run)
                    ends = self._ends
                    try:
                        await self._run_now(run, retry_full=True)
                        break
                    except PoolFull:
                        # The pool had fewer free slots than turns (a browser of the grid was
                        # lost, or another process holds slots): wait for one of this
                        # fleet's runs to end (counted, so one that ended meanwhile counts
                        # too), then claim again.
                        self._active.discard(run)
                        self.queued.insert(0, run)
                        async with self._ended:
                            await self._ended.wait_for(partial(self._ended_since, ends))
                        self.queued.remove(run)
                    finally:
                        self._active.discard(run)
        finally:
            async with self._ended:
                self._ends += 1
                self._ended.notify_all()
            if run in self.queued:
                self.queued.remove(run)
                run.problem, run.exit_code = "aborted before its turn", EXIT_INTERRUPTED
                self.call_later(self._check_leaving)

    def _ended_since(self, ends: int) -> bool:
        return self._ends > ends

    async def _run_now(self, run: FleetRun, *, retry_full: bool = False) -> None:
        """Run ``run`` to its end. ``retry_full``: a full pool raises :class:`PoolFull`
        (nothing was touched) while another run of this fleet holds a slot, instead of
        ending the run: a slot will come free."""
        from core.pool.state import PoolFull
        from core.run.session import ConfigError, prepare, run_session

        def sink(event: Event) -> None:
            self.post_message(FleetEvent(run, event))

        supervisor = FleetSupervisor(self, run)
        try:
            if self._start is not None:
                finished = await self._start(run.settings, supervisor, sink)
            else:
                prepared = await prepare(run.settings)
                self.log_secrets.add(prepared.secrets)
                finished = await run_session(
                    run.settings,
                    supervisor=supervisor,
                    sinks=[sink],
                    prepared=prepared,
                    configure_oplog=False,
                    shared_budget=self.budget,
                )
        except PoolFull as exc:
            if retry_full and any(other is not run for other in self._active):
                raise
            run.problem, run.exit_code = str(exc), EXIT_POOL_FULL
        except ConfigError as exc:
            run.problem, run.exit_code = str(exc), EXIT_USAGE
        except asyncio.CancelledError:
            run.problem, run.exit_code = "aborted", EXIT_INTERRUPTED
            raise
        except Exception as exc:
            run.problem = f"crashed: {type(exc).__name__}: {exc}"
            run.exit_code = EXIT_CRASHED
        else:
            run.exit_code = finished.exit_code
            run.view.apply(finished)
        finally:
            self._drop_pending(run)
            self.call_later(self._check_leaving)

    @on(FleetEvent)
    def _fleet_event(self, message: FleetEvent) -> None:
        run, event = message.run, message.event
        touched = run.view.apply(event)
        screen = self.screen
        if isinstance(event, ModelWriting):
            return  # a streaming model's text so far: the reply shows when it is whole
        if isinstance(screen, FleetRunScreen) and screen.run is run:
            if isinstance(event, RunFinished):
                screen.rows_changed()
            elif touched is None:
                screen.refresh_header()
            else:
                screen.rows_changed(changed=run.view.rounds.index(touched))

    @property
    def done(self) -> bool:
        """Every run is over."""
        return all(run.exit_code is not None for run in self.runs)

    @property
    def exit_code(self) -> int | None:
        return fleet_exit_code([r.exit_code for r in self.runs]) if self.done else None

    # --- the queue -----------------------------------------------------------------------

    async def ask(self, run: FleetRun, screen: ModalScreen[T], waiting: str) -> T:
        """Queue a question of ``run`` and wait, with no timeout, for the person's answer.
        If the run is cancelled meanwhile, its question leaves the queue (and the screen)."""
        if run.slot is None:
            self.locate(run)
        answer: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        pending = Pending(run, screen, answer, waiting)
        self.queue.append(pending)
        run.waiting.append(waiting)
        self._show_next()
        try:
            return await answer
        finally:
            self._forget(pending)

    def locate(self, run: FleetRun) -> None:
        """Find the run's slot in the pool's database (the modal names it)."""
        from core.pool.pool import status
        from core.pool.state import PoolError

        try:
            slots = status(self.pool).slots
        except PoolError:
            return
        run.slot = next((s.slot for s in slots if s.run_id == run.run_id), run.slot)

    def _show_next(self) -> None:
        if self.showing is not None or not self.queue:
            return
        pending = min(self.queue, key=lambda p: p.asked_at)
        self.queue.remove(pending)
        self.showing = pending

        def answered(result: object) -> None:
            if result is not None and not pending.answer.done():
                pending.answer.set_result(result)
            if self.showing is pending:
                self.showing = None
            self.call_later(self._show_next)

        self.push_screen(pending.screen, callback=answered)

    def _forget(self, pending: Pending) -> None:
        if pending in self.queue:
            self.queue.remove(pending)
        if pending.waiting in pending.run.waiting:
            pending.run.waiting.remove(pending.waiting)
        if self.showing is pending:
            self.showing = None
            if pending.screen in self.screen_stack and self.screen is pending.screen:
                self.pop_screen()
            self.call_later(self._show_next)

    def _drop_pending(self, run: FleetRun) -> None:
        for pending in [p for p in self.queue if p.run is run]:
            if not pending.answer.done():
                pending.answer.cancel()
            self._forget(pending)

    # --- the pool screen -----------------------------------------------------------------

    def pool_rows(self) -> tuple[str, list[PoolRow]]:
        """The pool's slots joined with this fleet's runs, then the runs without a slot."""
        from core.pool.pool import status
        from core.pool.state import PoolError

        try:
            current = status(self.pool)
        except PoolError as exc:
            return (f"pool {self.pool}: {exc}", self._unslotted(set()))
        by_id = {run.run_id: run for run in self.runs}
        rows = []
        placed: set[str] = set()
        for slot in current.slots:
            run = by_id.get(slot.run_id or "")
            if run is not None:
                run.slot = slot.slot
                placed.add(run.run_id)
            rows.append(self._row(slot, run))
        running = sum(1 for s in current.slots if s.state == "running")
        done = sum(1 for r in self.runs if r.exit_code is not None)
        waiting = sum(len(r.waiting) for r in self.runs)
        queued = f", {len(self.queued)} queued" if self.queued else ""
        title = (
            f"pool {self.pool} · {running} of {len(current.slots)} slots running · "
            f"fleet: {done} of {len(self.runs)} runs done{queued}, {waiting} waiting for you"
        )
        return title, rows + self._unslotted(placed)

    def _row(self, slot: SlotInfo, run: FleetRun | None) -> PoolRow:
        if run is None:
            return PoolRow(
                str(slot.slot),
                slot.state,
                (slot.run_id or "")[:12],
                _one_line(slot.task or ""),
                "",
                "",
                slot.url,
            )
        return self._run_row(run, str(slot.slot), slot.state, slot.url)

    def _run_row(self, run: FleetRun, slot: str, state: str, url: str) -> PoolRow:
        view = run.view
        number = view.rounds[-1].number if view.rounds else 0
        if run.problem:
            state = "aborted" if run.exit_code == EXIT_INTERRUPTED else "failed"
        latest = view.rounds[-1].url if view.rounds and view.rounds[-1].url else url
        return PoolRow(
            slot,
            state,
            run.run_id[:12],
            _one_line(run.problem or view.task or run.settings.task),
            round_text(number, view.max_rounds),
            ", ".join(run.waiting),
            latest,
            key=run.run_id,
        )

    def _unslotted(self, placed: set[str]) -> list[PoolRow]:
        return [
            self._run_row(run, "—", self._unslotted_state(run), "")
            for run in self.runs
            if run.run_id not in placed and run.slot is None
        ]

    def _unslotted_state(self, run: FleetRun) -> str:
        if run in self.queued:
            return f"queued #{self.queued.index(run) + 1}"
        return "waiting" if run.exit_code is None else "ended"

    def open_run(self, run_id: str) -> None:
        for run in self.runs:
            if run.run_id == run_id:
                self.push_screen(FleetRunScreen(run, self.clock))
                return

    # --- leaving -------------------------------------------------------------------------

    async def request_quit(self, *, interrupt: bool = False) -> None:
        if self.done:
            self.exit(self.exit_code)
            return
        if isinstance(self.screen, ConfirmScreen):
            return
        running = sum(1 for r in self.runs if r.exit_code is None)

        def answered(yes: bool | None) -> None:
            if yes:
                self._leaving = True
                for worker, run in self._run_workers.items():
                    if run.exit_code is None:
                        worker.cancel()
                self._check_leaving()

        self.push_screen(
            ConfirmScreen(
                f"{running} run(s) still going. Abort them and quit? Their audit logs are "
                "closed and their slots become completed."
            ),
            answered,
        )

    def terminate(self) -> None:
        """A signal: abort every run still going without asking, and leave once they are
        closed (a second signal leaves at once)."""
        if self._leaving or self.done:
            self.exit(self.exit_code if self.exit_code is not None else EXIT_INTERRUPTED)
            return
        self._leaving = True
        for worker, run in self._run_workers.items():
            if run.exit_code is None:
                worker.cancel()
        self._check_leaving()

    def _check_leaving(self) -> None:
        if self._leaving and self.done:
            self.exit(self.exit_code)


def fleet_exit_code(codes: Iterable[int | None]) -> int:
    """0 when every run succeeded; otherwise the most serious code among them (130 aborted
    > 5 a budget stopped it > 4 pool full > 3 waited for a person > 2 configuration > 1
    unsuccessful)."""
    known = [EXIT_INTERRUPTED if c is None else c for c in codes]
    return max(known, default=0)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _more_open_files() -> None:
    """Raise this process's soft limit on open files to its hard limit: a run holds about
    seven (its browser connection, its model client, its logs), and many systems give a
    process 1,024 by default (docs/scale.md)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def run_fleet_app(
    path: Path, *, pool: str, theme: str | None, model: str, max_parallel: int | None = None
) -> int:
    """``handrail fleet``: check every task (exit 2 naming the problem), run them in the
    observatory, print one summary per run; returns :func:`fleet_exit_code`."""
    import sys

    from core.pool.pool import status
    from core.pool.state import PoolError
    from core.run.fleet import check_fleet_prices, load_fleet
    from core.run.session import ConfigError, check_settings, run_policy, run_price
    from tui.cli.launch import summary_text

    try:
        fleet = load_fleet(path, pool=pool, default_model=model)
        try:
            status(pool)
        except PoolError as exc:
            raise ConfigError(str(exc)) from exc
        for number, settings in enumerate(fleet.runs, 1):
            try:
                check_settings(settings, os.environ)
                run_price(settings, run_policy(settings), os.environ)
            except ConfigError as exc:
                raise ConfigError(f"{path}: [[task]] {number}: {exc}") from exc
        check_fleet_prices(fleet, os.environ)
    except ConfigError as exc:
        print(visible(typed_commands(f"handrail fleet: {exc}")), file=sys.stderr)
        return EXIT_USAGE
    _more_open_files()
    app = FleetApp(
        fleet.runs, pool=pool, theme=theme, budget=fleet.budget, max_parallel=max_parallel
    )
    result = app.run()
    code = app.exit_code if app.exit_code is not None else (result or EXIT_INTERRUPTED)
    for run in app.runs:
        view = run.view
        finished = view.finished
        print(visible(f"run {run.number}: {run.settings.task}"))
        print(
            summary_text(
                outcome=finished.outcome if finished else (run.problem or "not finished"),
                answer=finished.answer if finished else "",
                exit_code=run.exit_code if run.exit_code is not None else EXIT_INTERRUPTED,
                audit_path=view.audit_path,
                spent=finished.spent if finished else None,
            )
        )
    return code
