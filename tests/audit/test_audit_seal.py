"""The sealed audit log: `handrail verify` against each forgery, and the installation key.

Forgeries are made as an attacker without the key would: edit the bytes, then repair the
hash chain (and re-seal with a key of their own) so that nothing but the seal can tell.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from core.actions import Action
from core.audit import AuditError, AuditWriter, installation_key, key_from_file
from core.audit.chain import encode, line_hash, mac_of, split_seal, with_mac
from core.audit.key import DATA_DIR_ENV, KEY_FILE
from core.audit.records import ApprovalRecord
from core.guard.decision import ApprovalDecision
from core.result import ActionResult
from core.run.events import (
    ActionDone,
    ActionIntent,
    ActionParsed,
    ApprovalGiven,
    ModelReplied,
    Observed,
    RoundStarted,
    RunFinished,
    RunStarted,
)
from core.run.recorder import AuditRecorder
from tui.cli.main import main

ATTACKER_KEY = bytes(range(32))


def sealed_run(tmp_path: Path, rounds: int = 2) -> Path:
    """A whole run's log, written by the real recorder with the installation key."""
    writer = AuditWriter.create(tmp_path / "logs", "book a train")
    rec = AuditRecorder(writer)
    rec(
        RunStarted(
            "r", "book a train", "scripted plan: p", "launched, headless", 9, {"approve": "ask"}
        )
    )
    for n in range(1, rounds + 1):
        action = Action("click", {"index": n})
        rec(RoundStarted(n, 9))
        rec(Observed(n, "https://shop.example/", "Shop", f"[{n}]<button>Go</button>"))
        rec(ModelReplied(n, ({"type": "text", "text": "go"},), {"input_tokens": 5}))
        rec(ActionParsed(n, action))
        rec(ApprovalGiven(n, ApprovalDecision("approved")))
        rec(ActionIntent(n, action))
        approval = ApprovalRecord.of(ApprovalDecision("approved"))
        rec(ActionDone(n, action, ActionResult.success("clicked"), approval))
    rec(RunFinished("success", "booked", rounds, 0))
    return writer.path


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def records_of(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in lines_of(path)]


def forge(path: Path, records: list[dict[str, object]]) -> None:
    """Write ``records`` as a well-formed chain sealed with the attacker's own key."""
    head: str | None = None
    out = []
    for seq, record in enumerate(records):
        body = {k: v for k, v in record.items() if k != "mac"}
        body["seq"], body["prev"] = seq, head
        if body.get("type") == "run_end":
            body["records"], body["head"] = seq, head
        unsealed = encode({"seq": seq, "prev": head, **body})
        line = with_mac(unsealed, mac_of(ATTACKER_KEY, head, unsealed))
        out.append(line)
        head = line_hash(line)
    path.write_bytes(b"\n".join(out) + b"\n")


def run_verify(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["verify", *args])
    return code, capsys.readouterr().out


def test_an_untouched_log_is_intact_and_sealed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sealed_run(tmp_path)
    code, out = run_verify(capsys, str(path))
    assert code == 0, out
    assert "OK — 6 records, chain intact and sealed" in out


def test_run_end_closes_the_chain_with_its_head_and_count(tmp_path: Path) -> None:
    path = sealed_run(tmp_path)
    lines = lines_of(path)
    end = json.loads(lines[-1])
    assert end["type"] == "run_end"
    assert end["records"] == len(lines) - 1 and end["head"] == line_hash(lines[-2])
    assert json.loads(lines[0])["key_id"] == installation_key().key_id


def test_an_edited_last_line_is_caught(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = sealed_run(tmp_path)
    lines = lines_of(path)
    lines[-1] = lines[-1].replace(b'"outcome":"success"', b'"outcome":"failure"')
    lines[-1] = lines[-1].replace(b'"exit_code":0', b'"exit_code":1')
    path.write_bytes(b"\n".join(lines) + b"\n")
    code, out = run_verify(capsys, str(path))
    assert code == 1, out
    assert f"BROKEN — line {len(lines)} has a seal that does not match" in out


def test_a_forged_record_appended_with_a_correct_prev_is_caught(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sealed_run(tmp_path)
    lines = lines_of(path)
    unsealed = encode(
        {"seq": len(lines), "prev": line_hash(lines[-1]), "type": "round", "round": 3}
    )
    forged = with_mac(unsealed, mac_of(ATTACKER_KEY, line_hash(lines[-1]), unsealed))
    path.write_bytes(b"\n".join([*lines, forged]) + b"\n")
    code, out = run_verify(capsys, str(path))
    assert code == 1, out
    assert f"line {len(lines) + 1} comes after run_end (line {len(lines)})" in out


def test_a_chain_rehashed_after_editing_the_settings_is_caught(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sealed_run(tmp_path)
    records = records_of(path)
    records[0]["settings"] = {"approve": "none"}
    forge(path, records)
    code, out = run_verify(capsys, str(path))
    assert code == 1, out
    assert "BROKEN — line 1 has a seal that does not match" in out


def test_a_rehash_that_also_renames_the_key_is_never_reported_sealed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sealed_run(tmp_path)
    records = records_of(path)
    records[0]["settings"] = {"approve": "none"}
    records[0]["key_id"] = "0123456789abcdef"
    forge(path, records)
    code, out = run_verify(capsys, str(path))
    assert code == 3, out
    assert "seal not checked (sealed by another installation's key)" in out


def test_reordered_lines_are_caught_at_the_first_one_out_of_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sealed_run(tmp_path)
    lines = lines_of(path)
    lines[2], lines[3] = lines[3], lines[2]
    path.write_bytes(b"\n".join(lines) + b"\n")
    code, out = run_verify(capsys, str(path))
    assert code == 1, out
    assert "BROKEN — line 3 has seq 3 where 2 was expected; seq 2 appears later" in out


def test_a_removed_seal_is_caught(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = sealed_run(tmp_path)
    records = records_of(path)
    forge(path, records)
    lines = lines_of(path)
    parts = split_seal(lines[4])
    assert parts is not None
    lines[4] = parts[0]
    forge_chain_only(path, lines)
    code, out = run_verify(capsys, str(path), "--key", str(attacker_key_file(tmp_path)))
    assert code == 1, out
    assert "line 5 carries no seal (mac) in a sealed log" in out


def forge_chain_only(path: Path, lines: list[bytes]) -> None:
    """Repair ``prev`` after lines were changed, keeping every line's own seal as it is."""
    head: str | None = None
    out = []
    for line in lines:
        fixed = line.replace(
            f'"prev":{json.dumps(json.loads(line)["prev"])}'.encode(),
            f'"prev":{json.dumps(head)}'.encode(),
            1,
        )
        parts = split_seal(fixed)
        if parts is not None:
            fixed = with_mac(parts[0], mac_of(ATTACKER_KEY, head, parts[0]))
        out.append(fixed)
        head = line_hash(fixed)
    path.write_bytes(b"\n".join(out) + b"\n")


def attacker_key_file(tmp_path: Path) -> Path:
    key = tmp_path / "attacker.key"
    key.write_text(ATTACKER_KEY.hex())
    return key


def test_a_torn_tail_is_incomplete_and_the_records_before_it_verify(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sealed_run(tmp_path)
    lines = lines_of(path)
    path.write_bytes(b"\n".join(lines[:-1]) + b"\n" + lines[-1][:40])
    code, out = run_verify(capsys, str(path))
    assert code == 4, out
    assert f"INCOMPLETE — {len(lines) - 1} records, chain intact; sealed" in out
    assert f"line {len(lines)} is torn" in out


def test_an_edit_before_a_torn_tail_is_still_caught(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sealed_run(tmp_path)
    lines = lines_of(path)
    lines[2] = lines[2].replace(b'"index":1', b'"index":7')
    path.write_bytes(b"\n".join(lines[:-1]) + b"\n" + lines[-1][:40])
    code, out = run_verify(capsys, str(path))
    assert code == 1, out
    assert "BROKEN — line 3 has a seal that does not match" in out


def test_a_run_without_run_end_is_incomplete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sealed_run(tmp_path)
    lines = lines_of(path)
    path.write_bytes(b"\n".join(lines[:-1]) + b"\n")
    code, out = run_verify(capsys, str(path))
    assert code == 4, out
    assert "the last record is not run_end" in out


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"", "the file is empty"),
        (b"\x00" * 4096, "line 1 is binary (NUL bytes)"),
        (b"hello, world\n", "line 1 is not a JSON record"),
    ],
    ids=["empty", "nul-bytes", "text"],
)
def test_a_file_that_is_not_a_log_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, says: str
) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(content)
    code, out = run_verify(capsys, str(path))
    assert code == 2, out
    assert f"NOT A LOG — {says}" in out


def test_a_directory_or_a_missing_file_is_not_a_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_verify(capsys, str(tmp_path)) == (
        2,
        f"{tmp_path}: NOT A LOG — {tmp_path} is a directory, not an audit log\n",
    )
    code, out = run_verify(capsys, str(tmp_path / "nope.jsonl"))
    assert code == 2 and "No such file or directory" in out
    code, out = run_verify(capsys, "/dev/zero")  # never read: it has no end
    assert code == 2 and "not a regular file" in out


def test_a_nul_filled_tail_left_by_a_crash_is_a_torn_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sealed_run(tmp_path)
    lines = lines_of(path)
    path.write_bytes(b"\n".join(lines[:-1]) + b"\n" + b"\x00" * 512)
    code, out = run_verify(capsys, str(path))
    assert code == 4, out
    assert f"line {len(lines)} is torn" in out


def test_without_the_key_the_chain_is_checked_and_the_seal_is_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = sealed_run(tmp_path)
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "another-machine"))
    code, out = run_verify(capsys, str(path))
    assert code == 3, out
    assert "chain intact; seal not checked (no key)" in out
    assert not (tmp_path / "another-machine" / KEY_FILE).exists()  # verify never makes one


def test_with_the_exported_key_another_machine_checks_the_seal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = sealed_run(tmp_path)
    assert main(["key", "export"]) == 0
    exported = tmp_path / "auditor.key"
    exported.write_text(capsys.readouterr().out)
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "another-machine"))
    code, out = run_verify(capsys, str(path), "--key", str(exported))
    assert code == 0, out
    assert "chain intact and sealed" in out


def test_a_wrong_key_fails_at_line_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = sealed_run(tmp_path)
    code, out = run_verify(capsys, str(path), "--key", str(attacker_key_file(tmp_path)))
    assert code == 1, out
    assert "line 1 has a seal that does not match" in out and "sealed by another key" in out


def test_a_key_file_that_is_not_a_key_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sealed_run(tmp_path)
    bad = tmp_path / "bad.key"
    bad.write_text("not a key")
    assert main(["verify", str(path), "--key", str(bad)]) == 2
    assert "is not a handrail audit key" in capsys.readouterr().err


def test_the_key_is_32_random_bytes_readable_by_its_owner_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "data"))
    key = installation_key()
    info = (tmp_path / "data" / KEY_FILE).stat()
    assert stat.S_IMODE(info.st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "data").stat().st_mode) == 0o700
    assert len(key.secret) == 32 and key.secret != bytes(32)
    assert installation_key() == key  # created once, then reused


def test_a_key_others_can_read_is_refused_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "data"))
    installation_key()
    os.chmod(tmp_path / "data" / KEY_FILE, 0o644)
    with pytest.raises(AuditError, match="chmod 600"):
        AuditWriter.create(tmp_path / "logs", "t")


def test_key_export_prints_the_key_an_auditor_can_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["key", "export"]) == 0
    captured = capsys.readouterr()
    exported = tmp_path / "k"
    exported.write_text(captured.out)
    assert key_from_file(exported).secret == installation_key().secret
    assert "give it to auditors only" in captured.err


def test_an_old_chain_only_log_verifies_as_chain_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "old.jsonl"
    head: str | None = None
    lines = []
    for seq, record in enumerate(
        [{"type": "run_start", "schema": 1, "task": "t"}, {"type": "run_end", "outcome": "success"}]
    ):
        line = encode({"seq": seq, "prev": head, **record})
        lines.append(line)
        head = line_hash(line)
    path.write_bytes(b"\n".join(lines) + b"\n")
    code, out = run_verify(capsys, str(path))
    assert code == 3, out
    assert "chain intact; chain only (schema 1" in out
