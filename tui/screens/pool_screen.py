"""The pool screen: a tab pool's slots as a table refreshed live, with each slot's run.

It knows nothing of where the rows come from: ``handrail fleet`` joins the pool's state with
its own runs (round n/max, what each waits for); ``handrail pool`` reads the runs' audit
logs as ``replay --follow`` does. Enter opens the selected row's run, when there is one.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Static

from core.cdp import shown_endpoint
from core.visible import visible
from tui.observatory import ObservatoryApp
from tui.screens.help_screen import HelpSection
from tui.screens.replay import ReplayScreen
from tui.widgets.footer import HandrailFooter


@dataclass(frozen=True, slots=True)
class PoolRow:
    """One line of the table. ``key``: what Enter opens (a run id), or None."""

    slot: str
    state: str
    run: str
    task: str
    round: str
    waiting: str
    url: str
    key: str | None = None


COLUMNS = ("slot", "state", "run", "task", "round", "waiting for you", "url")
WIDTHS = (4, 10, 12, 26, 6, 18, 22)
"""Columns fit 120 terminal columns with their padding; longer cells are cut."""

RowSource = Callable[[], tuple[str, Sequence[PoolRow]]]
"""Returns the title line (the pool, its browser, counts) and the rows, oldest slot first."""


class SlotCommands:
    """What the pool screen's row keys do to the pool ``name`` (``handrail pool``'s screen):
    the same commands as ``pool clear``, ``pool show``, ``pool stop`` and the resume line of
    ``pool status``, each answering in words for a notice (a refusal included)."""

    def __init__(self, name: str) -> None:
        self.name = name

    async def clear(self, slot: int) -> str:
        from core.pool.pool import clear
        from core.pool.state import PoolError

        try:
            await clear(self.name, [slot])
        except PoolError as exc:
            return str(exc)
        return f"slot {slot} cleared: a fresh tab in a fresh context, nothing of its last run"

    async def show(self, slot: int) -> str:
        from core.browser.errors import BrowserError
        from core.pool.pool import show
        from core.pool.state import PoolError

        try:
            shown = await show(self.name, slot)
        except (PoolError, BrowserError) as exc:
            return str(exc)
        return f"slot {slot}'s tab is at the front of the pool's browser: {shown.url}"

    async def stop(self) -> str:
        from core.browser.errors import BrowserError
        from core.pool.pool import stop
        from core.pool.state import PoolError

        try:
            info = await stop(self.name)
        except (PoolError, BrowserError) as exc:
            return str(exc)
        return f"pool {self.name}: " + (
            "browser stopped" if info.kind == "launch" else "slots closed"
        )

    def resume(self, slot: int) -> str:
        from core.pool.pool import resume_command, status
        from core.pool.state import PoolError
        from tui.cli.command import handrail_command

        try:
            current = status(self.name)
        except PoolError as exc:
            return str(exc)
        found = next((s for s in current.slots if s.slot == slot), None)
        command = resume_command(self.name, found, handrail_command()) if found else None
        if command is None:
            return f"slot {slot} is not completed: there is nothing to go on from"
        return command


class PoolScreen(Screen[None]):
    """The slots of one pool; ``open_run(key)`` is called on Enter for a row with a key."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Open run", id="pool.open"),
        Binding("s", "show_slot", "Show tab", id="pool.show"),
        Binding("c", "clear_slot", "Clear slot", id="pool.clear"),
        Binding("r", "resume_slot", "Resume command", id="pool.resume"),
        Binding("X", "stop_pool", "Stop pool", key_display="X", id="pool.stop"),
    ]
    SLOT_ACTIONS = ("show_slot", "clear_slot", "resume_slot", "stop_pool")

    DEFAULT_CSS = """
    PoolScreen {
        #pool-title { height: 1; padding: 0 1; background: $panel; text-style: bold; }
        #pool-table { height: 1fr; }
        #pool-hint { height: 1; padding: 0 1; color: $text-muted; }
    }
    """

    AUTO_FOCUS = "#pool-table"

    def __init__(
        self,
        rows: RowSource,
        *,
        open_run: Callable[[str], None] | None = None,
        interval: float = 0.5,
        hint: str = "",
        commands: SlotCommands | None = None,
    ) -> None:
        """``interval``: seconds between polls of ``rows`` (the pool's database is read
        each time; a few milliseconds). ``commands``: the row keys (show, clear, resume,
        stop), offered only with them."""
        super().__init__()
        self._source = rows
        self._open_run = open_run
        self.commands = commands
        self._interval = interval
        self._hint = hint
        self._shown: tuple[str, tuple[PoolRow, ...]] | None = None
        self.rows: tuple[PoolRow, ...] = ()

    def compose(self) -> ComposeResult:
        yield Static("", id="pool-title", markup=False)
        table: DataTable[str | Content] = DataTable(
            id="pool-table", cursor_type="row", zebra_stripes=True
        )
        yield table
        yield Static(Content(self._hint), id="pool-hint")
        yield HandrailFooter()

    @property
    def table(self) -> DataTable[str | Content]:
        return self.query_one("#pool-table", DataTable)

    def on_mount(self) -> None:
        for label, width in zip(COLUMNS, WIDTHS, strict=True):
            self.table.add_column(label, width=width, key=label)
        self.refresh_rows()
        self.set_interval(self._interval, self.refresh_rows)

    def refresh_rows(self) -> None:
        """Poll the source and redraw the table when anything changed (the selected row
        stays selected)."""
        title, rows = self._source()
        current = (title, tuple(rows))
        if current == self._shown:
            return
        self._shown = current
        self.rows = current[1]
        self.query_one("#pool-title", Static).update(Content(visible(title, one_line=True)))
        table = self.table
        cursor = table.cursor_row
        table.clear()
        for number, row in enumerate(self.rows):
            cells = astuple(row)[: len(COLUMNS)]
            waiting = Content.styled(row.waiting, "bold $warning") if row.waiting else ""
            # The task is the person's, the URL and title the page's: shown, never obeyed.
            shown = [Content(visible(str(c), one_line=True)) for c in cells]
            shown[5] = waiting if isinstance(waiting, Content) else Content("")
            table.add_row(*shown, key=f"{number}")
        if self.rows:
            table.move_cursor(row=min(cursor, len(self.rows) - 1))

    def action_open(self) -> None:
        if not self.rows or self._open_run is None:
            return
        row = self.rows[self.table.cursor_row]
        if row.key is None:
            self.app.notify(f"Slot {row.slot} has no run to open.", markup=False)
            return
        self._open_run(row.key)

    # --- the row keys: each says what it did, or why not; the two that take something
    # away (clear, stop) ask first ----------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self.SLOT_ACTIONS:
            return self.commands is not None
        return True

    def _selected_slot(self) -> int | None:
        if not self.rows:
            return None
        cell = self.rows[min(self.table.cursor_row, len(self.rows) - 1)].slot
        return int(cell) if cell.isdigit() else None

    def _say(self, text: str) -> None:
        # A pool's error may quote Chrome's or a page's words: shown, never obeyed.
        self.app.notify(visible(text), markup=False, timeout=8)

    def action_show_slot(self) -> None:
        slot = self._selected_slot()
        if slot is not None and self.commands is not None:
            self.run_worker(self._then_say(self.commands.show(slot)), group="pool")

    def action_clear_slot(self) -> None:
        from tui.screens.confirm import ConfirmScreen

        slot = self._selected_slot()
        commands = self.commands
        if slot is None or commands is None:
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.run_worker(self._then_say(commands.clear(slot)), group="pool")

        question = (
            f"Clear slot {slot}? Its tab and browser context close, with their cookies and "
            "logins; it gets a fresh one. A running slot is never cleared."
        )
        self.app.push_screen(ConfirmScreen(question), answered)

    def action_stop_pool(self) -> None:
        from tui.screens.confirm import ConfirmScreen

        commands = self.commands
        if commands is None:
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.run_worker(self._then_say(commands.stop()), group="pool")

        question = (
            f"Stop pool {commands.name}? Its browser closes with every slot. It is refused "
            "while a slot is running."
        )
        self.app.push_screen(ConfirmScreen(question), answered)

    def action_resume_slot(self) -> None:
        slot = self._selected_slot()
        if slot is None or self.commands is None:
            return
        said = self.commands.resume(slot)
        if said.startswith(("handrail", "/", ".")) and " --resume-slot " in said:
            self.app.copy_to_clipboard(said)
            said = f"to go on in slot {slot} (copied): {said}"
        self._say(said)

    async def _then_say(self, done: Awaitable[str]) -> None:
        self._say(await done)
        self.refresh_rows()

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def help_sections(self) -> Iterable[HelpSection]:
        yield ("Pool", [*PoolScreen.BINDINGS, Binding("up,down", "", "Select a slot")])


def round_text(number: int, most: int) -> str:
    """``3/30``; empty before the first round."""
    if not number:
        return ""
    return f"{number}/{most}" if most else str(number)


# --- `handrail pool`: the pool screen for runs started elsewhere ---------------------------


class LogTail:
    """What a run's audit log says so far, read incrementally (whole lines only: a line
    the run is still writing is read once it is complete), as ``replay --follow`` reads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0
        self.round = 0
        self.max_rounds = 0
        self.waiting = ""
        self.outcome = ""

    def poll(self) -> None:
        """Fold in the lines added since the last poll (a missing log: nothing yet)."""
        try:
            with self.path.open("rb") as log:
                log.seek(self._offset)
                chunk = log.read()
        except OSError:
            return
        complete = chunk[: chunk.rfind(b"\n") + 1]
        self._offset += len(complete)
        for raw in complete.splitlines():
            try:
                record = json.loads(raw)
            except ValueError:
                continue
            if isinstance(record, dict):
                self._fold(record)

    def _fold(self, record: dict[str, Any]) -> None:
        kind = record.get("type")
        if kind == "run_start":
            self.max_rounds = int(record.get("max_rounds") or 0)
        elif kind in ("round", "intent", "human_pause") and isinstance(record.get("round"), int):
            self.round = max(self.round, record["round"])
        if kind == "human_pause":
            self.waiting = f"hand-over: {record.get('kind', 'other')}"
        elif kind == "human_resume":
            self.waiting = ""
        elif kind == "run_end":
            self.waiting, self.outcome = "", str(record.get("outcome") or "ended")


class PoolWatch:
    """The rows of a pool whose runs were started elsewhere: its state database joined with
    each slot's audit log. Approvals are not in a log until answered, so only hand-overs
    show as waiting; the approvals are answered where the run was started."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._tails: dict[str, LogTail] = {}

    def rows(self) -> tuple[str, list[PoolRow]]:
        from core.pool.pool import status
        from core.pool.state import PoolError

        try:
            current = status(self.name)
        except PoolError as exc:
            return f"pool {self.name}: {exc}", []
        rows = []
        for slot in current.slots:
            tail = self._tail(slot.audit_path)
            state: str = slot.state
            if tail is not None and tail.outcome and slot.state == "completed":
                state = f"completed · {tail.outcome}"
            rows.append(
                PoolRow(
                    str(slot.slot),
                    state,
                    (slot.run_id or "")[:12],
                    " ".join((slot.task or "").split()),
                    round_text(tail.round, tail.max_rounds) if tail else "",
                    tail.waiting if tail and slot.state == "running" else "",
                    slot.url,
                    key=slot.audit_path,
                )
            )
        running = sum(1 for s in current.slots if s.state == "running")
        alive = "" if current.browser_alive else " · browser not running"
        title = (
            f"pool {self.name} at {shown_endpoint(current.info.endpoint)}{alive} · {running} of "
            f"{len(current.slots)} slots running · runs supervised where they started"
        )
        return title, rows

    def _tail(self, audit_path: str | None) -> LogTail | None:
        if not audit_path:
            return None
        tail = self._tails.get(audit_path)
        if tail is None:
            tail = self._tails[audit_path] = LogTail(Path(audit_path))
        tail.poll()
        return tail


class PoolWatchApp(ObservatoryApp):
    """``handrail pool``: the pool screen; Enter follows a slot's audit log as
    ``replay --follow`` does, Esc comes back."""

    def __init__(self, name: str, *, poll_interval: float = 0.5, **options: Any) -> None:
        super().__init__(**options)
        self.watch_rows = PoolWatch(name)
        self._poll_interval = poll_interval
        self.pool_screen: PoolScreen | None = None

    def on_mount(self) -> None:
        self.pool_screen = PoolScreen(
            self.watch_rows.rows,
            open_run=self.open_log,
            interval=self._poll_interval,
            hint="enter: follow the slot's audit log · s show · c clear · r resume · X stop · "
            "runs are supervised where they were started",
            commands=SlotCommands(self.watch_rows.name),
        )
        self.push_screen(self.pool_screen)

    def open_log(self, audit_path: str) -> None:
        self.push_screen(SlotLogScreen(Path(audit_path), follow=True))


class SlotLogScreen(ReplayScreen):
    """A slot's audit log, followed live; Esc closes the search, else goes back."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Pool", id="pool.back"),
    ]

    def action_back(self) -> None:
        if self.has_class("-searching"):
            self.action_close_search()
        else:
            self.app.pop_screen()
