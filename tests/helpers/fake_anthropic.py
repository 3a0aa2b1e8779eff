"""A fake Anthropic Messages API on 127.0.0.1, so tests exercise the real ``anthropic`` SDK.

It replays scripted replies in order, can answer with errors first (529 overloaded, 429,
500...), and records every request. Use it as a context manager or from a fixture::

    @pytest.fixture
    def fake_anthropic(monkeypatch):
        with FakeAnthropic() as fake:
            monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
            monkeypatch.setenv("ANTHROPIC_API_KEY", fake.api_key)
            yield fake

    fake.add_failure(529)                                  # overloaded once, then...
    fake.add_tool_use("click", {"index": 3, "reason": "Open the form."})
    fake.add_text("I am done thinking.")                   # a reply without a tool call
    fake.respond_with(lambda body: [...])                  # when the queue is empty
    ... run the agent ...
    fake.message_bodies                                    # every POST /v1/messages body

Failures carry ``retry-after-ms: 1`` so the SDK's own retry waits a millisecond.
The server runs in a thread; the queue and the records are guarded by a lock.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[dict[str, Any]], Any]
"""Given the request body, returns a reply item (what ``add_*`` would have queued)."""


@dataclass(frozen=True)
class Recorded:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    raw: bytes
    body: Any = None
    """The parsed JSON body, or None."""


@dataclass(frozen=True)
class Failure:
    """An error answer. ``headers`` default to a 1 ms ``retry-after-ms``."""

    status: int
    error_type: str
    message: str
    headers: dict[str, str] = field(default_factory=lambda: {"retry-after-ms": "1"})


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    529: "overloaded_error",
}


class FakeApiServer:
    """The HTTP machinery both fakes share: a threaded loopback server, a reply queue,
    recorded requests. Subclasses implement :meth:`route`."""

    def __init__(self, *, api_key: str | None = "test-key") -> None:
        self.api_key = api_key
        """When set, requests must carry it (``x-api-key`` or ``Authorization: Bearer``)."""
        self.requests: list[Recorded] = []
        self.default: Responder | None = None
        self._queue: deque[Any] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ---------------------------------------------------------------------

    def start(self) -> FakeApiServer:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                headers = {k.lower(): v for k, v in self.headers.items()}
                request = Recorded(self.command, self.path, headers, raw, body)
                with fake._lock:
                    fake.requests.append(request)
                status, extra, payload = fake._answer(request)
                if isinstance(payload, EventStream):
                    self._stream(payload)
                    return
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in extra.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, stream: EventStream) -> None:
                # Server-sent events, as the Messages API streams (the connection closes
                # after message_stop); ``stream.hold``, once the first chunk is out.
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                for k, (name, data) in enumerate(stream.events):
                    self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                    self.wfile.flush()
                    if k == stream.hold_after and stream.hold is not None:
                        stream.held.set()
                        stream.hold.wait(timeout=60)

            do_GET = do_POST = do_DELETE = _serve

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.02},  # shutdown() waits up to one poll
            name=type(self).__name__,
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash)."""
        if self._server is None:
            raise RuntimeError("the fake server is not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # --- scripting ---------------------------------------------------------------------

    def add(self, item: Any) -> None:
        """Queue one reply item (a subclass's reply, a :class:`Failure`, or a responder)."""
        with self._lock:
            self._queue.append(item)

    def add_failure(
        self,
        status: int = 529,
        *,
        times: int = 1,
        message: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Answer the next ``times`` calls with an error (SDKs retry 408/429/5xx/529)."""
        error_type = _ERROR_TYPES.get(status, "api_error")
        for _ in range(times):
            failure = Failure(status, error_type, message or error_type.replace("_", " "))
            if headers is not None:
                failure = Failure(status, error_type, failure.message, dict(headers))
            self.add(failure)

    def respond_with(self, responder: Responder | None) -> None:
        """What to answer once the queue is empty (default: a non-retryable 400)."""
        self.default = responder

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def _next_item(self, body: dict[str, Any]) -> Any:
        with self._lock:
            item = self._queue.popleft() if self._queue else None
        if item is None and self.default is not None:
            item = self.default
        if callable(item) and not isinstance(item, Failure):
            item = item(body)
        return item

    def _authorized(self, request: Recorded) -> bool:
        if self.api_key is None:
            return True
        bearer = request.headers.get("authorization", "")
        return request.headers.get("x-api-key") == self.api_key or bearer == (
            f"Bearer {self.api_key}"
        )

    # --- answering ---------------------------------------------------------------------

    def _answer(self, request: Recorded) -> tuple[int, dict[str, str], Any]:
        if not self._authorized(request):
            return self.error(Failure(401, "authentication_error", "invalid x-api-key", {}))
        return self.route(request)

    def route(self, request: Recorded) -> tuple[int, dict[str, str], Any]:
        raise NotImplementedError

    def error(self, failure: Failure) -> tuple[int, dict[str, str], Any]:
        body = {"type": "error", "error": {"type": failure.error_type, "message": failure.message}}
        return failure.status, failure.headers, body

    def exhausted(self, what: str) -> tuple[int, dict[str, str], Any]:
        message = f"fake server: no scripted reply left for {what}"
        return self.error(
            Failure(400, "invalid_request_error", message, {"x-should-retry": "false"})
        )


@dataclass(frozen=True)
class MessageReply:
    content: list[dict[str, Any]]
    stop_reason: str | None = None
    usage: dict[str, int] | None = None
    hold: threading.Event | None = None
    """Streamed: the stream stops after its first text chunk until this is set (and sets
    ``held`` when it gets there), so a test sees a reply half written."""
    held: threading.Event = field(default_factory=threading.Event)
    broken: bool = False
    """Streamed: an ``error`` event (overloaded) right after the first text chunk, and the
    stream ends there, as a stream that breaks off midway."""


@dataclass
class EventStream:
    """A streamed reply: ``(event, data)`` pairs sent as server-sent events."""

    events: list[tuple[str, dict[str, Any]]]
    hold_after: int = -1
    hold: threading.Event | None = None
    held: threading.Event = field(default_factory=threading.Event)


def stream_events(message: dict[str, Any]) -> tuple[list[tuple[str, dict[str, Any]]], int]:
    """The Messages API's events for ``message``: each text block in two chunks, each
    tool_use input as one JSON delta. Returns them and the index of the first text chunk."""
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    first_text = -1
    for index, block in enumerate(message["content"]):
        if block.get("type") == "text":
            opening = {"type": "text", "text": ""}
        else:
            opening = {**block, "input": {}}
        events.append(
            ("content_block_start",
             {"type": "content_block_start", "index": index, "content_block": opening})
        )  # fmt: skip
        if block.get("type") == "text":
            text = str(block["text"])
            for chunk in (text[: len(text) // 2], text[len(text) // 2 :]):
                delta = {"type": "text_delta", "text": chunk}
                events.append(
                    ("content_block_delta",
                     {"type": "content_block_delta", "index": index, "delta": delta})
                )  # fmt: skip
                if first_text < 0:
                    first_text = len(events) - 1
        else:
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block.get("input", {}))}
            events.append(
                ("content_block_delta",
                 {"type": "content_block_delta", "index": index, "delta": delta})
            )  # fmt: skip
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        ("message_delta",
         {"type": "message_delta",
          "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
          "usage": {"output_tokens": usage.get("output_tokens", 20)}})
    )  # fmt: skip
    events.append(("message_stop", {"type": "message_stop"}))
    return events, first_text


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_use_block(name: str, input: Any, id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": id, "name": name, "input": input}


class FakeAnthropic(FakeApiServer):
    """``POST /v1/messages``, ``GET /v1/models[/ID]`` of the Anthropic API."""

    def __init__(self, *, models: Iterable[str] | None = None, api_key: str | None = "test-key"):
        super().__init__(api_key=api_key)
        self.models = None if models is None else list(models)
        """The model ids ``/v1/models/ID`` knows; None: every id is known."""
        self._ids = itertools.count(1)

    def __enter__(self) -> FakeAnthropic:
        self.start()
        return self

    def new_id(self) -> str:
        return f"toolu_fake_{next(self._ids):03d}"

    def add_reply(
        self,
        content: list[dict[str, Any]],
        *,
        stop_reason: str | None = None,
        usage: dict[str, int] | None = None,
    ) -> None:
        """Queue a reply with these content blocks, verbatim (anything, even malformed)."""
        self.add(MessageReply(content, stop_reason, usage))

    def add_text(self, text: str) -> None:
        self.add_reply([text_block(text)])

    def add_tool_use(
        self, name: str, input: Any, *, text: str | None = None, id: str | None = None
    ) -> str:
        """Queue a reply calling one tool; returns the tool_use id."""
        tool_id = id or self.new_id()
        blocks = [text_block(text)] if text else []
        self.add_reply([*blocks, tool_use_block(name, input, tool_id)])
        return tool_id

    @property
    def message_bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies of every ``POST /v1/messages``, retries included."""
        with self._lock:
            return [r.body for r in self.requests if r.path.startswith("/v1/messages")]

    def route(self, request: Recorded) -> tuple[int, dict[str, str], Any]:
        path = request.path.split("?", 1)[0]
        if request.method == "POST" and path == "/v1/messages":
            return self._message(request)
        if request.method == "GET" and path.startswith("/v1/models/"):
            model_id = path.removeprefix("/v1/models/")
            if self.models is not None and model_id not in self.models:
                return self.error(
                    Failure(
                        404, "not_found_error", f"model: {model_id}", {"x-should-retry": "false"}
                    )
                )
            return 200, {}, _model_info(model_id)
        if request.method == "GET" and path == "/v1/models":
            ids = self.models if self.models is not None else ["claude-sonnet-5-5"]
            data = [_model_info(m) for m in ids]
            return 200, {}, {"data": data, "has_more": False, "first_id": None, "last_id": None}
        return self.error(Failure(404, "not_found_error", f"no route {request.method} {path}", {}))

    def _message(self, request: Recorded) -> tuple[int, dict[str, str], Any]:
        body = request.body if isinstance(request.body, dict) else {}
        item = self._next_item(body)
        if item is None:
            return self.exhausted(f"POST /v1/messages #{len(self.message_bodies)}")
        if isinstance(item, Failure):
            return self.error(item)
        if isinstance(item, list):
            item = MessageReply(item)
        assert isinstance(item, MessageReply), f"unexpected reply item {item!r}"
        has_tool = any(b.get("type") == "tool_use" for b in item.content)
        usage = item.usage or {
            "input_tokens": len(request.raw) // 4,
            "output_tokens": 20,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        message = {
            "id": f"msg_fake_{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-fake"),
            "content": item.content,
            "stop_reason": item.stop_reason or ("tool_use" if has_tool else "end_turn"),
            "stop_sequence": None,
            "usage": usage,
        }
        if body.get("stream"):
            events, first_text = stream_events(message)
            if item.broken:
                overloaded = {"type": "overloaded_error", "message": "Overloaded"}
                events = [
                    *events[: first_text + 1],
                    ("error", {"type": "error", "error": overloaded}),
                ]
            return 200, {}, EventStream(events, first_text, item.hold, item.held)
        return 200, {"request-id": f"req_fake_{len(self.requests)}"}, message


def _model_info(model_id: str) -> dict[str, Any]:
    return {
        "type": "model",
        "id": model_id,
        "display_name": model_id,
        "created_at": "2026-01-01T00:00:00Z",
        "lifecycle": "active",
    }
