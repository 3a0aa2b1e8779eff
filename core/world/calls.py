"""Calls into our world: evaluate an expression or call a function there and get its JSON
value back, and reach the element behind a digest index, in the main world or (through a
:class:`~core.world.contexts.FrameRoute`) in a cross-origin frame's.

API (used by the hands in core/hands/ and by core/eyes/snapshot.py)::

    await world_eval(tab, "document.title")                    # -> JSON value
    await world_call(tab, "function (i, t) { ... }", 12, "x")  # -> JSON value
    await element_object_id(tab, 12)                           # -> CDP objectId of element [12]
    route = frame_route(tab, 31)           # element [31] lives in a cross-origin frame: how
    await route_call(route, 31, fn, ...)   # to call into our world there (see FrameRoute)

Inside each world, ``globalThis.__handrail`` is the registry the page script installed
(core/world/contexts.py): ``__handrail.element(12)`` returns the element the digest showed
as ``[12]`` or throws; a call that uses it raises :class:`~core.world.errors.StaleElement` or
:class:`~core.world.errors.UnknownIndex` in Python, with a message written for the model.
``__handrail.probe()`` is the cheap before/after reading the hands use (see
:func:`core.eyes.snapshot.probe`). A main world lost under a call (a new document) is made
again once; a frame's world is never remade under an old route.
"""

from __future__ import annotations

import json
from typing import Any

from core.browser.browser import Tab
from core.cdp import JSON, CDPError, CDPSession, SessionClosed
from core.world.contexts import (
    LOST_CONTEXT,
    FrameRoute,
    FrameWorld,
    forget_main_context,
    frame_context,
    frame_route,
    is_lost_context,
    main_context,
)
from core.world.errors import StaleElement, UnknownIndex, WorldError, raise_for


def _value(result: JSON) -> Any:
    if "exceptionDetails" in result:
        raise_for(result)
    remote = result.get("result", {})
    if remote.get("type") == "undefined":
        return None
    return remote.get("value")


def _arguments(args: tuple[Any, ...]) -> list[JSON]:
    # Through JSON and back: what cannot cross to the page fails here, in Python.
    return [{"value": json.loads(json.dumps(a))} for a in args]


async def _run(tab: Tab, method: str, params: JSON, timeout: float) -> JSON:
    """Send ``method`` with our context id, recreating the world once if it was lost."""
    for attempt in (0, 1):
        context_id = await main_context(tab, timeout=timeout)
        key = "contextId" if method == "Runtime.evaluate" else "executionContextId"
        try:
            return await tab.send(method, {**params, key: context_id}, timeout=timeout)
        except CDPError as exc:
            if attempt == 0 and is_lost_context(exc):
                forget_main_context(tab, context_id)
                continue
            raise
    raise AssertionError("unreachable")


async def world_eval(
    tab: Tab, expression: str, *, await_promise: bool = False, timeout: float = 10.0
) -> Any:
    """Evaluate ``expression`` in our isolated world and return its JSON value.

    Raises :class:`StaleElement` / :class:`UnknownIndex` when the expression used
    ``__handrail.element(i)`` on a bad index, :class:`WorldError` (first line of the page
    exception) for any other exception, and ``core.cdp`` errors (``CDPTimeout`` after
    ``timeout`` seconds, ``SessionClosed``...) when the tab does not answer.
    """
    params: JSON = {
        "expression": expression,
        "returnByValue": True,
        "awaitPromise": await_promise,
        "userGesture": False,
    }
    return _value(await _run(tab, "Runtime.evaluate", params, timeout))


async def world_call(
    tab: Tab,
    function_declaration: str,
    *args: Any,
    timeout: float = 10.0,
    await_promise: bool = False,
) -> Any:
    """Call ``function_declaration`` (e.g. ``"function (i) { ... }"``) in our world with
    JSON-serialisable ``args``; returns its JSON value. Errors as :func:`world_eval`."""
    params: JSON = {
        "functionDeclaration": function_declaration,
        "arguments": _arguments(args),
        "returnByValue": True,
        "awaitPromise": await_promise,
    }
    return _value(await _run(tab, "Runtime.callFunctionOn", params, timeout))


async def frame_eval(
    frame: FrameWorld,
    expression: str,
    *,
    timeout: float = 10.0,
    by_value: bool = True,
    retry: bool = True,
) -> Any:
    """:func:`world_eval` in a frame's world; with ``retry``, recreates the world once when
    the frame's document changed under it (its indexes then start again, under a new
    ``frame.key``); without, the CDP error is raised (see :func:`is_lost_context`).
    ``by_value=False`` returns the CDP remote object instead of its value."""
    for attempt in (0, 1) if retry else (1,):
        context_id = await frame_context(frame, timeout=timeout)
        try:
            result = await frame.session.send(
                "Runtime.evaluate",
                {"expression": expression, "contextId": context_id, "returnByValue": by_value},
                timeout=timeout,
            )
        except CDPError as exc:
            if attempt == 0 and is_lost_context(exc):
                if frame.context_id == context_id:
                    frame.context_id = None
                continue
            raise
        if not by_value:
            if "exceptionDetails" in result:
                raise_for(result)
            return result.get("result", {})
        return _value(result)
    raise AssertionError("unreachable")


async def route_call(
    route: FrameRoute,
    index: int,
    function_declaration: str,
    *args: Any,
    timeout: float = 10.0,
    await_promise: bool = False,
) -> Any:
    """:func:`world_call` in the world of ``route``'s frame (``index`` is the tab's index of
    the element, for errors). Never recreates the frame's world: when the frame's document
    changed, its old indexes name nothing, so this raises :class:`StaleElement`."""
    world = route.world
    if world.context_id is None or world.key != route.key:
        raise StaleElement(index)
    params: JSON = {
        "functionDeclaration": function_declaration,
        "arguments": _arguments(args),
        "returnByValue": True,
        "awaitPromise": await_promise,
        "executionContextId": world.context_id,
    }
    try:
        result = await world.session.send("Runtime.callFunctionOn", params, timeout=timeout)
    except SessionClosed as exc:
        # The frame's target is gone: the frame was removed, replaced or navigated away.
        raise StaleElement(index) from exc
    except CDPError as exc:
        if any(s in str(exc) for s in (*LOST_CONTEXT, "Session with given id not found")):
            world.context_id = None
            raise StaleElement(index) from exc
        raise
    try:
        return _value(result)
    except (StaleElement, UnknownIndex) as exc:
        raise StaleElement(index) from exc


async def element_object_id(tab: Tab, index: int, *, timeout: float = 10.0) -> str:
    """The CDP remote object id (in our world) of the element with digest index ``index``.

    Usable with DOM.* commands (``DOM.setFileInputFiles``, ``DOM.describeNode``...) and
    ``Runtime.callFunctionOn``. Raises :class:`StaleElement` / :class:`UnknownIndex`.
    """
    params: JSON = {
        "expression": f"globalThis.__handrail.element({int(index)})",
        "returnByValue": False,
        "objectGroup": "handrail",
    }
    result = await _run(tab, "Runtime.evaluate", params, timeout)
    if "exceptionDetails" in result:
        raise_for(result)
    object_id = result.get("result", {}).get("objectId")
    if not isinstance(object_id, str):
        raise WorldError(f"element [{index}] has no remote object")
    return object_id


async def element_handle(tab: Tab, index: int, *, timeout: float = 10.0) -> tuple[CDPSession, str]:
    """The session and remote object id of element ``index`` wherever it lives: the tab's
    session and our main world, or a cross-origin frame's session and our world there (for
    DOM.* commands, which must go to the session that owns the node). Raises as
    :func:`element_object_id`."""
    route = frame_route(tab, index)
    if route is None:
        return tab.session, await element_object_id(tab, index, timeout=timeout)
    world = route.world
    if world.context_id is None or world.key != route.key:
        raise StaleElement(index)
    params: JSON = {
        "expression": f"globalThis.__handrail.element({int(route.local)})",
        "returnByValue": False,
        "objectGroup": "handrail",
        "contextId": world.context_id,
    }
    try:
        result = await world.session.send("Runtime.evaluate", params, timeout=timeout)
    except CDPError as exc:
        if isinstance(exc, SessionClosed) or is_lost_context(exc):
            raise StaleElement(index) from exc
        raise
    if "exceptionDetails" in result:
        raise StaleElement(index)
    object_id = result.get("result", {}).get("objectId")
    if not isinstance(object_id, str):
        raise WorldError(f"element [{index}] has no remote object")
    return world.session, object_id
