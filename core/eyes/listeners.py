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

Cost: one CDP call when the page has no click listener; else a ``DOM.resolveNode`` per
listening element (at most :data:`MAX_NODES`, once per document), one call into our world, a
property read per listener site met first (jQuery's or not), and a few per jQuery element (at
most :data:`MAX_JQUERY`). The listener list is the bulk on a page with many listeners
(Jupyter's 7,800: 1.2 MB, 30-50 ms in the renderer and 10 ms to parse).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from core.browser.browser import Tab
from core.cdp import CDPError, CDPSession
from core.result import first_line
from core.world.contexts import main_context
from core.world.errors import WorldError

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
MAX_HANDLERS = 64
"""jQuery handlers read per element (a property read each): a page that stuffs a handler list
with 100,000 entries made one digest 17 s of reads; no real element carries this many."""
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
    asked: int | None = None
    """Asking (:func:`answer_asks`): the nodes asked about; None when every listener was
    listed (:func:`discover`)."""
    retake: bool = False
    """Asking: an answer changed what the walk read, so the walk was taken again. Listing
    with ``reuse`` (:func:`discover`): the listing differed from the one the walk reused, so
    it was handed over and the walk is taken again."""


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
    listeners: int | None = None
    """Listeners of every type the latest :func:`discover` listed (None: not run yet)."""
    asks: int = 0
    """Nodes the latest walk in ask mode asked about."""
    jquery_read: int = 0
    """Elements whose jQuery handlers the latest listing read."""
    jquery: bool = False
    """jQuery's handlers were found in the document: its delegated selectors may sit on any
    ancestor, so asking asks about every ancestor (else only those of elements carrying an
    action attribute, the other way a listener delegates)."""
    asking: dict[int, str] = field(default_factory=dict)
    """backendNodeId -> objectId in the page's world, in no object group: what asking asks
    CDP about (``getEventListeners`` wraps every listener's function in the group of the
    handle it is given: with a group, three times as slow, and as many objects kept)."""
    heavy: dict[int, list[JSON]] = field(default_factory=dict)
    """backendNodeId of a framework root the latest listing found -> its click listeners."""
    handed: tuple[tuple[int, bool, tuple[str, ...]], ...] | None = None
    """What the latest listing handed to our world (node, direct, delegated selectors), which
    keeps it: a walk may reuse it while the next listing is read, and is taken again only
    when that listing differs (None: nothing handed yet in this document)."""
    settled: dict[int, list[JSON]] = field(default_factory=dict)
    """Serial of a framework root (:data:`FRAMEWORK_ROOT`) -> its click-like listeners, as
    first answered."""
    answered: tuple[str, Any] | None = None
    """The latest answers handed to our world, and the DOM's change count when they were."""
    consulted: frozenset[int] = frozenset()
    """Serials of the elements whose verdict the walk of those answers used."""
    crowded: dict[int, int] = field(default_factory=dict)
    """Serial of a node a call found holding a framework root -> the deepest call it may take
    from then on (one level short of that call's: the root's answer is kept, and a call
    reaching it would list it again)."""
    backends: dict[int, int | None] = field(default_factory=dict)
    """Serial of an asked node in our world (listeners.js) -> its backendNodeId (None: it
    could not be described)."""
    spent: list[str] = field(default_factory=list)
    """Handles of plain objects this digest read from jQuery's data (:func:`_release_spent`)."""
    events: dict[int, str] = field(default_factory=dict)
    """backendNodeId -> jQuery's ``events`` object of that element (in the page's world), for
    the elements whose jQuery click handlers the latest digest read: the next digest reads
    them again from there, beside its listener calls (see :func:`_jquery_handlers`)."""
    last_asks: JSON | None = None
    """What the latest walk in ask mode asked (listeners.js ``asked()``), answered: the next
    walk's questions are asked again beside that walk (:func:`answer_walk` with
    ``speculative``), and stand for its own when it asks the same."""
    plain: set[tuple[str, int, int]] = field(default_factory=set)
    """Listener sites (script, line, column) found not to be jQuery's dispatcher: jQuery
    binds that one function wherever it handles an event, so a site whose element has no
    jQuery handlers is no element's jQuery site, and is not read again."""


ASK_ABOVE = 2000
"""A document whose listing costs more than this many listeners' worth is read in ask mode
(:func:`ask_mode`)."""
JQUERY_COST = 150
"""Reading one element's jQuery handlers costs about what this many listeners listed do (a
chain of property reads, a dozen round trips: jQuery UI's 14 such elements, 35-50 ms a
digest listed, 8-12 ms asked)."""
ASK_COST = 12
"""One asked node costs about what this many listed listeners do: a CDP round trip of its
own (0.1 ms, pipelined) against 8-9 us a listener listed (Jupyter Notebook 7, quiet)."""
FRAMEWORK_ROOT = 32
"""A node answering with this many listeners or more is a framework's root (React 17+ binds
every event type on each root it renders into, twice: Jupyter's toolbar items carry 131
each), whose listeners stay as they are for its life: its answer is kept for the document's
life instead of being asked again each digest (a third of asking's time on Jupyter). The
cost: such a node that later drops its click listeners and keeps the rest is still taken for
a click target, and one that gains its first click listener is not."""
MAX_ASKS = 1500
"""Nodes asked about per walk; the rest are read without their listeners."""


def ask_mode(handles: Handles) -> bool:
    """Whether the coming walk asks about the elements it meets (:func:`answer_asks`) rather
    than have every listener of the document listed first (:func:`discover`).

    Listing costs in proportion to the document's listeners, wherever they are (Jupyter
    Notebook 7: 7,900, 130 on each React root, most of them hidden: 60-70 ms a digest);
    asking costs in proportion to the elements the walk would list for a handler and the
    places a handler of theirs could sit (Jupyter: 124 nodes in 36 calls, 10-15 ms); listing also reads the
    jQuery handlers of every element with one (:data:`JQUERY_COST`), asking of those asked
    about. The first digest of a document lists; afterwards the cheaper of the two by the
    latest figures, and listing again when asking is no longer the cheaper (which also renews
    the listener count)."""
    if handles.listeners is None:
        return False
    listing = handles.listeners + JQUERY_COST * handles.jquery_read
    return listing > ASK_ABOVE and handles.asks * ASK_COST < listing


async def discover(
    session: CDPSession, handles: Handles, *, timeout: float = 10.0, reused: bool = False
) -> HandlerScan:
    """Find the elements of the session's top document (same-origin frames and shadow roots
    included) that hold click-like listeners, and hand them to our world in
    ``handles.context``, where the next walk uses them. Pass the same ``handles`` for every
    digest of a document. ``reused``: a walk is already under way with the listing handed
    last time (``handles.handed``); the new listing is handed over only when it differs, and
    then the scan says ``retake``. Raises ``core.cdp`` errors when the tab does not answer."""
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
    kept = _reread_kept(session, handles, timeout)
    try:
        got = await session.send(
            "DOMDebugger.getEventListeners",
            {"objectId": handles.document, "depth": -1, "pierce": True},
            timeout=timeout,
        )
        listed = got.get("listeners", [])
        handles.listeners = len(listed)
        handles.answered = None  # our world's verdicts are this listing's from now on
        if len(listed) > ASK_ABOVE:
            await _note_heavy(session, handles, listed, timeout)
        nodes, sites = _click_nodes(listed)
        chosen = list(nodes.values())[:MAX_NODES]
        probed = await _read_jquery(session, handles, chosen, sites, kept, timeout)
        handles.jquery = handles.jquery or probed > 0
        handles.jquery_read = probed
        handed = tuple((n.backend, n.direct, tuple(n.selectors)) for n in chosen)
        same = handed == handles.handed
        if not same:
            await _hand_over(session, handles, chosen, timeout)
            handles.handed = handed
        delegated = sum(len(n.selectors) for n in chosen)
        return HandlerScan(len(nodes), probed, delegated, _ms(started), retake=reused and not same)
    finally:
        await asyncio.gather(*kept.values(), return_exceptions=True)
        await _release_spent(session, handles)


async def _note_heavy(
    session: CDPSession, handles: Handles, listed: list[JSON], timeout: float
) -> None:
    """The framework roots of a listing (:data:`FRAMEWORK_ROOT`), their click listeners kept
    and the nodes handed to our world (``noteHeavy``): asking then answers them from this
    listing and never calls through them (Jupyter: 55 roots, 7,200 of its 7,900 listeners)."""
    per_node: dict[int, list[JSON]] = {}
    for listener in listed:
        if backend := listener.get("backendNodeId"):
            per_node.setdefault(int(backend), []).append(listener)
    handles.heavy = {
        backend: [x for x in got if x.get("type") in CLICK_TYPES]
        for backend, got in per_node.items()
        if len(got) >= FRAMEWORK_ROOT
    }
    resolved = await asyncio.gather(
        *(_resolve(session, b, handles.context, handles.ours, timeout) for b in handles.heavy)
    )
    await session.send(
        "Runtime.callFunctionOn",
        {
            "functionDeclaration": (
                "function (...els) { return globalThis.__handrail.noteHeavy(els); }"
            ),
            "executionContextId": handles.context,
            "arguments": [{"objectId": object_id} for object_id in resolved if object_id],
            "returnByValue": True,
        },
        timeout=timeout,
    )


def _click_nodes(
    listeners: list[JSON],
) -> tuple[dict[int, _Node], dict[int, set[tuple[str, int, int]]]]:
    """The nodes holding a click-like listener, and each one's listener sites."""
    nodes: dict[int, _Node] = {}
    sites: dict[int, set[tuple[str, int, int]]] = {}
    for listener in listeners:
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
    return nodes, sites


async def answer_asks(
    session: CDPSession, handles: Handles, asks: JSON, *, timeout: float = 10.0
) -> HandlerScan:
    """After a walk in ask mode: ask CDP for the listeners of the nodes that walk asked about
    (``asks``, listeners.js ``asked()`` in the walk's answer: the elements it would list for a
    handler, and the places a handler of theirs could sit), read jQuery's delegated selectors
    as :func:`discover` does, and hand the answers to our world (``noteAsked``; not when they
    are last digest's, for the elements it asked about then, and the DOM has not changed). ``retake`` in the result: an answer
    changes what the walk read, so the caller takes the walk again (with these answers).
    Raises ``core.cdp`` errors when the tab does not answer.

    Each question is ``DOMDebugger.getEventListeners`` on the node's handle in the page's
    world (a handle from our world hides the page's listeners), in no object group (with
    one, every listener's function is wrapped in it: three times as slow). A CDP round trip
    costs as much as a dozen listeners listed, so nodes that share an ancestor a few levels
    up are asked about in one call on it (:func:`_plan`), and a framework root's answer is
    kept (:data:`FRAMEWORK_ROOT`)."""
    started = time.perf_counter()
    kept = _reread_kept(session, handles, timeout)
    try:
        serials = [int(x) for x in asks.get("serials", [])][:MAX_ASKS]
        chains = [[int(a) for a in c] for c in asks.get("chains", [])][: len(serials)]
        consulted = frozenset(serials[: int(asks.get("consulted") or 0)])
        handles.asks = len(serials)
        missing = [sv for sv in serials if sv not in handles.backends]
        if missing:
            await _describe(session, handles, missing, timeout)
        for serial in asks.get("heavy", []):
            backend = handles.backends.get(int(serial))
            if backend in handles.heavy and int(serial) not in handles.settled:
                handles.settled[int(serial)] = handles.heavy[backend]
        reach = {int(a): int(depth) for a, depth in asks.get("reach", [])}
        plan = _plan(handles, serials, chains, reach)
        roots = [sv for sv in plan.groups if sv not in handles.backends]
        if roots:
            await _describe(session, handles, roots, timeout)
        listed = await _ask(session, handles, set(serials), plan, timeout)
        nodes, sites = _click_nodes(listed)
        chosen = list(nodes.values())[:MAX_NODES]
        probed = await _read_jquery(session, handles, chosen, sites, kept, timeout)
        handles.jquery = handles.jquery or probed > 0
        serial_of = {b: sv for sv in serials if (b := handles.backends.get(sv))}
        specs = [
            {"serial": serial_of[n.backend], "direct": n.direct, "selectors": list(n.selectors)}
            for n in chosen
            if n.backend in serial_of
        ]
        answered = (json.dumps(specs, sort_keys=True), asks.get("mutations"))
        if answered == handles.answered and consulted <= handles.consulted:
            changed = False  # the verdicts our world holds are these answers' already
        else:
            noted = await _call_ours(session, handles, "noteAsked(specs)", (specs,), timeout)
            changed = bool(noted.get("changed"))
            handles.answered, handles.consulted = answered, consulted
            handles.handed = None  # our world's verdicts are these answers, not a listing's
        delegated = sum(len(n.selectors) for n in chosen)
        return HandlerScan(len(nodes), probed, delegated, _ms(started), len(serials), changed)
    finally:
        await asyncio.gather(*kept.values(), return_exceptions=True)
        await _release_spent(session, handles)


async def _release_spent(session: CDPSession, handles: Handles) -> None:
    """Let go of the plain objects this digest read from jQuery's data (never a node, nor a
    kept ``events`` object). A property read answers in the group of the object read, the
    element handle's, kept for the document's life (module notes): without this each digest
    of a jQuery page left a few behind until the document went."""
    spent, handles.spent = handles.spent, []
    for object_id in dict.fromkeys(spent):
        if object_id in handles.events.values():
            continue
        with contextlib.suppress(CDPError):
            await session.post("Runtime.releaseObject", {"objectId": object_id})


@dataclass(frozen=True)
class _Plan:
    """Which call answers for which asked node."""

    singles: list[int]
    """Serials asked about on their own (``depth: 0``)."""
    groups: dict[int, int]
    """Serial of a shared ancestor -> the ``depth`` of its call (1: the node alone, 2: and
    its children...), deep enough for every asked node under it that chose it."""
    kept: list[int]
    """Serials of framework roots whose kept answer stands."""
    members: dict[int, list[int]] = field(default_factory=dict)
    """Serial of a shared ancestor -> the asked nodes its call answers for."""


def _plan(
    handles: Handles, serials: list[int], chains: list[list[int]], reach_of: dict[int, int]
) -> _Plan:
    """Each asked node is answered by its kept answer, or by a call on the highest of its
    ancestors (up to listeners.js ``ASK_CHAIN`` levels) that another asked node shares (or
    that is asked about itself), or on its own. A call never reaches as deep as a framework
    root known to lie under its node (it would list the root's listeners again)."""
    kept = [sv for sv in serials if sv in handles.settled]
    # Ancestor -> the deepest call it may take (a call of depth d lists d - 1 levels down):
    # what our world knows of the listing's framework roots, and what calls found.
    reach: dict[int, int] = dict(reach_of)
    for ancestor, depth in handles.crowded.items():
        reach[ancestor] = min(reach.get(ancestor, depth), depth)
    for serial, chain in zip(serials, chains, strict=False):
        if serial in handles.settled:
            for level, ancestor in enumerate(chain, start=1):
                if ancestor:
                    reach[ancestor] = min(reach.get(ancestor, level), level)
    options: dict[int, list[tuple[int, int]]] = {}
    cover: dict[int, int] = {}
    for serial, chain in zip(serials, chains, strict=False):
        if serial in handles.settled:
            continue
        mine: list[tuple[int, int]] = []
        for level, ancestor in enumerate(chain, start=1):
            if not ancestor:
                break
            if reach.get(ancestor, level + 1) > level:
                mine.append((level, ancestor))
                cover[ancestor] = cover.get(ancestor, 0) + 1
        options[serial] = mine
    for serial in options:
        if serial in cover:
            cover[serial] += 1  # an asked node is answered by a call on itself too
    groups: dict[int, int] = {}
    members: dict[int, list[int]] = {}
    for serial, mine in options.items():
        for level, ancestor in reversed(mine):
            if cover[ancestor] >= 2:
                groups[ancestor] = max(groups.get(ancestor, 1), level + 1)
                members.setdefault(ancestor, []).append(serial)
                break
    grouped = {sv for group in members.values() for sv in group}
    singles = [sv for sv in options if sv not in grouped and sv not in groups]
    return _Plan(singles, groups, kept, members)


async def _ask(
    session: CDPSession, handles: Handles, asked: set[int], plan: _Plan, timeout: float
) -> list[JSON]:
    """The listeners of the asked nodes (serials), by ``plan``; a group's call that lists a
    framework root marks its ancestor crowded (not chosen again), and an asked root's answer
    is kept."""
    listed: list[JSON] = [x for sv in plan.kept for x in handles.settled[sv]]
    groups = {root: depth for root, depth in plan.groups.items() if handles.backends.get(root)}
    # (An ancestor that could not be described: its nodes are asked about one by one.)
    lost = [sv for root in plan.groups if root not in groups for sv in plan.members.get(root, ())]
    calls = [(sv, 0) for sv in (*plan.singles, *lost)] + list(groups.items())
    backends = [handles.backends.get(sv) for sv, _ in calls]
    page_ids = await asyncio.gather(
        *(_resolve(session, b, None, handles.asking, timeout, group=None) for b in backends if b)
    )
    made = [(call, b) for call, b in zip(calls, backends, strict=True) if b]
    answers = await asyncio.gather(
        *(
            session.send(
                "DOMDebugger.getEventListeners",
                {"objectId": object_id, "depth": depth},
                timeout=timeout,
            )
            for ((_, depth), _), object_id in zip(made, page_ids, strict=True)
            if object_id
        ),
        return_exceptions=True,
    )
    made = [m for m, object_id in zip(made, page_ids, strict=True) if object_id]
    serial_of = {b: sv for sv, b in handles.backends.items() if b}
    for ((at, depth), at_backend), answer in zip(made, answers, strict=True):
        if not isinstance(answer, dict):
            if isinstance(answer, CDPError):
                continue  # gone since the walk
            raise answer
        per_node: dict[int, list[JSON]] = {}
        for listener in answer.get("listeners", []):
            backend = int(listener.get("backendNodeId") or at_backend)
            per_node.setdefault(backend if depth else at_backend, []).append(listener)
        for backend, got in per_node.items():
            serial = serial_of.get(backend)
            if len(got) >= FRAMEWORK_ROOT:
                if depth and backend != at_backend:
                    handles.crowded[at] = min(handles.crowded.get(at, depth - 1), depth - 1)
                if serial in asked:
                    handles.settled[serial] = [x for x in got if x.get("type") in CLICK_TYPES]
            if serial in asked:
                listed += got
    return listed


async def _describe(
    session: CDPSession, handles: Handles, serials: list[int], timeout: float
) -> None:
    """The backendNodeIds of these nodes of the latest ``asked()`` (``handOver`` hands them
    over keyed by serial; each is described once in the document's life)."""
    got = await session.send(
        "Runtime.callFunctionOn",
        {
            "functionDeclaration": "function (s) { return globalThis.__handrail.handOver(s); }",
            "executionContextId": handles.context,
            "arguments": [{"value": serials}],
            "objectGroup": _KEEP,
        },
        timeout=timeout,
    )
    for serial in serials:
        handles.backends[serial] = None  # unless described below
    holder = got.get("result", {}).get("objectId")
    if not holder:
        return
    own = await _props(session, str(holder), timeout)
    nodes = {int(k): oid for k, p in own.items() if k.isdigit() and (oid := _object(p))}
    described = await asyncio.gather(
        *(
            session.send("DOM.describeNode", {"objectId": oid}, timeout=timeout)
            for oid in nodes.values()
        ),
        return_exceptions=True,
    )
    for serial, answer in zip(nodes, described, strict=True):
        backend = answer.get("node", {}).get("backendNodeId") if isinstance(answer, dict) else None
        handles.backends[serial] = int(backend) if backend else None


async def _call_ours(
    session: CDPSession, handles: Handles, call: str, args: tuple[Any, ...], timeout: float
) -> JSON:
    """``globalThis.__handrail.<call>`` in our world, its answer by value."""
    params = ", ".join(("specs",)[: len(args)])
    got = await session.send(
        "Runtime.callFunctionOn",
        {
            "functionDeclaration": f"function ({params}) {{ return globalThis.__handrail.{call}; }}",
            "executionContextId": handles.context,
            "arguments": [{"value": a} for a in args],
            "returnByValue": True,
        },
        timeout=timeout,
    )
    value = got.get("result", {}).get("value")
    return value if isinstance(value, dict) else {}


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)


async def _resolve(
    session: CDPSession,
    backend: int,
    context: int | None,
    cache: dict[int, str],
    timeout: float,
    *,
    group: str | None = _KEEP,
) -> str | None:
    """The node's handle in ``context`` (None: the page's world), made once per document."""
    if backend in cache:
        return cache[backend]
    params: JSON = {"backendNodeId": backend}
    if group is not None:
        params["objectGroup"] = group
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
    kept: dict[int, asyncio.Task[_Split | None]],
    timeout: float,
) -> int:
    """Read the jQuery handlers of the nodes whose listener is jQuery's: one node per listener
    site is tried first (jQuery binds the same dispatcher everywhere), then every node that
    shares a site found to be jQuery's. Returns how many nodes were read. ``kept``: the
    handler lists of the latest digest's jQuery elements, being read again
    (:func:`_reread_kept`)."""
    first: dict[tuple[str, int, int], _Node] = {}
    for node in nodes:
        for site in sites[node.backend] - handles.plain:
            first.setdefault(site, node)
    tried = await asyncio.gather(
        *(_jquery_handlers(session, handles, n, kept, timeout) for n in first.values()),
        return_exceptions=True,
    )
    handles.plain.update(site for site, ok in zip(first, tried, strict=True) if ok is False)
    jquery_sites = {site for site, ok in zip(first, tried, strict=True) if ok is True}
    read = {n.backend for n, ok in zip(first.values(), tried, strict=True) if ok is True}
    done = len(read)
    rest = [n for n in nodes if n.backend not in read and sites[n.backend] & jquery_sites][
        : max(0, MAX_JQUERY - done)
    ]
    again = await asyncio.gather(
        *(_jquery_handlers(session, handles, n, kept, timeout) for n in rest),
        return_exceptions=True,
    )
    read |= {n.backend for n, ok in zip(rest, again, strict=True) if ok is True}
    handles.spent += [k for b, k in handles.events.items() if b not in read]
    handles.events = {b: k for b, k in handles.events.items() if b in read}
    return done + len(rest)


def _reread_kept(
    session: CDPSession, handles: Handles, timeout: float
) -> dict[int, asyncio.Task[_Split | None]]:
    """Start reading again the handler lists of the latest digest's jQuery elements, beside
    the listener calls of this one (which decide whether they are still wanted)."""
    return {
        backend: asyncio.ensure_future(_kept_handlers(session, k, timeout, handles.spent))
        for backend, k in handles.events.items()
    }


async def _kept_handlers(
    session: CDPSession, events: str, timeout: float, spent: list[str]
) -> _Split | None:
    """The click handlers in an element's kept ``events`` object (:func:`_handlers_in`), or
    None when it is no longer the element's. jQuery keeps one such object per element, adds
    to it and removes from it, and lets it go only once it is empty (every type's list
    deleted), binding a new one for the next handler: so a kept object that still holds
    click handlers is the element's."""
    try:
        read = await _props(session, events, timeout, True, spent)
        return await _handlers_in(session, read, timeout, spent)
    except CDPError:
        return None  # a handle the page's world let go of


async def _handlers_in(
    session: CDPSession, events: dict[str, JSON], timeout: float, spent: list[str]
) -> _Split | None:
    """The click handlers of jQuery's ``events`` object (read with previews), split as its
    dispatch splits them (:func:`_split`); None when it holds none. A list whose preview
    shows it whole (an array of handlers and its ``delegateCount``) and counts no delegated
    handler needs no more reading: it holds the element's own handlers. Any other list (with
    delegated handlers, or that its preview does not show whole: an accessor, a proxy, a
    stuffed list) is read as before."""
    lists = _click_lists(events)
    direct = False
    unread: list[str] = []
    for kind, list_id in lists.items():
        counted = _previewed(events[kind])
        if counted is None or counted[1] > 0:
            unread.append(list_id)
        elif counted[0] > 0:
            direct = True
    items = list(await asyncio.gather(*(_props(session, i, timeout, spent=spent) for i in unread)))
    got = _split(items)
    if got is None:
        return _Split([], True) if direct else None
    return _Split(got.delegated, got.direct or direct)


def _previewed(prop: JSON) -> tuple[int, int] | None:
    """A jQuery handler list's entries and ``delegateCount``, from its preview when the
    preview shows the whole array (no overflow, a number for the count); else None."""
    value = prop.get("value")
    preview = value.get("preview") if isinstance(value, dict) else None
    if not isinstance(preview, dict) or preview.get("subtype") != "array":
        return None
    if preview.get("overflow") is not False:
        return None
    shown = [p for p in preview.get("properties") or [] if isinstance(p, dict)]
    count = [p.get("value") for p in shown if p.get("name") == "delegateCount"]
    if len(count) != 1 or not str(count[0]).isdigit():
        return None
    entries = sum(1 for p in shown if str(p.get("name")).isdigit() and p.get("type") == "object")
    return entries, int(str(count[0]))


async def _props(
    session: CDPSession,
    object_id: str,
    timeout: float,
    preview: bool = False,
    spent: list[str] | None = None,
) -> dict[str, JSON]:
    """An object's own properties (``preview``: each object value with V8's preview of it,
    made without running page code); the handles of the plain objects among them go into
    ``spent``, to be released after the digest (:func:`_release_spent`)."""
    got = await session.send(
        "Runtime.getProperties",
        {"objectId": object_id, "ownProperties": True, "generatePreview": preview},
        timeout=timeout,
    )
    if spent is not None:
        spent += [
            str(remote["objectId"])
            for key in ("result", "internalProperties", "privateProperties")
            for prop in got.get(key) or []
            for remote in (prop.get("value"), prop.get("get"), prop.get("set"))
            if isinstance(remote, dict)
            and remote.get("objectId")
            and remote.get("subtype") != "node"
        ]
    return {str(p.get("name")): p for p in got.get("result", [])}


def _object(prop: JSON | None) -> str | None:
    """The objectId of a data property holding an object (never an accessor's)."""
    if prop is None or "value" not in prop:
        return None
    value = prop["value"]
    return (
        str(value["objectId"]) if value.get("type") == "object" and value.get("objectId") else None
    )


def _click_lists(events: dict[str, JSON]) -> dict[str, str]:
    """Click-like type -> its handler list, in jQuery's ``events`` object of an element."""
    return {kind: i for kind in CLICK_TYPES if (i := _object(events.get(kind))) is not None}


def _entries(items: dict[str, JSON]) -> list[str]:
    """The objects an array holds, by the properties an array's entries have (0, 1...)."""
    return [i for k, p in items.items() if k.isdigit() and (i := _object(p))]


@dataclass(frozen=True)
class _Split:
    """An element's jQuery click handlers, as jQuery's dispatch tells them apart."""

    delegated: list[str]
    """Handler objects to read for their selector."""
    direct: bool
    """A handler of the element's own is among them."""


def _split(lists: list[dict[str, JSON]]) -> _Split | None:
    """jQuery's handler lists of an element (one per click-like type), split as its dispatch
    splits them: it keeps delegated handlers first in a list and counts them
    (``delegateCount``), and takes every handler after them for the element's own, whatever
    it holds. So only those counted are read for a selector: none at all for an element with
    handlers of its own alone (most widgets'). A list whose count is not a number (an older
    jQuery, or a page's accessor) is read whole, each handler without a selector counting as
    the element's own. None when the lists hold no handler."""
    delegated: list[str] = []
    direct = False
    for items in lists:
        entries = _entries(items)
        prop = items.get("delegateCount") or {}
        value = prop.get("value") if "value" in prop else None
        count = value.get("value") if isinstance(value, dict) else None
        if isinstance(count, int | float) and not isinstance(count, bool):
            counted = max(0, min(int(count), len(entries)))
            delegated += entries[:counted]
            direct = direct or counted < len(entries)
        else:
            delegated += entries
    if not delegated and not direct:
        return None
    return _Split(delegated, direct)


async def _jquery_handlers(
    session: CDPSession,
    handles: Handles,
    node: _Node,
    kept: dict[int, asyncio.Task[_Split | None]],
    timeout: float,
) -> bool | None:
    """Fill ``node`` from jQuery's data on it (main world, read without running page code).
    True when the element carries jQuery click handlers, False when it carries none, None
    when it could not be read (gone).

    The chain is element -> its data (under jQuery's expando) -> ``events`` -> a list per
    event type -> each delegated handler, a round trip each. An element read last digest
    starts from its kept ``events`` object (:func:`_kept_handlers`, already under way), and
    from the element again when that is no longer its."""
    again = kept.get(node.backend)
    split = await again if again is not None else None
    if split is not None:
        await _fill(session, node, split, timeout, handles.spent)
        return True
    if (gone := handles.events.pop(node.backend, None)) is not None:
        handles.spent.append(gone)
    element_id = await _resolve(session, node.backend, None, handles.page, timeout)
    if not element_id:
        return None
    own = await _props(session, str(element_id), timeout, spent=handles.spent)
    for name, prop in own.items():
        data_id = _object(prop) if _EXPANDO.match(name) else None
        if data_id is None:
            continue
        data = await _props(session, data_id, timeout, spent=handles.spent)
        events_id = _object(data.get("events"))
        if events_id is None:
            continue
        read = await _props(session, events_id, timeout, True, handles.spent)
        split = await _handlers_in(session, read, timeout, handles.spent)
        if split is None:
            continue
        handles.events[node.backend] = events_id
        await _fill(session, node, split, timeout, handles.spent)
        return True
    return False


async def _fill(
    session: CDPSession, node: _Node, split: _Split, timeout: float, spent: list[str]
) -> None:
    """``node``'s direct flag and delegated selectors, from jQuery's handler objects (the
    first :data:`MAX_HANDLERS` of those :func:`_split` leaves to read; none, no round trip)."""
    objs = await asyncio.gather(
        *(_props(session, h, timeout, spent=spent) for h in split.delegated[:MAX_HANDLERS])
    )
    selectors: list[str] = []
    direct = split.direct
    for handle in objs:
        value = handle.get("selector", {}).get("value", {})
        selector = value.get("value") if value.get("type") == "string" else None
        if selector:
            selectors.append(str(selector)[:200])
        else:
            direct = True
    node.direct = direct
    node.selectors = tuple(dict.fromkeys(selectors))


# -- for the eyes (core/eyes/snapshot.py) ------------------------------------------------

_HANDLES_KEY = "eyes.listener_handles"


async def tab_handles(tab: Tab, timeout: float, out: list[Any]) -> Handles | None:
    """The listener handles of the tab's current document (new ones for a new document), or
    None, and why, into ``out``, when the tab's world cannot be found."""
    try:
        context = await main_context(tab, timeout=timeout)
    except (CDPError, WorldError) as exc:
        out.append(f"failed: {first_line(exc)}")
        return None
    handles = tab.state.get(_HANDLES_KEY)
    if not isinstance(handles, Handles) or handles.context != context:
        handles = tab.state[_HANDLES_KEY] = Handles(context)
    return handles


async def list_every_listener(
    tab: Tab, handles: Handles, timeout: float, out: list[Any], *, reused: bool = False
) -> None:
    """Listener discovery for the coming walk (:func:`discover`); its figures, or why it
    failed, into ``out``. Never raises for its own sake: the walk then relies on its
    heuristics alone, and the stats say so."""
    try:
        out.append(asdict(await discover(tab.session, handles, timeout=timeout, reused=reused)))
    except CDPError as exc:
        out.append(f"failed: {first_line(exc)}")


async def answer_walk(
    tab: Tab, handles: Handles, asks: JSON, timeout: float, out: list[Any]
) -> bool:
    """The listeners of what the walk just asked about (ask mode); whether to take it again.
    Never raises for its own sake, as :func:`list_every_listener`."""
    try:
        scan = await answer_asks(tab.session, handles, asks, timeout=timeout)
    except CDPError as exc:
        out.append(f"failed: {first_line(exc)}")
        return False
    out.append(asdict(scan))
    return scan.retake
