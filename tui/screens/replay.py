"""Replay: the run screen, read-only, on an audit log (``handrail replay LOG.jsonl``).

The log is never read whole. ``core.audit.LogIndex`` finds line offsets in batches; an
async worker reads the new lines a batch at a time and posts timeline entries, so the
first round is on screen after the first batch. The panes read the selected line again
(``LogIndex.line``, cached). ``--follow`` keeps scanning for lines a live run appends.
Lines that are not records (a torn last line, junk) get their own rows, marked ``!``.
"""

from __future__ import annotations

import asyncio
import bisect
import dataclasses
import json
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, Literal

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.widgets import Input
from textual.worker import Worker, WorkerState

from core.audit import LogIndex, LogProblem, VerifyReport, verify
from core.audit.records import (
    IntentPairing,
    IntentRecord,
    OtherRecord,
    PauseRecord,
    RequestsRecord,
    RoundRecord,
    RunEndRecord,
    RunStartRecord,
    record_of,
)
from core.model.base import RecordedView
from core.visible import visible
from tui.observatory import ObservatoryApp, PaletteCommand
from tui.rounds import (
    RoundView,
    action_target,
    duration_text,
    pretty,
    round_label,
    round_view,
    usage_tokens,
)
from tui.screens.help_screen import HelpSection
from tui.screens.rounds_screen import RoundsScreen
from tui.widgets.header import HeaderFacts
from tui.widgets.panes import PaneText, RoundPanes, dim
from tui.widgets.screenshot_pane import KEY as SCREENSHOT_KEY
from tui.widgets.screenshot_pane import ScreenshotPane, Shown, load_screenshot
from tui.widgets.timeline import TimelineRow

EntryKind = Literal["start", "round", "intent", "pause", "end", "problem", "other"]

SCAN_FIRST_BATCH = 200
"""Lines in the scan's first step: small, so the first round shows at once."""
SCAN_BATCH_LINES = 2000
"""Lines read between later updates of the screen (read 200 at a time, yielding between)."""
FOLLOW_INTERVAL_S = 0.5

_END_MEANING = {
    "success": "approved",
    "aborted": "denied",
    "human_needed": "paused",
}


@dataclass(frozen=True, slots=True)
class ReplayEntry:
    """One timeline row of a replayed log; ``line`` is the 0-based log line it shows."""

    kind: EntryKind
    line: int
    row: TimelineRow
    round: int | None = None
    tags: frozenset[str] = frozenset()
    search: str = ""
    """Lower-cased text a search matches: action, parameters, URL, title, result, error."""
    ts: str | None = None


def _text(*parts: Any) -> str:
    return " ".join(
        p if isinstance(p, str) else json.dumps(p, ensure_ascii=False, default=str)
        for p in parts
        if p
    )[:4000].lower()


def entry_for(line: int, item: dict[str, Any] | LogProblem) -> ReplayEntry | None:
    """The timeline entry for one log line (a record or the problem with it); None for a
    line the timeline does not list (a ``requests`` record)."""
    if isinstance(item, LogProblem):
        label = f"{item.describe()}: {item.text}"
        return ReplayEntry(
            "problem",
            line,
            TimelineRow("!", label, "problem"),
            tags=frozenset({"error"}),
            search=label.lower(),
        )
    record = record_of(item)
    match record:
        case RunStartRecord():
            return ReplayEntry(
                "start",
                line,
                TimelineRow("", f"start: {record.task}", "ok"),
                ts=record.ts,
                search=_text(record.task),
            )
        case RoundRecord():
            return _round_entry(line, record)
        case IntentRecord():
            action = record.action
            label = (
                f"{(action or {}).get('name', '?')} {action_target(action)}".strip()
                + " (no result recorded)"
            )
            row = TimelineRow(str(record.round or "?"), label, "unknown")
            return ReplayEntry(
                "intent", line, row, record.round, frozenset({"error"}), _text(action), record.ts
            )
        case PauseRecord():
            if record.resumed:
                label = f"person chose: {record.response}"
            else:
                label = f"paused: {record.kind}: {record.detail}"
            row = TimelineRow(str(record.round or ""), label, "paused")
            return ReplayEntry(
                "pause",
                line,
                row,
                record.round,
                frozenset({"pause"}),
                _text(label, record.url),
                record.ts,
            )
        case RunEndRecord():
            label = f"end: {record.outcome}" + (f": {record.answer}" if record.answer else "")
            return ReplayEntry(
                "end",
                line,
                TimelineRow("", label, _END_MEANING.get(record.outcome, "error")),
                ts=record.ts,
                search=_text(label, record.reason),
            )
        case RequestsRecord():
            # Not a step: what the pages fetched goes to `handrail export --har`.
            return None
        case OtherRecord():
            return ReplayEntry(
                "other",
                line,
                TimelineRow("", f"record: {record.type}", "skipped"),
                record.round,
                ts=record.ts,
                search=_text(record.type),
            )


def _round_entry(line: int, record: RoundRecord) -> ReplayEntry:
    view = round_view(record, line)
    tags: set[str] = set()
    approval = record.approval
    if approval is not None:
        if approval.decision in ("approved", "edited") and approval.by not in ("policy", "auto"):
            tags.add("approval")
        if approval.decision == "denied":
            tags.add("denial")
    meaning = view.meaning()
    if meaning in ("error", "unknown"):
        tags.add("error")
    result = record.result or {}
    search = _text(
        view.action_json(), record.action_error, record.url, record.title,
        result.get("message"), result.get("error"), approval.note if approval else None,
    )  # fmt: skip
    row = TimelineRow(
        str(record.round), round_label(view), meaning, duration_text(view.duration_ms)
    )
    return ReplayEntry("round", line, row, record.round, frozenset(tags), search, record.ts)


class ReplayRows:
    """``TimelineSource`` over the entries scanned so far."""

    def __init__(self) -> None:
        self.entries: list[ReplayEntry] = []

    def __len__(self) -> int:
        return len(self.entries)

    def row(self, index: int) -> TimelineRow:
        return self.entries[index].row


def _parse_ts(ts: str | None) -> datetime | None:
    if not ts:
        return None
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None


class ReplayScreen(RoundsScreen):
    TIMELINE_TITLE = "Log"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "search", "Search", key_display="/", id="replay.search"),
        Binding("n", "find(1)", "Next match", show=False, id="replay.next_match"),
        Binding("N", "find(-1)", "Previous match", show=False, id="replay.previous_match"),
        Binding("a", "jump('approval', 1)", "Next approval", id="replay.next_approval"),
        Binding(
            "A",
            "jump('approval', -1)",
            "Previous approval",
            show=False,
            id="replay.previous_approval",
        ),
        Binding("d", "jump('denial', 1)", "Next denial", id="replay.next_denial"),
        Binding(
            "D", "jump('denial', -1)", "Previous denial", show=False, id="replay.previous_denial"
        ),
        Binding("e", "jump('error', 1)", "Next error", id="replay.next_error"),
        Binding("E", "jump('error', -1)", "Previous error", show=False, id="replay.previous_error"),
        Binding("p", "jump('pause', 1)", "Next pause", id="replay.next_pause"),
        Binding("P", "jump('pause', -1)", "Previous pause", show=False, id="replay.previous_pause"),
        Binding(
            "right_square_bracket",
            "jump('diverges', 1)",
            "Next divergence",
            key_display="]",
            id="replay.next_divergence",
        ),
        Binding(
            "left_square_bracket",
            "jump('diverges', -1)",
            "Previous divergence",
            key_display="[",
            show=False,
            id="replay.previous_divergence",
        ),
        Binding("escape", "close_search", "Close search", show=False, id="replay.close_search"),
        Binding("5", "pane('screenshot')", "Screenshot", show=False, id="replay.pane_screenshot"),
        Binding("o", "open_picture", "Open the picture", show=False, id="replay.open_picture"),
    ]

    class EntriesScanned(Message):
        """The scan's entries changed from index ``start`` on: drop ours from there and
        append ``entries`` (a torn last line since completed, an intent now paired with its
        round, or simply new lines)."""

        def __init__(
            self,
            start: int,
            entries: list[ReplayEntry],
            tokens: int,
            facts: RunStartRecord | None,
            done: bool,
        ) -> None:
            super().__init__()
            self.start = start
            self.entries = entries
            self.tokens = tokens
            self.facts = facts
            self.done = done

    class Compared(Message):
        """``--against``: the two runs aligned (or why they could not be)."""

        def __init__(
            self, views: dict[int, RecordedView], divergent: set[int], said: str, ok: bool
        ) -> None:
            super().__init__()
            self.views = views
            self.divergent = divergent
            self.said = said
            self.ok = ok

    def __init__(self, path: Path, *, follow: bool = False, against: Path | None = None) -> None:
        self.rows = ReplayRows()
        super().__init__(self.rows)
        self.against = against
        self._against: dict[int, RecordedView] = {}
        """``--against B``: B's aligned step for each of this run's rounds."""
        self._divergent: set[int] = set()
        """The rounds of this run that differ from B's (``]``/``[`` jump between them)."""
        self.path = path
        self.follow = follow
        self.following = follow
        self.index: LogIndex | None = None
        self.facts = RunStartRecord()
        self.tokens = 0
        self.scan_done = False
        self.verify_report: VerifyReport | None = None
        self.verify_started = False
        self.verify_error: str | None = None
        self._verifying = False
        self._verify_again = False
        """--follow: lines arrived while a verification ran; verify again when it ends."""
        self.query_text = ""
        self._source: dict[int, RecordedView] | None = None
        """A rerun's log: the recorded rounds it repeats (read on first use)."""
        self.first_round_shown_at: float | None = None
        """``time.perf_counter()`` after the refresh that first drew a round (for the bench)."""
        self.scan_done_at: float | None = None

    def compose_extra(self) -> ComposeResult:
        yield Input(
            placeholder="search rounds: action, URL, error… (enter finds, escape closes)",
            id="search-bar",
        )

    def make_panes(self) -> RoundPanes:
        return RoundPanes(id="panes", extra=ScreenshotPane())

    @property
    def screenshot_pane(self) -> ScreenshotPane:
        return self.query_one(f"#pane-{SCREENSHOT_KEY}", ScreenshotPane)

    def follow_allowed(self) -> bool:
        return self.follow

    def action_open_picture(self) -> None:
        """``o``: the selected round's screenshot full size, in the picture viewer (or, in
        ``handrail serve``, the browser): the checked picture, encoded afresh
        (tui/viewer.py), never the file the log names."""
        from tui.viewer import open_picture

        shown = self.screenshot_pane.shown
        if shown is None or shown.image is None:
            self.app.notify("No picture for this round.", markup=False)
            return
        cursor = self.timeline.cursor
        entry = self.rows.entries[cursor] if cursor is not None else None
        name = f"round-{entry.round}" if entry is not None and entry.round else "round"
        self.app.notify(visible(open_picture(self.app, shown.image, name)), markup=False)

    def on_mount(self) -> None:
        self.panes.show(
            {
                key: PaneText(dim("reading the log…"))
                for key in ("digest", "model", "action", "result")
            }
        )
        try:
            self.index = LogIndex(self.path)
        except OSError as exc:
            self.app.notify(
                visible(f"Cannot open {self.path}: {exc.strerror or exc}"),
                severity="error",
                markup=False,
            )
            return
        self._scan()
        if self.against is not None:
            self._compare(self.against)

    @work(thread=True, exit_on_error=False, group="compare", name="compare runs")
    def _compare(self, other: Path) -> None:
        """``--against``: align this run with ``other`` (core/rerun/diff.py) and post the
        other's step for each round, and which rounds differ."""
        from core.audit import read_log, verify
        from core.rerun.diff import diff_runs, steps_of, summary_lines

        report = verify(other)
        if not report.ok:
            why = f"{other} is not a verifiable audit log: {report.first_break or report.status}"
            self.post_message(self.Compared({}, set(), why, False))
            return
        theirs = read_log(other).records
        diff = diff_runs(steps_of(read_log(self.path).records), steps_of(theirs))
        rounds = {r.get("round"): r for r in theirs if r.get("type") == "round"}
        views: dict[int, RecordedView] = {}
        for pair in diff.pairs:
            if pair.a is None:
                continue
            differs = f" (differs: {', '.join(pair.kinds)})" if pair.kinds else " (the same)"
            rec = rounds.get(pair.b.round) if pair.b is not None else None
            if rec is None:
                views[pair.a.round] = RecordedView(
                    0, "", "", {}, {}, heading=f"{other.name}: no such step{differs}"
                )
                continue
            action, result, element = rec.get("action"), rec.get("result"), rec.get("element")
            views[pair.a.round] = RecordedView(
                round=int(rec.get("round") or 0),
                url=str(rec.get("url") or ""),
                observation=str(rec.get("observation") or ""),
                action=dict(action) if isinstance(action, dict) else {},
                result=dict(result) if isinstance(result, dict) else {},
                element=element if isinstance(element, str) else None,
                heading=f"{other.name}, round {rec.get('round')}{differs}",
            )
        divergent = {d.a.round for d in diff.differences if d.a is not None}
        lines = summary_lines(diff)
        self.post_message(self.Compared(views, divergent, "; ".join(lines[:1] + lines[-2:]), True))

    @on(Compared)
    def _compared(self, message: Compared) -> None:
        self._against = message.views
        self._divergent = message.divergent
        keys = "; ] and [ go from one divergence to the next" if message.divergent else ""
        self.app.notify(
            visible(f"Against {self.against}: {message.said}{keys}"),
            title="Compared",
            severity="information" if message.ok else "error",
            markup=False,
            timeout=12,
        )
        self._mark_divergent(0)
        self.timeline.rows_changed()
        cursor = self.timeline.cursor
        if cursor is not None and 0 <= cursor < len(self.rows.entries):
            self.show_row(cursor)

    def _mark_divergent(self, start: int) -> None:
        """Tag and mark (``≠``) the rounds that differ from the other run, from ``start``."""
        entries = self.rows.entries
        for i in range(start, len(entries)):
            entry = entries[i]
            if entry.kind != "round" or entry.round not in self._divergent:
                continue
            if "diverges" in entry.tags:
                continue
            row = dataclasses.replace(entry.row, label=f"≠ {entry.row.label}")
            entries[i] = dataclasses.replace(entry, row=row, tags=entry.tags | {"diverges"})

    def _stamp_first_round(self) -> None:
        if self.first_round_shown_at is None:
            self.first_round_shown_at = time.perf_counter()

    def _start_verify(self) -> None:
        """Verify once the first rows are drawn: the verifier parses every line in a thread,
        and would otherwise hold the interpreter while the first round waits to be shown."""
        if not self.verify_started:
            self.verify_started = True
            self._verifying = True
            self._verify()

    def _reverify(self) -> None:
        """--follow: the log grew (or a line changed), so the badge must be earned again."""
        if not self.verify_started:
            return
        if self._verifying:
            self._verify_again = True
            return
        self._verifying = True
        self._verify()

    def on_unmount(self) -> None:
        if self.index is not None:
            self.index.close()

    # --- reading the log -----------------------------------------------------------------

    @work(exit_on_error=False, group="scan", name="scan log")
    async def _scan(self) -> None:
        index = self.index
        assert index is not None
        entries: list[ReplayEntry] = []
        """The worker's own copy of the timeline; messages tell the screen what changed."""
        done = 0
        tail_torn = False
        tokens = 0
        facts: RunStartRecord | None = None
        posted = False
        pending: int | None = None
        """Index from which the screen's entries are stale (None: the screen is up to date)."""
        unposted_lines = 0

        def post(done_now: bool) -> None:
            nonlocal pending, facts, unposted_lines, posted
            start = len(entries) if pending is None else pending
            self.post_message(
                self.EntriesScanned(start, entries[start:], tokens, facts, done=done_now)
            )
            pending, facts, unposted_lines, posted = None, None, 0, True

        pairing = IntentPairing()
        while True:
            for total in index.scan(SCAN_FIRST_BATCH):
                if tail_torn:
                    # The torn last line we showed may be complete now: read it again.
                    done -= 1
                    entries.pop()
                    pending = min(len(entries), pending if pending is not None else len(entries))
                    tail_torn = False
                for line in range(done, total):
                    item = index.line(line)
                    if isinstance(item, LogProblem) and item.kind == "torn":
                        tail_torn = True
                    record = record_of(item) if isinstance(item, dict) else None
                    if isinstance(record, RunStartRecord):
                        facts = record
                    elif isinstance(record, RoundRecord):
                        tokens += usage_tokens(record.usage)
                    elif isinstance(record, IntentRecord):
                        pairing.intent(record.round, line)
                    if pending is None:
                        pending = len(entries)
                    if isinstance(record, RoundRecord):
                        intent_line = pairing.complete(record.round)
                        paired = _entry_at(entries, intent_line)
                        if paired is not None:
                            # An intent and its own round record are one round: keep the round.
                            del entries[paired]
                            pending = min(pending, paired)
                    entry = entry_for(line, item)
                    if entry is None:
                        continue
                    entries.append(entry)
                    if not posted and entries[-1].kind == "round":
                        # The first round goes on screen now, not after the rest of the
                        # first batch (which may hold megabytes of later rounds).
                        post(done_now=False)
                        await asyncio.sleep(0)
                unposted_lines += total - done
                done = total
                # The first step is posted at once; later ones are gathered so the screen
                # redraws a few times a second, not for every step.
                if pending is not None and (not posted or unposted_lines >= SCAN_BATCH_LINES):
                    post(done_now=False)
                await asyncio.sleep(0)
            post(done_now=True)
            if not self.follow:
                return
            await asyncio.sleep(FOLLOW_INTERVAL_S)

    @work(thread=True, exit_on_error=False, group="verify", name="verify log")
    def _verify(self) -> VerifyReport:
        return verify(self.path)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "verify":
            if event.state == WorkerState.SUCCESS and isinstance(event.worker.result, VerifyReport):
                self.verify_report = event.worker.result
                self.verify_error = None
            elif event.state == WorkerState.ERROR:
                self.verify_error = str(event.worker.error)
                self.verify_report = None
            if event.state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
                self._verifying = False
                if self._verify_again:
                    self._verify_again = False
                    self._reverify()
            self.refresh_header()
        elif event.worker.group == "scan" and event.state == WorkerState.ERROR:
            self._start_verify()
            self.app.notify(
                visible(f"Reading the log stopped: {event.worker.error}"),
                severity="error",
                markup=False,
            )

    @on(EntriesScanned)
    def _entries_scanned(self, message: EntriesScanned) -> None:
        entries = self.rows.entries
        had = len(entries)
        del entries[message.start :]
        entries.extend(message.entries)
        if self._divergent:
            self._mark_divergent(message.start)
        self.tokens = message.tokens
        if message.facts is not None:
            self.facts = message.facts
        self.scan_done = message.done
        if message.done and self.scan_done_at is None:
            self.scan_done_at = time.perf_counter()
        self.call_after_refresh(self._start_verify)
        if self.follow and message.entries:
            self._reverify()
        if not entries:
            self.refresh_header()
            if message.done:
                self.panes.show_message("Empty log", Content(f"{self.path} has no lines yet."))
            return
        if self.follow and self.following:
            self.rows_changed()
        else:
            timeline = self.timeline
            timeline.rows_changed()
            if had == 0 or timeline.cursor < 0:
                first = next((i for i, e in enumerate(entries) if e.kind == "round"), 0)
                timeline.select(first)
                self.show_row(first)
            elif message.start <= timeline.cursor:
                timeline.select(min(timeline.cursor, len(entries) - 1), scroll=False)
                self.show_row(timeline.cursor)
            self.refresh_header()

    # --- showing an entry ----------------------------------------------------------------

    def recorded_round(self, number: int | None) -> RecordedView | None:
        """A rerun's round: the recorded round it stands for, if the source log is at hand."""
        if number is None or self.facts.rerun_of is None:
            return None
        if self._source is None:
            from core.rerun.source import source_views

            self._source = source_views(self.facts.rerun_of)
        return self._source.get(number)

    def show_row(self, index: int) -> None:
        entry = self.rows.entries[index]
        item = self.index.line(entry.line) if self.index is not None else None
        panes = self.panes
        shown = Shown(None, dim("—"), absent=self.screenshot_pane.has_class("-absent"))
        if isinstance(item, LogProblem) or item is None:
            text = item.text if isinstance(item, LogProblem) else ""
            title = item.describe() if isinstance(item, LogProblem) else "unreadable line"
            panes.show_message(f"Not a record: {title}", Content(text), pane="digest")
        elif entry.kind == "round":
            record = record_of(item)
            if isinstance(record, RoundRecord):
                if self.against is not None:
                    recorded = self._against.get(record.round)
                else:
                    recorded = self.recorded_round(record.source_round)
                panes.show_round(round_view(record, entry.line, recorded))
                shown = load_screenshot(self.path, record.screenshot)
            if self.first_round_shown_at is None:
                self.call_after_refresh(self._stamp_first_round)
        elif entry.kind == "intent":
            view = RoundView(number=entry.round or 0, line=entry.line, phase="done")
            action = item.get("action")
            view.action = action if isinstance(action, dict) else None
            panes.show_round(view)
            panes.pane("result").show(
                PaneText(
                    Content(
                        "The action was about to run, and no result was recorded after it: its effect is unknown."
                    )
                )
            )
        elif entry.kind == "start":
            panes.show_message(
                "Run started",
                Content(pretty({k: v for k, v in item.items() if k not in ("prev", "mac")})),
                pane="digest",
            )
        elif entry.kind == "end":
            panes.show_message(
                "Run ended",
                Content(pretty({k: v for k, v in item.items() if k not in ("prev", "mac")})),
            )
        else:
            panes.show_message("Record", Content(pretty(item)))
        self.screenshot_pane.show_screenshot(shown)
        self.refresh_header()

    def header_facts(self) -> HeaderFacts:
        facts = self.facts
        if self.verify_report is not None:
            report = self.verify_report
            if report.status == "sealed":
                state, meaning = f"replay · verified, sealed ({report.records} records)", "approved"
            elif report.ok:
                state = f"replay · verified {report.records} records: {report.seal_text()}"
                meaning = "unknown"
                if report.status == "incomplete":
                    state += ", run incomplete"
            else:
                state, meaning = f"replay · NOT verified: {report.first_break}", "error"
        elif self.verify_error is not None:
            state, meaning = f"replay · could not verify: {self.verify_error}", "error"
        else:
            state, meaning = "replay · verifying…", ""
        if not self.scan_done:
            state += " · reading"
        cursor = self.timeline.cursor if self.is_mounted else -1
        entry = self.rows.entries[cursor] if 0 <= cursor < len(self.rows.entries) else None
        elapsed = None
        start, at = _parse_ts(facts.ts), _parse_ts(entry.ts if entry else None)
        if start is not None and at is not None:
            elapsed = max(0.0, (at - start).total_seconds())
        return HeaderFacts(
            task=facts.task or str(self.path),
            model=facts.model,
            browser=facts.browser,
            state=state,
            state_meaning=meaning,
            round=(entry.round or 0) if entry else 0,
            max_rounds=facts.max_rounds,
            elapsed_s=elapsed,
            tokens=self.tokens,
        )

    # --- finding -------------------------------------------------------------------------

    def _find(
        self,
        matches: Callable[[ReplayEntry], bool],
        direction: int,
        what: str,
        *,
        counted: bool = False,
    ) -> None:
        """Select the next row ``matches`` holds for, ``direction`` 1 or -1, round the end.
        ``counted``: say which match it is of how many ("match 3/17"), as a search does, and
        when the search went round the end."""
        entries = self.rows.entries
        if not entries:
            return
        count = len(entries)
        start = (
            self.timeline.cursor if self.timeline.cursor >= 0 else (-1 if direction > 0 else count)
        )
        for step in range(1, count + 1):
            i = (start + direction * step) % count
            if matches(entries[i]):
                self.select_row(i)
                if counted:
                    self._say_which(
                        matches, i, wrapped=(i <= start) if direction > 0 else (i >= start)
                    )
                return
        self.app.notify(f"No {what} in the log{'' if self.scan_done else ' so far'}.", markup=False)

    def _say_which(self, matches: Callable[[ReplayEntry], bool], at: int, *, wrapped: bool) -> None:
        found = [k for k, entry in enumerate(self.rows.entries) if matches(entry)]
        where = f"match {found.index(at) + 1}/{len(found)}"
        if not self.scan_done:
            where += " so far"
        if wrapped:
            where += ", from the top again" if at == found[0] else ", from the bottom again"
        self.app.notify(where, markup=False, timeout=2)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # ] and [ only mean something against another run (--against).
        if action == "jump" and parameters[:1] == ("diverges",):
            return self.against is not None
        return super().check_action(action, parameters)

    def action_jump(self, tag: str, direction: int) -> None:
        names = {
            "approval": "approval",
            "denial": "denial",
            "error": "error",
            "pause": "pause",
            "diverges": "divergence",
        }
        self._find(lambda e: tag in e.tags, direction, names.get(tag, tag))

    def action_search(self) -> None:
        self.add_class("-searching")
        bar = self.query_one("#search-bar", Input)
        bar.value = ""  # a new search (n and N go on with the last one)
        bar.focus()

    def action_close_search(self) -> None:
        if self.has_class("-searching"):
            self.remove_class("-searching")
            self.timeline.focus()

    def action_find(self, direction: int) -> None:
        if not self.query_text:
            self.action_search()
            return
        needle = self.query_text.lower()
        self._find(
            lambda e: needle in e.search, direction, f"match for {self.query_text!r}", counted=True
        )

    @on(Input.Submitted, "#search-bar")
    def _search_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.query_text = event.value.strip()
        self.action_close_search()
        if self.query_text:
            self.action_find(1)

    # --- help and palette ----------------------------------------------------------------

    def help_sections(self) -> Iterable[HelpSection]:
        yield ("Replay", ReplayScreen.BINDINGS)
        yield from super().help_sections()

    def palette_commands(self) -> Iterable[PaletteCommand]:
        yield ("Search rounds", "Find rounds by action, URL or error (/)", self.action_search)
        for tag, title in (
            ("approval", "approval"),
            ("denial", "denial"),
            ("error", "error"),
            ("pause", "pause"),
        ):
            yield (
                f"Next {title}",
                f"Jump to the next {title}",
                partial(self.action_jump, tag, 1),
            )
            yield (
                f"Previous {title}",
                f"Jump to the previous {title}",
                partial(self.action_jump, tag, -1),
            )
        yield from super().palette_commands()


def _entry_at(entries: list[ReplayEntry], line: int | None) -> int | None:
    """Index of the entry showing log line ``line`` (entries are in line order)."""
    if line is None:
        return None
    i = bisect.bisect_left(entries, line, key=lambda e: e.line)
    return i if i < len(entries) and entries[i].line == line else None


class ReplayApp(ObservatoryApp):
    """The observatory on an audit log. Read-only: nothing here acts on a browser."""

    def __init__(
        self,
        path: Path,
        *,
        follow: bool = False,
        against: Path | None = None,
        theme: str | None = None,
        config_dir: Path | None = None,
        theme_dirs: Sequence[Path] | None = None,
        persist_theme: bool = True,
    ) -> None:
        super().__init__(
            theme=theme, config_dir=config_dir, theme_dirs=theme_dirs, persist_theme=persist_theme
        )
        self.path = path
        self.follow = follow
        self.against = against
        self.replay_screen: ReplayScreen | None = None

    def on_mount(self) -> None:
        self.replay_screen = ReplayScreen(self.path, follow=self.follow, against=self.against)
        self.push_screen(self.replay_screen)


def run_replay(
    path: Path, *, follow: bool = False, theme: str | None = None, against: Path | None = None
) -> int:
    """Replay ``path`` in this terminal until the person quits. Returns 0, or 2 when the
    file cannot be opened (the reason is printed to stderr)."""
    try:
        LogIndex(path).close()
    except OSError as exc:
        print(f"handrail replay: cannot open {path}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    result = ReplayApp(path, follow=follow, theme=theme, against=against).run()
    return result if result is not None else 0
