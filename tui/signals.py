"""How every command ends on a signal: SIGTERM (a polite kill), SIGHUP (the terminal closed:
tmux kill-session, a dropped SSH) and SIGINT (``kill -INT``; at a raw-mode screen ctrl+c is a
key instead).

A command with an event loop (the observatory's apps, the console run, ``serve``) turns the
signal into its own way of stopping: the run is cancelled, its log gets ``run_end``, the
browser is stopped and awaited inside the loop, and the exit summary is printed. Raising
``KeyboardInterrupt`` from a Python-level handler instead would unwind whatever the main
thread was doing (Textual's own signal handlers, the loop's shutdown) and leave Chrome to be
reaped after the loop closed.

When the terminal itself has hung up, nothing can be shown any more and every write to it
fails (EIO): Textual's output thread would die, and the next frame would block the loop for
good on that thread's full queue. So the dead terminal is replaced by ``/dev/null`` at once,
and a deadline makes sure the process is gone even if something still hangs.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import termios
import threading

ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
"""The signals after which a command stops as if the person had aborted it (exit 130)."""

DEADLINE_S = 30.0
"""How long a command has to stop after an ending signal before the process exits anyway
(a run's close waits at most a few seconds for Chrome; the reaper handles the rest)."""

EXIT_DEADLINE = 130

_deadline_started = threading.Event()


def signal_name(signum: int) -> str:
    """``SIGTERM``, ``SIGHUP``...: how the person who sent it names it."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def terminal_gone() -> bool:
    """Whether the process's terminal has hung up (every call on it fails with EIO). False
    when none of stdin, stdout and stderr is a terminal."""
    for fd in (0, 1, 2):
        try:
            if not os.isatty(fd):
                continue
            termios.tcgetattr(fd)
        except termios.error:
            return True
        except OSError:
            continue
        else:
            return False
    return False


def leave_dead_terminal() -> bool:
    """When the terminal has hung up, point stdin, stdout and stderr at ``/dev/null`` so that
    the rest of the shutdown (the screen's last frame, the summary) cannot fail or block on
    it. Returns whether it had."""
    if not terminal_gone():
        return False
    try:
        null = os.open(os.devnull, os.O_RDWR)
    except OSError:
        return True
    for fd in (0, 1, 2):
        with contextlib.suppress(OSError):
            os.dup2(null, fd)
    os.close(null)
    return True


def start_deadline(seconds: float = DEADLINE_S) -> None:
    """After ``seconds``, exit the process (code 130) if it is still here. Started once per
    process, on the first ending signal: whatever still hangs then (a thread blocked on a
    terminal that went away) cannot keep the process alive."""
    if _deadline_started.is_set():
        return
    _deadline_started.set()

    def expire() -> None:
        try:
            sys.stderr.write("\nhandrail: still stopping after a signal; leaving now\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os._exit(EXIT_DEADLINE)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()


def ending(signum: int) -> None:
    """What every ending signal does first, wherever it is handled: leave a terminal that
    hung up, and start the deadline."""
    leave_dead_terminal()
    start_deadline()


def forget_textual_handlers() -> None:
    """Textual's driver leaves its SIGTSTP and SIGCONT handlers installed after the app has
    closed; a terminal that hangs up sends SIGCONT after SIGHUP, and that handler would then
    try to resume a screen whose loop is gone (``RuntimeError: no running event loop``)."""
    for sig in (signal.SIGTSTP, signal.SIGCONT):
        signal.signal(sig, signal.SIG_DFL)
