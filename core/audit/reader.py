"""Reading the audit log: the whole of a small one (:func:`read_log`), or any line of a huge
or growing one on demand (:class:`LogIndex`). Both tolerate damage: a line that is not a
record becomes a :class:`LogProblem`, never an exception.
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

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
    CACHE_BYTES = 32 << 20
    """The cache also stops at this many bytes of line text: a log of 5 MB replies must not
    keep 512 of them parsed."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._fd: int | None = os.open(self.path, os.O_RDONLY)
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._scanned_to = 0
        self._tail: tuple[int, int] | None = None
        self._cache: OrderedDict[int, tuple[dict[str, Any] | LogProblem, int]] = OrderedDict()
        self._cached_bytes = 0
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
                self._cached_bytes = 0
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
                    return hit[0]
            start, end = self._starts[i], self._ends[i]
            raw = os.pread(self._require_fd(), end - start, start)
            parsed = _parse_line(raw, i + 1, last_unterminated=False)
            with self._cache_lock:
                if i not in self._cache:
                    self._cache[i] = (parsed, len(raw))
                    self._cached_bytes += len(raw)
                while len(self._cache) > 1 and (
                    len(self._cache) > self.CACHE or self._cached_bytes > self.CACHE_BYTES
                ):
                    _, (_, size) = self._cache.popitem(last=False)
                    self._cached_bytes -= size
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
