"""The observatory of a run another process drives (``handrail attach RUN``).

The same screens as a run's own observatory, fed by the run's socket
(:func:`core.run.live.follow`): the rounds so far, then each as it happens; its approvals and
hand-overs while this terminal holds the gate. ``q`` leaves and the run goes on; ``x`` (when
holding the gate) aborts the run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.run.events import EventSink, RunFinished, Supervisor
from core.run.live import LiveClient, LiveError, follow
from core.visible import visible
from tui.app import HandrailApp
from tui.exit_codes import EXIT_USAGE


class AttachApp(HandrailApp):
    """``HandrailApp`` over a live run's socket; its exit code is the run's, or 0 when the
    person left before the run ended."""

    def __init__(
        self,
        run_id: str,
        task: str,
        *,
        watch: bool = False,
        config_dir: Path | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(self._follow, task=task, model="attached", config_dir=config_dir, **kw)
        self.run_id = run_id
        self.watch_only = watch
        self.client: LiveClient | None = None

    async def _follow(self, sink: EventSink, supervisor: Supervisor) -> RunFinished:
        try:
            self.client = await LiveClient.connect(self.run_id, watch=self.watch_only)
        except LiveError as exc:
            return RunFinished("error", "", 0, EXIT_USAGE, reason=str(exc))
        introduce(self.client, self.told)
        return await follow(self.client, sink, supervisor, self.told)

    def abort_refusal(self) -> str | None:
        """Why ``x`` may not abort the run from here: only the terminal holding the gate may."""
        client = self.client
        if client is None or client.role == "holder":
            return None
        holder = client.welcome.get("holder") or "nobody"
        return visible(f"You are watching: only the gate's holder ({holder}) can abort the run.")

    def told(self, text: str) -> None:
        self.notify(visible(text), title="attach", markup=False)

    async def request_quit(self, *, interrupt: bool = False) -> None:
        self.leave()

    def leave(self) -> None:
        """Leave the run (``q``, serve stopped): leaving is not ending, the run goes on and
        can be attached to again."""
        if self.client is not None:
            self.client.leaving = True
        self.exit(self.exit_code if self.exit_code is not None else 0)

    def terminate(self) -> None:
        self.leave()  # a signal: this process goes, the run does not


def introduce(client: LiveClient, told: Callable[[str], None]) -> None:
    """Say whether this terminal holds the gate, and who does when it does not."""
    if client.role == "holder":
        told("you hold the gate: the run's approvals and hand-overs are asked here")
    else:
        told(f"watching; the gate is held by {client.welcome.get('holder') or 'nobody'}")
