"""The reaper: a tiny watchdog that stops the Chrome we launched when handrail goes away.

handrail may end in ways where none of its own clean-up runs: SIGKILL, an out-of-memory kill,
a crash of the interpreter. The browser it launched runs in its own process group (so a
Ctrl-C in the terminal does not reach it half-way through an action), and would outlive it
with its profile. So every launch also starts this script, in a session of its own, holding
the read end of a pipe whose only write end is handrail's. The kernel closes that write end
however handrail ends; the reaper then reads end-of-file and:

1. sends SIGTERM to the browser's process group (Chrome shuts down cleanly and removes its
   own temporary files), and SIGKILL to what is left after a grace period;
2. removes the paths handrail asked it to (a temporary profile), once the group is gone.

When handrail closes the browser itself, it stops Chrome first and then closes the pipe: the
reaper finds the group already gone, removes the paths (again, harmlessly) and exits.

It runs as ``python -I -S reaper.py --pgid N [--remove PATH]...`` with the pipe as stdin, and
imports only the standard library, so it starts in a few milliseconds. It ignores SIGINT,
SIGHUP and SIGTERM: a terminal that closes, or a Ctrl-C to the foreground group, must not take
it down before it has done its job.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import sys
import time
from collections.abc import Sequence

GRACE_S = 3.0
POLL_S = 0.05


def group_alive(pgid: int) -> bool:
    """True while any process of the group ``pgid`` is alive (zombies count as dead: they
    have exited and only wait for a parent to collect them)."""
    proc = "/proc"
    if not os.path.isdir(proc):  # not Linux: ask the kernel, zombies included
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True
    for entry in os.listdir(proc):
        if not entry.isdigit():
            continue
        try:
            with open(f"{proc}/{entry}/stat", "rb") as fh:
                stat = fh.read().decode("ascii", "replace")
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) >= 3 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            return True
    return False


def stop_group(pgid: int, grace: float = GRACE_S) -> None:
    """SIGTERM the group, wait up to ``grace`` seconds, then SIGKILL what is left."""
    if not group_alive(pgid):
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not group_alive(pgid):
            return
        time.sleep(POLL_S)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    deadline = time.monotonic() + grace
    while group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(POLL_S)


def remove(paths: Sequence[str]) -> None:
    for path in paths:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="handrail-reaper")
    parser.add_argument("--pgid", type=int, required=True)
    parser.add_argument("--remove", action="append", default=[])
    args = parser.parse_args(argv)
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    # Block until handrail is gone: its write end of the pipe is the only one.
    while True:
        try:
            if not os.read(0, 4096):
                break
        except InterruptedError:
            continue
        except OSError:
            break
    stop_group(args.pgid)
    remove(args.remove)
    return 0


if __name__ == "__main__":
    sys.exit(main())
