"""The audit log: an append-only JSONL hash chain, its writer, recorder, readers and verifier.

Record shapes are the contract in docs/architecture.md ("Audit log"). Every line is one JSON
object with ``seq`` (0, 1, 2, ...) and ``prev`` (SHA-256 hex of the previous line's bytes,
without its newline; ``null`` on the first line). Each line is written with one ``write``
and fsynced before :meth:`AuditWriter.write` returns, so a run killed at any point leaves
every record whose write returned, and at worst one torn last line that readers report.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import json
import math
import os
import re
import threading
import time
import unicodedata
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from core.actions import Action
from core.events import (
    ActionDone,
    ActionIntent,
    ActionParsed,
    ApprovalGiven,
    Event,
    HumanNeeded,
    HumanReturned,
    ModelReplied,
    Observed,
    RoundStarted,
    RunFinished,
    RunStarted,
)
from core.secrets import REDACTED, Secrets, only_placeholders

__all__ = [
    "REDACTED",
    "SCHEMA",
    "AuditError",
    "AuditLockedError",
    "AuditRecorder",
    "AuditWriter",
    "LogIndex",
    "LogProblem",
    "LogRead",
    "RoundEntry",
    "VerifyReport",
    "line_hash",
    "outcome_of",
    "read_log",
    "rounds_of",
    "verify",
]

SCHEMA = 1
SLUG_MAX = 48
"""Longest task slug in a file name, in characters."""


class AuditError(Exception):
    """The audit log cannot be written. The agent must not act without its record."""


class AuditLockedError(AuditError):
    """Another writer holds the log file."""


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def line_hash(line: bytes) -> str:
    """SHA-256 hex of one log line's bytes, without its newline: the next record's ``prev``."""
    return hashlib.sha256(line.rstrip(b"\n")).hexdigest()


def _slug(task: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", task).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    slug = ""
    for w in words:
        candidate = f"{slug}-{w}" if slug else w
        if len(candidate) > SLUG_MAX:
            if not slug:
                slug = w[:SLUG_MAX]
            break
        slug = candidate
    return slug or "run"


def _plain(obj: Any) -> Any:
    """Reduce a value to JSON types, so scrubbing sees every string that will be written."""
    if obj is None or isinstance(obj, bool | int | str):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else str(obj)
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | set | frozenset):
        return [_plain(v) for v in obj]
    to_json = getattr(obj, "to_json", None)
    if callable(to_json):
        return _plain(to_json())
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return _plain(dataclasses.asdict(obj))
    if isinstance(obj, bytes):
        return obj.decode("utf-8", "replace")
    return str(obj)


class AuditWriter:
    """Appends records to one JSONL file, holding an exclusive lock on it while open.

    Not a context for several processes: a second writer on the same file (in this or any
    process) gets :class:`AuditLockedError`. Thread-safe within a process.
    """

    path: Path
    run_id: str

    def __init__(self, path: Path, *, run_id: str | None = None, secrets: Secrets | None = None):
        """Open ``path`` for appending (creating it if needed) and lock it.

        When the file already holds records, the chain continues after its last line.
        Raises :class:`AuditLockedError` when another writer holds the file.
        """
        self.path = Path(path)
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self._secrets = secrets
        self._lock = threading.Lock()
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            self._fd = None
            raise AuditLockedError(
                f"{self.path} is already being written by another handrail process "
                "(one writer per log). Use a different --audit-dir or wait for that run to end."
            ) from None
        self._seq = 0
        self._prev: str | None = None
        self._resume()

    @classmethod
    def create(
        cls,
        audit_dir: Path,
        task: str,
        *,
        run_id: str | None = None,
        secrets: Secrets | None = None,
        now: datetime | None = None,
    ) -> AuditWriter:
        """Create a new log in ``audit_dir`` named by local time and task, e.g.
        ``2026-11-29T19-40-05_book-a-train-lyon-paris.jsonl``.

        The slug is ASCII, at most :data:`SLUG_MAX` characters, built from the task after
        scrubbing secrets; ``-2``, ``-3``... is appended when the name exists. The directory
        is created when missing.
        """
        audit_dir = Path(audit_dir)
        audit_dir.mkdir(parents=True, exist_ok=True)
        stamp = (now or datetime.now()).strftime("%Y-%m-%dT%H-%M-%S")
        clean_task = secrets.scrub(task) if secrets else task
        base = f"{stamp}_{_slug(clean_task.replace(REDACTED, ' '))}"
        n = 1
        while True:
            path = audit_dir / (f"{base}.jsonl" if n == 1 else f"{base}-{n}.jsonl")
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                n += 1
                continue
            os.close(fd)
            break
        _fsync_dir(audit_dir)
        return cls(path, run_id=run_id, secrets=secrets)

    @property
    def closed(self) -> bool:
        return self._fd is None

    @property
    def next_seq(self) -> int:
        return self._seq

    def write(self, record: dict[str, Any]) -> dict[str, Any]:
        """Scrub, chain and append one record; flushed and fsynced before returning.

        ``record`` must not carry ``seq`` or ``prev`` (the writer owns them). Returns the
        record as written. Raises :class:`AuditError` when the writer is closed and
        ``OSError`` when the disk refuses the write.
        """
        if "seq" in record or "prev" in record:
            raise ValueError("seq and prev are set by the writer; remove them from the record")
        body = _plain(record)
        if self._secrets is not None:
            body = self._secrets.scrub_json(body)
        with self._lock:
            if self._fd is None:
                raise AuditError(f"{self.path}: the audit writer is closed")
            out = {"seq": self._seq, "prev": self._prev, **body}
            line = json.dumps(out, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            data = line + b"\n"
            view = memoryview(data)
            while view:
                n = os.write(self._fd, view)
                view = view[n:]
            os.fsync(self._fd)
            self._seq += 1
            self._prev = line_hash(line)
        return out

    def close(self) -> None:
        """Release the lock and close the file. Idempotent."""
        with self._lock:
            if self._fd is None:
                return
            fd, self._fd = self._fd, None
        with contextlib.suppress(OSError):
            os.fsync(fd)
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    def __enter__(self) -> AuditWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _resume(self) -> None:
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        if size == 0:
            return
        read = read_log(self.path)
        last_line = _last_line(self.path)
        if read.problems and read.problems[-1].kind == "torn":
            self.close()
            raise AuditError(
                f"{self.path} ends with a torn line (its writer was interrupted); "
                "it is kept as evidence and not appended to. Start a new log."
            )
        seqs = [r["seq"] for r in read.records if isinstance(r.get("seq"), int)]
        self._seq = (max(seqs) + 1) if seqs else 0
        if last_line is not None:
            self._prev = line_hash(last_line)


def _last_line(path: Path) -> bytes | None:
    with path.open("rb") as f:
        f.seek(0, os.SEEK_END)
        end = f.tell()
        pos = end
        buf = b""
        while pos > 0:
            step = min(65536, pos)
            pos -= step
            f.seek(pos)
            buf = f.read(step) + buf
            body = buf[:-1] if buf.endswith(b"\n") else buf
            cut = body.rfind(b"\n")
            if cut != -1:
                return buf[cut + 1 :]
        return buf or None


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# --- recorder -----------------------------------------------------------------------------


@dataclass
class _Draft:
    round: int
    ts: str
    started: float
    observed: Observed | None = None
    model: ModelReplied | None = None
    parsed: ActionParsed | None = None
    approval: ApprovalGiven | None = None
    intent: Action | None = None
    sensitive: bool = False

    def has_content(self) -> bool:
        return any(x is not None for x in (self.observed, self.model, self.parsed, self.intent))


class AuditRecorder:
    """An event sink that turns agent events into the audit records of docs/architecture.md.

    Writes synchronously: when a call returns, its record is on disk. Errors from the writer
    (``OSError``, :class:`AuditError`) propagate, so the agent never acts on an intent that
    was not recorded.

    Password and payment fields: an :class:`~core.events.ActionIntent` with ``sensitive``
    set (or an earlier :meth:`mark_sensitive` call for its round) redacts the round. From then on the text that round
    types is written as ``«redacted»`` — in the intent, the round's action, its approval's
    edited params and the model output — and is scrubbed from every later record of the run
    (a page may echo it). Text made only of ``<secret:NAME>`` placeholders is kept: the
    placeholder is not the secret.
    """

    def __init__(self, writer: AuditWriter) -> None:
        self._writer = writer
        self._drafts: dict[int, _Draft] = {}
        self._sensitive_rounds: set[int] = set()
        self._sensitive_texts: set[str] = set()
        self._rounds_written = 0

    @property
    def writer(self) -> AuditWriter:
        return self._writer

    def mark_sensitive(self, round: int) -> None:
        """Redact the text typed in ``round`` (see the class doc). Call before its intent."""
        self._sensitive_rounds.add(round)
        draft = self._drafts.get(round)
        if draft is not None:
            draft.sensitive = True
            for action in (draft.intent, draft.parsed.action if draft.parsed else None):
                self._remember_sensitive(action)

    def __call__(self, event: Event) -> None:
        match event:
            case RunStarted():
                self._write(
                    {
                        "type": "run_start",
                        "schema": SCHEMA,
                        "run_id": self._writer.run_id,
                        "ts": _now_iso(),
                        "task": event.task,
                        "model": event.model,
                        "settings": dict(event.settings),
                        "browser": event.browser,
                        "max_rounds": event.max_rounds,
                    }
                )
            case RoundStarted():
                self._draft(event.round)
            case Observed():
                self._draft(event.round).observed = event
            case ModelReplied():
                self._draft(event.round).model = event
            case ActionParsed():
                draft = self._draft(event.round)
                draft.parsed = event
                if draft.sensitive:
                    self._remember_sensitive(event.action)
            case ApprovalGiven():
                self._draft(event.round).approval = event
            case ActionIntent():
                if event.sensitive:
                    self.mark_sensitive(event.round)
                draft = self._draft(event.round)
                draft.intent = event.action
                if draft.sensitive:
                    self._remember_sensitive(event.action)
                action = self._action_json(event.action, draft.sensitive)
                self._write(
                    {
                        "type": "intent",
                        "run_id": self._writer.run_id,
                        "round": event.round,
                        "ts": _now_iso(),
                        "action": action,
                    }
                )
            case ActionDone():
                found = self._drafts.pop(event.round, None)
                draft = found if found is not None else self._new_draft(event.round)
                self._write_round(draft, event)
            case HumanNeeded():
                req = event.request
                self._write(
                    {
                        "type": "human_pause",
                        "run_id": self._writer.run_id,
                        "round": req.round,
                        "ts": _now_iso(),
                        "kind": req.kind,
                        "detail": req.detail,
                        "url": req.url,
                        "title": req.title,
                        "headless": req.headless,
                    }
                )
            case HumanReturned():
                self._write(
                    {
                        "type": "human_resume",
                        "run_id": self._writer.run_id,
                        "round": event.round,
                        "ts": _now_iso(),
                        "response": event.response,
                    }
                )
            case RunFinished():
                self.flush_pending()
                self._write(
                    {
                        "type": "run_end",
                        "run_id": self._writer.run_id,
                        "ts": _now_iso(),
                        "outcome": event.outcome,
                        "answer": event.answer,
                        "rounds": event.rounds,
                        "exit_code": event.exit_code,
                        "reason": event.reason,
                    }
                )
                self._writer.close()
            case _:
                pass  # ApprovalNeeded: the decision (ApprovalGiven) is what the log keeps.

    def flush_pending(self) -> None:
        """Write every round that started but got no ActionDone, its result ``unknown``.

        Called at run end; a supervisor that stops the run abnormally may call it too.
        """
        for rnd in sorted(self._drafts):
            draft = self._drafts.pop(rnd)
            if draft.has_content():
                self._write_round(draft, None)

    # -- internals --

    def _new_draft(self, rnd: int) -> _Draft:
        return _Draft(
            round=rnd,
            ts=_now_iso(),
            started=_monotonic_ms(),
            sensitive=rnd in self._sensitive_rounds,
        )

    def _draft(self, rnd: int) -> _Draft:
        draft = self._drafts.get(rnd)
        if draft is None:
            draft = self._drafts[rnd] = self._new_draft(rnd)
        return draft

    def _remember_sensitive(self, action: Action | None) -> None:
        text = _typed_text(action)
        if text and not only_placeholders(text):
            self._sensitive_texts.add(text)

    def _action_json(self, action: Action, sensitive: bool) -> dict[str, Any]:
        out = action.to_json()
        text = out["params"].get("text")
        if sensitive and isinstance(text, str) and not only_placeholders(text):
            out["params"]["text"] = REDACTED
        return out

    def _write_round(self, draft: _Draft, done: ActionDone | None) -> None:
        parsed = draft.parsed
        action: dict[str, Any] | None
        if parsed is not None and parsed.action is not None:
            action = self._action_json(parsed.action, draft.sensitive)
        elif parsed is not None:
            action = {"error": parsed.error or "the reply could not be parsed into an action"}
        elif done is not None and done.action is not None:
            action = self._action_json(done.action, draft.sensitive)
        elif draft.intent is not None:
            action = self._action_json(draft.intent, draft.sensitive)
        else:
            action = None

        if done is not None:
            approval: dict[str, Any] | None = dict(done.approval) or None
            result: dict[str, Any] = done.result.to_json()
        else:
            approval = None
            if draft.intent is not None:
                message = (
                    "the action was dispatched but the run ended before its result was read; "
                    "its effect is unknown"
                )
            else:
                message = "the run ended before this round's action ran"
            result = {"ok": False, "message": message, "outcome": "unknown"}
        if approval is None and draft.approval is not None:
            d = draft.approval.decision
            approval = {"decision": d.decision, "by": d.by}
            if d.edited_params is not None:
                approval["edited_params"] = dict(d.edited_params)
            if d.note is not None:
                approval["note"] = d.note
        if draft.sensitive and approval and isinstance(approval.get("edited_params"), dict):
            ep = dict(approval["edited_params"])
            if isinstance(ep.get("text"), str) and not only_placeholders(ep["text"]):
                self._sensitive_texts.add(ep["text"])
                ep["text"] = REDACTED
            approval["edited_params"] = ep

        obs, model = draft.observed, draft.model
        timing: dict[str, float] = {}
        if obs is not None:
            timing["observe"] = round(obs.duration_ms, 1)
        if model is not None:
            timing["model"] = round(model.duration_ms, 1)
        if done is not None:
            timing["action"] = round(done.duration_ms, 1)
        timing["round"] = round(_monotonic_ms() - draft.started, 1)

        record: dict[str, Any] = {
            "type": "round",
            "run_id": self._writer.run_id,
            "round": draft.round,
            "ts": draft.ts,
            "url": obs.url if obs else None,
            "title": obs.title if obs else None,
            "observation": obs.digest if obs else None,
            "model_output": list(model.output) if model else None,
            "action": action,
            "approval": approval,
            "result": result,
            "timing_ms": timing,
            "usage": dict(model.usage) if model else None,
        }
        if parsed is not None and parsed.element_line is not None:
            record["element"] = parsed.element_line
        self._write(record)
        self._rounds_written += 1

    def _write(self, record: dict[str, Any]) -> None:
        if self._sensitive_texts:
            record = _redact_texts(_plain(record), self._sensitive_texts)
        self._writer.write(record)


def _typed_text(action: Action | None) -> str | None:
    if action is None:
        return None
    text = action.params.get("text")
    return text if isinstance(text, str) and text else None


def _redact_texts(obj: Any, texts: set[str]) -> Any:
    # Short texts are only redacted where a whole string equals them: as substrings they
    # would blank unrelated words everywhere.
    def fix(s: str) -> str:
        for t in sorted(texts, key=len, reverse=True):
            if s == t:
                return REDACTED
            if len(t) >= 4 and t in s:
                s = s.replace(t, REDACTED)
        return s

    if isinstance(obj, str):
        return fix(obj)
    if isinstance(obj, dict):
        return {k: _redact_texts(v, texts) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_redact_texts(v, texts) for v in obj]
    return obj


def _monotonic_ms() -> float:
    return time.monotonic() * 1000.0


# --- reading ------------------------------------------------------------------------------

ProblemKind = Literal["torn", "not_json", "not_object"]
_PROBLEM_TEXT = 200


@dataclass(frozen=True)
class LogProblem:
    """A line that is not a record. ``line_no`` is 1-based; ``text`` is its start."""

    line_no: int
    kind: ProblemKind
    text: str

    def describe(self) -> str:
        what = {
            "torn": "is torn (the writer stopped mid-line)",
            "not_json": "is not JSON",
            "not_object": "is JSON but not an object",
        }[self.kind]
        return f"line {self.line_no} {what}"


@dataclass
class LogRead:
    records: list[dict[str, Any]]
    problems: list[LogProblem]


def _parse_line(raw: bytes, line_no: int, last_unterminated: bool) -> dict[str, Any] | LogProblem:
    try:
        value = json.loads(raw)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError
        text = raw[:_PROBLEM_TEXT].decode("utf-8", "replace")
        return LogProblem(line_no, "torn" if last_unterminated else "not_json", text)
    if not isinstance(value, dict):
        text = raw[:_PROBLEM_TEXT].decode("utf-8", "replace")
        return LogProblem(line_no, "not_object", text)
    return value


def read_log(path: Path) -> LogRead:
    """Every record of the log, in file order, and a report of the lines that are not records.

    Never raises on content: a line that is not JSON is a ``not_json`` problem, a last line
    without a newline that does not parse is ``torn``. Blank lines are skipped. Raises
    ``OSError`` only when the file cannot be read.
    """
    data = Path(path).read_bytes()
    lines = data.split(b"\n")
    terminated = data.endswith(b"\n")
    if terminated:
        lines.pop()
    out = LogRead([], [])
    for i, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        parsed = _parse_line(raw, i, last_unterminated=not terminated and i == len(lines))
        if isinstance(parsed, LogProblem):
            out.problems.append(parsed)
        else:
            out.records.append(parsed)
    return out


class LogIndex:
    """Random access to a large (growing) log without reading it all.

    Construction only opens the file. :meth:`scan` builds the table of line offsets in
    batches and can be resumed to pick up lines appended since (``--follow``). :meth:`line`
    reads and parses one line with ``os.pread``, behind an LRU cache. Line numbers here are
    0-based indexes; blank lines count as lines (they read as ``not_json`` problems).

    Safe to scan in a worker thread while another thread calls :meth:`line`.
    """

    CHUNK = 1 << 20
    YIELD_BYTES = 8 << 20
    CACHE = 512

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._fd: int | None = os.open(self.path, os.O_RDONLY)
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._scanned_to = 0
        self._tail: tuple[int, int] | None = None
        self._cache: OrderedDict[int, dict[str, Any] | LogProblem] = OrderedDict()
        self._cache_lock = threading.Lock()

    def scan(self, batch_lines: int = 5000) -> Iterator[int]:
        """Index lines from where the last scan stopped; yield the line count after each batch.

        A batch ends after ``batch_lines`` lines or about 8 MiB, whichever comes first, so the
        first lines are usable almost at once. A last line without a newline is counted (it
        reads as ``torn`` unless it parses) and re-read by the next scan.
        """
        fd = self._require_fd()
        size = os.fstat(fd).st_size
        if size < self._scanned_to:  # truncated or replaced: start over
            self._starts.clear()
            self._ends.clear()
            self._scanned_to = 0
            with self._cache_lock:
                self._cache.clear()
        pos = line_start = self._scanned_to
        since_yield_lines = 0
        since_yield_bytes = 0
        while True:
            chunk = os.pread(fd, self.CHUNK, pos)
            if not chunk:
                break
            idx = 0
            while (nl := chunk.find(b"\n", idx)) != -1:
                end = pos + nl
                self._tail = None  # the old tail, if any, is this line or before it
                self._starts.append(line_start)
                self._ends.append(end)
                line_start = end + 1
                self._scanned_to = line_start
                idx = nl + 1
                since_yield_lines += 1
                if since_yield_lines >= batch_lines:
                    since_yield_lines = since_yield_bytes = 0
                    yield len(self._starts)
            pos += len(chunk)
            since_yield_bytes += len(chunk)
            if since_yield_bytes >= self.YIELD_BYTES and since_yield_lines:
                since_yield_lines = since_yield_bytes = 0
                yield len(self._starts)
        self._tail = (line_start, pos) if pos > line_start else None
        yield len(self)

    def scan_all(self) -> int:
        """Run :meth:`scan` to the end; return the line count."""
        for _ in self.scan():
            pass
        return len(self)

    def __len__(self) -> int:
        return len(self._starts) + (1 if self._tail is not None else 0)

    def line(self, i: int) -> dict[str, Any] | LogProblem:
        """The record on line ``i`` (0-based), or the problem with it. Raises IndexError."""
        n = len(self._starts)
        if i < 0:
            i += len(self)
        if 0 <= i < n:
            with self._cache_lock:
                hit = self._cache.get(i)
                if hit is not None:
                    self._cache.move_to_end(i)
                    return hit
            start, end = self._starts[i], self._ends[i]
            raw = os.pread(self._require_fd(), end - start, start)
            parsed = _parse_line(raw, i + 1, last_unterminated=False)
            with self._cache_lock:
                self._cache[i] = parsed
                if len(self._cache) > self.CACHE:
                    self._cache.popitem(last=False)
            return parsed
        if i == n and self._tail is not None:
            start, end = self._tail
            raw = os.pread(self._require_fd(), end - start, start)
            return _parse_line(raw, i + 1, last_unterminated=True)
        raise IndexError(f"line {i} is not indexed ({len(self)} lines so far)")

    def records(self) -> Iterator[dict[str, Any]]:
        """Every indexed record, in order (problems skipped)."""
        for i in range(len(self)):
            rec = self.line(i)
            if isinstance(rec, dict):
                yield rec

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> LogIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _require_fd(self) -> int:
        if self._fd is None:
            raise ValueError(f"{self.path}: the index is closed")
        return self._fd


# --- verifying ----------------------------------------------------------------------------


@dataclass
class VerifyReport:
    """``ok`` means the hash chain holds from the first line to the last complete one.

    ``first_break`` says where and how it breaks; ``notes`` holds facts that do not break the
    chain (a torn last line, a run that never ended). A hash chain cannot reveal an edit of
    the very last record or records cut off the end; a missing ``run_end`` is noted.
    """

    ok: bool
    records: int
    first_break: str | None
    notes: list[str] = field(default_factory=list)


def verify(path: Path) -> VerifyReport:
    """Check ``seq`` continuity and ``prev`` hashes of every line of the log at ``path``.

    Streams the file (memory stays flat for large logs). Raises ``OSError`` only when the
    file cannot be read.
    """
    notes: list[str] = []
    prev_hash: str | None = None
    count = 0
    saw_end = False
    with Path(path).open("rb") as f:
        for i, line in enumerate(f, start=1):
            terminated = line.endswith(b"\n")
            raw = line[:-1] if terminated else line
            parsed = _parse_line(raw, i, last_unterminated=not terminated)
            if isinstance(parsed, LogProblem):
                if parsed.kind == "torn":
                    notes.append(
                        f"line {i} is torn (the writer stopped mid-line); "
                        f"the {count} records before it verify"
                    )
                    break
                why = f"{parsed.describe()}; the log was altered"
                return VerifyReport(False, count, why, notes)
            seq, prev = parsed.get("seq"), parsed.get("prev")
            expected = count
            if not isinstance(seq, int) or isinstance(seq, bool):
                return VerifyReport(False, count, f"line {i} has no sequence number (seq)", notes)
            if seq != expected:
                return VerifyReport(False, count, _seq_break(i, seq, expected, f), notes)
            if prev != prev_hash:
                if i == 1:
                    why = f"line 1 (seq 0) should have prev null but has {prev!r}"
                else:
                    why = (
                        f"line {i - 1} (seq {seq - 1}) was edited after it was written: "
                        f"its hash no longer matches the prev recorded on line {i}"
                    )
                return VerifyReport(False, count, why, notes)
            prev_hash = line_hash(raw)
            count += 1
            saw_end = parsed.get("type") == "run_end"
    if count and not saw_end:
        notes.append("the last record is not run_end: the run did not finish (or is running)")
    return VerifyReport(True, count, None, notes)


def _seq_break(line_no: int, seq: int, expected: int, rest: Iterable[bytes]) -> str:
    later: set[int] = set()
    for raw in rest:
        try:
            value = json.loads(raw)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("seq"), int):
            later.add(value["seq"])
    if seq < expected:
        return (
            f"line {line_no} has seq {seq} where {expected} was expected: "
            "records were reordered or duplicated"
        )
    if expected in later:
        return (
            f"line {line_no} has seq {seq} where {expected} was expected; "
            f"seq {expected} appears later: records were reordered"
        )
    missing = seq - expected
    return (
        f"line {line_no} has seq {seq} where {expected} was expected: "
        f"{missing} record{'s' if missing != 1 else ''} dropped before this line"
    )


# --- helpers for replay -------------------------------------------------------------------

RoundOutcome = Literal["ok", "error", "unknown"]


def outcome_of(record: dict[str, Any]) -> RoundOutcome | None:
    """The outcome a round or intent record shows; ``None`` for other record types.

    An intent alone is ``unknown`` (the action was about to run; only a round record says
    how it went). A round without a readable result is ``unknown``, never ``ok``.
    """
    kind = record.get("type")
    if kind == "intent":
        return "unknown"
    if kind != "round":
        return None
    result = record.get("result")
    if not isinstance(result, dict):
        return "unknown"
    outcome = result.get("outcome")
    if outcome in ("ok", "error", "unknown"):
        return outcome  # type: ignore[no-any-return]
    if result.get("ok") is True:
        return "ok"
    if result.get("ok") is False:
        return "error"
    return "unknown"


@dataclass(frozen=True)
class RoundEntry:
    """One round as replay shows it: its record, its intent, and the outcome to display."""

    round: int
    record: dict[str, Any] | None
    intent: dict[str, Any] | None
    outcome: RoundOutcome


def rounds_of(records: Iterable[dict[str, Any]]) -> list[RoundEntry]:
    """Pair intents with round records. A round that has an intent but no round record (the
    run was killed while acting) is listed with outcome ``unknown``."""
    intents: dict[int, dict[str, Any]] = {}
    rounds: dict[int, dict[str, Any]] = {}
    order: list[int] = []
    for rec in records:
        kind, rnd = rec.get("type"), rec.get("round")
        if kind not in ("intent", "round") or not isinstance(rnd, int):
            continue
        if rnd not in intents and rnd not in rounds:
            order.append(rnd)
        (intents if kind == "intent" else rounds)[rnd] = rec
    out = []
    for rnd in order:
        record = rounds.get(rnd)
        outcome = outcome_of(record) if record is not None else "unknown"
        out.append(RoundEntry(rnd, record, intents.get(rnd), outcome or "unknown"))
    return out
