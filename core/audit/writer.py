"""The audit writer: appends sealed, hash-chained records to one JSONL file, durably.

Each line is written with one ``write`` and fsynced before :meth:`AuditWriter.write` returns,
so a run killed at any point leaves every record whose write returned, and at worst one torn
last line that readers report. The writer owns the chain fields: ``seq``, ``prev``, ``mac``,
``key_id`` on ``run_start``, and ``records`` and ``head`` on ``run_end``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import math
import os
import re
import threading
import unicodedata
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

from core.audit.chain import encode, line_hash, mac_of, with_mac
from core.audit.key import AuditKey, AuditKeyError, installation_key
from core.audit.reader import read_log
from core.secrets import REDACTED, Secrets

SCHEMA = 2
"""1: hash chain only. 2: every record sealed (``mac``), ``run_end`` closes the chain."""
SLUG_MAX = 48
"""Longest task slug in a file name, in characters."""
WRITER_FIELDS = frozenset({"seq", "prev", "mac", "key_id", "records", "head"})


class AuditError(Exception):
    """The audit log cannot be written. The agent must not act without its record."""


class AuditLockedError(AuditError):
    """Another writer holds the log file."""


class AuditWriter:
    """Appends records to one JSONL file, holding an exclusive lock on it while open.

    Not a context for several processes: a second writer on the same file (in this or any
    process) gets :class:`AuditLockedError`. Thread-safe within a process.
    """

    path: Path
    run_id: str

    def __init__(
        self,
        path: Path,
        *,
        run_id: str | None = None,
        secrets: Secrets | None = None,
        key: AuditKey | None = None,
    ):
        """Open ``path`` for appending (creating it if needed) and lock it.

        ``key`` seals the records; by default the installation key (created on first use).
        When the file already holds records, the chain continues after its last line.
        Raises :class:`AuditLockedError` when another writer holds the file,
        :class:`AuditError` when the installation key cannot be made or used, and OSError
        when ``path`` is a symbolic link (a log is never written through one).
        """
        self.path = Path(path)
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self._secrets = secrets
        if key is None:
            try:
                key = installation_key()
            except (AuditKeyError, OSError) as exc:
                raise AuditError(f"cannot use this installation's audit key: {exc}") from exc
        self._key = key
        self._lock = threading.Lock()
        # O_NOFOLLOW: create() made the file with O_EXCL and opens it again here; a link
        # swapped in between must not get the log written into its target.
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
        self._fd: int | None = os.open(self.path, flags, 0o600)
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
        key: AuditKey | None = None,
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
        return cls(path, run_id=run_id, secrets=secrets, key=key)

    @property
    def closed(self) -> bool:
        return self._fd is None

    @property
    def next_seq(self) -> int:
        return self._seq

    @property
    def key_id(self) -> str:
        return self._key.key_id

    def scrub(self, obj: Any) -> Any:
        """``obj`` as :meth:`write` would keep it: reduced to JSON types, secrets scrubbed.
        For what the run writes beside the log (its ``network.har``)."""
        body = plain(obj)
        return self._secrets.scrub_json(body) if self._secrets is not None else body

    def write(self, record: dict[str, Any]) -> dict[str, Any]:
        """Scrub, chain, seal and append one record; flushed and fsynced before returning.

        ``record`` must not carry the writer's fields (``seq``, ``prev``, ``mac``, ...).
        Returns the record as written. Raises :class:`AuditError` when the writer is closed
        and ``OSError`` when the disk refuses the write.
        """
        taken = WRITER_FIELDS.intersection(record)
        if taken:
            raise ValueError(
                f"{', '.join(sorted(taken))} are set by the writer; remove them from the record"
            )
        body = plain(record)
        if self._secrets is not None:
            body = self._secrets.scrub_json(body)
        with self._lock:
            if self._fd is None:
                raise AuditError(f"{self.path}: the audit writer is closed")
            out = {"seq": self._seq, "prev": self._prev, **body}
            if out.get("type") == "run_start":
                out["key_id"] = self._key.key_id
            elif out.get("type") == "run_end":
                # Like a signed tree head: how many records came before, and the head they
                # end on, under this line's own seal.
                out["records"] = self._seq
                out["head"] = self._prev
            unsealed = encode(out)
            out["mac"] = mac_of(self._key.secret, self._prev, unsealed)
            line = with_mac(unsealed, out["mac"])
            view = memoryview(line + b"\n")
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


def plain(obj: Any) -> Any:
    """Reduce a value to JSON types, so scrubbing sees every string that will be written."""
    if obj is None or isinstance(obj, bool | int | str):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else str(obj)
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | set | frozenset):
        return [plain(v) for v in obj]
    to_json = getattr(obj, "to_json", None)
    if callable(to_json):
        return plain(to_json())
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return plain(dataclasses.asdict(obj))
    if isinstance(obj, bytes):
        return obj.decode("utf-8", "replace")
    return str(obj)


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
