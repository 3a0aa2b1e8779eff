"""The OpenTelemetry ids of a run, derived from its run id (no SDK needed): the log's
``run_start`` names its trace, and every export of the log (core/audit/otel.py), live or
later, carries the same ids."""

from __future__ import annotations

import hashlib


def trace_id_of(run_id: str) -> int:
    """The trace id of a run (128 bits, never zero)."""
    return _id(b"handrail trace\n" + run_id.encode(), 16)


def span_id_of(run_id: str, what: str) -> int:
    """The id of one span of a run: ``run``, ``chat 3``, ``tool 3``, ``hand_over 3``."""
    return _id(b"handrail span\n" + run_id.encode() + b"\n" + what.encode(), 8)


def trace_hex(run_id: str) -> str:
    """The trace id as OTLP JSON and tracing backends show it (32 hex digits)."""
    return f"{trace_id_of(run_id):032x}"


def _id(seed: bytes, size: int) -> int:
    value = int.from_bytes(hashlib.sha256(seed).digest()[:size], "big")
    return value or 1
