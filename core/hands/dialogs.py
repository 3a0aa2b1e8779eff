"""JavaScript dialogs (alert, confirm, prompt, beforeunload): answered as they open.

An alert is dismissed and a beforeunload accepted at once; a confirm or prompt goes to the
``decider`` (the person, through the agent) when there is one, and is cancelled otherwise.
While a decider is deciding, the action runner stops its clock (:attr:`Dialogs.deciding`).

A dialog storm (:data:`STORM_DIALOGS` dialogs within :data:`STORM_SECONDS` of the page's own
time, i.e. not counting time a person spent deciding) makes the tab hostile: every further
dialog of it is dismissed at once, its scripts are stopped and the tab is closed
(``on_storm``); the next action continues in a new tab, and the model and the person read why.

A person is asked about one dialog of a flood, never about the flood: a confirm or prompt a
tab opens within :data:`STORM_SECONDS` (page time) of the decider's answer to its previous
one is cancelled without asking, and :data:`FLOOD_DIALOGS` dialogs in that window make the
tab hostile (a page that answers an answer with another dialog at once is not asking).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Literal

import structlog

from core.browser.browser import Tab
from core.cdp import JSON, CDPError
from core.hands.messages import clip, with_article
from core.result import first_line

log = structlog.get_logger("handrail.page")

DialogType = Literal["alert", "confirm", "prompt", "beforeunload"]

STORM_DIALOGS, STORM_SECONDS = 20, 2.0
FLOOD_DIALOGS = 3
"""Dialogs within STORM_SECONDS of an answer by the decider that make the tab hostile."""


@dataclass(frozen=True, slots=True)
class DialogInfo:
    """A JavaScript dialog the page opened."""

    type: DialogType
    message: str
    default_prompt: str
    url: str


DialogDecider = Callable[[DialogInfo], Awaitable[tuple[bool, str | None]]]
"""Decides a confirm/prompt dialog: ``(accept, prompt text or None for the default)``."""


@dataclass
class DialogRecord:
    info: DialogInfo
    answer: str = "waiting for a decision"
    done: bool = False
    asks_decider: bool = False
    unasked: bool = False
    """A confirm/prompt cancelled without asking: it came right after an answer."""


class Dialogs:
    """Every dialog the pages opened, in order, and the answering of them."""

    def __init__(self) -> None:
        self.decider: DialogDecider | None = None
        self.open: DialogInfo | None = None
        self.records: list[DialogRecord] = []
        self.reported = 0
        self.deciding = 0
        self.no_decision_pending = asyncio.Event()
        self.no_decision_pending.set()
        self._tasks: set[asyncio.Task[None]] = set()
        self.on_storm: Callable[[Tab], Awaitable[None]] | None = None
        """Stops a hostile tab (set by the hands: scripts off, tab closed)."""
        self.hostile: dict[str, str] = {}
        """target id → why the tab was treated as hostile, worded for the model."""
        self._recent: dict[str, deque[float]] = {}
        self._answered_at: dict[str, float] = {}
        """target id → page-clock time the decider last answered one of its dialogs."""
        self._deciding_since = 0.0
        self._decided_seconds = 0.0
        self._storm_notices: list[str] = []

    def _page_clock(self) -> float:
        """Seconds that exclude time spent waiting for a person's decision."""
        now = time.monotonic()
        waiting = now - self._deciding_since if self.deciding else 0.0
        return now - self._decided_seconds - waiting

    def on_opening(self, tab: Tab, p: JSON) -> None:
        """``Page.javascriptDialogOpening`` in ``tab``: record it and answer it in a task."""
        if tab.target_id in self.hostile:
            self._spawn(self._dismiss(tab, p))
            return
        now = self._page_clock()
        recent = self._recent.setdefault(tab.target_id, deque(maxlen=STORM_DIALOGS))
        recent.append(now)
        answered = self._answered_at.get(tab.target_id)
        after_answer = answered is not None and now - answered <= STORM_SECONDS
        if len(recent) == STORM_DIALOGS and recent[-1] - recent[0] <= STORM_SECONDS:
            self._storm(
                tab,
                p,
                f"opened {STORM_DIALOGS} dialogs within {STORM_SECONDS:g} s (a dialog storm)",
            )
            return
        if after_answer and sum(1 for t in recent if t >= (answered or 0.0)) >= FLOOD_DIALOGS:
            self._storm(
                tab,
                p,
                f"opened {FLOOD_DIALOGS} more dialogs within {STORM_SECONDS:g} s of the answer "
                "to its last one (a dialog storm)",
            )
            return
        kind = p.get("type", "alert")
        if kind not in ("alert", "confirm", "prompt", "beforeunload"):
            kind = "alert"
        info = DialogInfo(
            type=kind,
            message=str(p.get("message", "")),
            default_prompt=str(p.get("defaultPrompt", "")),
            url=str(p.get("url", tab.url)),
        )
        record = DialogRecord(info)
        self.records.append(record)
        self.open = info
        # Answering needs an await, and this runs in the CDP reader: hand it to a task.
        # The action that opened the dialog is blocked in its CDP call until we answer.
        if info.type in ("confirm", "prompt") and after_answer:
            record.unasked = True
        elif info.type in ("confirm", "prompt") and self.decider is not None:
            record.asks_decider = True
            if not self.deciding:
                self._deciding_since = time.monotonic()
            self.deciding += 1
            self.no_decision_pending.clear()
        self._spawn(self._answer(tab, record))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _storm(self, tab: Tab, p: JSON, what: str, *, blocked: bool = False) -> None:
        url = str(p.get("url", tab.url))
        why = (
            f"the page at {url} {what}; handrail treated the tab as hostile, stopped its "
            "scripts and closed it"
        )
        self.hostile[tab.target_id] = why
        self._storm_notices.append(why + ". The next action continues in a new tab.")
        log.warning("page.dialog_storm", url=url, what=what)
        self._spawn(self._stop_hostile(tab, p, blocked=blocked))

    async def _stop_hostile(self, tab: Tab, p: JSON, *, blocked: bool) -> None:
        # A tab blocked by a dialog nobody can answer cannot run anything: just close it.
        if not blocked:
            try:
                await tab.send("Emulation.setScriptExecutionDisabled", {"value": True}, timeout=5)
            except CDPError as exc:
                log.info("page.storm_scripts_not_stopped", error=first_line(exc))
            await self._dismiss(tab, p)
        if self.on_storm is not None:
            try:
                await self.on_storm(tab)
            except CDPError as exc:
                log.warning("page.storm_tab_not_closed", error=first_line(exc))

    async def _dismiss(self, tab: Tab, p: JSON) -> None:
        params: JSON = {"accept": p.get("type") == "beforeunload"}
        try:
            await tab.send("Page.handleJavaScriptDialog", params, timeout=5)
        except CDPError as exc:
            log.info("page.dialog_not_dismissed", error=first_line(exc))

    def storm_notices(self) -> list[str]:
        """Tabs made hostile since last asked, worded once each."""
        notices, self._storm_notices = self._storm_notices, []
        return notices

    def on_closed(self) -> None:
        self.open = None

    async def _answer(self, tab: Tab, record: DialogRecord) -> None:
        info = record.info
        accept, text = True, None
        decider = self.decider
        try:
            if info.type in ("confirm", "prompt"):
                if not record.asks_decider or decider is None:
                    accept = False
                else:
                    try:
                        accept, text = await decider(info)
                    except Exception as exc:
                        log.warning("page.dialog_decider_failed", error=repr(exc))
                        accept, text = False, None
        finally:
            if record.asks_decider:
                self.deciding -= 1
                if not self.deciding:
                    self._decided_seconds += time.monotonic() - self._deciding_since
                    self.no_decision_pending.set()
                self._answered_at[tab.target_id] = self._page_clock()
            if info.type == "prompt" and accept and text is None:
                text = info.default_prompt
            params: JSON = {"accept": accept}
            if info.type == "prompt" and accept:
                params["promptText"] = text or ""
            record.answer = dialog_answer(info, accept, text, decided=record.asks_decider)
            if record.unasked:
                what = "answered Cancel" if info.type == "confirm" else "cancelled the prompt"
                record.answer = (
                    f"{what} without asking: it opened right after the answer to the page's "
                    "previous dialog"
                )
            try:
                await tab.send("Page.handleJavaScriptDialog", params, timeout=10)
            except CDPError as exc:
                record.answer += f" (answering failed: {first_line(exc)})"
                if "No dialog is showing" not in str(exc) and tab.target_id not in self.hostile:
                    # A dialog nobody can answer blocks the tab for good (a beforeunload
                    # opened again while the page was already leaving): close the tab.
                    self._storm(
                        tab,
                        {"url": info.url, "type": info.type},
                        f"opened {with_article(info.type)} dialog that could not be answered "
                        f"({first_line(exc)})",
                        blocked=True,
                    )
            record.done = True
            if self.open is info:
                self.open = None

    def since(self, mark: int) -> list[DialogRecord]:
        """The dialogs opened since ``mark`` (a length of :attr:`records`), marked reported."""
        found = self.records[mark:]
        if found:
            self.reported = max(self.reported, len(self.records))
        return found

    def unreported_notices(self) -> list[str]:
        """Dialogs handled outside an action, worded for the next round."""
        notices: list[str] = []
        for record in self.records[self.reported :]:
            if record.done:
                notices.append(
                    f"the page opened {with_article(record.info.type)} dialog "
                    f"({clip(record.info.message, 200)!r}): {record.answer}"
                )
        self.reported = len(self.records)
        return notices


def dialog_answer(info: DialogInfo, accept: bool, text: str | None, *, decided: bool) -> str:
    if info.type == "alert":
        return "dismissed it (OK)"
    if info.type == "beforeunload":
        return "accepted leaving the page"
    who = "" if decided else " (the default when nobody decides)"
    if info.type == "confirm":
        return f"answered OK{who}" if accept else f"answered Cancel{who}"
    if accept:
        return f"answered {clip(text or '', 100)!r}"
    return f"cancelled the prompt{who}"
