"""How fast ``handrail`` starts, measured from process start (the moment we spawn it).

Three figures, each the median of several runs (``--runs``, default 5):

- ``help``: ``handrail --help`` until the process exits.
- ``first request``: ``handrail run --no-tui --headless`` against the fake Anthropic
  Messages server (tests/fake_anthropic.py) until its first ``POST /v1/messages`` arrives:
  imports, configuration checks, Chrome's launch and the first page state are all in it.
- ``first screen``: ``handrail run`` with the observatory, in a pseudo-terminal, until
  the screen shows its first frame (the panes' "waiting…" text).

    .venv/bin/python bench/bench_startup.py [--runs N] [--only help|request|screen]
                                            [--root OTHER_CHECKOUT]

The issue's goals: first request <= 2 s, first screen <= 0.5 s, --help <= 0.3 s. The
machine's load matters: note it (``uptime``) beside the figures.
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
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fake_anthropic import FakeAnthropic, Recorded, tool_use_block  # noqa: E402

CLI = [sys.executable, "-m", "tui.cli"]
TARGET = ROOT
"""The checkout whose handrail is measured (``--root``: compare with another one)."""
SCREEN_MARK = b"waiting for the first round"
TIMEOUT_S = 120.0


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(TARGET)
    env.pop("HANDRAIL_MODEL", None)
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
        primary, secondary = pty.openpty()
        # A real terminal's size: some widgets divide by it when they load.
        fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        start = time.monotonic()
        proc = subprocess.Popen(
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
            _quit(proc, primary)


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


MEASURES = {"help": time_help, "request": time_first_request, "screen": time_first_screen}
GOALS = {"help": 0.3, "request": 2.0, "screen": 0.5}
NAMES = {"help": "handrail --help", "request": "first model request", "screen": "first screen"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", choices=sorted(MEASURES), action="append")
    parser.add_argument(
        "--root", type=Path, default=ROOT, help="measure the handrail in this checkout"
    )
    args = parser.parse_args()
    global TARGET
    TARGET = args.root.resolve()
    print(f"measuring {TARGET}")
    print(f"load: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores")
    for key in args.only or list(MEASURES):
        times = [MEASURES[key]() for _ in range(args.runs)]
        median = statistics.median(times)
        verdict = "ok" if median <= GOALS[key] else "OVER"
        spread = ", ".join(f"{t:.2f}" for t in times)
        print(
            f"{NAMES[key]:22} median {median:.2f} s  (goal {GOALS[key]} s: {verdict})  [{spread}]"
        )


if __name__ == "__main__":
    main()
