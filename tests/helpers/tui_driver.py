"""Driving the observatory in tests: a UI test driver, fixed logs to replay, and waiting on
the app (wait_until).

The UI test driver is not the agent, and not a model: a small coroutine passed to
``HandrailApp`` as ``run``, it emits realistic core events for a few scripted rounds and
calls the supervisor exactly where the agent would, recording what the person decided. Real
runs (scripted plan, headless Chromium, fixture site) are tested elsewhere; this only
exercises the screens and keys.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from textual.pilot import Pilot

from core.actions import Action
from core.audit.records import ApprovalRecord
from core.guard.decision import ApprovalDecision, HumanKind
from core.result import ActionResult, Changes
from core.run.events import (
    ActionDone,
    ActionIntent,
    ActionParsed,
    ApprovalGiven,
    ApprovalNeeded,
    ApprovalRequest,
    EventSink,
    HumanNeeded,
    HumanRequest,
    HumanReturned,
    ModelReplied,
    Observed,
    RoundStarted,
    RunFinished,
    RunStarted,
    Supervisor,
)
from tests.helpers.waiting import scaled

# Observations in the form the agent sends them (see Agent._observe and core/model/envelope.py).
BOOKING_DIGEST = """<browser_state>
URL: http://127.0.0.1:8765/search
Title: Book a train
Tabs:
  tab 0 (current): Book a train — http://127.0.0.1:8765/search
Scroll: top of page, 1.4 pages below

Find your train
[3]<a href=/>Home</a>
[4]<a href=/help>Help</a>
*[13]<input type=text name=from placeholder="From">From</input>
*[14]<input type=text name=to placeholder="To">To</input>
[15]<input type=date name=date>Date</input>
[16]<input type=checkbox>Window seat</input>
[12]<button type=submit>Search trains</button>
~[40]<a href=/terms>Terms and conditions</a>
</browser_state>"""


RESULTS_DIGEST = """<browser_state>
URL: http://127.0.0.1:8765/results?from=Paris&to=Lyon
Title: 3 trains found
Tabs:
  tab 0 (current): 3 trains found — http://127.0.0.1:8765/results?from=Paris&to=Lyon
Scroll: the whole page fits in the viewport

3 trains from Paris to Lyon
08:04 → 10:01  €39
[21]<button>Book 08:04</button>
09:34 → 11:30  €45
*[22]<button>Book 09:34</button>
</browser_state>"""


MARKUP_DIGEST = """<browser_state>
URL: http://127.0.0.1:8765/files
Title: [bold]Files[/bold]
Tabs:
  tab 0 (current): [bold]Files[/bold] — http://127.0.0.1:8765/files
Scroll: the whole page fits in the viewport

Path: [/path] and [/] and [red]not red[/red] and [link=x]y[/link] and \\[escaped]
[5]<a href=/x>[bold]open[/bold]</a>
</browser_state>"""


@dataclass
class RoundScript:
    """One scripted round as the agent would report it."""

    digest: str
    action: Action
    url: str = "http://127.0.0.1:8765/search"
    title: str = "Book a train"
    text: str = ""
    """Prose the model wrote before its tool call."""
    element_line: str | None = None
    ask: str | None = None
    """Why the action needs approval (None: it runs without asking)."""
    risky: bool = False
    human: HumanKind | None = None
    human_detail: str = ""
    result: ActionResult = field(default_factory=lambda: ActionResult.success("done"))


def booking_rounds() -> list[RoundScript]:
    return [
        RoundScript(
            digest=BOOKING_DIGEST,
            text="I'll fill in where the trip starts.",
            action=Action(
                "type",
                {"index": 13, "text": "Paris", "clear": True},
                "Fill the departure city",
                "tu_1",
            ),
            element_line='*[13]<input type=text name=from placeholder="From">From</input>',
            ask="every page-changing action asks (--approve ask)",
            result=ActionResult.success('Typed "Paris" into [13] From.', Changes(dom_changed=True)),
        ),
        RoundScript(
            digest=BOOKING_DIGEST.replace(
                'placeholder="From">', 'placeholder="From" value="Paris">'
            ),
            action=Action("click", {"index": 12}, "Search for trains", "tu_2"),
            element_line="[12]<button type=submit>Search trains</button>",
            ask="submits a form to 127.0.0.1:8765/results",
            risky=True,
            result=ActionResult.success(
                "Clicked [12] Search trains; the page changed to 3 trains found.",
                Changes(url_changed=True, title_changed=True, dom_changed=True, new_elements=4),
            ),
        ),
        RoundScript(
            digest=RESULTS_DIGEST,
            url="http://127.0.0.1:8765/results?from=Paris&to=Lyon",
            title="3 trains found",
            text="The cheapest train is at 08:04 for €39.",
            action=Action(
                "finish", {"success": True, "answer": "08:04 → 10:01, €39"}, "Found it", "tu_3"
            ),
            result=ActionResult.success("Finished."),
        ),
    ]


@dataclass
class UiTestDriver:
    """UI test driver (see module docstring). Call it as the app's ``run`` factory."""

    rounds: list[RoundScript] = field(default_factory=booking_rounds)
    task: str = "Find the cheapest train from Paris to Lyon tomorrow"
    max_rounds: int = 20
    headless: bool = False
    hold: bool = False
    """Wait (until cancelled) after the last round instead of finishing: a run still thinking."""
    thinking: bool = False
    """After the last round, observe one more and wait (until cancelled) for a model that
    never answers: ``waiting`` is then ``model``."""
    decisions: list[ApprovalDecision] = field(default_factory=list)
    human_responses: list[str] = field(default_factory=list)
    waiting: str = ""
    """What the driver is waiting for right now: ``approval``, ``human``, ``hold`` or ``""``."""
    cancelled: bool = False
    cancelled_by: str = ""
    """The message the run was cancelled with (who ended it, for its ``run_end`` reason)."""

    async def __call__(self, sink: EventSink, supervisor: Supervisor) -> RunFinished:
        try:
            return await self._run(sink, supervisor)
        except asyncio.CancelledError as cancelled:
            self.cancelled = True
            self.cancelled_by = str(cancelled.args[0]) if cancelled.args else ""
            raise

    async def _run(self, sink: EventSink, supervisor: Supervisor) -> RunFinished:
        browser = "launched, headless" if self.headless else "launched, headed"
        sink(
            RunStarted("run-ui-test", self.task, "scripted plan: ui-test", browser, self.max_rounds)
        )
        for number, script in enumerate(self.rounds, 1):
            sink(RoundStarted(number, self.max_rounds))
            sink(Observed(number, script.url, script.title, script.digest, duration_ms=120))
            output: list[dict[str, object]] = []
            if script.text:
                output.append({"type": "text", "text": script.text})
            output.append(
                {
                    "type": "tool_use",
                    "id": script.action.tool_use_id,
                    "name": script.action.name,
                    "input": {**script.action.params, "reason": script.action.reason},
                }
            )
            sink(
                ModelReplied(
                    number, tuple(output), {"input_tokens": 1500 + number, "output_tokens": 60}, 900
                )
            )
            sink(ActionParsed(number, script.action, element_line=script.element_line))
            action = script.action
            if script.human is not None:
                request = HumanRequest(
                    number,
                    script.human,
                    script.human_detail,
                    script.url,
                    script.title,
                    self.headless,
                )
                sink(HumanNeeded(request))
                self.waiting = "human"
                response = await supervisor.human(request)
                self.waiting = ""
                self.human_responses.append(response)
                sink(HumanReturned(number, response))
                if response == "abort":
                    return self._finish(sink, "aborted", number, 130)
            approval = ApprovalRecord.not_needed()
            if script.ask is not None:
                request_a = ApprovalRequest(
                    number,
                    action,
                    script.url,
                    script.title,
                    script.ask,
                    script.element_line,
                    script.risky,
                )
                sink(ApprovalNeeded(request_a))
                self.waiting = "approval"
                decision = await supervisor.approve(request_a)
                self.waiting = ""
                self.decisions.append(decision)
                sink(ApprovalGiven(number, decision))
                if decision.decision == "abort":
                    return self._finish(sink, "aborted", number, 130)
                approval = ApprovalRecord.of(decision)
                if decision.edited_params is not None:
                    action = Action(
                        action.name, decision.edited_params, action.reason, action.tool_use_id
                    )
                if decision.decision == "denied":
                    denied = ActionResult.failure(
                        f"The person denied this action: {decision.note or 'no reason given'}"
                    )
                    sink(ActionDone(number, action, denied, approval, 3))
                    continue
            sink(ActionIntent(number, action))
            sink(ActionDone(number, action, script.result, approval, 850))
        if self.thinking:
            number = len(self.rounds) + 1
            sink(RoundStarted(number, self.max_rounds))
            sink(Observed(number, "http://127.0.0.1:8765/search", "Book a train", BOOKING_DIGEST))
            self.waiting = "model"
            await asyncio.Event().wait()
        if self.hold:
            self.waiting = "hold"
            await asyncio.Event().wait()
        return self._finish(sink, "success", len(self.rounds), 0, "08:04 → 10:01, €39")

    def _finish(
        self, sink: EventSink, outcome: str, rounds: int, code: int, answer: str = ""
    ) -> RunFinished:
        finished = RunFinished(outcome, answer, rounds, code)  # type: ignore[arg-type]
        sink(finished)
        return finished


class AutoSupervisor:
    """Answers every request at once (approve, resume): for writing logs, not for UI tests."""

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision("approved")

    async def human(self, request: HumanRequest) -> Literal["resume", "abort"]:
        return "resume"


async def write_driver_log(path: Path, driver: UiTestDriver | None = None) -> Path:
    """Write a real audit log (core's writer and recorder) of the driver's scripted rounds."""
    from core.audit import AuditWriter
    from core.run.recorder import AuditRecorder

    writer = AuditWriter(path, run_id="run-ui-test")
    recorder = AuditRecorder(writer)
    await (driver or UiTestDriver())(recorder, AutoSupervisor())
    writer.close()
    return path


async def wait_until(
    pilot: Pilot[Any], condition: Callable[[], bool], timeout: float = 5.0
) -> None:
    """Let the app run until ``condition()`` holds; fail after ``timeout`` seconds (scaled
    by HANDRAIL_TEST_SLOWDOWN, tests/helpers/waiting.py)."""
    deadline = time.monotonic() + scaled(timeout)
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.02)


if TYPE_CHECKING:
    from tui.app import HandrailApp
    from tui.screens.run_screen import RunScreen


async def shown_run_screen(pilot: Pilot[Any], app: HandrailApp) -> RunScreen:
    """The app's run screen, once it has replaced the first frame (tui/widgets/shell.py)."""
    await wait_until(pilot, lambda: app.run_screen is not None)
    assert app.run_screen is not None
    return app.run_screen


def still_clock() -> float:
    """A clock that never moves, so elapsed time in snapshots is always 00:00."""
    return 1000.0


def fixed_round_record(
    number: int, script: RoundScript, decision: str = "approved"
) -> dict[str, Any]:
    """A round record as core's recorder writes it, with fixed times (for snapshots)."""
    return {
        "type": "round",
        "run_id": "run-ui-test",
        "round": number,
        "ts": f"2026-01-05T10:00:{number * 7:02d}+00:00",
        "url": script.url,
        "title": script.title,
        "observation": script.digest,
        "model_output": [
            {"type": "text", "text": script.text or "Next step."},
            {
                "type": "tool_use",
                "id": script.action.tool_use_id,
                "name": script.action.name,
                "input": {**script.action.params, "reason": script.action.reason},
            },
        ],
        "action": script.action.to_json(),
        "approval": {"decision": decision, "by": "person"},
        "result": script.result.to_json()
        if decision != "denied"
        else ActionResult.failure("The person denied this action: wrong city").to_json(),
        "timing_ms": {"observe": 120.0, "model": 900.0, "action": 850.0, "round": 1890.0},
        "usage": {"input_tokens": 1500, "output_tokens": 60},
        "element": script.element_line,
    }


def write_fixed_log(path: Path) -> Path:
    """A small, deterministic audit log (core's writer chains it) with a denial and a pause."""
    from core.audit import AuditWriter

    rounds = booking_rounds()
    with AuditWriter(path, run_id="run-ui-test") as writer:
        writer.write({"type": "run_start", "schema": 1, "run_id": "run-ui-test",
                      "ts": "2026-01-05T10:00:00+00:00", "task": "Find the cheapest train from Paris to Lyon",
                      "model": "scripted plan: ui-test", "settings": {}, "browser": "launched, headless",
                      "max_rounds": 20})  # fmt: skip
        writer.write(fixed_round_record(1, rounds[0], "denied"))
        writer.write({"type": "human_pause", "run_id": "run-ui-test", "round": 2,
                      "ts": "2026-01-05T10:00:10+00:00", "kind": "captcha",
                      "detail": "a CAPTCHA [/challenge] covers the form", "url": rounds[1].url,
                      "title": rounds[1].title, "headless": False})  # fmt: skip
        writer.write({"type": "human_resume", "run_id": "run-ui-test", "round": 2,
                      "ts": "2026-01-05T10:00:12+00:00", "response": "resume"})  # fmt: skip
        writer.write({"type": "intent", "run_id": "run-ui-test", "round": 2,
                      "ts": "2026-01-05T10:00:13+00:00", "action": rounds[1].action.to_json()})  # fmt: skip
        writer.write(fixed_round_record(2, rounds[1]))
        writer.write(fixed_round_record(3, rounds[2], "not_needed"))
        writer.write({"type": "run_end", "run_id": "run-ui-test", "ts": "2026-01-05T10:00:30+00:00",
                      "outcome": "success", "answer": "08:04 → 10:01, €39", "rounds": 3,
                      "exit_code": 0, "reason": ""})  # fmt: skip
    return path
