"""The operational log: levels, timings, CDP errors — for whoever debugs a run.

structlog over the standard library's ``logging``, under the ``handrail`` logger only (the
root logger and other libraries' handlers are left alone). The file sink writes one JSON
object per line to a ``.log`` beside the audit file, a file it creates (never one that was
already there: see :class:`_NewFileHandler`); console mode adds human-readable lines on
stderr. Nothing is ever written to stdout (it belongs to the console supervisor's output
and to scripts piping it). Every event passes a secrets scrubber before any sink sees it, and
then :func:`core.visible.visible`, so no control character from a page or a model reaches
the person's terminal or the file.

Usage::

    oplog.configure(log_path_for(audit_path), console=not tui, secrets=secrets)
    log = oplog.get_logger("cdp")
    log.warning("cdp_timeout", method="Page.navigate", timeout_s=10)
"""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path
from typing import Any, TextIO

import structlog
from structlog.typing import EventDict, Processor, WrappedLogger

from core.run.events import (
    ActionDone,
    ApprovalGiven,
    ApprovalNeeded,
    Event,
    ModelReplied,
    Observed,
    RunFinished,
    RunStarted,
)
from core.secrets import Secrets
from core.visible import visible, visible_json

ROOT = "handrail"
_LEVELS = {"debug", "info", "warning", "error", "critical"}


def log_path_for(audit_path: Path) -> Path:
    """The operational log that goes with an audit log: same name, ``.log`` suffix."""
    return Path(audit_path).with_suffix(".log")


class _NewFileHandler(logging.StreamHandler[TextIO]):
    """A handler writing to a file it creates, owner-only. The log's name is predictable, and
    anyone who can write in its folder could plant a link, a hard link or a FIFO there
    first: opening with ``O_EXCL`` refuses them all, so the log never writes into (or
    waits on) a file it did not make. Raises FileExistsError when anything is at ``path``."""

    def __init__(self, path: Path) -> None:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        # Not a with-block: the stream lives as long as the handler (closed in close()).
        stream = open(os.open(path, flags, 0o600), "a", encoding="utf-8")  # noqa: SIM115
        super().__init__(stream)

    def close(self) -> None:
        self.acquire()
        try:
            self.flush()
            self.stream.close()
        finally:
            self.release()
            super().close()


class _Scrubber:
    """A structlog processor that removes secret values from every string in the event."""

    def __init__(self, secrets: Secrets | None) -> None:
        self._secrets = secrets

    def __call__(self, logger: WrappedLogger, method: str, event_dict: EventDict) -> EventDict:
        if not self._secrets:
            return event_dict
        out: EventDict = {}
        for key, value in event_dict.items():
            if isinstance(value, str | dict | list | tuple):
                out[key] = self._secrets.scrub_json(value)
            elif isinstance(value, BaseException | type(None) | bool | int | float):
                out[key] = value  # exc_info is rendered (then scrubbed) by format_exc_info
            else:
                out[key] = self._secrets.scrub(repr(value))
        return out


def _visible(logger: WrappedLogger, method: str, event_dict: EventDict) -> EventDict:
    """A structlog processor: page and model text must not drive the terminal (stderr)."""
    return {
        key: visible(value) if isinstance(value, str) else visible_json(value)
        for key, value in event_dict.items()
    }


def configure(
    log_path: Path | None,
    *,
    console: bool,
    level: str = "info",
    secrets: Secrets | None = None,
) -> None:
    """(Re)configure the operational log. Calling it again replaces the previous sinks.

    ``log_path``: JSON lines go to a new file made there, readable by this user only (the
    directory must exist); ``None`` for no file. ``console``: also write readable lines to
    stderr. With neither, logging is silent. ``level``: debug, info, warning, error or
    critical. Raises ValueError for an unknown level, FileExistsError when anything (a
    file, a link, a FIFO) is already at ``log_path``, and OSError when it cannot be made;
    the previous sinks are kept then.
    """
    level_name = level.lower()
    if level_name not in _LEVELS:
        raise ValueError(f"log level {level!r}: use one of {', '.join(sorted(_LEVELS))}")
    numeric = logging.getLevelNamesMapping()[level_name.upper()]
    # Before the old sinks go: a refused file leaves the log as it was.
    file_handler = _NewFileHandler(log_path) if log_path is not None else None

    scrub = _Scrubber(secrets)
    # Runs for structlog events and for stdlib records logged under "handrail.*".
    shared: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.format_exc_info,
        scrub,
        _visible,
    ]

    root = logging.getLogger(ROOT)
    for handler in list(root.handlers):
        root.removeHandler(handler)
        handler.close()
    root.setLevel(numeric)
    root.propagate = False

    if file_handler is not None:
        file_handler.setFormatter(
            structlog.stdlib.ProcessorFormatter(
                foreign_pre_chain=shared,
                processors=[
                    structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                    structlog.processors.JSONRenderer(ensure_ascii=False),
                ],
            )
        )
        root.addHandler(file_handler)
    if console:
        stderr_handler = logging.StreamHandler(sys.stderr)
        stderr_handler.setFormatter(
            structlog.stdlib.ProcessorFormatter(
                foreign_pre_chain=shared,
                processors=[
                    structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                    structlog.dev.ConsoleRenderer(colors=False),
                ],
            )
        )
        root.addHandler(stderr_handler)
    if not root.handlers:
        root.addHandler(logging.NullHandler())

    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,
            *shared,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )


def get_logger(name: str, **initial: Any) -> structlog.stdlib.BoundLogger:
    """A logger named ``handrail.<name>`` (so the sinks of :func:`configure` receive it)."""
    full = name if name == ROOT or name.startswith(ROOT + ".") else f"{ROOT}.{name}"
    return structlog.stdlib.get_logger(full, **initial)


class RunTimings:
    """An event sink (core/run/events.py) that writes what a run did and how long each part
    took to the operational log: the run's start and end, and per round the page's reading,
    the model's call, the approval's wait and the action, each with its duration. Only names,
    counts, codes and times: page text, model text and typed text stay in the audit log."""

    def __init__(self) -> None:
        self._log = get_logger("run")
        self._asked_at: float | None = None

    def __call__(self, event: Event) -> None:
        log = self._log
        if isinstance(event, RunStarted):
            # Every later line names the run (a fleet's runs share one log).
            self._log = log = log.bind(run_id=event.run_id)
            log.info(
                "run.start",
                model=event.model,
                browser=event.browser,
                max_rounds=event.max_rounds,
            )
        elif isinstance(event, Observed):
            log.info(
                "round.observed",
                round=event.round,
                ms=round(event.duration_ms, 1),
                chars=len(event.digest),
                tabs=len(event.tabs),
            )
        elif isinstance(event, ModelReplied):
            log.info(
                "round.model",
                round=event.round,
                ms=round(event.duration_ms, 1),
                input_tokens=event.usage.get("input_tokens"),
                output_tokens=event.usage.get("output_tokens"),
            )
        elif isinstance(event, ApprovalNeeded):
            self._asked_at = time.monotonic()
        elif isinstance(event, ApprovalGiven):
            waited = None if self._asked_at is None else time.monotonic() - self._asked_at
            self._asked_at = None
            log.info(
                "round.approval",
                round=event.round,
                decision=event.decision.decision,
                by=event.decision.by,
                wait_s=None if waited is None else round(waited, 2),
            )
        elif isinstance(event, ActionDone):
            result = event.result
            log.log(
                logging.INFO if result.ok else logging.WARNING,
                "round.action",
                round=event.round,
                action=event.action.name if event.action is not None else None,
                ok=result.ok,
                outcome=result.outcome,
                code=result.code,
                ms=round(event.duration_ms, 1),
            )
        elif isinstance(event, RunFinished):
            log.info(
                "run.end",
                outcome=event.outcome,
                rounds=event.rounds,
                exit_code=event.exit_code,
            )
