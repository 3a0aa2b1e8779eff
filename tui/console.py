"""Console mode (``--no-tui``): a compact round-by-round report and terminal approvals.

For scripts and CI. When stdin is a terminal, approvals are asked on it (y / n / e / A /
q); otherwise nobody can answer, so an action that needs approval — or a hand-over to a
person — ends the run with exit 3 and says what waited. Uses no Textual.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import threading
from collections.abc import Callable
from typing import Any, TextIO

from core.guard.decision import ApprovalDecision
from core.run.budget import spent_line
from core.run.events import (
    ActionDone,
    ActionParsed,
    ApprovalRequest,
    Event,
    HumanNeeded,
    HumanRequest,
    HumanResponse,
    ModelReplied,
    NoSupervisor,
    Observed,
    RoundStarted,
    RunFinished,
    RunStarted,
)
from core.visible import visible


async def _in_daemon_thread(read: Callable[[], str]) -> str:
    """``read()`` in a thread of its own that does not hold the process: a run cancelled by a
    signal while it waits for a line from the terminal ends at once (``asyncio.to_thread``
    would make the loop's shutdown wait for that line)."""
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[str] = loop.create_future()

    def settle(line: str | None, error: BaseException | None) -> None:
        if answer.done():
            return
        if error is not None:
            answer.set_exception(error)
        else:
            answer.set_result(line or "")

    def work() -> None:
        line: str | None = None
        error: BaseException | None = None
        try:
            line = read()
        except Exception as exc:
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
            loop.call_soon_threadsafe(settle, line, error)

    threading.Thread(target=work, name="console answer", daemon=True).start()
    return await answer


class ConsoleReporter:
    """An event sink printing one short block per round."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self._max_rounds = 0

    def _print(self, text: str = "") -> None:
        print(visible(text), file=self.out, flush=True)

    def __call__(self, event: Event) -> None:
        match event:
            case RunStarted():
                self._max_rounds = event.max_rounds
                self._print(f"handrail: {event.task}")
                self._print(f"  model: {event.model} · browser: {event.browser}")
                if event.audit_path:
                    self._print(f"  audit log: {event.audit_path}")
            case RoundStarted():
                self._print(f"\nround {event.round}/{event.max_rounds}")
            case Observed():
                self._print(f"  page: {_short(event.url, 100)} — {_short(event.title, 60)}")
            case ModelReplied():
                text = " ".join(
                    b.get("text", "") for b in event.output if b.get("type") == "text"
                ).strip()
                # A rerun's round says who decided it: the recording, or the model.
                who = event.origin.decided_by if event.origin is not None else "model"
                if text:
                    self._print(f"  {who}: {_short(text, 160)}")
                elif event.origin is not None:
                    self._print(f"  {who}: recorded round {event.origin.source_round}")
            case ActionParsed():
                if event.action is None:
                    self._print(f"  ✗ no action: {_short(event.error or '', 200)}")
                else:
                    params = json.dumps(event.action.params, ensure_ascii=False)
                    self._print(f"  → {event.action.name} {_short(params, 140)}")
                    if event.action.reason:
                        self._print(f"    reason: {_short(event.action.reason, 160)}")
            case ActionDone():
                r = event.result
                mark = "✓" if r.ok else ("?" if r.outcome == "unknown" else "✗")
                decision = event.approval.decision
                by = f" [{decision}]" if decision not in (None, "not_needed") else ""
                text = r.message if r.ok else (r.error or r.message)
                self._print(f"  {mark}{by} {_short(text, 200)}")
                for notice in r.notices:
                    self._print(f"    notice: {_short(notice, 200)}")
            case HumanNeeded():
                req = event.request
                self._print(f"  ⏸ needs a person: {req.kind} — {_short(req.detail, 200)}")
            case RunFinished():
                self._print(f"\n{_outcome_line(event)}")
                if event.answer and event.answer != event.reason:
                    self._print(f"answer: {event.answer}")
                if event.spent is not None:
                    self._print(f"spent: {spent_line(event.spent)}")
            case _:
                pass


def _outcome_line(event: RunFinished) -> str:
    words = {
        "success": "finished: success",
        "failure": "finished: not successful",
        "gave_up": "gave up",
        "round_limit": "stopped at the round limit",
        "aborted": "aborted",
        "human_needed": "stopped: a person is needed",
        "error": "stopped on an error",
        "budget": "stopped: the budget is spent",
    }
    rounds = "1 round" if event.rounds == 1 else f"{event.rounds} rounds"
    line = f"{words.get(event.outcome, event.outcome)} after {rounds} (exit {event.exit_code})"
    if event.reason and event.outcome != "success":
        line += f"\n{event.reason}"
    return line


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ConsoleSupervisor:
    """Asks on the terminal when stdin is one; otherwise raises :class:`NoSupervisor`."""

    def __init__(
        self,
        *,
        interactive: bool | None = None,
        out: TextIO | None = None,
        inp: TextIO | None = None,
    ) -> None:
        self.inp = inp or sys.stdin
        self.out = out or sys.stdout
        self.interactive = self.inp.isatty() if interactive is None else interactive

    @property
    def holder(self) -> str | None:
        """The person at this terminal answers, when there is one; otherwise a terminal
        attached with ``handrail attach`` may."""
        return f"the run's own terminal (pid {os.getpid()})" if self.interactive else None

    async def _ask(self, prompt: str) -> str:
        def read() -> str:
            self.out.write(visible(prompt))
            self.out.flush()
            line = self.inp.readline()
            if not line:
                raise EOFError
            return line.strip()

        try:
            return await _in_daemon_thread(read)
        except EOFError:
            raise NoSupervisor("the terminal closed before an answer") from None

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        if not self.interactive:
            raise NoSupervisor("stdin is not a terminal, so nobody can approve it")
        action = request.action
        # The action and its reason were printed just above (ConsoleReporter's "→" line),
        # a type's text withheld there as in the log; the text is shown here, to the person
        # deciding on it, once, as "Text:".
        lines = [
            "",
            f"  approval needed{' (risky)' if request.risky else ''}: {request.why}",
            f"    {action.name} on {request.url}",
        ]
        if request.asked_by:
            lines.append(f"    asked by {request.asked_by}")
        if request.remembered:
            lines.append(f"    {request.remembered}")
        if request.element_line:
            lines.append(f"    element: {request.element_line}")
        for detail in request.details:
            if request.element_line and detail.split(": ", 1)[-1] == request.element_line:
                continue  # "Field: [1]<input>..." says the element line again
            if detail.startswith("Text: ") and action.name == "type":
                detail += "  (to you only: the log shows it withheld until it is typed)"
            lines.append(f"    {detail}")
        print(visible("\n".join(lines)), file=self.out, flush=True)
        site = (
            visible(f"  [s] allow {action.name} on {request.site} from now on", one_line=True)
            if request.site
            else ""
        )
        while True:
            answer = await self._ask(
                f"  [y] approve  [n] deny  [e] edit  [A] approve all of this kind{site}  "
                "[x] abort > "
            )
            if answer in ("y", "yes", "a"):
                return ApprovalDecision("approved")
            if answer == "A" and not request.risky:
                return ApprovalDecision("approved", approve_kind_for_run=True)
            if answer == "s" and request.site:
                return ApprovalDecision("approved", remember_for_site=True)
            if answer in ("n", "no", "d"):
                note = await self._ask("  note for the model (optional) > ")
                return ApprovalDecision("denied", note=note or None)
            if answer in ("x", "q", "quit", "abort"):  # x as in the observatory; q still works
                return ApprovalDecision("abort")
            if answer in ("e", "edit"):
                edited = await self._edit(action.params)
                if edited is not None:
                    return ApprovalDecision("edited", edited_params=edited)

    async def _edit(self, params: dict[str, Any]) -> dict[str, Any] | None:
        edited: dict[str, Any] = {}
        for key, value in params.items():
            shown = visible(json.dumps(value, ensure_ascii=False))
            answer = await self._ask(f"    {key} [{shown}] (JSON, Enter keeps) > ")
            if not answer:
                continue
            try:
                edited[key] = json.loads(answer)
            except ValueError:
                edited[key] = answer if isinstance(value, str) else value
        return edited or None

    async def human(self, request: HumanRequest) -> HumanResponse:
        if not self.interactive:
            raise NoSupervisor("stdin is not a terminal, so nobody can take over")
        print(
            visible(f"\n  ⏸ {request.kind}: {request.detail}\n    page: {request.url}"),
            file=self.out,
            flush=True,
        )
        if request.headless:
            print(
                "    The browser is headless: you cannot act in it from here.",
                file=self.out,
                flush=True,
            )
            answer = await self._ask("  [x] abort  [r] resume anyway > ")
        else:
            answer = await self._ask(
                "  Do what is needed in the browser window, then [r] resume or [x] abort > "
            )
        return "resume" if answer.lower() in ("r", "resume") else "abort"
