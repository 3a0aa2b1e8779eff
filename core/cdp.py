"""The wire: JSON-RPC over one CDP websocket.

One :class:`CDPConnection` per browser websocket. Requests get increasing ids and are
matched to their responses; flattened sessions (``sessionId``) multiplex targets over the
same socket; events are delivered to subscribers by method and session. When the socket
dies, every waiting call fails at once with :class:`ConnectionClosed`: no caller hangs on a
dead connection. Cancelling a caller cancels its wait (the response, if it ever comes, is
dropped).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import structlog
import websockets
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed as WSConnectionClosed
from websockets.exceptions import InvalidStatus

log = structlog.get_logger("handrail.cdp")

JSON = dict[str, Any]
EventHandler = Callable[[JSON], None]

TRACE_ENV = "HANDRAIL_CDP_TRACE"
"""A file to append every command sent to (one JSON line: pid, method); tests use it to
check what a process never sends (``Target.activateTarget`` in a pooled run)."""

DEFAULT_TIMEOUT = 30.0
# Full-page screenshots of long pages are tens of megabytes of base64.
MAX_FRAME_BYTES = 512 * 1024 * 1024


def shown_endpoint(url: str) -> str:
    """A browser endpoint as it may be printed or logged: a query (a grid's ``?token=``)
    and user info are credentials, shown as ``…``."""
    base, mark, _query = url.partition("?")
    scheme, sep, rest = base.partition("://")
    if sep and "@" in rest.split("/", 1)[0]:
        base = f"{scheme}://…@{rest.split('@', 1)[1]}"
    return base + ("?…" if mark else "")


# A URL with a query, up to the end of its query (a ":" or "," ending a sentence is not in it).
_URL_WITH_QUERY = re.compile(
    r"\b((?:wss?|https?)://)(?:[^\s/@'\"]*@)?([^\s?'\"]*)\?[^\s'\"]*?(?=[:;,.)]?(?:\s|$|['\")]))"
)


def mask_endpoints(text: str) -> str:
    """``text`` (an error, a log line) with every URL's query and user info shown as ``…``:
    a browser service's token travels in its URLs, and errors quote them."""
    return _URL_WITH_QUERY.sub(lambda m: f"{m.group(1)}{m.group(2)}?…", text)


class CDPError(Exception):
    """A CDP call failed: the browser answered with an error, or the call could not complete."""

    def __init__(self, message: str, *, method: str | None = None, code: int | None = None):
        super().__init__(message)
        self.method = method
        self.code = code


class ConnectionClosed(CDPError):
    """The websocket to the browser is gone; nothing sent on it will be answered."""


class SessionClosed(CDPError):
    """The target (tab) this session was attached to was closed or crashed."""


class CDPTimeout(CDPError, TimeoutError):
    """The browser did not answer within the call's timeout."""


class HandshakeRefused(CDPError):
    """The browser refused the websocket handshake (HTTP status in ``status``)."""

    def __init__(self, message: str, *, status: int):
        super().__init__(message)
        self.status = status


@dataclass(slots=True)
class _Pending:
    future: asyncio.Future[JSON]
    method: str
    session_id: str | None


class CDPConnection:
    """A JSON-RPC client over one CDP websocket. Create with :meth:`open`."""

    def __init__(self, ws: ClientConnection, url: str) -> None:
        self._ws = ws
        self.url = url
        self._ids = itertools.count(1)
        self._pending: dict[int, _Pending] = {}
        # Event waiters from expect(), with their session, so they fail when it dies.
        self._event_waiters: dict[asyncio.Future[JSON], str | None] = {}
        self._handlers: dict[tuple[str, str | None], list[EventHandler]] = defaultdict(list)
        self._closed_reason: str | None = None
        self._close_handlers: list[Callable[[str], None]] = []
        self._trace = os.environ.get(TRACE_ENV) or None
        self._reader = asyncio.get_running_loop().create_task(self._read_loop(), name="cdp-reader")

    @classmethod
    async def open(cls, ws_url: str, *, timeout: float = 10.0) -> CDPConnection:
        """Connect to a CDP websocket.

        Raises :class:`HandshakeRefused` when the browser answers the handshake with an HTTP
        error (Chrome's remote-debugging prompt answers 403 when the person denied it), and
        :class:`ConnectionClosed` when nothing listens there.
        """
        try:
            ws = await connect(
                ws_url,
                max_size=MAX_FRAME_BYTES,
                max_queue=None,
                compression=None,
                # Chrome can be too busy on a heavy page to answer pings promptly; a dead
                # browser closes the TCP connection, which the reader sees at once.
                ping_interval=None,
                open_timeout=timeout,
                # A CDP endpoint on loopback must never go through an HTTP proxy from the env.
                proxy=None,
            )
        except InvalidStatus as exc:
            status = exc.response.status_code
            raise HandshakeRefused(
                f"the browser at {shown_endpoint(ws_url)} refused the DevTools connection "
                f"(HTTP {status})",
                status=status,
            ) from exc
        except (OSError, TimeoutError, websockets.exceptions.WebSocketException) as exc:
            raise ConnectionClosed(
                f"could not connect to {shown_endpoint(ws_url)}: {mask_endpoints(str(exc))}"
            ) from exc
        return cls(ws, ws_url)

    # -- state -------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed_reason is not None

    @property
    def closed_reason(self) -> str | None:
        return self._closed_reason

    def on_close(self, handler: Callable[[str], None]) -> None:
        """Call ``handler(reason)`` once when the connection dies or is closed."""
        self._close_handlers.append(handler)

    # -- calls -------------------------------------------------------------------------

    async def send(
        self,
        method: str,
        params: JSON | None = None,
        *,
        session_id: str | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
    ) -> JSON:
        """Send one command and return its ``result``.

        Raises :class:`CDPError` for an error answer, :class:`CDPTimeout` after ``timeout``
        seconds (None waits as long as the connection lives), :class:`ConnectionClosed` if the
        socket is or becomes dead and :class:`SessionClosed` if the session's target goes away.
        """
        call_id, future = await self._post(method, params, session_id)
        try:
            return await self._answer(method, future, timeout)
        finally:
            self._pending.pop(call_id, None)

    async def post(
        self, method: str, params: JSON | None = None, *, session_id: str | None = None
    ) -> None:
        """Send one command and do not wait for its answer: clean-up whose result nobody
        needs (the browser still runs it in order with the commands sent after it, and a
        caller's next command does not wait a round trip for it). Its answer, or its error,
        is dropped when it comes. Raises :class:`ConnectionClosed` if the socket is dead."""
        call_id, future = await self._post(method, params, session_id)

        def settled(done: asyncio.Future[JSON]) -> None:
            self._pending.pop(call_id, None)
            if not done.cancelled():
                done.exception()  # retrieved: an error answer is dropped, never logged

        future.add_done_callback(settled)

    async def send_in_order(
        self,
        calls: Sequence[tuple[str, JSON]],
        *,
        session_id: str | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
    ) -> list[JSON]:
        """Send ``calls`` (method, params) one after another without waiting for an answer
        in between, and return their ``result``s in order.

        The browser gets them in that order (a page sees input events in that order), and
        their round trips overlap. Every call is answered or has failed before this returns
        or raises; then it raises as :meth:`send` for the first call that failed."""
        posted: list[tuple[int, str, asyncio.Future[JSON]]] = []
        try:
            for method, params in calls:
                call_id, future = await self._post(method, params, session_id)
                posted.append((call_id, method, future))
            answers = await asyncio.gather(
                *(self._answer(method, future, timeout) for _, method, future in posted),
                return_exceptions=True,
            )
        finally:
            for call_id, _, _ in posted:
                self._pending.pop(call_id, None)
        for answer in answers:
            if isinstance(answer, BaseException):
                raise answer
        return [answer for answer in answers if not isinstance(answer, BaseException)]

    async def _post(
        self, method: str, params: JSON | None, session_id: str | None
    ) -> tuple[int, asyncio.Future[JSON]]:
        """Write one command to the socket; the future its answer will settle."""
        if self._closed_reason is not None:
            raise ConnectionClosed(
                f"{method}: connection to the browser is closed ({self._closed_reason})",
                method=method,
            )
        call_id = next(self._ids)
        message: JSON = {"id": call_id, "method": method, "params": params or {}}
        if session_id is not None:
            message["sessionId"] = session_id
        if self._trace is not None:
            self._record(method)
        future: asyncio.Future[JSON] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = _Pending(future, method, session_id)
        try:
            await self._ws.send(json.dumps(message))
        except WSConnectionClosed as exc:
            self._mark_closed(f"websocket closed: {exc}")
        except BaseException:
            self._pending.pop(call_id, None)
            raise
        return call_id, future

    async def _answer(
        self, method: str, future: asyncio.Future[JSON], timeout: float | None
    ) -> JSON:
        try:
            async with asyncio.timeout(timeout):
                return await future
        except TimeoutError as exc:
            raise CDPTimeout(
                f"{method}: the browser did not answer within {timeout:g} s", method=method
            ) from exc

    def _record(self, method: str) -> None:
        assert self._trace is not None
        # One short O_APPEND write per line: lines of concurrent processes do not mix.
        with open(self._trace, "a") as trace:
            trace.write(json.dumps({"pid": os.getpid(), "method": method}) + "\n")

    def on(
        self, method: str, handler: EventHandler, *, session_id: str | None = None
    ) -> Callable[[], None]:
        """Subscribe to an event; returns a function that unsubscribes.

        ``session_id=None`` receives the browser-level events of that method only (events
        without a session). Handlers run in the reader task: they must not block.
        """
        key = (method, session_id)
        self._handlers[key].append(handler)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._handlers[key].remove(handler)

        return unsubscribe

    def expect(
        self,
        method: str,
        predicate: Callable[[JSON], bool] | None = None,
        *,
        session_id: str | None = None,
    ) -> asyncio.Future[JSON]:
        """A future for the next matching event, registered now (before the command that
        causes it is sent, so it cannot be missed). Cancel it if no longer needed."""
        future: asyncio.Future[JSON] = asyncio.get_running_loop().create_future()

        def handler(params: JSON) -> None:
            if future.done():
                return
            try:
                matched = predicate is None or predicate(params)
            except Exception as exc:  # a bad predicate must fail the waiter, not the reader
                future.set_exception(exc)
                return
            if matched:
                future.set_result(params)

        unsubscribe = self.on(method, handler, session_id=session_id)
        future.add_done_callback(lambda _: unsubscribe())
        if self._closed_reason is not None:
            future.set_exception(
                ConnectionClosed(f"connection to the browser is closed ({self._closed_reason})")
            )
            return future
        self._event_waiters[future] = session_id
        future.add_done_callback(lambda f: self._event_waiters.pop(f, None))
        return future

    def session(self, session_id: str) -> CDPSession:
        return CDPSession(self, session_id)

    async def close(self) -> None:
        """Close the socket; every pending call fails with :class:`ConnectionClosed`."""
        self._mark_closed("closed by handrail")
        with contextlib.suppress(Exception):
            await self._ws.close()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader

    # -- internals ---------------------------------------------------------------------

    async def _read_loop(self) -> None:
        reason = "the browser closed the connection"
        try:
            async for raw in self._ws:
                try:
                    message = json.loads(raw)
                except ValueError:
                    log.warning("cdp.bad_frame", size=len(raw))
                    continue
                self._dispatch(message)
        except WSConnectionClosed as exc:
            reason = f"websocket closed ({exc.rcvd.code if exc.rcvd else 'no close frame'})"
        except asyncio.CancelledError:
            reason = "closed by handrail"
            raise
        except Exception as exc:  # the reader must never die silently
            reason = f"reader failed: {exc!r}"
            log.error("cdp.reader_failed", error=repr(exc))
        finally:
            self._mark_closed(reason)

    def _dispatch(self, message: JSON) -> None:
        call_id = message.get("id")
        if call_id is not None:
            pending = self._pending.get(call_id)
            if pending is None or pending.future.done():
                return
            if "error" in message:
                err = message["error"]
                text = err.get("message", "unknown error")
                if err.get("data"):
                    text = f"{text} ({err['data']})"
                pending.future.set_exception(
                    CDPError(
                        f"{pending.method}: {text}", method=pending.method, code=err.get("code")
                    )
                )
            else:
                pending.future.set_result(message.get("result", {}))
            return
        method = message.get("method")
        if not isinstance(method, str):
            return
        params = message.get("params", {})
        session_id = message.get("sessionId")
        if method == "Target.detachedFromTarget":
            # A tab's session detaches on the browser's session (``session_id`` None); a
            # frame's or a worker's detaches on its parent's session. Either way, the calls
            # still waiting in the session that went will never be answered.
            gone = (
                "the tab was closed or detached"
                if session_id is None
                else "the frame or worker went away"
            )
            self._fail_session(params.get("sessionId"), gone)
        elif method == "Inspector.targetCrashed" and session_id is not None:
            self._fail_session(session_id, "the tab's renderer crashed")
        for handler in list(self._handlers.get((method, session_id), ())):
            try:
                handler(params)
            except Exception as exc:
                log.error("cdp.handler_failed", method=method, error=repr(exc))

    def _fail_session(self, session_id: str | None, why: str) -> None:
        if session_id is None:
            return
        for pending in list(self._pending.values()):
            if pending.session_id == session_id and not pending.future.done():
                pending.future.set_exception(
                    SessionClosed(f"{pending.method}: {why}", method=pending.method)
                )
        for future, sid in list(self._event_waiters.items()):
            if sid == session_id and not future.done():
                future.set_exception(SessionClosed(why))

    def _mark_closed(self, reason: str) -> None:
        if self._closed_reason is not None:
            return
        self._closed_reason = reason
        error_text = f"connection to the browser is closed ({reason})"
        for pending in list(self._pending.values()):
            if not pending.future.done():
                pending.future.set_exception(
                    ConnectionClosed(f"{pending.method}: {error_text}", method=pending.method)
                )
        for future in list(self._event_waiters):
            if not future.done():
                future.set_exception(ConnectionClosed(error_text))
        for handler in self._close_handlers:
            try:
                handler(reason)
            except Exception as exc:
                log.error("cdp.close_handler_failed", error=repr(exc))


class CDPSession:
    """One attached target (flattened session) on a :class:`CDPConnection`."""

    def __init__(self, connection: CDPConnection, session_id: str) -> None:
        self.connection = connection
        self.session_id = session_id

    async def send(
        self, method: str, params: JSON | None = None, *, timeout: float | None = DEFAULT_TIMEOUT
    ) -> JSON:
        return await self.connection.send(
            method, params, session_id=self.session_id, timeout=timeout
        )

    async def post(self, method: str, params: JSON | None = None) -> None:
        """:meth:`CDPConnection.post` in this session."""
        await self.connection.post(method, params, session_id=self.session_id)

    async def send_in_order(
        self, calls: Sequence[tuple[str, JSON]], *, timeout: float | None = DEFAULT_TIMEOUT
    ) -> list[JSON]:
        """:meth:`CDPConnection.send_in_order` in this session."""
        return await self.connection.send_in_order(
            calls, session_id=self.session_id, timeout=timeout
        )

    def on(self, method: str, handler: EventHandler) -> Callable[[], None]:
        return self.connection.on(method, handler, session_id=self.session_id)

    def expect(
        self, method: str, predicate: Callable[[JSON], bool] | None = None
    ) -> asyncio.Future[JSON]:
        return self.connection.expect(method, predicate, session_id=self.session_id)
