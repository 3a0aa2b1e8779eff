"""Click targets found by their listeners (for the eyes; core/eyes/snapshot.py calls it before
each walk of the top document).

A calendar's "Prev" arrow is an ``<a title>`` with no href, role, tabindex or pointer
cursor: nothing in the DOM says a person can click it, only the handler the page bound to it
(or to an ancestor, for the items it delegates to). This module asks CDP which elements hold
click-like listeners (``DOMDebugger.getEventListeners`` on the document, in one call) and
hands them to our world (``__handrail.noteHandlers``), where the walk lists those a person
can see and click.

Delegated handlers: jQuery keeps the selector of ``$(root).on("click", "a[title]", f)`` in
its own data on ``root``, in the page's world. It is read with ``Runtime.getProperties`` on
the element's main-world object: property reads by the inspector run no page code (getters
are reported, never called), so the page cannot see or steer it. A plain listener on an
ancestor delegates, by convention, to the descendants that carry an action data attribute
(``data-action``, ``data-handler``...; core/eyes/listeners.js).

Handles: the remote objects for DOM nodes (in our world and, for jQuery, in the page's) are
kept for the life of the document and reused, never released: releasing a group of
inspector handles of DOM nodes in our world broke the hands in this Chromium (a click then
met a second wrapper for an indexed node, "covered by" itself, and the renderer later
crashed: tests/eyes/test_widgets_eyes.py's tree test showed it). They go when the document does,
and a document holds at most one per listening element. The document itself is taken from
the page's world, see :func:`discover`.

Cost: one CDP call when the page has no click listener; else one ``DOM.resolveNode`` per
listening element (at most :data:`MAX_NODES`, concurrent, once per document), one call into
our world, a property read per listener site the first time it is met in the document (to
tell jQuery's from the rest), and a few property reads per jQuery element (at most
:data:`MAX_JQUERY`). The listener list itself is the bulk on a page with many listeners
(Jupyter's 7,800: 1.2 MB, 30-50 ms in the renderer and 10 ms to parse, on a quiet machine).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from dataclasses import dataclass, field
from typing import Any

from core.cdp import CDPError, CDPSession

CLICK_TYPES = frozenset(
    {"click", "mousedown", "mouseup", "pointerdown", "pointerup", "touchstart", "touchend"}
    # A drop zone (a board's column, a file drop area) is a place a person drags to: the
    # drag tool needs its index.
    | {"drop"}
)
MAX_NODES = 400
"""Listening elements handed to our world per digest; the rest are left to the heuristics."""
MAX_JQUERY = 60
"""jQuery elements whose handlers are read per digest (a few CDP calls each)."""
_GROUP = "handrail-listeners"
"""Plain objects read from jQuery's data: released after each digest."""
_KEEP = "handrail-listener-nodes"
"""DOM node handles: never released by us (see the module's notes)."""
_EXPANDO = re.compile(r"^jQuery\d+$")

JSON = dict[str, Any]


@dataclass(frozen=True)
class HandlerScan:
    """What one discovery found (for the digest's stats)."""

    nodes: int
    """Elements holding a click-like listener."""
    jquery: int
    """Of them, elements whose jQuery handlers were read."""
    delegated: int
    """jQuery selectors found (delegated handlers)."""
    ms: float


@dataclass
class _Node:
    backend: int
    direct: bool = True
    selectors: tuple[str, ...] = ()


@dataclass
class Handles:
    """DOM node handles of one document, kept for its life (see the module's notes)."""

    context: int
    """Our world's execution context in that document (a new one means a new document)."""
    document: str | None = None
    ours: dict[int, str] = field(default_factory=dict)
    """backendNodeId -> objectId in our world."""
    page: dict[int, str] = field(default_factory=dict)
    """backendNodeId -> objectId in the page's world (jQuery's data is read there)."""
    plain: set[tuple[str, int, int]] = field(default_factory=set)
    """Listener sites (script, line, column) found not to be jQuery's dispatcher: jQuery
    binds that one function wherever it handles an event, so a site whose element has no
    jQuery handlers is no element's jQuery site, and is not read again."""


async def discover(session: CDPSession, handles: Handles, *, timeout: float = 10.0) -> HandlerScan:
    """Find the elements of the session's top document (same-origin frames and shadow roots
    included) that hold click-like listeners, and hand them to our world in
    ``handles.context``, where the next walk uses them (and forgets them after). Pass the
    same ``handles`` for every digest of a document. Raises ``core.cdp`` errors when the tab
    does not answer."""
    started = time.perf_counter()
    if handles.document is None:
        # The page's world: `document` there is unforgeable (no page code runs to read it),
        # and a handle to our world's document made the renderer crash on a later keystroke
        # (tests/run/test_hostile.py's invisible-twin test showed it). In no object group:
        # getEventListeners wraps every listener's function in the group of the handle it is
        # given, and none without one (Jupyter's 7,800 listeners: 180-600 ms a digest, and as
        # many objects kept for the document's life, against 45-55 ms and none).
        doc = await session.send(
            "Runtime.evaluate",
            {"expression": "document", "silent": True},
            timeout=timeout,
        )
        handles.document = doc.get("result", {}).get("objectId")
    if not handles.document:
        return HandlerScan(0, 0, 0, 0.0)
    try:
        got = await session.send(
            "DOMDebugger.getEventListeners",
            {"objectId": handles.document, "depth": -1, "pierce": True},
            timeout=timeout,
        )
        nodes: dict[int, _Node] = {}
        sites: dict[int, set[tuple[str, int, int]]] = {}
        for listener in got.get("listeners", []):
            backend = listener.get("backendNodeId")
            if listener.get("type") not in CLICK_TYPES or not backend:
                continue
            nodes.setdefault(int(backend), _Node(int(backend)))
            sites.setdefault(int(backend), set()).add(
                (
                    str(listener.get("scriptId")),
                    int(listener.get("lineNumber", 0)),
                    int(listener.get("columnNumber", 0)),
                )
            )
        if not nodes:
            return HandlerScan(0, 0, 0, _ms(started))
        chosen = list(nodes.values())[:MAX_NODES]
        probed = await _read_jquery(session, handles, chosen, sites, timeout)
        await _hand_over(session, handles, chosen, timeout)
        delegated = sum(len(n.selectors) for n in chosen)
        return HandlerScan(len(nodes), probed, delegated, _ms(started))
    finally:
        # Plain objects only (jQuery's data); node handles stay (see the module's notes).
        with contextlib.suppress(CDPError):
            await session.post("Runtime.releaseObjectGroup", {"objectGroup": _GROUP})


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)


async def _resolve(
    session: CDPSession, backend: int, context: int | None, cache: dict[int, str], timeout: float
) -> str | None:
    """The node's handle in ``context`` (None: the page's world), made once per document."""
    if backend in cache:
        return cache[backend]
    params: JSON = {"backendNodeId": backend, "objectGroup": _KEEP}
    if context is not None:
        params["executionContextId"] = context
    try:
        got = await session.send("DOM.resolveNode", params, timeout=timeout)
    except CDPError:
        return None  # a node of another frame's document, or gone: nothing to hand over
    object_id = got.get("object", {}).get("objectId")
    if object_id:
        cache[backend] = str(object_id)
    return cache.get(backend)


async def _hand_over(
    session: CDPSession, handles: Handles, nodes: list[_Node], timeout: float
) -> None:
    resolved = await asyncio.gather(
        *(_resolve(session, n.backend, handles.context, handles.ours, timeout) for n in nodes)
    )
    args: list[JSON] = []
    specs: list[JSON] = []
    for node, object_id in zip(nodes, resolved, strict=True):
        if object_id:
            args.append({"objectId": object_id})
            specs.append({"direct": node.direct, "selectors": list(node.selectors)})
    await session.send(
        "Runtime.callFunctionOn",
        {
            "functionDeclaration": (
                "function (specs, ...els) { return globalThis.__handrail.noteHandlers(specs, els); }"
            ),
            "executionContextId": handles.context,
            "arguments": [{"value": specs}, *args],
            "returnByValue": True,
        },
        timeout=timeout,
    )


async def _read_jquery(
    session: CDPSession,
    handles: Handles,
    nodes: list[_Node],
    sites: dict[int, set[tuple[str, int, int]]],
    timeout: float,
) -> int:
    """Read the jQuery handlers of the nodes whose listener is jQuery's: one node per listener
    site is tried first (jQuery binds the same dispatcher everywhere), then every node that
    shares a site found to be jQuery's. Returns how many nodes were read."""
    first: dict[tuple[str, int, int], _Node] = {}
    for node in nodes:
        for site in sites[node.backend] - handles.plain:
            first.setdefault(site, node)
    tried = await asyncio.gather(
        *(_jquery_handlers(session, handles, n, timeout) for n in first.values()),
        return_exceptions=True,
    )
    handles.plain.update(site for site, ok in zip(first, tried, strict=True) if ok is False)
    jquery_sites = {site for site, ok in zip(first, tried, strict=True) if ok is True}
    done = {id(n) for n, ok in zip(first.values(), tried, strict=True) if ok is True}
    rest = [n for n in nodes if id(n) not in done and sites[n.backend] & jquery_sites][
        : max(0, MAX_JQUERY - len(done))
    ]
    await asyncio.gather(
        *(_jquery_handlers(session, handles, n, timeout) for n in rest), return_exceptions=True
    )
    return len(done) + len(rest)


async def _props(session: CDPSession, object_id: str, timeout: float) -> dict[str, JSON]:
    got = await session.send(
        "Runtime.getProperties",
        {"objectId": object_id, "ownProperties": True},
        timeout=timeout,
    )
    return {str(p.get("name")): p for p in got.get("result", [])}


def _object(prop: JSON | None) -> str | None:
    """The objectId of a data property holding an object (never an accessor's)."""
    if prop is None or "value" not in prop:
        return None
    value = prop["value"]
    return (
        str(value["objectId"]) if value.get("type") == "object" and value.get("objectId") else None
    )


async def _jquery_handlers(
    session: CDPSession, handles: Handles, node: _Node, timeout: float
) -> bool | None:
    """Fill ``node`` from jQuery's data on it (main world, read without running page code).
    True when the element carries jQuery click handlers, False when it carries none, None
    when it could not be read (gone)."""
    element_id = await _resolve(session, node.backend, None, handles.page, timeout)
    if not element_id:
        return None
    own = await _props(session, str(element_id), timeout)
    for name, prop in own.items():
        data_id = _object(prop) if _EXPANDO.match(name) else None
        if data_id is None:
            continue
        events_id = _object((await _props(session, data_id, timeout)).get("events"))
        if events_id is None:
            continue
        events = await _props(session, events_id, timeout)
        handlers: list[str] = []
        for kind in CLICK_TYPES:
            list_id = _object(events.get(kind))
            if list_id is not None:
                items = await _props(session, list_id, timeout)
                handlers += [i for k, p in items.items() if k.isdigit() and (i := _object(p))]
        if not handlers:
            continue
        objs = await asyncio.gather(*(_props(session, h, timeout) for h in handlers))
        selectors: list[str] = []
        direct = False
        for handle in objs:
            value = handle.get("selector", {}).get("value", {})
            selector = value.get("value") if value.get("type") == "string" else None
            if selector:
                selectors.append(str(selector)[:200])
            else:
                direct = True
        node.direct = direct
        node.selectors = tuple(dict.fromkeys(selectors))
        return True
    return False
