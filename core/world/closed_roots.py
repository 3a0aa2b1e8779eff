"""The closed-root audit: every closed shadow root of a tab's documents handed to our world
of the frame that holds it, so the digest, the detectors, the hands (and anyone masking
text) read it like an open root (``rootOf(el)`` / ``el.shadowRoot`` in our worlds).

:func:`find_closed_roots` counts through CDP what our worlds should reach, compares it with
what they do (``reach()`` in core/eyes/registry.js), and only on a difference reads the
whole DOM tree to adopt what was hidden (``adoptRoots()`` there). It is run by the eyes
once per renderer session and digest, and by the screenshot mask before it reads the page.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from dataclasses import asdict, dataclass
from typing import Any

from core.browser.browser import Tab
from core.cdp import JSON, CDPError, CDPSession
from core.result import first_line
from core.world.contexts import frame_context, frame_world, is_lost_context, main_context, tab_world
from core.world.errors import WorldError

SHADOW_TOP_QUERY = ":host > *"
"""The CSS selector ``DOM.performSearch`` counts the top-level elements of every shadow root
with (open, closed and our marks' root; not user-agent ones). It matches nothing in a
document's own tree, so a page without shadow roots costs the search alone, and the search
collects a handful of answers instead of every element (15 ms against 25-38 ms for a
selector matching all 40,000 elements of the 5,000-row page). Any element in a root lies
under one of the root's top-level elements, so a closed root that holds anything shows.
The text is also searched for as plain text (a text node or attribute that contains it
is counted too, which can only make the count larger and so cost a deeper look, never
hide anything)."""


@dataclass(frozen=True)
class RootAudit:
    """What :func:`find_closed_roots` found in one renderer session's documents."""

    elements: int
    """Top-level elements of shadow roots (any mode) CDP counted in the session's documents."""
    reached: int
    """Those our worlds on that session reach (open and adopted roots, in readable frames)."""
    adopted: int
    """Closed roots newly handed to our worlds (0 when the counts agreed)."""
    pierced: bool
    """The counts differed, so the whole DOM tree was read to find what hid the rest."""
    ms: float


async def find_closed_roots(
    tab: Tab, session: CDPSession | None = None, *, timeout: float = 10.0
) -> RootAudit:
    """Make every closed shadow root in the documents of ``session`` (default: the tab's own;
    else a child session of an out-of-process frame) known to our world of the frame that
    holds it, so the digest, the detectors, the hands (and anyone masking text) read it like
    an open root (``rootOf(el)`` / ``el.shadowRoot`` in our worlds).

    Sound, not a guess: ``DOM.performSearch`` counts the top-level elements of every shadow
    root in the session's documents, closed roots included (:data:`SHADOW_TOP_QUERY`), and
    when there are any, our worlds count those they reach (``reach()`` in
    core/eyes/registry.js). Only when the two differ is the whole tree read
    (``DOM.getDocument`` with ``pierce``, slow on huge pages), every closed root resolved
    into the world of its frame (created for a cross-origin frame that has none yet) and
    adopted there. The page sees nothing: our worlds are isolated and the search is
    discarded. The DOM domain (enabled by ``DOM.getDocument``) stays on between audits with
    the document node alone known to us, so it pushes next to nothing (and the next audit
    is the search alone) in the tab's own session; after the whole tree was read, and in an
    out-of-process frame's session, it is disabled again, so it pushes no event for every
    change. Raises ``core.cdp`` errors when the tab does not answer."""
    started = asyncio.get_running_loop().time()
    session = session or tab.session
    pierced = False
    try:
        # The search goes out first: the renderer runs it while our worlds' contexts are
        # looked up (and, after a load, made), instead of after those round trips.
        counted, worlds = await asyncio.gather(
            _count_shadow_tops(session, timeout, keep=session is tab.session),
            _session_contexts(tab, session, timeout),
        )
        contexts = list(worlds.values())
        # No shadow root at all (the common page): nothing for our worlds to count.
        reached = await _reached(session, contexts, counted, timeout) if counted else 0
        pierced = counted != reached
        adopted = await _adopt_from_tree(tab, session, worlds, timeout) if pierced else 0
    finally:
        if pierced or session not in _DOM_ON:
            _DOM_ON.discard(session)
            with contextlib.suppress(CDPError):
                await session.post("DOM.disable")
    ms = (asyncio.get_running_loop().time() - started) * 1000
    return RootAudit(counted, reached, adopted, pierced, round(ms, 1))


async def _session_contexts(tab: Tab, session: CDPSession, timeout: float) -> dict[str, int]:
    """Frame id -> our world's context in that frame, for the worlds on ``session``."""
    out: dict[str, int] = {}
    if session is tab.session:
        ctx = await main_context(tab, timeout=timeout)
        frame_id = tab_world(tab).main_frame_id
        if frame_id:
            out[frame_id] = ctx
    for (session_id, frame_id), frame in list(tab_world(tab).frames.items()):
        if session_id == session.session_id and frame.context_id is not None:
            out[frame_id] = frame.context_id
    return out


_DOM_ON: weakref.WeakSet[CDPSession] = weakref.WeakSet()
"""Sessions whose DOM domain the latest audit left on (the document node alone known)."""


async def _count_shadow_tops(session: CDPSession, timeout: float, *, keep: bool) -> int:
    """The top-level elements of shadow roots CDP counts in the session's documents.
    ``keep``: leave the DOM domain on for the next audit (a tab's own session; a frame's
    session of its own turns it off again after each, as before)."""
    search: JSON = {"query": SHADOW_TOP_QUERY, "includeUserAgentShadowDOM": False}
    found: JSON | None = None
    if session in _DOM_ON:
        try:
            found = await session.send("DOM.performSearch", search, timeout=timeout)
        except CDPError:
            _DOM_ON.discard(session)  # the domain went off (the renderer was swapped)
    if found is None:
        # Back to back: the search needs the DOM domain that getDocument enables, and the
        # browser runs them in order; no round trip in between.
        _, found = await session.send_in_order(
            [("DOM.getDocument", {"depth": 0}), ("DOM.performSearch", search)],
            timeout=timeout,
        )
        if keep:
            _DOM_ON.add(session)
    with contextlib.suppress(CDPError):
        await session.post("DOM.discardSearchResults", {"searchId": found["searchId"]})
    return int(found["resultCount"])


async def _reached(session: CDPSession, contexts: list[int], counted: int, timeout: float) -> int:
    """What our worlds on ``session`` reach of what CDP ``counted``."""
    total = 0
    for ctx in contexts:
        try:
            result = await session.send(
                "Runtime.evaluate",
                {
                    "expression": f"globalThis.__handrail.reach({int(counted)})",
                    "contextId": ctx,
                    "returnByValue": True,
                },
                timeout=timeout,
            )
        except CDPError as exc:
            if is_lost_context(exc):
                continue  # that frame's document is gone: it counts for nothing
            raise
        if "exceptionDetails" not in result:
            total += int(result.get("result", {}).get("value") or 0)
    return total


async def _adopt_from_tree(
    tab: Tab, session: CDPSession, worlds: dict[str, int], timeout: float
) -> int:
    """Read the session's whole DOM tree and adopt each closed root into the world of the
    frame holding it; a frame our worlds cannot reach gets a world of its own (so its
    elements count from the next audit on). Returns how many roots were new."""
    tree = await session.send("DOM.getDocument", {"depth": -1, "pierce": True}, timeout=timeout)
    root = tree["root"]
    first = root.get("frameId") or next(iter(worlds), None)
    pairs: dict[int, list[tuple[int, int]]] = {}
    # (node, frame id, context of the world that reads this document)
    stack: list[tuple[JSON, str | None, int | None]] = [
        (root, first, worlds.get(first) if first else None)
    ]
    while stack:
        node, frame_id, ctx = stack.pop()
        for shadow in node.get("shadowRoots") or []:
            if shadow.get("shadowRootType") == "closed" and ctx is not None:
                pairs.setdefault(ctx, []).append(
                    (int(node["backendNodeId"]), int(shadow["backendNodeId"]))
                )
            stack.append((shadow, frame_id, ctx))
        for child in node.get("children") or []:
            stack.append((child, frame_id, ctx))
        inner = node.get("contentDocument")
        if inner is not None:
            inner_frame = str(node.get("frameId") or "")
            inner_ctx = worlds.get(inner_frame)
            if inner_ctx is None:
                inner_ctx = await _reader_of(tab, session, node, inner_frame, ctx, timeout)
            stack.append((inner, inner_frame, inner_ctx))
    fresh = 0
    for ctx, found in pairs.items():
        fresh += await _adopt(session, ctx, found, timeout)
    return fresh


async def _reader_of(
    tab: Tab, session: CDPSession, owner: JSON, frame_id: str, parent: int | None, timeout: float
) -> int | None:
    """The context of our world that can read the document of the frame ``owner`` (an iframe
    element) shows: the parent's world when the frame is same-origin with it (it can open
    ``contentDocument``), else a world of the frame's own (created here)."""
    if parent is not None:
        with contextlib.suppress(CDPError):
            element = await session.send(
                "DOM.resolveNode",
                {"backendNodeId": int(owner["backendNodeId"]), "executionContextId": parent},
                timeout=timeout,
            )
            object_id = element.get("object", {}).get("objectId")
            if object_id:
                opened = await session.send(
                    "Runtime.callFunctionOn",
                    {
                        "functionDeclaration": "function () { return !!this.contentDocument; }",
                        "objectId": object_id,
                        "returnByValue": True,
                    },
                    timeout=timeout,
                )
                await session.send("Runtime.releaseObject", {"objectId": object_id})
                if opened.get("result", {}).get("value") is True:
                    return parent
    if not frame_id:
        return None
    try:
        return await frame_context(frame_world(tab, session, frame_id), timeout=timeout)
    except (CDPError, WorldError):
        return None


async def _adopt(
    session: CDPSession, ctx: int, pairs: list[tuple[int, int]], timeout: float
) -> int:
    group = "handrail-roots"
    try:
        resolved = await asyncio.gather(
            *(
                session.send(
                    "DOM.resolveNode",
                    {"backendNodeId": b, "executionContextId": ctx, "objectGroup": group},
                    timeout=timeout,
                )
                for pair in pairs
                for b in pair
            ),
            return_exceptions=True,
        )
        args: list[JSON] = []
        for k in range(0, len(resolved), 2):
            host, shadow = resolved[k], resolved[k + 1]
            if isinstance(host, BaseException) or isinstance(shadow, BaseException):
                continue
            host_id, root_id = host["object"].get("objectId"), shadow["object"].get("objectId")
            if host_id and root_id:
                args += [{"objectId": host_id}, {"objectId": root_id}]
        if not args:
            return 0
        result = await session.send(
            "Runtime.callFunctionOn",
            {
                "functionDeclaration": (
                    "function (...p) { return globalThis.__handrail.adoptRoots(...p); }"
                ),
                "executionContextId": ctx,
                "arguments": args,
                "returnByValue": True,
            },
            timeout=timeout,
        )
        return int(result.get("result", {}).get("value") or 0)
    finally:
        with contextlib.suppress(CDPError):
            await session.send("Runtime.releaseObjectGroup", {"objectGroup": group}, timeout=5)


class Audits:
    """One closed-root audit (:func:`find_closed_roots`) per renderer session and digest (the
    eyes', core/eyes/snapshot.py), run before the first walk in that session's documents;
    frames that share a session share it."""

    def __init__(self, tab: Tab, timeout: float) -> None:
        self.tab = tab
        self.timeout = timeout
        self.done: dict[str, asyncio.Task[RootAudit | str]] = {}

    async def run(self, session: CDPSession) -> None:
        task = self.done.get(session.session_id)
        if task is None:
            task = self.done[session.session_id] = asyncio.ensure_future(self._audit(session))
        await task

    async def _audit(self, session: CDPSession) -> RootAudit | str:
        try:
            return await find_closed_roots(self.tab, session, timeout=self.timeout)
        except (CDPError, WorldError) as exc:
            # The walk that follows meets the same trouble and reports it; the digest must
            # not fail for the audit alone, and the stats say it did not run.
            return f"failed: {first_line(exc)}"

    def adopted(self, session: CDPSession) -> bool:
        """Whether the session's audit handed our world a closed root it did not reach."""
        task = self.done.get(session.session_id)
        if task is None or not task.done() or task.cancelled():
            return False
        got = task.result()
        return not isinstance(got, str) and got.adopted > 0

    def stats(self) -> list[Any]:
        out: list[Any] = []
        for task in self.done.values():
            if task.done() and not task.cancelled():
                got = task.result()
                out.append(got if isinstance(got, str) else asdict(got))
        return out
