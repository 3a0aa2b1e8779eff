"""The pool screen: a tab pool's slots as a table refreshed live, with each slot's run.

It knows nothing of where the rows come from: ``handrail fleet`` joins the pool's state with
its own runs (round n/max, what each waits for); ``handrail pool`` reads the runs' audit
logs as ``replay --follow`` does. Enter opens the selected row's run, when there is one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import astuple, dataclass
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Static

from tui.footer import HandrailFooter
from tui.help_screen import HelpSection


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
WIDTHS = (4, 9, 12, 28, 7, 22, 30)

RowSource = Callable[[], tuple[str, Sequence[PoolRow]]]
"""Returns the title line (the pool, its browser, counts) and the rows, oldest slot first."""


class PoolScreen(Screen[None]):
    """The slots of one pool; ``open_run(key)`` is called on Enter for a row with a key."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Open run", id="pool.open"),
    ]

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
    ) -> None:
        """``interval``: seconds between polls of ``rows`` (the pool's database is read
        each time; a few milliseconds)."""
        super().__init__()
        self._source = rows
        self._open_run = open_run
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
        self.query_one("#pool-title", Static).update(Content(title))
        table = self.table
        cursor = table.cursor_row
        table.clear()
        for number, row in enumerate(self.rows):
            cells = astuple(row)[: len(COLUMNS)]
            waiting = Content.styled(row.waiting, "bold $warning") if row.waiting else ""
            shown = [Content(str(c)) for c in cells]
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
