"""The one run ``handrail serve`` supervises, and whichever browser page views it.

textual-serve starts an app process per websocket and tells it to quit when the socket
closes: a reload would abort the run. Here the process is started for the first viewer and
outlives each one. A reload, a dropped connection or a second tab only changes who sees the
screen: the new page takes over, the old one is disconnected, and the observatory draws its
whole screen again for the newcomer (:mod:`tui.web.driver`), a pending approval included.
The run ends when its observatory exits (the person quits it, or aborts with ``x``) or when
:meth:`ServedRun.end` is called (``handrail serve`` stopped), never because a page went away.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
from asyncio.subprocess import PIPE, Process
from collections.abc import Sequence

from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager

from tui.exit_codes import EXIT_INTERRUPTED
from tui.web.driver import ATTACH, END_RUN

DRIVER = "tui.web.driver:ServedDriver"
END_WAIT_S = 30.0
"""How long the observatory may take to record the abort and close its Chrome once told to
end the run, before it gets SIGTERM."""
TAKEN_OVER = 4000
"""The websocket close code a page gets when another page took the run over."""


class ServedRun(AppService):
    """The observatory process of the served run, and its current viewer (or none)."""

    def __init__(self, argv: Sequence[str], *, download_manager: DownloadManager) -> None:
        super().__init__(
            shlex.join(argv),
            write_bytes=self._to_viewer,
            write_str=self._text_to_viewer,
            close=self._close_viewer,
            download_manager=download_manager,
        )
        self._argv = list(argv)
        self.viewer: web.WebSocketResponse | None = None
        self.over = asyncio.Event()
        """Set once the observatory process has closed its output (it is exiting)."""

    @property
    def started(self) -> bool:
        return self._task is not None

    # -- the process ---------------------------------------------------------------------

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        environment = super()._build_environment(width, height)
        environment["TEXTUAL_DRIVER"] = DRIVER
        return environment

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Process:
        # No shell, and a session of its own: a Ctrl-C on the serve terminal reaches only
        # ``handrail serve``, which then ends the run by saying who ended it (:meth:`end`).
        self._process = process = await asyncio.create_subprocess_exec(
            *self._argv,
            stdin=PIPE,
            stdout=PIPE,
            stderr=PIPE,
            env=self._build_environment(width=width, height=height),
            start_new_session=True,
        )
        assert process.stdin is not None
        self._stdin = process.stdin
        return process

    async def run(self) -> None:
        try:
            await super().run()
        finally:
            self.over.set()

    async def exit_code(self) -> int:
        """The observatory's exit code (the run's, see ``handrail run``), once it exited;
        130 when it never started."""
        if self._process is None:
            return EXIT_INTERRUPTED
        return await self._process.wait()

    async def end(self, by: str) -> None:
        """End the run, recording ``by`` as who ended it, and wait for the observatory to
        exit (it closes its Chrome first). SIGTERM after :data:`END_WAIT_S`, or at once when
        this wait is cancelled (a second Ctrl-C)."""
        process = self._process
        if process is None or process.returncode is not None:
            return
        try:
            await self.send_meta({"type": END_RUN, "by": by})
            await asyncio.wait_for(process.wait(), END_WAIT_S)
        except TimeoutError:
            _terminate(process)
            try:
                await asyncio.wait_for(process.wait(), END_WAIT_S)
            except TimeoutError:
                process.kill()
        except asyncio.CancelledError:
            _terminate(process)
            raise

    # -- the viewer ----------------------------------------------------------------------

    async def attach(self, viewer: web.WebSocketResponse, width: int, height: int) -> bool:
        """Make ``viewer`` the page that sees and drives the run, starting the run for the
        first one. Returns True when it took over from another page, which is closed."""
        previous, self.viewer = self.viewer, viewer
        took_over = previous is not None and not previous.closed
        if previous is not None and took_over:
            await previous.close(code=TAKEN_OVER, message=b"another page took over this run")
        if not self.started:
            await self.start(width, height)
        else:
            await self.set_terminal_size(width, height)
            await self.send_meta({"type": ATTACH})
        return took_over

    def detach(self, viewer: web.WebSocketResponse) -> bool:
        """``viewer`` went away; True when it was the current one (no one sees the run)."""
        if self.viewer is not viewer:
            return False
        self.viewer = None
        return True

    async def _to_viewer(self, data: bytes) -> None:
        # With no page (or one going away) the screen is drawn for nobody: the next viewer
        # gets it whole when it attaches.
        viewer = self.viewer
        if viewer is not None and not viewer.closed:
            with contextlib.suppress(ConnectionError, RuntimeError):
                await viewer.send_bytes(data)

    async def _text_to_viewer(self, data: str) -> None:
        viewer = self.viewer
        if viewer is not None and not viewer.closed:
            with contextlib.suppress(ConnectionError, RuntimeError):
                await viewer.send_str(data)

    async def _close_viewer(self) -> None:
        # The observatory exited: the page shows textual-serve's "Session ended".
        viewer = self.viewer
        if viewer is not None:
            with contextlib.suppress(ConnectionError, RuntimeError):
                await viewer.close()


def _terminate(process: Process) -> None:
    """SIGTERM: the observatory quits (its run aborted, its Chrome stopped)."""
    with contextlib.suppress(ProcessLookupError):
        process.terminate()
