"""A run's OpenTelemetry spans sent while it runs (``run --otlp URL``, or the standard
``OTEL_EXPORTER_OTLP_ENDPOINT``).

An event sink placed after the audit recorder: when a round's record is in the log, the
sink reads the log's new lines and builds that round's spans with the same builder as
``handrail export`` (core/audit/otel.py), so the live trace and a later export of the log
are one trace, with the same ids. A round's ``execute_tool`` span names the page it led
to, so each round is sent when the next one is recorded (the last at the run's end, with
the run's own span). Sending happens on a thread of its own; a collector that is slow or
down never slows or ends the run: its failures go to the operational log, and the
run's end waits a bounded time for what is still queued.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import structlog

from core.run.events import ActionDone, Event, HumanReturned, RunFinished, RunStarted

log = structlog.get_logger("handrail.otel")

DRAIN_S = 10.0
"""How long the run's end waits for the spans still queued."""


class LiveTrace:
    """An ``EventSink`` sending the run's spans to ``endpoint`` as the log records them."""

    def __init__(self, endpoint: str, env: Mapping[str, str] | None = None) -> None:
        self.endpoint = endpoint
        self.env = env
        self.sent = 0
        self.failures = 0
        self._path: Path | None = None
        self._offset = 0
        self._builder: Any = None
        self._pending: Mapping[str, Any] | None = None
        self._pauses: dict[object, Mapping[str, Any]] = {}
        self._queue: queue.Queue[list[Any] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._send_all, name="otlp", daemon=True)
        self._thread.start()

    def __call__(self, event: Event) -> None:
        if isinstance(event, RunStarted) and event.audit_path:
            self._path = Path(event.audit_path)
        if isinstance(event, ActionDone | HumanReturned | RunFinished):
            try:
                self._catch_up()
            except (OSError, ValueError) as exc:  # a log we cannot read: no trace, the run goes on
                log.warning("otel.read_failed", error=str(exc))
        if isinstance(event, RunFinished):
            self._queue.put(None)
            self._thread.join(DRAIN_S)

    def _catch_up(self) -> None:
        if self._path is None:
            return
        with self._path.open("rb") as f:
            f.seek(self._offset)
            data = f.read()
        complete = data[: data.rfind(b"\n") + 1]
        self._offset += len(complete)
        for line in complete.splitlines():
            if line.strip():
                self._record(json.loads(line))
        if self._builder is not None:
            spans = self._builder.take()
            if spans:
                self._queue.put(spans)

    def _record(self, rec: Mapping[str, Any]) -> None:
        kind = rec.get("type")
        if kind == "run_start":
            from core.audit.otel import TraceBuilder  # the SDK, only for a run that exports

            self._builder = TraceBuilder(rec, self.env)
            return
        builder = self._builder
        if builder is None:
            return
        if kind == "round":
            if self._pending is not None:
                builder.round(self._pending, rec.get("url"))
            self._pending = rec
        elif kind == "human_pause":
            self._pauses[rec.get("round")] = rec
        elif kind == "human_resume":
            pause = self._pauses.pop(rec.get("round"), None)
            if pause is not None:
                builder.hand_over(pause, rec)
        elif kind == "run_end":
            if self._pending is not None:
                builder.round(self._pending, None)
                self._pending = None
            for pause in self._pauses.values():
                builder.hand_over(pause, None)
            self._pauses.clear()
            builder.end(rec)

    def _send_all(self) -> None:
        from core.audit.otel import ExportError, send_otlp

        while True:
            spans = self._queue.get()
            if spans is None:
                return
            try:
                send_otlp(spans, self.endpoint, self.env)
                self.sent += len(spans)
            except (ExportError, OSError) as exc:
                self.failures += 1
                log.warning("otel.send_failed", endpoint=self.endpoint, error=str(exc))
