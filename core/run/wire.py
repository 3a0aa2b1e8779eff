"""The run's events and questions as JSON lines, for ``handrail attach`` (:mod:`core.run.live`).

A value crosses as JSON with four tags: a dataclass of :data:`KINDS` as ``{"$": name,
field: value...}``, bytes as ``{"$bytes": base64}``, a tuple as ``{"$tuple": [...]}``, and a
dict that has a key starting with ``$`` (page data can) as ``{"$dict": {...}}``. Decoding
builds only the dataclasses named in :data:`KINDS`, by their own constructors: a line names
no code to run, and an unknown name, an unknown field or a line too long or too deep is a
:class:`WireError`, never an exception of another kind.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
from typing import Any

from core.actions import Action
from core.audit.records import ApprovalRecord, ScreenshotRef
from core.guard.decision import ApprovalDecision, RuleRef
from core.guard.rules import Budget
from core.model.base import RecordedView, ReplyOrigin
from core.result import ActionResult, Changes
from core.run import events
from core.run.budget import Spent

KINDS: dict[str, type[Any]] = {
    cls.__name__: cls
    for cls in (
        Action,
        ActionResult,
        Changes,
        ApprovalDecision,
        ApprovalRecord,
        RuleRef,
        ScreenshotRef,
        Spent,
        Budget,
        RecordedView,
        ReplyOrigin,
        events.TargetCrop,
        events.ApprovalRequest,
        events.HumanRequest,
        events.RerunOf,
        events.RunStarted,
        events.BudgetSpent,
        events.RoundStarted,
        events.Observed,
        events.ModelWriting,
        events.ModelReplied,
        events.ActionParsed,
        events.ApprovalNeeded,
        events.ApprovalGiven,
        events.ActionIntent,
        events.HumanNeeded,
        events.HumanReturned,
        events.ActionDone,
        events.RunFinished,
    )
}
"""Every dataclass that may cross: the events and what they hold, nothing else."""

MAX_DEPTH = 200
"""The deepest nesting a line may have (an event is a handful of levels; what a page
returns to ``run_js`` may nest deeper)."""


class WireError(ValueError):
    """A line that is not a value this module writes."""


def encode(value: object) -> Any:
    """``value`` as plain JSON data (see the module's tags)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        name = type(value).__name__
        if KINDS.get(name) is not type(value):
            raise WireError(f"{name} does not cross the wire")
        out: dict[str, Any] = {"$": name}
        for f in dataclasses.fields(value):
            out[f.name] = encode(getattr(value, f.name))
        return out
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    if isinstance(value, tuple):
        return {"$tuple": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        plain = {str(k): encode(v) for k, v in value.items()}
        return {"$dict": plain} if any(k.startswith("$") for k in plain) else plain
    raise WireError(f"a {type(value).__name__} does not cross the wire")


def decode(data: object, depth: int = 0) -> Any:
    """The value :func:`encode` gave ``data`` for."""
    if depth > MAX_DEPTH:
        raise WireError(f"nested deeper than {MAX_DEPTH} levels")
    if data is None or isinstance(data, bool | int | float | str):
        return data
    if isinstance(data, list):
        return [decode(v, depth + 1) for v in data]
    if not isinstance(data, dict):
        raise WireError(f"not JSON data: {type(data).__name__}")
    if "$" in data:
        name = data["$"]
        cls = KINDS.get(name) if isinstance(name, str) else None
        if cls is None:
            raise WireError(f"unknown kind {str(name)[:40]!r}")
        fields = {k: decode(v, depth + 1) for k, v in data.items() if k != "$"}
        try:
            return cls(**fields)
        except TypeError as exc:
            raise WireError(f"{name}: {exc}") from None
    if len(data) == 1:
        ((tag, inner),) = data.items()
        if tag == "$bytes":
            if not isinstance(inner, str):
                raise WireError("$bytes holds no text")
            try:
                return base64.b64decode(inner, validate=True)
            except (binascii.Error, ValueError):
                raise WireError("$bytes is not base64") from None
        if tag == "$tuple":
            if not isinstance(inner, list):
                raise WireError("$tuple holds no list")
            return tuple(decode(v, depth + 1) for v in inner)
        if tag == "$dict":
            if not isinstance(inner, dict):
                raise WireError("$dict holds no object")
            return {k: decode(v, depth + 1) for k, v in inner.items()}
    if any(k.startswith("$") for k in data):
        raise WireError("an object with a $ key that is no tag")
    return {k: decode(v, depth + 1) for k, v in data.items()}


def dumps(message: dict[str, Any]) -> bytes:
    """One message as one line (ending ``\\n``)."""
    return json.dumps(encode(message), ensure_ascii=True, separators=(",", ":")).encode() + b"\n"


def loads(line: bytes) -> dict[str, Any]:
    """One message from one line; :class:`WireError` for anything else."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise WireError(f"not a JSON line: {str(exc)[:80]}") from None
    message = decode(data)
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise WireError("a message is an object with a type")
    return message
