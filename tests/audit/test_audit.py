"""The audit log: hash chain, verifier, tolerant reader, durability, redaction, lock, index."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import pytest

from core.actions import Action
from core.audit import (
    REDACTED,
    AuditError,
    AuditLockedError,
    AuditWriter,
    LogIndex,
    LogProblem,
    read_log,
    rounds_of,
    verify,
)
from core.audit.records import ApprovalRecord, RoundRecord
from core.guard.decision import ApprovalDecision
from core.result import ActionResult
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
    RoundStarted,
    RunFinished,
    RunStarted,
)
from core.run.recorder import AuditRecorder
from core.secrets import Secret, Secrets

ROOT = Path(__file__).resolve().parents[2]
CANARY = "Canary-9d2e/+secret"


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def write_n(tmp_path: Path, n: int) -> Path:
    with AuditWriter.create(tmp_path, "chain test") as w:
        for i in range(n):
            w.write({"type": "round", "round": i, "note": f"record {i}"})
        return w.path


# --- hash chain and verify ----------------------------------------------------------------


def test_records_form_a_hash_chain(tmp_path: Path) -> None:
    with AuditWriter.create(tmp_path, "t", run_id="r1") as w:
        returned = [w.write({"type": "round", "round": i, "text": "é ✓"}) for i in range(3)]
    raw = lines_of(w.path)
    parsed = [json.loads(x) for x in raw]
    assert parsed == returned
    assert [r["seq"] for r in parsed] == [0, 1, 2]
    assert parsed[0]["prev"] is None
    for before, rec in zip(raw, parsed[1:], strict=False):
        assert rec["prev"] == hashlib.sha256(before).hexdigest()
    assert "é ✓".encode() in raw[0]  # ensure_ascii=False, one compact line
    assert b": " not in raw[0]


def test_writer_refuses_caller_seq(tmp_path: Path) -> None:
    with AuditWriter.create(tmp_path, "t") as w, pytest.raises(ValueError):
        w.write({"type": "x", "seq": 5})


def test_verify_accepts_an_intact_log(tmp_path: Path) -> None:
    report = verify(write_n(tmp_path, 5))
    assert report.ok and report.records == 5 and report.first_break is None


def test_verify_detects_an_edited_record(tmp_path: Path) -> None:
    path = write_n(tmp_path, 5)
    raw = lines_of(path)
    raw[2] = raw[2].replace(b"record 2", b"record X")
    path.write_bytes(b"\n".join(raw) + b"\n")
    report = verify(path)
    assert not report.ok
    assert report.first_break is not None
    assert report.first_break.startswith("line 3 ") and "edited" in report.first_break
    assert report.records == 2


def test_verify_detects_a_dropped_record(tmp_path: Path) -> None:
    path = write_n(tmp_path, 5)
    raw = lines_of(path)
    del raw[2]
    path.write_bytes(b"\n".join(raw) + b"\n")
    report = verify(path)
    assert not report.ok and report.first_break is not None
    assert report.first_break.startswith("line 3 ") and "dropped" in report.first_break


def test_verify_detects_reordered_records(tmp_path: Path) -> None:
    path = write_n(tmp_path, 5)
    raw = lines_of(path)
    raw[1], raw[2] = raw[2], raw[1]
    path.write_bytes(b"\n".join(raw) + b"\n")
    report = verify(path)
    assert not report.ok and report.first_break is not None
    assert report.first_break.startswith("line 2 ") and "reordered" in report.first_break


def test_verify_detects_a_junk_line(tmp_path: Path) -> None:
    path = write_n(tmp_path, 3)
    raw = lines_of(path)
    raw.insert(1, b"not json at all")
    path.write_bytes(b"\n".join(raw) + b"\n")
    report = verify(path)
    assert not report.ok and report.first_break is not None
    assert report.first_break.startswith("line 2 ") and "not a JSON record" in report.first_break


def test_verify_notes_a_torn_tail_without_failing_the_chain(tmp_path: Path) -> None:
    path = write_n(tmp_path, 3)
    with path.open("ab") as f:
        f.write(b'{"seq":3,"prev":"ab')
    report = verify(path)
    assert report.ok and report.records == 3
    assert any("line 4 is torn" in n for n in report.notes)


# --- tolerant reader ----------------------------------------------------------------------


def test_reader_reports_torn_last_line_and_junk_in_the_middle(tmp_path: Path) -> None:
    path = write_n(tmp_path, 4)
    raw = lines_of(path)
    raw.insert(2, b"\x00garbage{")
    raw.insert(3, b"[1, 2]")
    path.write_bytes(b"\n".join(raw) + b"\n" + b'{"seq": 4, "type": "ro')
    read = read_log(path)
    assert [r["seq"] for r in read.records] == [0, 1, 2, 3]
    assert [(p.line_no, p.kind) for p in read.problems] == [
        (3, "not_json"),
        (4, "not_object"),
        (7, "torn"),
    ]
    assert read.problems[2].text.startswith('{"seq": 4')


def test_reader_accepts_a_complete_last_line_without_newline(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"seq":0}\n{"seq":1}')
    read = read_log(path)
    assert [r["seq"] for r in read.records] == [0, 1] and read.problems == []


# --- durability ---------------------------------------------------------------------------

CHILD = """
import os, sys
from pathlib import Path
from core.audit import AuditWriter
w = AuditWriter(Path(sys.argv[1]), run_id="killed")
i = 0
while True:
    w.write({"type": "round", "round": i, "observation": "x" * 30000})
    os.write(1, f"{i}\\n".encode())
    i += 1
"""


def test_every_returned_write_survives_kill_9(tmp_path: Path) -> None:
    path = tmp_path / "killed.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path)], stdout=subprocess.PIPE, env=env, cwd=ROOT
    )
    assert proc.stdout is not None
    acked = -1
    try:
        while acked < 150:
            line = proc.stdout.readline()
            assert line, "the writer process died before it was killed"
            acked = int(line)
        proc.send_signal(signal.SIGKILL)
        for line in proc.stdout:  # acknowledgements written before the kill landed
            acked = int(line)
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    read = read_log(path)
    seqs = [r["seq"] for r in read.records]
    assert seqs[: acked + 1] == list(range(acked + 1))
    assert all(p.kind == "torn" and p.line_no == len(seqs) + 1 for p in read.problems)
    assert verify(path).ok


# --- recorder -----------------------------------------------------------------------------


def start(rec: AuditRecorder) -> None:
    rec(RunStarted("r", "book a train", "scripted plan: p.jsonl", "launched, headless", 30))


def play_round(
    rec: AuditRecorder,
    n: int,
    action: Action | None,
    *,
    digest: str = "[1]<button>Go</button>",
    url: str = "https://shop.example/",
    done: bool = True,
    sensitive: bool = False,
    error: str | None = None,
) -> None:
    rec(RoundStarted(n, 30))
    rec(Observed(n, url, "Shop", digest, duration_ms=12.5))
    output: tuple[dict[str, object], ...] = (
        {"type": "text", "text": "I will act."},
        {
            "type": "tool_use",
            "id": f"tu{n}",
            "name": action.name if action else "bogus",
            "input": dict(action.params) if action else {},
        },
    )
    rec(ModelReplied(n, output, usage={"input_tokens": 10, "output_tokens": 5}))
    rec(ActionParsed(n, action, error=error, element_line="[1]<button>Go</button>"))
    if sensitive:
        rec.mark_sensitive(n)
    if action is None:
        if done:
            rec(
                ActionDone(
                    n, None, ActionResult.failure(error or "bad"), ApprovalRecord.not_needed()
                )
            )
        return
    rec(ApprovalGiven(n, ApprovalDecision("approved")))
    rec(ActionIntent(n, action))
    if done:
        result = ActionResult.success("done")
        rec(ActionDone(n, action, result, ApprovalRecord.of(ApprovalDecision("approved"))))


def test_recorder_writes_the_contract_records(tmp_path: Path) -> None:
    w = AuditWriter.create(tmp_path, "book a train", run_id="run-1")
    rec = AuditRecorder(w)
    start(rec)
    play_round(rec, 1, Action("click", {"index": 1}, reason="go"))
    rec(HumanNeeded(HumanRequest(2, "captcha", "reCAPTCHA in iframe", "https://shop.example/")))
    rec(HumanReturned(2, "resume"))
    play_round(rec, 2, None, error="unknown tool 'bogus'")
    rec(RunFinished("success", "booked", 2, 0))
    assert w.closed

    records = read_log(w.path).records
    assert [r["type"] for r in records] == [
        "run_start",
        "intent",
        "round",
        "human_pause",
        "human_resume",
        "round",
        "run_end",
    ]
    assert all(r["run_id"] == "run-1" for r in records)
    run_start = records[0]
    assert run_start["schema"] == 2 and run_start["task"] == "book a train"
    assert {"ts", "model", "settings"} <= run_start.keys()
    round1 = records[2]
    expected_keys = {"url", "title", "observation", "model_output", "action", "approval"}
    assert expected_keys | {"result", "timing_ms", "usage", "round", "ts"} <= round1.keys()
    assert round1["action"]["name"] == "click" and round1["action"]["params"] == {"index": 1}
    assert round1["model_output"][1]["type"] == "tool_use"  # verbatim blocks
    assert round1["approval"] == {"decision": "approved", "by": "person"}
    assert round1["result"]["ok"] is True and RoundRecord.from_json(round1).outcome == "ok"
    assert records[1]["action"]["name"] == "click"  # intent before the round record
    assert records[5]["action"] == {"error": "unknown tool 'bogus'"}
    assert records[3]["kind"] == "captcha"
    assert records[6]["outcome"] == "success" and records[6]["rounds"] == 2
    assert verify(w.path).ok


def test_round_in_flight_at_run_end_is_written_as_unknown(tmp_path: Path) -> None:
    w = AuditWriter.create(tmp_path, "t")
    rec = AuditRecorder(w)
    start(rec)
    play_round(rec, 1, Action("click", {"index": 1}), done=False)
    rec(RunFinished("error", "", 1, 1, reason="browser died"))
    records = read_log(w.path).records
    assert [r["type"] for r in records] == ["run_start", "intent", "round", "run_end"]
    assert records[2]["result"]["outcome"] == "unknown" and records[2]["result"]["ok"] is False
    assert records[2]["model_output"] is not None
    assert records[2]["approval"]["decision"] == "approved"


def test_intent_without_round_reads_as_outcome_unknown(tmp_path: Path) -> None:
    w = AuditWriter.create(tmp_path, "t")
    rec = AuditRecorder(w)
    start(rec)
    play_round(rec, 1, Action("click", {"index": 1}))
    play_round(rec, 2, Action("click", {"index": 2}), done=False)
    w.close()  # killed: no RunFinished
    entries = rounds_of(read_log(w.path).records)
    assert [(e.round, e.outcome) for e in entries] == [(1, "ok"), (2, "unknown")]
    assert entries[1].record is None and entries[1].intent is not None


def test_secret_canary_never_reaches_the_file(tmp_path: Path) -> None:
    secrets = Secrets([Secret("SHOP_PW", CANARY, ("shop.example",))])
    w = AuditWriter.create(tmp_path, f"log in with {CANARY}", secrets=secrets)
    rec = AuditRecorder(w)
    start(rec)
    echoed = f'[1]<input type=text value="{CANARY}">Password</input>'
    play_round(
        rec,
        1,
        Action("type", {"index": 1, "text": f"again {CANARY}"}, reason=CANARY),
        digest=echoed,
        url=f"https://shop.example/?pw={quote_plus(CANARY)}&p2={quote(CANARY, safe='')}",
    )
    rec(ModelReplied(2, ({"type": "text", "text": json.dumps({"nested": [CANARY]})},)))
    rec(RunFinished("success", f"done {CANARY}", 2, 0))

    data = w.path.read_bytes()
    for form in (CANARY, quote_plus(CANARY), quote(CANARY, safe=""), json.dumps(CANARY)[1:-1]):
        assert form.encode() not in data
    assert CANARY.encode() not in w.path.name.encode()
    assert REDACTED.encode() in data
    assert verify(w.path).ok


def test_placeholder_typed_into_password_field_is_kept(tmp_path: Path) -> None:
    w = AuditWriter.create(tmp_path, "t")
    rec = AuditRecorder(w)
    start(rec)
    play_round(rec, 1, Action("type", {"index": 1, "text": "<secret:SHOP_PW>"}), sensitive=True)
    rec(RunFinished("success", "", 1, 0))
    records = read_log(w.path).records
    assert records[1]["action"]["params"]["text"] == "<secret:SHOP_PW>"


def test_text_typed_into_a_password_field_is_redacted(tmp_path: Path) -> None:
    typed = "hunter2-plain"
    w = AuditWriter.create(tmp_path, "t")
    rec = AuditRecorder(w)
    start(rec)
    play_round(rec, 1, Action("type", {"index": 4, "text": typed}), sensitive=True)
    # The page echoes the value back in the next round's observation.
    play_round(rec, 2, Action("click", {"index": 5}), digest=f"[4]<input value={typed}>")
    rec(RunFinished("success", "", 2, 0))

    assert typed.encode() not in w.path.read_bytes()
    records = read_log(w.path).records
    intent, round1 = records[1], records[2]
    assert intent["type"] == "intent" and intent["action"]["params"]["text"] == REDACTED
    assert round1["action"]["params"] == {"index": 4, "text": REDACTED}
    assert round1["model_output"][1]["input"]["text"] == REDACTED
    assert REDACTED in records[4]["observation"]


def test_writer_after_close_refuses(tmp_path: Path) -> None:
    w = AuditWriter.create(tmp_path, "t")
    w.close()
    w.close()
    with pytest.raises(AuditError):
        w.write({"type": "x"})


# --- one writer ---------------------------------------------------------------------------


def test_second_writer_on_the_same_file_is_refused(tmp_path: Path) -> None:
    w = AuditWriter.create(tmp_path, "t")
    w.write({"type": "a"})
    with pytest.raises(AuditLockedError, match="another handrail process"):
        AuditWriter(w.path)
    w.close()
    # Once released, a new writer continues the chain.
    with AuditWriter(w.path) as w2:
        assert w2.write({"type": "b"})["seq"] == 1
    assert verify(w.path).ok and verify(w.path).records == 2


def test_writer_will_not_append_after_a_torn_line(tmp_path: Path) -> None:
    path = write_n(tmp_path, 2)
    with path.open("ab") as f:
        f.write(b'{"seq":2,"pr')
    before = path.read_bytes()
    with pytest.raises(AuditError, match="torn"):
        AuditWriter(path)
    assert path.read_bytes() == before
    fd = os.open(path, os.O_RDONLY)  # the refused writer released its lock
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)


def test_lock_holds_across_processes(tmp_path: Path) -> None:
    w = AuditWriter.create(tmp_path, "t")
    code = (
        "import sys; from pathlib import Path; from core.audit import AuditWriter, AuditLockedError\n"
        "try:\n    AuditWriter(Path(sys.argv[1]))\nexcept AuditLockedError:\n    sys.exit(7)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rc = subprocess.run([sys.executable, "-c", code, str(w.path)], env=env, check=False).returncode
    w.close()
    assert rc == 7


# --- naming -------------------------------------------------------------------------------


def test_file_named_by_time_and_task_slug(tmp_path: Path) -> None:
    now = datetime(2026, 11, 29, 19, 40, 5)
    w1 = AuditWriter.create(tmp_path / "logs", "Book a train: Lyon → Paris!!", now=now)
    w2 = AuditWriter.create(tmp_path / "logs", "Book a train: Lyon → Paris!!", now=now)
    w3 = AuditWriter.create(tmp_path / "logs", "Réserver " + "très long " * 20, now=now)
    w4 = AuditWriter.create(tmp_path / "logs", "→ ✓ ???", now=now)
    for w in (w1, w2, w3, w4):
        w.close()
    assert w1.path.name == "2026-11-29T19-40-05_book-a-train-lyon-paris.jsonl"
    assert w2.path.name == "2026-11-29T19-40-05_book-a-train-lyon-paris-2.jsonl"
    slug3 = w3.path.name.removeprefix("2026-11-29T19-40-05_").removesuffix(".jsonl")
    assert slug3.startswith("reserver-tres-long") and len(slug3) <= 48
    assert not slug3.endswith("-")
    assert w4.path.name == "2026-11-29T19-40-05_run.jsonl"
    assert re.fullmatch(r"[0-9T_a-z.-]+", w3.path.name)


# --- index --------------------------------------------------------------------------------


def test_index_matches_reader_and_follows_appends(tmp_path: Path) -> None:
    w = AuditWriter.create(tmp_path, "t")
    for i in range(40):
        w.write({"type": "round", "round": i, "observation": "o" * (i * 97)})
    w.close()
    with w.path.open("ab") as f:
        f.write(b"junk line\n")

    index = LogIndex(w.path)
    counts = list(index.scan(batch_lines=7))
    assert counts[-1] == len(index) == 41
    assert counts == sorted(counts) and len(counts) > 3  # incremental

    def from_index(ix: LogIndex) -> tuple[list[dict[str, Any]], list[LogProblem]]:
        items = [ix.line(i) for i in range(len(ix))]
        recs = [x for x in items if isinstance(x, dict)]
        probs = [x for x in items if isinstance(x, LogProblem)]
        return recs, probs

    read = read_log(w.path)
    assert from_index(index) == (read.records, read.problems)

    # Follow: a torn tail first, then lines appended after the first scan.
    with w.path.open("ab") as f:
        f.write(b'{"seq":40,"type":"ro')
    list(index.scan())
    tail = index.line(41)
    assert isinstance(tail, LogProblem) and tail.kind == "torn"
    with w.path.open("ab") as f:
        f.write(b'und"}\n{"seq":41}\n')
    list(index.scan())
    assert len(index) == 43
    assert index.line(41) == {"seq": 40, "type": "round"}
    assert index.line(-1) == {"seq": 41}
    assert from_index(index)[0] == read_log(w.path).records
    with pytest.raises(IndexError):
        index.line(43)
    index.close()


def test_index_opens_without_reading(tmp_path: Path) -> None:
    path = write_n(tmp_path, 3)
    index = LogIndex(path)
    assert len(index) == 0
    with pytest.raises(IndexError):
        index.line(0)
    gen = index.scan(batch_lines=1)
    assert next(gen) == 1
    first = index.line(0)
    assert isinstance(first, dict) and first["seq"] == 0
    index.close()


def test_a_round_that_cannot_be_written_at_the_end_is_reported_not_lost_silently(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from core.run.session import _flush_audit

    w = AuditWriter.create(tmp_path, "t")
    rec = AuditRecorder(w)
    start(rec)
    play_round(rec, 1, Action("click", {"index": 1}), done=False)
    w.close()  # the disk is gone by the time the run winds down
    _flush_audit(rec)
    err = capsys.readouterr().err
    assert f"the last rounds could not be written to the audit log {w.path}" in err
