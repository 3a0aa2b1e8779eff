"""Verifying an audit log: the hash chain, the seal on every record, and the run's closing.

Streams the file line by line, so memory stays flat whatever its size (a 5 MB record is
read once, as one line). The verdicts and the exit codes ``handrail verify`` gives them:

=========== ==== ===========================================================================
status      exit meaning
=========== ==== ===========================================================================
sealed      0    every record's chain link and seal hold, and ``run_end`` closes the run
broken      1    a record was edited, forged, reordered, dropped, re-hashed or appended
not_a_log   2    empty, binary, a directory, missing: nothing here is an audit log
unsealed    3    the chain holds but no seal was checked: no key for this log, or an old
                 (schema 1) chain-only log
incomplete  4    no ``run_end``, or a torn last line; the complete records before it verify
=========== ==== ===========================================================================

``broken`` names the first bad line (1-based).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from core.audit.chain import line_hash, seal_holds, split_seal
from core.audit.key import AuditKey, AuditKeyError, existing_key

Status = Literal["sealed", "broken", "not_a_log", "unsealed", "incomplete"]
SealState = Literal["checked", "no_key", "other_key", "chain_only", "key_error"]

EXIT_CODES: dict[Status, int] = {
    "sealed": 0,
    "broken": 1,
    "not_a_log": 2,
    "unsealed": 3,
    "incomplete": 4,
}

INSTALLATION: Literal["installation"] = "installation"


@dataclass
class VerifyReport:
    """What :func:`verify` found.

    ``ok`` means nothing was found altered in the records present (an unfinished run, or a
    seal that could not be checked, is still ``ok``: read ``status`` for those).
    """

    status: Status
    records: int
    """Records that verified (chain, and seal when checked)."""
    first_break: str | None = None
    """For ``broken`` and ``not_a_log``: what is wrong, naming the line."""
    bad_line: int | None = None
    seal: SealState = "no_key"
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status not in ("broken", "not_a_log")

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    def seal_text(self) -> str:
        return {
            "checked": "sealed",
            "no_key": "seal not checked (no key)",
            "other_key": "seal not checked (sealed by another installation's key)",
            "chain_only": "chain only (schema 1: written before records were sealed)",
            "key_error": "seal not checked (this installation's key is unusable)",
        }[self.seal]

    def summary(self) -> str:
        """One line for a person: the verdict, the count, and what was or was not checked."""
        if self.status == "not_a_log":
            return f"NOT A LOG — {self.first_break}"
        if self.status == "broken":
            return f"BROKEN — {self.first_break}"
        chain = f"{self.records} records, chain intact"
        if self.status == "sealed":
            return f"OK — {chain} and sealed"
        if self.status == "incomplete":
            return f"INCOMPLETE — {chain}; {self.seal_text()}"
        return f"{self.records} records — chain intact; {self.seal_text()}"


def verify(
    path: Path, key: AuditKey | Literal["installation"] | None = INSTALLATION
) -> VerifyReport:
    """Verify the log at ``path``.

    ``key``: the installation's key (the default; never created here), a key an auditor
    was given (every seal must then hold under it), or ``None`` to check the chain only.
    Never raises on content or on a path that is not a readable file (``not_a_log``).
    """
    path = Path(path)
    if path.is_dir():
        return VerifyReport("not_a_log", 0, f"{path} is a directory, not an audit log")
    if path.exists() and not path.is_file():
        return VerifyReport("not_a_log", 0, f"{path} is not a regular file, not an audit log")
    try:
        f = path.open("rb")
    except OSError as exc:
        return VerifyReport("not_a_log", 0, f"cannot read {path}: {exc.strerror or exc}")
    with f:
        # JSON lines never hold a NUL byte: a binary file is refused before a "line" of
        # gigabytes is read. (Only the first line: a crash may leave a NUL-filled tail,
        # which is a torn last line, not a foreign file.)
        if b"\x00" in f.read(_SNIFF_BYTES).split(b"\n", 1)[0]:
            return VerifyReport(
                "not_a_log", 0, "line 1 is binary (NUL bytes): this is not a handrail audit log", 1
            )
        f.seek(0)
        verifier = _Verifier(key)
        report = verifier.run(f)
    if report.ok and verifier.har is not None:
        return _check_har(path, verifier.har, report)
    return report


def _check_har(path: Path, har: dict[str, Any], report: VerifyReport) -> VerifyReport:
    """The run's ``network.har`` (``run --har``) against the sha256 its ``run_end`` keeps:
    a file that differs is ``broken``; a missing one is said, and the log still verifies.
    Only a plain name inside the log's folder is opened (a log from elsewhere may name any
    path), never through a link, and only a regular file."""
    line = report.records  # run_end is the last record
    if isinstance(har.get("missing"), str):
        report.notes.append(f"the run's HAR file was not written: {har['missing']}")
        return report
    name, digest = har.get("file"), har.get("sha256")
    parts = Path(name).parts if isinstance(name, str) else ()
    if not parts or Path(str(name)).is_absolute() or ".." in parts or not isinstance(digest, str):
        return VerifyReport(
            "broken",
            report.records,
            f"line {line} (run_end) names its HAR file as {name!r}, which is not a file "
            "in the log's folder: the record was made elsewhere",
            line,
            report.seal,
            report.notes,
        )
    target = path.parent / str(name)
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        report.notes.append(f"the run's HAR file {target} is missing: it was not checked")
        return report
    except OSError as exc:
        report.notes.append(f"the run's HAR file {target} cannot be read: {exc.strerror}")
        return report
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            report.notes.append(f"the run's HAR file {target} is not a regular file: not checked")
            return report
        found = hashlib.file_digest(f, "sha256").hexdigest()
    if found != digest:
        return VerifyReport(
            "broken",
            report.records,
            f"{target} does not match the sha256 run_end (line {line}) recorded for it: "
            "the HAR file was changed after the run",
            line,
            report.seal,
            report.notes,
        )
    report.notes.append(f"the run's HAR file {target.name} matches its sha256")
    return report


_SNIFF_BYTES = 4096


class _Verifier:
    def __init__(self, key: AuditKey | Literal["installation"] | None) -> None:
        self.explicit = isinstance(key, AuditKey)
        self.notes: list[str] = []
        self.har: dict[str, Any] | None = None
        self.key: AuditKey | None = None
        self.key_problem: str | None = None
        if isinstance(key, AuditKey):
            self.key = key
        elif key == INSTALLATION:
            try:
                self.key = existing_key()
            except AuditKeyError as exc:
                self.key_problem = str(exc)

    def run(self, lines: Iterable[bytes]) -> VerifyReport:
        head: str | None = None
        count = 0
        sealed_log = False
        check_seal = False
        seal_state: SealState = "no_key"
        end_line: int | None = None

        def broken(line_no: int, why: str) -> VerifyReport:
            return VerifyReport(
                "broken", count, f"line {line_no} {why}", line_no, seal_state, self.notes
            )

        for i, line in enumerate(lines, start=1):
            terminated = line.endswith(b"\n")
            raw = line[:-1] if terminated else line
            record = _record(raw)
            if record is None:
                if i == 1 and not (not terminated and raw.startswith(b'{"seq":0,')):
                    what = "blank" if not raw.strip() else "not a JSON record"
                    if b"\x00" in raw:
                        what = "binary (NUL bytes)"
                    return VerifyReport(
                        "not_a_log", 0, f"line 1 is {what}: this is not a handrail audit log", 1
                    )
                if not terminated:
                    self.notes.append(
                        f"line {i} is torn (the writer stopped mid-line); "
                        f"the {count} records before it verify"
                    )
                    return self._finish("incomplete", count, seal_state)
                return broken(i, "is not a JSON record: the log was altered")
            if end_line is not None:
                return broken(
                    i,
                    f"comes after run_end (line {end_line}), which closed the run: "
                    "records were appended",
                )
            if i == 1:
                sealed_log = split_seal(raw) is not None or _int(record.get("schema"), 1) >= 2
                seal_state, check_seal = self._seal_plan(sealed_log, record)
            seq = record.get("seq")
            if not isinstance(seq, int) or isinstance(seq, bool):
                return broken(i, "has no sequence number (seq): the log was altered")
            if seq != count:
                return broken(i, _seq_break(seq, count, lines))
            if record.get("prev") != head:
                if i == 1:
                    return broken(
                        1, f"(seq 0) should have prev null but has {record.get('prev')!r}"
                    )
                return broken(
                    i - 1,
                    f"(seq {seq - 1}) was edited after it was written: its hash no longer "
                    f"matches the prev recorded on line {i}",
                )
            if sealed_log:
                if split_seal(raw) is None:
                    return broken(
                        i,
                        "carries no seal (mac) in a sealed log: it was forged or its seal removed",
                    )
                if check_seal:
                    assert self.key is not None
                    if not seal_holds(self.key.secret, head, raw):
                        why = "was edited or forged after it was written"
                        if i == 1 and self.explicit:
                            why += (
                                f", or sealed by another key (the key given has id "
                                f"{self.key.key_id}; the log names {record.get('key_id')!r})"
                            )
                        return broken(i, f"has a seal that does not match: it {why}")
            if record.get("type") == "run_end":
                end_line = i
                har = record.get("har")
                self.har = har if isinstance(har, dict) else None
                if sealed_log and (record.get("records") != seq or record.get("head") != head):
                    return broken(
                        i,
                        "(run_end) does not close the chain it ends: its record count or "
                        "head disagrees with the lines before it",
                    )
            head = line_hash(raw)
            count += 1
        if count == 0:
            return VerifyReport(
                "not_a_log", 0, "the file is empty: this is not a handrail audit log"
            )
        if end_line is None:
            self.notes.append(
                "the last record is not run_end: the run did not finish (or is running)"
            )
            return self._finish("incomplete", count, seal_state)
        return self._finish("sealed" if check_seal else "unsealed", count, seal_state)

    def _seal_plan(self, sealed_log: bool, first: dict[str, Any]) -> tuple[SealState, bool]:
        if not sealed_log:
            return "chain_only", False
        if self.key is None:
            if self.key_problem is not None:
                self.notes.append(self.key_problem)
                return "key_error", False
            self.notes.append(
                "no key on this machine: check it where it was written, or with "
                "`--key FILE` (from `handrail key export` there)"
            )
            return "no_key", False
        if self.explicit or first.get("key_id") in (None, self.key.key_id):
            return "checked", True
        self.notes.append(
            f"sealed by key {first.get('key_id')!r}; this installation's key is "
            f"{self.key.key_id!r}: pass that installation's key with --key FILE"
        )
        return "other_key", False

    def _finish(self, status: Status, count: int, seal: SealState) -> VerifyReport:
        return VerifyReport(status, count, None, None, seal, self.notes)


def _record(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _seq_break(seq: int, expected: int, rest: Iterable[bytes]) -> str:
    if seq < expected:
        return f"has seq {seq} where {expected} was expected: records were reordered or duplicated"
    later: set[int] = set()
    for raw in rest:
        record = _record(raw)
        if record is not None and isinstance(record.get("seq"), int):
            later.add(record["seq"])
    if expected in later:
        return (
            f"has seq {seq} where {expected} was expected; seq {expected} appears later: "
            "records were reordered"
        )
    missing = seq - expected
    return (
        f"has seq {seq} where {expected} was expected: "
        f"{missing} record{'s' if missing != 1 else ''} dropped before this line"
    )
