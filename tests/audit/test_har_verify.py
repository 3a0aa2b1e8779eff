"""The recorder's ``requests`` records and ``run_end.har``, and what ``verify`` makes of the
HAR file a log names, when the log (or the folder beside it) comes from elsewhere."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from core.audit import AuditWriter, read_log, verify
from core.audit.records import RequestsRecord, record_of
from core.run.events import RoundStarted, RunFinished, RunStarted
from core.run.recorder import AuditRecorder
from core.secrets import REDACTED, Secret, Secrets


class Tap:
    """The recorder's side of a NetworkLog: requests handed over as they finish."""

    def __init__(self) -> None:
        self.round = 0
        self.handover = False
        self.pending: list[dict[str, Any]] = []
        self.ended = False

    def take(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        entries, self.pending = self.pending, []
        return [], entries

    def end(self) -> None:
        self.ended = True


def entry(url: str, round: int) -> dict[str, Any]:
    return {"round": round, "method": "GET", "url": url, "start": "2026-12-07T10:00:00.000Z"}


def run_with(
    tmp_path: Path, har: Mapping[str, Any] | None, *, secrets: Secrets | None = None
) -> Path:
    writer = AuditWriter.create(tmp_path, "fetch things", secrets=secrets)
    rec = AuditRecorder(writer)
    tap = Tap()
    rec.network = tap
    rec.finish_har = (lambda: har) if har is not None else None
    rec(RunStarted("r", "fetch things", "scripted plan: p.jsonl", "launched, headless", 5))
    tap.pending.append(entry("https://shop.example/", 0))
    rec(RoundStarted(1, 5))
    tap.pending.append(entry("https://shop.example/a?x=tok-SECRET-1", 1))
    rec(RunFinished("success", "done", 1, 0))
    assert tap.ended
    return writer.path


def test_requests_are_written_after_their_round_and_before_run_end(tmp_path: Path) -> None:
    path = run_with(tmp_path, None, secrets=Secrets([Secret("TOKEN", "tok-SECRET-1")]))
    records = read_log(path).records
    kinds = [r["type"] for r in records]
    assert kinds == ["run_start", "requests", "requests", "run_end"]
    before, last = (record_of(r) for r in records[1:3])
    assert isinstance(before, RequestsRecord) and before.round == 0
    assert isinstance(last, RequestsRecord) and last.round == 1
    assert last.entries[0]["url"] == f"https://shop.example/a?x={REDACTED}"  # the writer's scrub
    assert "har" not in records[-1]
    assert verify(path).status == "sealed"


def har_beside(tmp_path: Path, data: bytes = b'{"log": {}}\n') -> dict[str, Any]:
    folder = tmp_path / "run"
    folder.mkdir(exist_ok=True)
    (folder / "network.har").write_bytes(data)
    return {"file": "run/network.har", "sha256": hashlib.sha256(data).hexdigest(), "entries": 0}


def test_a_matching_har_file_is_said_to_match(tmp_path: Path) -> None:
    report = verify(run_with(tmp_path, har_beside(tmp_path)))
    assert report.status == "sealed"
    assert any("matches its sha256" in note for note in report.notes)


@pytest.mark.parametrize("name", ["../network.har", "/etc/passwd", "", "run/../../x.har"])
def test_a_log_naming_a_har_outside_its_folder_is_broken_and_nothing_is_read(
    tmp_path: Path, name: str
) -> None:
    outside = tmp_path.parent / "network.har"
    har = {"file": name, "sha256": "0" * 64, "entries": 0}
    report = verify(run_with(tmp_path, har))
    assert report.status == "broken"
    assert "not a file in the log's folder" in (report.first_break or "")
    assert not outside.exists()


def test_a_har_file_replaced_by_a_link_is_not_followed(tmp_path: Path) -> None:
    har = har_beside(tmp_path)
    target = tmp_path / "elsewhere.har"
    target.write_bytes(b'{"log": {}}\n')  # the same bytes, so a followed link would match
    (tmp_path / "run" / "network.har").unlink()
    (tmp_path / "run" / "network.har").symlink_to(target)
    report = verify(run_with(tmp_path, har))
    assert report.status == "sealed"  # the log itself holds
    assert any("cannot be read" in note for note in report.notes)
    assert not any("matches" in note for note in report.notes)


def test_a_har_file_replaced_by_a_pipe_is_not_read(tmp_path: Path) -> None:
    har = har_beside(tmp_path)
    (tmp_path / "run" / "network.har").unlink()
    os.mkfifo(tmp_path / "run" / "network.har")  # nobody writes: a read would wait for ever
    report = verify(run_with(tmp_path, har))
    assert report.status == "sealed"
    assert any("not a regular file" in note for note in report.notes)


def test_a_missing_or_unwritten_har_is_said_and_the_log_still_verifies(tmp_path: Path) -> None:
    har = har_beside(tmp_path)
    (tmp_path / "run" / "network.har").unlink()
    report = verify(run_with(tmp_path, har))
    assert report.status == "sealed" and any("is missing" in n for n in report.notes)
    other = tmp_path / "second"
    other.mkdir()
    report = verify(run_with(other, {"missing": "network.har could not be written: disk full"}))
    assert report.status == "sealed" and any("disk full" in n for n in report.notes)


def test_an_edited_har_file_breaks_the_log(tmp_path: Path) -> None:
    har = har_beside(tmp_path)
    path = run_with(tmp_path, har)
    (tmp_path / "run" / "network.har").write_bytes(b'{"log": {"entries": []}}\n')
    report = verify(path)
    assert report.status == "broken"
    assert "HAR file was changed" in (report.first_break or "")
