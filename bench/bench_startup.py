"""How fast ``handrail`` starts, measured from process start (the moment we spawn it).

Three figures, each the median of several runs (``--runs``, default 5):

- ``help``: ``handrail --help`` until the process exits.
- ``first request``: ``handrail run --no-tui --headless`` against the fake Anthropic
  Messages server (tests/fake_anthropic.py) until its first ``POST /v1/messages`` arrives:
  imports, configuration checks, Chrome's launch and the first page state are all in it.
- ``first screen``: ``handrail run`` with the observatory, in a pseudo-terminal, until
  the screen shows its first frame (the panes' "waiting…" text).

    .venv/bin/python bench/bench_startup.py [--runs N] [--only help|request|screen|sdk|textual]
                                            [--root OTHER_CHECKOUT]

Two more figures, not handrail's, are the floors its dependencies set under two goals:
``sdk`` is ``python -c "import anthropic"`` until it exits (under "first request"), and
``textual`` a Textual app of one Static showing the same words, in the same pseudo-terminal
(under "first screen"). Ask for them with ``--only``.

The issue's goals: first request <= 2 s, first screen <= 0.5 s, --help <= 0.3 s. The
machine's load matters: note it (``uptime``) beside the figures, and compare two checkouts
in the same minute (``--root``).

The measured process keeps its bytecode in a temporary folder outside the checkout (one
uncounted run writes it), as an installed handrail has its ``.pyc`` files;
``--no-bytecode`` compiles handrail's modules at every start instead (what a checkout
costs under ``PYTHONDONTWRITEBYTECODE=1``).

First screen, 2026-12-01 (2 cores shared with other engineers' test runs):

    PYTHONPATH=$PWD .venv/bin/python bench/bench_startup.py --runs 5 --only screen
    [--root /work/main] [--no-bytecode]

    17:34-17:35 UTC, load 2.9-3.8     median  runs
    main (before)                      1.29 s  1.06 1.38 1.35 1.28 1.29
    main, --no-bytecode                1.41 s  1.62 1.24 1.42 1.41 1.30
    this change                        1.02 s  0.94 1.02 0.89 1.10 1.13
    this change, --no-bytecode         1.01 s  0.95 1.21 1.01 0.91 1.08
    minimal Textual app (App + one Static), same pseudo-terminal: 0.38 s

Where the first screen's time goes (this change; CPU from ``time.process_time`` at marks
patched into one run, with a bytecode cache; wall in the same run):

    python up                                 wall 0.00  cpu 0.05
    tui.cli imported, arguments parsed        wall 0.09  cpu 0.14
    App.run (observatory imported, built)     wall 0.77-0.85  cpu 0.53-0.60
    first frame written                       wall 1.09-1.12  cpu 0.81-0.87

- Before ``App.run``: textual itself (~0.25 s CPU, as the minimal app), then ours:
  core.events' dataclasses, the panes/rounds/approval/run-screen modules, argparse's
  tree, the theme files (read twice: ``--theme`` check, then the app). The wall time above
  the CPU is textual-image's terminal queries: three of 0.1 s each in this never-answering
  pseudo-terminal (Sixel, Kitty graphics, cell size; a terminal that answers costs less),
  asked in a thread while the observatory imports (tui/graphics.py) and waited for before
  Textual takes stdin: here they end ~0.2 s after the imports.
- After ``App.run``: Textual's start (driver, stylesheet parse of every widget's CSS and
  observatory.tcss, compose and layout of ~50 widgets, the first full render).
- No longer before the first frame: ``core.session`` and the model SDKs (imported by the
  run's worker in a thread that used to start at mount and share the GIL with the first
  frame; it now starts after the first refresh), PIL and textual-image's widgets (with
  the first picture), pygments (with the first round's JSON).
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import select
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fake_anthropic import FakeAnthropic, Recorded, tool_use_block  # noqa: E402

CLI = [sys.executable, "-m", "tui.cli"]
TARGET = ROOT
"""The checkout whose handrail is measured (``--root``: compare with another one)."""
PYCACHE: Path | None = None
"""Where the measured process keeps its bytecode (outside the checkout); None: it keeps
none and compiles handrail's modules at every start (``--no-bytecode``)."""
SCREEN_MARK = b"waiting for the first round"
TIMEOUT_S = 120.0


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(TARGET)
    env.pop("HANDRAIL_MODEL", None)
    if PYCACHE is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    return env


def time_help() -> float:
    start = time.monotonic()
    subprocess.run(
        [*CLI, "--help"], cwd=TARGET, env=_env(), capture_output=True, check=True, timeout=60
    )
    return time.monotonic() - start


class _TimedFake(FakeAnthropic):
    """Notes when the first ``POST /v1/messages`` arrives, and answers it with ``finish``."""

    def __init__(self) -> None:
        super().__init__()
        self.first_message = threading.Event()
        self.first_message_at = 0.0

    def route(self, request: Recorded) -> tuple[int, dict[str, str], Any]:
        if request.method == "POST" and not self.first_message.is_set():
            self.first_message_at = time.monotonic()
            self.first_message.set()
        return super().route(request)


def time_first_request() -> float:
    with _TimedFake() as fake, tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        fake.respond_with(
            lambda _body: [
                tool_use_block(
                    "finish", {"success": True, "answer": "bench", "reason": "bench"}, fake.new_id()
                )
            ]
        )
        env = _env() | {"ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": fake.api_key or ""}
        start = time.monotonic()
        proc = subprocess.Popen(
            [
                *CLI,
                "run",
                "bench: finish at once",
                "--no-tui",
                "--headless",
                "--approve",
                "none",
                "--audit-dir",
                str(Path(tmp) / "logs"),
                "--profile",
                str(Path(tmp) / "profile"),
            ],
            cwd=TARGET,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            if not fake.first_message.wait(TIMEOUT_S):
                raise RuntimeError("no model request arrived")
            return fake.first_message_at - start
        finally:
            proc.wait(timeout=TIMEOUT_S)


def time_first_screen() -> float:
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        plan = Path(tmp) / "plan.jsonl"
        plan.write_text(
            '{"tool": "finish", "input": {"success": true, "answer": "bench", "reason": "bench"}}\n'
        )
        env = _env() | {
            "TERM": "xterm-256color",
            "COLUMNS": "120",
            "LINES": "40",
            "XDG_CONFIG_HOME": str(Path(tmp) / "config"),
        }
        return _until_shown(
            [
                *CLI,
                "run",
                "bench: first screen",
                "--headless",
                "--model",
                f"scripted:{plan}",
                "--audit-dir",
                str(Path(tmp) / "logs"),
                "--profile",
                str(Path(tmp) / "profile"),
            ],
            env,
            _quit,
        )


MINIMAL_APP = """
from textual.app import App
from textual.widgets import Static

class Minimal(App):
    def compose(self):
        yield Static("waiting for the first round")

Minimal().run()
"""


def time_minimal_screen() -> float:
    """The floor under "first screen": a Textual app of one Static showing the same words,
    in the same pseudo-terminal."""
    env = _env() | {"TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}

    def stop(proc: subprocess.Popen[bytes], primary: int) -> None:
        proc.terminate()
        proc.wait(timeout=30)
        os.close(primary)

    return _until_shown([sys.executable, "-c", MINIMAL_APP], env, stop)


def time_sdk_import() -> float:
    """The floor under "first request": ``import anthropic`` alone, in a bare interpreter
    (the SDK's own modules have their bytecode: it is installed)."""
    start = time.monotonic()
    subprocess.run(
        [sys.executable, "-c", "import anthropic"],
        env=_env(),
        capture_output=True,
        check=True,
        timeout=TIMEOUT_S,
    )
    return time.monotonic() - start


def _until_shown(
    cmd: list[str], env: dict[str, str], quit: Callable[[subprocess.Popen[bytes], int], None]
) -> float:
    """Seconds from spawning ``cmd`` in a 120x40 pseudo-terminal until SCREEN_MARK shows."""
    primary, secondary = pty.openpty()
    # A real terminal's size: some widgets divide by it when they load.
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    start = time.monotonic()
    proc = subprocess.Popen(
        cmd,
        cwd=TARGET,
        env=env,
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        start_new_session=True,
    )
    os.close(secondary)
    seen = b""
    shown_at: float | None = None
    try:
        while shown_at is None and time.monotonic() - start < TIMEOUT_S:
            ready, _, _ = select.select([primary], [], [], 1.0)
            if not ready:
                continue
            try:
                seen += os.read(primary, 65536)
            except OSError:
                break
            if SCREEN_MARK in seen:
                shown_at = time.monotonic()
        if shown_at is None:
            raise RuntimeError(f"the screen never showed; output ended {seen[-500:]!r}")
        return shown_at - start
    finally:
        quit(proc, primary)


def _quit(proc: subprocess.Popen[bytes], primary: int) -> None:
    """Press q (and confirm) until the app leaves; drain the terminal meanwhile."""
    deadline = time.monotonic() + TIMEOUT_S
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            os.write(primary, b"q")
            ready, _, _ = select.select([primary], [], [], 0.5)
            if ready:
                os.read(primary, 65536)
        except OSError:
            break
        if proc.poll() is None:
            try:
                os.write(primary, b"y")
            except OSError:
                break
    if proc.poll() is None:
        proc.terminate()
    proc.wait(timeout=30)
    os.close(primary)


MEASURES = {
    "help": time_help,
    "request": time_first_request,
    "screen": time_first_screen,
    "sdk": time_sdk_import,
    "textual": time_minimal_screen,
}
GOALS = {"help": 0.3, "request": 2.0, "screen": 0.5, "sdk": 2.0, "textual": 0.5}
NAMES = {
    "help": "handrail --help",
    "request": "first model request",
    "screen": "first screen",
    "sdk": "floor: import anthropic",
    "textual": "floor: minimal Textual",
}
FLOORS = {"sdk", "textual"}
"""Not handrail: what its dependencies alone cost, beside the goal handrail's figure has."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--only",
        choices=sorted(MEASURES),
        action="append",
        help="measure only this (repeatable); sdk and textual are the dependencies' floors",
    )
    parser.add_argument(
        "--root", type=Path, default=ROOT, help="measure the handrail in this checkout"
    )
    parser.add_argument(
        "--no-bytecode",
        action="store_true",
        help="compile handrail's modules at every start (PYTHONDONTWRITEBYTECODE=1)",
    )
    args = parser.parse_args()
    global TARGET, PYCACHE
    TARGET = args.root.resolve()
    with tempfile.TemporaryDirectory(prefix="handrail-bench-pyc-") as pycache:
        PYCACHE = None if args.no_bytecode else Path(pycache)
        _measure(args.only or [k for k in MEASURES if k not in FLOORS], args.runs)


def _measure(keys: list[str], runs: int) -> None:
    print(f"measuring {TARGET}" + (" (bytecode cached)" if PYCACHE else " (no bytecode)"))
    print(f"load: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores")
    for key in keys:
        if PYCACHE is not None:
            MEASURES[key]()  # writes the bytecode; not counted
        times = [MEASURES[key]() for _ in range(runs)]
        median = statistics.median(times)
        verdict = "ok" if median <= GOALS[key] else "OVER"
        if key in FLOORS:
            verdict = "leaves room" if median < GOALS[key] else "at or over it alone"
        spread = ", ".join(f"{t:.2f}" for t in times)
        print(
            f"{NAMES[key]:22} median {median:.2f} s  (goal {GOALS[key]} s: {verdict})  [{spread}]"
        )


if __name__ == "__main__":
    main()
