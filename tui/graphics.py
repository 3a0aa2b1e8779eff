"""Asking the terminal what pictures it can draw, before Textual takes the terminal.

textual-image asks the terminal when its modules are imported (Sixel? Kitty graphics? the
cell size in pixels) and waits up to 0.1 s for each answer, reading stdin itself. Once a
Textual app runs, its input thread owns stdin and would read those answers as keys, so the
questions must be asked before ``App.run``. A terminal that does not answer (many do not)
costs 0.2-0.3 s of waiting: :func:`ask_early` asks in a thread while the main thread
imports the observatory, and :func:`wait_for_answers` (called by every observatory app
before it takes the terminal) makes sure the answers are in.

Only textual-image's own modules load in the thread (and PIL, which nothing else loads
meanwhile): rich and the standard modules both threads need are imported first here, so
two threads never race to import the same module.
"""

from __future__ import annotations

import contextlib
import logging
import threading

_asking: threading.Thread | None = None
_lock = threading.Lock()


def _ask() -> None:
    # The imports ask: which renderer (Sixel, Kitty graphics, half-blocks), then the cell
    # size, which textual-image caches for its widgets.
    import textual_image.renderable  # noqa: F401
    from textual_image._terminal import TerminalError, get_cell_size

    # stdout closed, or a terminal nobody sized (0x0): tui.target_crop draws its own
    # half-blocks then, and textual-image says why if it is asked to draw.
    with contextlib.suppress(TerminalError, ZeroDivisionError):
        get_cell_size()


def ask_early() -> None:
    """Start asking the terminal in a thread (once; later calls do nothing)."""
    global _asking
    # See the module docstring: these load here, before the thread starts.
    import base64  # noqa: F401
    import fcntl  # noqa: F401
    import select  # noqa: F401
    import termios  # noqa: F401
    import textwrap  # noqa: F401
    import traceback  # noqa: F401
    import tty  # noqa: F401

    import rich.console
    import rich.control
    import rich.measure
    import rich.segment  # noqa: F401

    # A terminal that does not answer the size query made textual-image print a warning
    # with a traceback over the screen; its fallback size is fine, and nobody can act on it.
    logging.getLogger("textual_image").setLevel(logging.ERROR)

    with _lock:
        if _asking is None:
            # Not a daemon: should the process end before the app runs, the thread still
            # gets to put the terminal back out of the mode it reads the answers in.
            _asking = threading.Thread(target=_ask, name="terminal graphics query")
            _asking.start()


def wait_for_answers() -> None:
    """Return once the terminal has answered (or timed out); asks now if nobody asked yet."""
    ask_early()
    assert _asking is not None
    _asking.join()
