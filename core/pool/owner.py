"""Is a slot's owner still alive? A process id alone does not say: the kernel reuses them.

The owner is recorded as its pid plus the process's start time (``/proc/PID/stat`` field
22, clock ticks since boot). A pid that exists with another start time is a stranger that
inherited the number: the owner has ended. Where there is no ``/proc`` (macOS), the start
time is unknown (0) and only the pid's existence is checked.
"""

from __future__ import annotations

import os
from pathlib import Path

_PROC = Path("/proc")


def start_time(pid: int) -> int:
    """The start time of process ``pid`` in clock ticks since boot; 0 when unknown
    (no ``/proc``); -1 when no such process exists (or it is a zombie)."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except FileNotFoundError:
        return -1 if _PROC.is_dir() else _exists_or_unknown(pid)
    except OSError:
        return 0
    # The command name (field 2) is in parentheses and may hold spaces or ')'.
    fields = stat[stat.rfind(")") + 2 :].split()
    # fields[0] is field 3 (state), so field 22 is fields[19]. A zombie has ended: it
    # only waits for its parent to read its exit status.
    if fields and fields[0] in ("Z", "X"):
        return -1
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return 0


def _exists_or_unknown(pid: int) -> int:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return -1
    except PermissionError:
        return 0
    return 0


def alive(pid: int | None, started: int | None) -> bool:
    """Whether the process recorded as ``(pid, started)`` is still the one running."""
    if pid is None or pid <= 0:
        return False
    now = start_time(pid)
    if now < 0:
        return False
    if now == 0 or not started:
        return True  # cannot tell a recycled pid here: assume the owner lives (never steal)
    return now == started


def me() -> tuple[int, int]:
    """This process as an owner: ``(pid, start time)``."""
    pid = os.getpid()
    return pid, max(start_time(pid), 0)
