"""``handrail mcp --http``: the MCP session over streamable HTTP, on loopback, behind a token.

Imported only by ``handrail mcp --http`` (it loads uvicorn, which the mcp SDK brings). The
SDK's own session manager carries the protocol (one session at a time: the run is that
session's). In front of it, :func:`guarded` admits a request only when

- its Host header names the address we bound (a DNS-rebinding page has another Host);
- it carries no Origin of another site (a web page the person visits cannot call us);
- it sends ``Authorization: Bearer TOKEN``, the token printed once at start or kept in the
  person's own ``--token-file``.

Each refusal is one line on stderr, what the request chose shown with its control
characters as stand-ins. The session ends when the client deletes it (the SDK's client does
on closing) or when the server is stopped; then the run ends, as on stdio's EOF.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import os
import secrets as token_source
import signal
import socket
import stat
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import uvicorn

from core.mcp.stdio import McpSession
from core.run.events import RunFinished
from core.visible import visible

if TYPE_CHECKING:
    from core.run.session import RunSettings
    from core.secrets import Secrets

PATH = "/mcp"
SHOWN = 200
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class TokenError(Exception):
    """The token file cannot be used; the message says why and what to do."""


def url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def token_from_file(path: Path) -> str:
    """The token kept in ``path``, made (random, 0600) when the file does not exist. A file
    that others may read, that is not the user's, or that is a link is refused."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        pass
    else:
        with os.fdopen(fd, "w") as out:
            out.write(token_source.token_urlsafe(24) + "\n")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise TokenError(f"cannot read the token file {path}: {exc.strerror or exc}") from None
    with os.fdopen(fd) as found:
        info = os.fstat(found.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            raise TokenError(f"{path} is not a file of yours: not used as a token")
        if info.st_mode & 0o077:
            raise TokenError(
                f"{path} can be read by others (mode {stat.S_IMODE(info.st_mode):o}): "
                f"`chmod 600 {path}`"
            )
        token = found.read(4096).strip()
    if len(token) < 16:
        raise TokenError(f"the token in {path} is shorter than 16 characters")
    return token


def guarded(
    inner: ASGIApp,
    *,
    token: str,
    hosts: Callable[[], frozenset[str]],
    refused: Callable[[str], None],
    closed: Callable[[], None],
) -> ASGIApp:
    """``inner`` behind the token, Host and Origin checks; ``closed()`` once the client has
    deleted its session."""
    expected = token.encode()

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            return
        headers = {
            bytes(k).decode("latin-1").lower(): bytes(v).decode("latin-1")
            for k, v in scope.get("headers", ())
        }
        host = headers.get("host", "")
        origin = headers.get("origin")
        given = headers.get("authorization", "")
        bearer = given[7:].strip() if given[:7].lower() == "bearer " else ""
        status, why = 0, ""
        if host not in hosts():
            status, why = 403, "unexpected Host header; use the URL handrail mcp printed"
        elif origin is not None and origin != f"http://{host}":
            status, why = 403, "requests from web pages are refused"
        elif not hmac.compare_digest(bearer.encode(), expected):
            status, why = 401, "no or wrong token: send Authorization: Bearer <the token>"
        elif scope.get("path") != PATH:
            status, why = 404, f"the MCP endpoint is {PATH}"
        if status:
            path = visible(str(scope.get("path", "")), one_line=True, limit=SHOWN)
            method = visible(str(scope.get("method", "")), one_line=True, limit=20)
            shown_origin = visible(origin or "no origin", one_line=True, limit=SHOWN)
            refused(f"refused {method} {path} ({shown_origin}): {why}")
            await _answer(send, status, f"handrail mcp: {why}\n")
            return
        started: list[int] = []

        async def watched(message: Message) -> None:
            if message.get("type") == "http.response.start":
                started.append(int(message.get("status", 0)))
            await send(message)

        await inner(scope, receive, watched)
        if scope.get("method") == "DELETE" and started and started[0] < 400:
            closed()

    return app


async def _answer(send: Send, status: int, text: str) -> None:
    body = text.encode()
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
    ]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="handrail mcp"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def loopback_names(host: str, port: int) -> frozenset[str]:
    """The Host headers a loopback server answers to."""
    names = {url_host(host), "127.0.0.1", "localhost", "[::1]"}
    return frozenset(f"{name}:{port}" for name in names)


async def serve_http(
    settings: RunSettings,
    secrets: Secrets,
    *,
    host: str,
    port: int,
    token: str,
    approval_timeout: float,
    approve_via: str = "attach",
    announce: Callable[[str], None] = lambda _url: None,
    refused: Callable[[str], None] = lambda _line: None,
) -> RunFinished | None:
    """Serve one MCP session over streamable HTTP at ``http://host:port/mcp`` until the
    client deletes it or a signal stops the server; returns how its run ended (None when
    no client ever made a request). ``announce(url)`` once the port is bound. Raises
    ``OSError`` when the address cannot be bound."""
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings

    session = McpSession(
        settings, secrets, approval_timeout=approval_timeout, approve_via=approve_via
    )
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
        sock.listen(16)
    except OSError:
        sock.close()
        raise
    bound = int(sock.getsockname()[1])
    hosts = loopback_names(host, bound)
    manager = StreamableHTTPSessionManager(
        app=session.server,
        security_settings=TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=sorted(hosts),
            allowed_origins=sorted(f"http://{h}" for h in hosts),
        ),
        session_idle_timeout=None,  # a session lives until the client deletes it
        max_sessions=1,  # one session, one run
    )
    server: _Server | None = None

    def closed() -> None:
        if server is not None:
            server.should_exit = True

    app = guarded(
        manager.handle_request, token=token, hosts=lambda: hosts, refused=refused, closed=closed
    )
    server = _Server(uvicorn.Config(app, lifespan="off", access_log=False, log_level="warning"))
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, closed)
    announce(f"http://{url_host(host)}:{bound}{PATH}")
    try:
        async with manager.run():
            await server.serve(sockets=[sock])
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.remove_signal_handler(sig)
        sock.close()
    return await session.finish()


def new_token() -> str:
    return token_source.token_urlsafe(24)


class _Server(uvicorn.Server):
    """uvicorn's server with our signal handling: a signal ends the session (and so the
    run, with its log closed) instead of being raised again once uvicorn stops."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield
