"""What can go wrong in our world, as the reader who must act on it needs it told.

Owns the errors every other module of the world layer raises (:class:`WorldError` and the
index errors :class:`StaleElement`, :class:`UnknownIndex`, :class:`FrameElement`, whose
messages are written for the model) and how a page exception in a CDP answer
(``exceptionDetails``) becomes one of them (:func:`raise_for`).
"""

from __future__ import annotations

import json

from core.cdp import JSON
from core.result import first_line

_INDEX_ERRORS = {"stale", "unknown", "frame"}


class WorldError(Exception):
    """Running our JavaScript in the page failed; the message says why (first line only)."""


class StaleElement(WorldError):
    """The element behind an index has left the page (removed, replaced, or a new document)."""

    def __init__(self, index: int) -> None:
        super().__init__(
            f"element [{index}] is no longer on the page (the page changed); "
            "read the new digest and use its indexes"
        )
        self.index = index


class UnknownIndex(WorldError):
    """No element ever had this index in this tab (an index from an earlier document of the
    tab raises :class:`StaleElement`)."""

    def __init__(self, index: int) -> None:
        super().__init__(
            f"there is no element [{index}] in the digest; use an index shown in the latest digest"
        )
        self.index = index


class FrameElement(WorldError):
    """The index names an element inside a cross-origin frame: it is not in the main world."""

    def __init__(self, index: int) -> None:
        super().__init__(
            f"element [{index}] is inside a cross-origin frame, where handrail cannot act yet; "
            "call ask_human so the person can do this step"
        )
        self.index = index


def exception_line(details: JSON) -> str:
    """The first line of a page exception, from a CDP answer's ``exceptionDetails``: the
    exception's description, or for a thrown value without one (``throw "boom"``) that value
    as JSON, or the answer's own text."""
    exception = details.get("exception") or {}
    text = exception.get("description")
    if not text and "value" in exception:
        text = f"Uncaught {json.dumps(exception['value'], default=str)}"
    return first_line(str(text or details.get("text") or ""))


def index_error(result: JSON) -> tuple[str, int] | None:
    """The refusal core/eyes/registry.js threw, as data: ``(code, index)`` from the thrown
    ``{handrail: "index", code, index}`` object (its preview in the CDP answer), or None
    when the exception is anything else."""
    exception = result.get("exceptionDetails", {}).get("exception") or {}
    preview = exception.get("preview") if exception.get("type") == "object" else None
    if not isinstance(preview, dict):
        return None
    fields = {
        prop.get("name"): prop.get("value")
        for prop in preview.get("properties", ())
        if isinstance(prop, dict)
    }
    code, index = fields.get("code"), fields.get("index")
    if fields.get("handrail") != "index" or code not in _INDEX_ERRORS:
        return None
    if not isinstance(index, str) or not index.isdigit():
        return None
    return str(code), int(index)


def raise_for(result: JSON) -> None:
    """Raise the error a CDP answer with ``exceptionDetails`` stands for: an index error when
    the registry refused an index, else :class:`WorldError` with the exception's first line."""
    refused = index_error(result)
    if refused is not None:
        code, index = refused
        if code == "stale":
            raise StaleElement(index)
        if code == "frame":
            raise FrameElement(index)
        raise UnknownIndex(index)
    raise WorldError(exception_line(result.get("exceptionDetails", {})))
