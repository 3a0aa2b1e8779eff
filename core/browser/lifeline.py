"""The lifeline of a browser we started: a reaper process (core/browser/reaper.py) that stops
the browser and removes its temporary files if handrail dies, however it dies, and the pipe
that tells it handrail is alive."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import structlog

log = structlog.get_logger("handrail.browser")


_REAPER = Path(__file__).with_name("reaper.py")


class Lifeline:
    """The reaper (core/browser/reaper.py) that stops the browser if handrail dies, and the pipe that
    keeps it waiting: its only write end is ours, so the kernel closes it however we end."""

    def __init__(self, pgid: int, remove: Sequence[Path]) -> None:
        read_fd, self._write_fd = os.pipe()
        self._reaper: subprocess.Popen[bytes] | None = None
        try:
            self._reaper = subprocess.Popen(
                [
                    sys.executable,
                    "-I",
                    "-S",
                    str(_REAPER),
                    f"--pgid={pgid}",
                    *(f"--remove={path}" for path in remove),
                ],
                stdin=read_fd,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            # Still usable: close() stops the browser; only a hard kill of handrail leaks it.
            log.warning("browser.no_reaper", error=str(exc))
            os.close(self._write_fd)
            self._write_fd = -1
        finally:
            os.close(read_fd)

    def release(self) -> None:
        """Let the reaper go (it stops the group if still alive, then removes the paths)."""
        if self._write_fd >= 0:
            os.close(self._write_fd)
            self._write_fd = -1

    async def finish(self, timeout: float = 10.0) -> None:
        self.release()
        if self._reaper is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                await asyncio.to_thread(self._reaper.wait, timeout)
