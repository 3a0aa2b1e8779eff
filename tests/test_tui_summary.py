"""After the observatory closes: the real ``handrail run`` in a pseudo-terminal, quit with q,
prints what the run came to."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\x1b[=>]|\r")


class Terminal:
    """A child process on a pseudo-terminal: read what it shows, type keys."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.fd, child = pty.openpty()
        # A real terminal's size (a 0x0 pty is not one a person has).
        fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.proc = subprocess.Popen(
            argv, cwd=ROOT, env=env, stdin=child, stdout=child, stderr=child, start_new_session=True
        )
        os.close(child)
        self.seen = b""

    def read_until(self, wanted: bytes, timeout: float) -> bytes:
        """Everything shown so far, once ``wanted`` is in it (else AssertionError)."""
        deadline = time.monotonic() + timeout
        while wanted not in ANSI.sub(b"", self.seen):
            left = deadline - time.monotonic()
            assert left > 0, f"{wanted!r} never shown; the screen ended {self.seen[-800:]!r}"
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready and not self._read():
                break
        assert wanted in ANSI.sub(b"", self.seen), self.seen[-800:]
        return self.seen

    def _read(self) -> bool:
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:
            return False
        self.seen += chunk
        return bool(chunk)

    def wait(self, timeout: float) -> int:
        """Read until the child exits; its exit code."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.2)
            if ready:
                self._read()
        while self._drain():
            pass
        return self.proc.wait(timeout=max(0.1, deadline - time.monotonic()))

    def quit_after_success(self) -> int:
        """Wait for the run to finish with success, press q; the exit code."""
        self.read_until(b"Run finished: success", timeout=120)
        os.write(self.fd, b"q")
        return self.wait(timeout=60)

    def _drain(self) -> bool:
        ready, _, _ = select.select([self.fd], [], [], 0)
        return bool(ready) and self._read()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
        os.close(self.fd)


LIBRARY_TASK = "say when the library opens"


def run_library_task(tmp_path: Path) -> Terminal:
    """``handrail run`` of a one-round scripted plan (the answer "Opens at 9.") on a
    pseudo-terminal, its audit log in ``tmp_path/logs``, quit with q once it succeeded: the
    terminal, with everything it showed. Asserts exit code 0."""
    plan = tmp_path / "plan.jsonl"
    plan.write_text(
        '{"tool": "finish", "input": {"success": true, "answer": "Opens at 9."}, '
        '"reason": "Nothing to do."}\n'
    )
    env = dict(os.environ) | {
        "TERM": "xterm-256color",
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    term = Terminal(
        [
            sys.executable,
            "-m",
            "tui.cli",
            "run",
            LIBRARY_TASK,
            "--headless",
            "--model",
            f"scripted:{plan}",
            "--audit-dir",
            str(tmp_path / "logs"),
            "--profile",
            str(tmp_path / "profile"),
        ],
        env,
    )
    try:
        code = term.quit_after_success()
    finally:
        term.close()
    assert code == 0
    return term


def test_q_after_the_run_prints_the_summary(tmp_path: Path) -> None:
    term = run_library_task(tmp_path)
    (log,) = (tmp_path / "logs").glob("*.jsonl")
    tail = ANSI.sub(b"", term.seen).decode(errors="replace").split("handrail: success", 1)
    assert len(tail) == 2, term.seen[-1500:]
    lines = ("handrail: success" + tail[1]).splitlines()
    assert lines[0] == "handrail: success (exit code 0)"
    assert lines[1].split() == ["answer:", "Opens", "at", "9."]
    assert lines[2].split() == ["audit", "log:", str(log)]
    assert lines[3].split() == ["replay:", "handrail", "replay", str(log)]


def test_a_configuration_error_leaves_the_screen_and_says_what_to_change(tmp_path: Path) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
    } | {"TERM": "xterm-256color", "XDG_CONFIG_HOME": str(tmp_path / "config")}
    term = Terminal(
        [
            sys.executable,
            "-m",
            "tui.cli",
            "run",
            "anything",
            "--headless",
            "--model",
            "anthropic:claude-sonnet-5-5",
            "--audit-dir",
            str(tmp_path / "logs"),
            "--profile",
            str(tmp_path / "profile"),
        ],
        env,
    )
    try:
        code = term.wait(timeout=60)
    finally:
        term.close()
    assert code == 2
    shown = ANSI.sub(b"", term.seen).decode(errors="replace")
    assert "handrail: No Anthropic API key: ANTHROPIC_API_KEY is not set." in shown
    assert "exit code" not in shown  # no run, so no summary
    assert not (tmp_path / "profile").exists()  # checked before any browser started


def test_replay_killed_politely_leaves_the_terminal_without_a_traceback(tmp_path: Path) -> None:
    """SIGTERM (a polite kill) or SIGHUP (the terminal closed) ends a replay as q does."""
    import signal

    env = dict(os.environ) | {
        "TERM": "xterm-256color",
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    log = ROOT / "audit_logs" / "sample-demo.jsonl"
    for sig in (signal.SIGTERM, signal.SIGHUP):
        term = Terminal([sys.executable, "-m", "tui.cli", "replay", str(log)], env)
        try:
            term.read_until(b"round 1", timeout=120)
            term.proc.send_signal(sig)
            code = term.wait(timeout=60)
        finally:
            term.close()
        shown = ANSI.sub(b"", term.seen).decode(errors="replace")
        assert code == 130, (sig, shown[-1500:])
        assert "Traceback" not in shown, (sig, shown[-3000:])
