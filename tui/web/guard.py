"""The web side of ``handrail serve``: textual-serve behind a token check.

Imported only by ``handrail serve`` (it loads aiohttp). See :mod:`tui.web.serve` for what the
guard promises; this module keeps those promises.
"""

from __future__ import annotations

import asyncio
import hmac
from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.typedefs import Middleware
from textual_serve.server import Server

from core.visible import visible

COOKIE = "handrail_token"
TOKEN_PARAM = "token"
SECURITY_HEADERS = {
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
}

SHOWN_CHARS = 200
"""The most characters of one request field a refusal line shows."""

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def url_host(host: str) -> str:
    """``host`` as written in a URL (IPv6 in brackets)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def allowed_hosts(host: str, port: int, *, loopback: bool) -> frozenset[str] | None:
    """The Host headers accepted, or None (any) for a wildcard bind, whose addresses are
    not known in advance (the token still guards every request)."""
    if host in ("0.0.0.0", "::", ""):
        return None
    names = {url_host(host)}
    if loopback:
        names |= {"localhost", "127.0.0.1", "[::1]"}
    return frozenset(f"{name}:{port}" for name in names)


def refusal_line(request: web.Request, why: str) -> str:
    """``refused GET /path (origin): why``, for the serve terminal. Any page the person
    visits can send us a request, and picks its path (``/%1b]52;c;…``) and some headers, so
    each of those shows its control characters instead of sending them, cannot start a
    second line, and is cut at :data:`SHOWN_CHARS`. The query is left out: it may hold a token."""
    method, path = shown(request.method), shown(request.path)
    origin = shown(request.headers.get("Origin", "no origin"))
    return f"refused {method} {path} ({origin}): {why}"


def shown(value: str) -> str:
    """``value``, from a request, as part of one printed line."""
    return visible(value, one_line=True, limit=SHOWN_CHARS)


def guard(
    token: str,
    hosts: Callable[[], frozenset[str] | None],
    refused: Callable[[str], None] = lambda _line: None,
) -> Middleware:
    """Middleware admitting only requests that carry ``token``. ``hosts()`` gives the Host
    headers accepted (None: any); a callable because the port is known once bound.
    ``refused(line)`` hears of each refusal as one line safe to print (see
    :func:`refusal_line`)."""
    expected = token.encode()

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        def _forbidden(why: str) -> web.Response:
            refused(refusal_line(request, why))
            return web.Response(
                status=403, text=f"handrail serve: {why}\n", headers=SECURITY_HEADERS
            )

        host = request.headers.get("Host", "")
        accepted = hosts()
        if accepted is not None and host not in accepted:
            # A DNS-rebinding page reaches us under its own name: refuse it.
            return _forbidden("unexpected Host header; open the URL handrail printed")
        origin = request.headers.get("Origin")
        if origin is not None and origin != f"http://{host}":
            return _forbidden("requests from other sites are refused")
        if request.headers.get("Upgrade", "").lower() == "websocket" and origin is None:
            return _forbidden("a websocket must come from the page handrail serves")
        # Another port of 127.0.0.1 is the same *site*: its requests would carry a
        # SameSite=Strict cookie. Only our own pages and typed URLs ("none") get in.
        if request.headers.get("Sec-Fetch-Site", "none") not in ("same-origin", "none"):
            return _forbidden("requests from other pages are refused")
        given = request.query.get(TOKEN_PARAM)
        if given is not None and request.path == "/":
            if not hmac.compare_digest(given.encode(), expected):
                return _forbidden("wrong token; open the URL handrail printed")
            # The token leaves the address bar for a cookie that page scripts cannot read
            # and that no other site's request carries.
            moved = web.HTTPSeeOther("/", headers=SECURITY_HEADERS)
            moved.set_cookie(COOKIE, token, httponly=True, samesite="Strict", path="/")
            return moved
        if not hmac.compare_digest(request.cookies.get(COOKIE, "").encode(), expected):
            return _forbidden("no token; open the URL handrail printed, with its ?token=")
        response = await handler(request)
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    return middleware


class GuardedServer(Server):
    """textual-serve's ``Server`` behind :func:`guard`, with one browser session at a time
    (each session is a run of its own)."""

    def __init__(
        self,
        command: str,
        *,
        host: str,
        port: int,
        token: str,
        title: str,
        loopback: bool,
        refused: Callable[[str], None] = lambda _line: None,
    ) -> None:
        super().__init__(command, host=host, port=port, title=title)
        self._refused = refused
        self._token = token
        self._loopback = loopback
        self._hosts = allowed_hosts(host, port, loopback=loopback)
        self.session_open = False

    @property
    def url(self) -> str:
        """The URL to open, with the token."""
        return f"{self.public_url}/?{TOKEN_PARAM}={self._token}"

    def bound(self, port: int) -> None:
        """The socket is bound to ``port`` (which may differ from the one asked: 0)."""
        self.port = port
        self.public_url = f"http://{url_host(self.host)}:{port}"
        self._hosts = allowed_hosts(self.host, port, loopback=self._loopback)

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.insert(0, guard(self._token, lambda: self._hosts, self._refused))
        return app

    async def on_startup(self, app: web.Application) -> None:
        """Silent: the URL is printed once, by :func:`serve_forever`."""

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        if self.session_open:
            raise web.HTTPConflict(
                text="handrail serve: this run is already supervised from another tab\n"
            )
        self.session_open = True
        try:
            return await super().handle_websocket(request)
        finally:
            self.session_open = False


async def serve_forever(server: GuardedServer, *, announce: Callable[[str], None]) -> None:
    """Listen until cancelled; ``announce(url)`` once the port is bound. Raises ``OSError``
    when the address cannot be bound. No access log: it would print the token."""
    runner = web.AppRunner(await server._make_app(), access_log=None, handle_signals=False)
    await runner.setup()
    try:
        site = web.TCPSite(runner, server.host, server.port)
        await site.start()
        server.bound(runner.addresses[0][1])
        announce(server.url)
        await asyncio.Event().wait()
    finally:
        # Closes the websockets: each child observatory is told to quit, its run aborted.
        await runner.cleanup()
