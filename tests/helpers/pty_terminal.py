"""A child process on a pseudo-terminal, as a person's terminal would run it: what it shows,
the keys it gets. Used by the tests that run handrail itself (not Textual's Pilot) and by
bench/bench_startup.py."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import termios
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\x1b[=>]|\r")
"""Terminal control sequences: what is left once they are removed is the text shown."""


class Terminal:
    """``argv`` started on a pseudo-terminal of ``size`` (rows, columns; (0, 0) is the size
    of one nobody set, which some widgets divide by); ``seen`` is everything it wrote."""

    def __init__(
        self,
        argv: list[str],
        env: dict[str, str],
        *,
        size: tuple[int, int] = (40, 120),
        cwd: Path = ROOT,
    ) -> None:
        self.fd, child = pty.openpty()
        fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", size[0], size[1], 0, 0))
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=child, stdout=child, stderr=child, start_new_session=True
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

    def read_to_end(self, timeout: float) -> bytes:
        """Everything shown until the child closes the terminal (it exited), or until nothing
        came for ``timeout`` seconds."""
        while True:
            ready, _, _ = select.select([self.fd], [], [], timeout)
            if not ready or not self._read():
                return self.seen

    def read_some(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for output and read what came; False once the child
        has closed the terminal."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        return not ready or self._read()

    def write(self, keys: bytes) -> None:
        os.write(self.fd, keys)

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

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
        os.close(self.fd)

    def _read(self) -> bool:
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:  # the child ended and its side of the terminal closed
            return False
        self.seen += chunk
        return bool(chunk)

    def _drain(self) -> bool:
        ready, _, _ = select.select([self.fd], [], [], 0)
        return bool(ready) and self._read()
