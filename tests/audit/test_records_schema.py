"""One audit schema: the recorder writes the dataclasses replay reads.

Every record type survives ``from_json(to_json(x))``, and the recorder's bytes for a scripted
run are the bytes it wrote before it built its records from those dataclasses
(``recorder_golden.jsonl``, captured from the dict-literal recorder with the clock, the key
and the run id fixed as below; captured again when ``run_start`` gained ``trace_id``, the
only difference).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from core.actions import Action
from core.audit import verify
from core.audit.key import AuditKey
from core.audit.records import (
    ApprovalRecord,
    IntentRecord,
    OtherRecord,
    PauseRecord,
    RoundRecord,
    RunEndRecord,
    RunStartRecord,
    ScreenshotRef,
    record_of,
)
from core.audit.writer import AuditWriter
from core.guard.decision import ApprovalDecision
from core.model.base import ReplyOrigin
from core.result import ActionResult, Changes
from core.run import recorder as recorder_module
from core.run.events import (
    ActionDone,
    ActionIntent,
    ActionParsed,
    ApprovalGiven,
    HumanNeeded,
    HumanRequest,
    HumanReturned,
    ModelReplied,
    Observed,
    RerunOf,
    RoundStarted,
    RunFinished,
    RunStarted,
)
from core.run.recorder import AuditRecorder
from core.secrets import Secret, Secrets, withheld_mark
from tui.rounds import round_label, round_view

GOLDEN = Path(__file__).with_name("recorder_golden.jsonl")
KEY = AuditKey(bytes(range(32)))
PASSWORD = "hunter2-plain"
SHOP_PW = "Sh0p-secret!"


def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Timestamps and durations the same on every run: one second, 7.25 ms per reading."""
    seconds = itertools.count()
    ticks = itertools.count()
    monkeypatch.setattr(
        recorder_module, "_now_iso", lambda: f"2026-12-04T10:00:{next(seconds):02d}.000Z"
    )
    monkeypatch.setattr(recorder_module, "_monotonic_ms", lambda: 1000.0 + 7.25 * next(ticks))


def tool_use(n: int, name: str, params: dict[str, object]) -> tuple[dict[str, object], ...]:
    return (
        {"type": "text", "text": f"Round {n}: {name}."},
        {"type": "tool_use", "id": f"tu{n}", "name": name, "input": params},
    )


def observe(
    rec: AuditRecorder, n: int, digest: str, screenshot: ScreenshotRef | None = None
) -> None:
    rec(RoundStarted(n, 12))
    url, title = "https://rail.example/search", "Rail & Co"
    rec(Observed(n, url, title, digest, ("[0] * Rail & Co",), 41.5, 1, screenshot))


def approved_click(rec: AuditRecorder) -> None:
    """A click the person approved, in a rerun's replayed round, with its screenshot."""
    shot = ScreenshotRef("run/round-001.jpg", "ab" * 32)
    observe(rec, 1, "[3]<button>Search trains</button>", shot)
    click = Action("click", {"index": 3}, reason="search", tool_use_id="tu1")
    origin = ReplyOrigin("replayed", 1)
    rec(ModelReplied(1, tool_use(1, "click", {"index": 3}), {"input_tokens": 900}, 5.0, origin))
    rec(ActionParsed(1, click, element_line="[3]<button>Search trains</button>"))
    rec(ApprovalGiven(1, ApprovalDecision("approved")))
    rec(ActionIntent(1, click))
    changes = Changes(url_changed=True, dom_changed=True, new_elements=4)
    done = ActionResult.success("clicked [3]", changes)
    rec(ActionDone(1, click, done, ApprovalRecord.of(ApprovalDecision("approved")), 120.0))


def edited_type(rec: AuditRecorder) -> None:
    """A type the person edited: withheld until typed, then shown."""
    observe(rec, 2, '[5]<input type=text placeholder="From">From</input>')
    typed = Action("type", {"index": 5, "text": "Paris"}, reason="from", tool_use_id="tu2")
    held = Action("type", {"index": 5, "text": withheld_mark("Pari")}, reason="from")
    output = tool_use(2, "type", {"index": 5, "text": "Pari"})
    held_output = tool_use(2, "type", {"index": 5, "text": withheld_mark("Pari")})
    rec(ModelReplied(2, held_output, {"input_tokens": 950, "output_tokens": 30}, 6.0))
    rec(ActionParsed(2, held, element_line='[5]<input type=text placeholder="From">From</input>'))
    edit = ApprovalDecision("edited", edited_params={"text": "Paris"}, approve_kind_for_run=True)
    rec(ApprovalGiven(2, edit))
    rec(ActionIntent(2, typed))
    result = ActionResult.success('typed "Paris"')
    rec(ActionDone(2, typed, result, ApprovalRecord.of(edit), 80.5, model_output=output))


def password_type(rec: AuditRecorder) -> None:
    """Text typed into a password field: redacted in the round and every later record."""
    observe(rec, 3, "[7]<input type=password>Password</input>")
    typed = Action("type", {"index": 7, "text": PASSWORD}, reason="log in", tool_use_id="tu3")
    rec(ModelReplied(3, tool_use(3, "type", {"index": 7, "text": PASSWORD}), {}, 4.0))
    rec(ActionParsed(3, typed, element_line="[7]<input type=password>Password</input>"))
    edit = ApprovalDecision("edited", edited_params={"index": 7, "text": PASSWORD})
    rec(ApprovalGiven(3, edit))
    rec(ActionIntent(3, typed, sensitive=True))
    rec(ActionDone(3, typed, ActionResult.success("typed"), ApprovalRecord.of(edit), 60.0))


def hand_over_then_unparsed(rec: AuditRecorder) -> None:
    """A CAPTCHA hand-over, then a reply with no action; the page echoes the password."""
    observe(rec, 4, f"[9]<input value={PASSWORD}>Password</input>")
    url = "https://rail.example/captcha"
    rec(HumanNeeded(HumanRequest(4, "captcha", "reCAPTCHA in an iframe", url, "Check")))
    rec(HumanReturned(4, "resume"))
    rec(ModelReplied(4, ({"type": "text", "text": "Hmm."},), {"input_tokens": 10}, 3.0))
    rec(ActionParsed(4, None, error="the reply had no tool call"))
    failed = ActionResult.failure("the reply had no tool call")
    rec(ActionDone(4, None, failed, ApprovalRecord.not_needed()))


def denied_and_bare(rec: AuditRecorder) -> None:
    """A denial with the screenshot refused, then a round known only by its result."""
    observe(rec, 5, "[2]<button>Pay</button>", ScreenshotRef(missing="a card field"))
    pay = Action("click", {"index": 2}, reason="pay", tool_use_id="tu5")
    rec(ModelReplied(5, tool_use(5, "click", {"index": 2}), {}, 2.0))
    rec(ActionParsed(5, pay, element_line="[2]<button>Pay</button>"))
    no = ApprovalDecision("denied", note="not yet")
    rec(ApprovalGiven(5, no))
    rec(ActionDone(5, pay, ActionResult.failure("denied"), ApprovalRecord.of(no)))
    wait = Action("wait", {"seconds": 1})
    waited, auto = ActionResult.success("waited"), ApprovalRecord.automatic()
    output = tool_use(6, "wait", {"seconds": 1})
    rec(ActionDone(6, wait, waited, auto, 1000.0, model_output=output))


def left_in_flight(rec: AuditRecorder) -> None:
    """Two rounds the run end finds open: one thinking, one dispatched."""
    observe(rec, 7, "[1]<a href=/help>Help</a>")
    rec(ModelReplied(7, tool_use(7, "click", {"index": 1}), {"input_tokens": 5}, 1.0))
    observe(rec, 8, "[1]<a href=/help>Help</a>")
    key = Action("press_key", {"keys": "Enter"}, reason="go")
    rec(ModelReplied(8, tool_use(8, "press_key", {"keys": "Enter"}), {"input_tokens": 6}, 1.0))
    rec(ActionParsed(8, key))
    rec(ApprovalGiven(8, ApprovalDecision("approved", by="--approve none")))
    rec(ActionIntent(8, key))


def play_demo(path: Path) -> None:
    """A rerun of a demo-like run, every record type and branch of the recorder once."""
    secrets = Secrets([Secret("SHOP_PW", SHOP_PW, ("rail.example",))])
    writer = AuditWriter(path, run_id="golden", secrets=secrets, key=KEY)
    rec = AuditRecorder(writer)
    source = RerunOf("source-run", "cd" * 32, "audit_logs/source.jsonl")
    settings = {"approve": "ask", "allow_domains": ["rail.example"], "headless": True}
    model = "scripted plan: p.jsonl"
    rec(RunStarted("golden", "book a train", model, "launched", 12, settings, rerun_of=source))
    approved_click(rec)
    edited_type(rec)
    password_type(rec)
    hand_over_then_unparsed(rec)
    denied_and_bare(rec)
    left_in_flight(rec)
    rec(RunFinished("error", f"the browser stopped ({SHOP_PW})", 8, 1, reason="browser died"))


def test_recorder_bytes_are_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fixed_clock(monkeypatch)
    path = tmp_path / "demo.jsonl"
    play_demo(path)
    assert verify(path, key=KEY).ok
    assert path.read_bytes() == GOLDEN.read_bytes()


RUN_ID = "run-7"
TS = "2026-12-04T10:00:00.000Z"
CLICK = {"name": "click", "params": {"index": 3}, "reason": "search"}
DONE = {"ok": True, "message": "clicked [3]", "outcome": "ok", "changes": {"url_changed": True}}
LINE_RECORDS: list[RunStartRecord | IntentRecord | RoundRecord | PauseRecord | RunEndRecord] = [
    RunStartRecord("book a train", "anthropic:m", "launched", 30, TS, 2, {"approve": "ask"},
                   run_id=RUN_ID),
    RunStartRecord("again", "rerun of x", "connected", 12, TS, 2, {},
                   {"run_id": "x", "head": "ab", "log": "x.jsonl"}, RUN_ID),
    IntentRecord(1, CLICK, TS, RUN_ID),
    RoundRecord(
        1, TS, "https://rail.example/", "Rail & Co", "[3]<button>Search</button>",
        model_output=[{"type": "text", "text": "go"}], action=CLICK,
        element="[3]<button>Search</button>", target_name="Search",
        approval=ApprovalRecord("edited", "person", {"index": 4}, "closer", True), result=DONE,
        timing_ms={"observe": 41.5, "model": 5.0, "action": 120.0, "round": 170.2},
        usage={"input_tokens": 900}, screenshot=ScreenshotRef("run/round-001.jpg", "ab" * 32),
        source_round=1, decided_by="replayed", run_id=RUN_ID,
    ),
    RoundRecord(2, TS, "https://rail.example/", "", "digest",
                action_error="the reply had no tool call", approval=ApprovalRecord.not_needed(),
                result={"ok": False, "message": "no tool call"}, timing_ms={"round": 3.0},
                usage={}, screenshot=ScreenshotRef(missing="a card field"), run_id=RUN_ID),
    RoundRecord(3, TS, model_output=[{"type": "text", "text": "x"}], action=CLICK,
                approval=ApprovalRecord.automatic(), result=DONE, timing_ms=812.5,
                replied=False, run_id=RUN_ID),
    PauseRecord.pause(4, "captcha", "reCAPTCHA", "https://rail.example/c", "Check", True,
                      ts=TS, run_id=RUN_ID),
    PauseRecord.resume(4, "resume", ts=TS, run_id=RUN_ID),
    RunEndRecord("success", "booked", "", TS, 4, 0, RUN_ID),
]  # fmt: skip


@pytest.mark.parametrize("record", LINE_RECORDS, ids=lambda r: type(r).__name__)
def test_every_record_type_reads_back_what_it_writes(
    record: RunStartRecord | IntentRecord | RoundRecord | PauseRecord | RunEndRecord,
) -> None:
    written = record.to_json()
    assert type(record).from_json(written) == record
    assert record_of(written) == record


@pytest.mark.parametrize(
    "value",
    [
        ApprovalRecord("denied", "person", None, "not yet"),
        ApprovalRecord("edited", "person", {"text": "Paris"}, None, True),
        ApprovalRecord.kind_approved(),
        ScreenshotRef("run/round-002.jpg", "cd" * 32),
        ScreenshotRef(missing="no tab to take a picture of"),
    ],
)
def test_every_field_record_reads_back_what_it_writes(
    value: ApprovalRecord | ScreenshotRef,
) -> None:
    assert type(value).from_json(value.to_json()) == value


def test_every_line_the_recorder_wrote_is_a_typed_record_written_again() -> None:
    """The recorder's lines (the golden run, the writer's chain fields aside) are exactly
    what the typed records write: there is one schema, not a writer's and a reader's."""
    writer_fields = {"seq", "prev", "mac", "key_id", "records", "head"}
    for line in GOLDEN.read_text().splitlines():
        rec = {k: v for k, v in json.loads(line).items() if k not in writer_fields}
        typed = record_of(rec)
        assert not isinstance(typed, OtherRecord)
        assert json.dumps(typed.to_json()) == json.dumps(rec)


def test_the_round_keeps_the_targets_name_and_the_timeline_shows_it(tmp_path: Path) -> None:
    writer = AuditWriter(tmp_path / "log.jsonl", run_id="named", key=KEY)
    rec = AuditRecorder(writer)
    observe(rec, 1, "[3]<button>Search ‹all› trains</button>")
    click = Action("click", {"index": 3}, reason="search")
    line = "[3]<button>Search ‹all› trains</button>"
    rec(ActionParsed(1, click, element_line=line, target_name="Search <all> trains"))
    rec(ActionDone(1, click, ActionResult.success("clicked"), ApprovalRecord.not_needed()))
    writer.close()
    [written] = [json.loads(x) for x in writer.path.read_text().splitlines()]
    keys = list(written)
    assert keys[keys.index("element") + 1] == "target_name"
    record = RoundRecord.from_json(written)
    assert record.target_name == "Search <all> trains"
    assert round_label(round_view(record)) == "click [3] Search <all> trains"


def test_an_old_round_without_the_targets_name_reads_it_from_the_line() -> None:
    old = {"type": "round", "round": 1, "action": CLICK, "element": "[3]<button>Go on</button>"}
    record = RoundRecord.from_json(old)
    assert record.target_name is None
    assert round_label(round_view(record)) == "click [3] Go on"
