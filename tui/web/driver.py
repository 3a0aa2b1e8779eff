"""The driver of the observatory that ``handrail serve`` runs: Textual's web driver, plus
the two things a run that outlives its viewer needs.

``handrail serve`` starts its run with ``TEXTUAL_DRIVER`` naming :class:`ServedDriver`. The
server sends two messages of its own, beside Textual's (``resize``, ``quit``...):

- ``{"type": "attach"}``: a new browser page is the viewer. Its terminal is blank and knows
  none of the modes the driver set at start, so they are set again and the whole screen
  is drawn, the open approval included (Textual otherwise sends only what changed);
- ``{"type": "end_run", "by": "..."}``: end the run now, and say who ended it in its log
  (the run's ``run_end`` reason). The observatory then leaves once its browser is closed.

Everything the driver writes goes through the app's own thread, so the packets of a
repaint never interleave with the app's own in the pipe.
"""

from __future__ import annotations

from textual.drivers.web_driver import WebDriver

from tui.exit_codes import EXIT_INTERRUPTED

ATTACH = "attach"
END_RUN = "end_run"


class ServedDriver(WebDriver):
    """Textual's web driver that can draw its screen again for a new viewer and end the
    run on the server's word."""

    def on_meta(self, packet_type: str, payload: dict[str, object]) -> None:
        # Called on the driver's input thread: the work is done on the app's.
        if packet_type == ATTACH:
            self._app.call_from_thread(self._draw_again)
        elif packet_type == END_RUN:
            by = payload.get("by")
            self._app.call_from_thread(self._end_run, by if isinstance(by, str) else None)
        else:
            super().on_meta(packet_type, payload)

    def _draw_again(self) -> None:
        self.write("\x1b[?1049h")  # the alternate screen, as at start
        self._enable_mouse_support()
        self.write("\x1b[?25l")  # no cursor
        self._enable_bracketed_paste()
        for screen in self._app.screen_stack:
            screen.refresh()
        self._app.refresh(layout=True)

    def _end_run(self, by: str | None) -> None:
        app = self._app
        leave = getattr(app, "leave", None)
        if callable(leave):
            leave()  # the observatory of a run it does not drive (serve --attach): it goes on
            return
        screen = getattr(app, "run_screen", None)
        if screen is None or not screen.running:
            # The first frame (nothing started) or a run already over: just leave.
            code = getattr(app, "exit_code", None)
            app.exit(code if isinstance(code, int) else EXIT_INTERRUPTED)
            return
        screen.abort(by=by)
        screen.leave_when_closed()
