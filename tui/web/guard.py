"""The web side of ``handrail serve``: textual-serve behind a token check.

Imported only by ``handrail serve`` (it loads aiohttp). See :mod:`tui.web.serve` for what the
guard promises; this module keeps those promises.
"""

from __future__ import annotations

import asyncio
import hmac
import shlex
from collections.abc import Awaitable, Callable, Sequence

from aiohttp import web
from aiohttp.typedefs import Middleware
from textual_serve.server import Server, to_int

from core.visible import visible
from tui.web.session import ServedRun

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
    """textual-serve's ``Server`` behind :func:`guard`, serving one run
    (:class:`tui.web.session.ServedRun`) to one page at a time: the newest page with the
    token takes it over (a reload, a tab opened again after a dropped connection)."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        host: str,
        port: int,
        token: str,
        title: str,
        loopback: bool,
        refused: Callable[[str], None] = lambda _line: None,
        told: Callable[[str], None] = lambda _line: None,
    ) -> None:
        super().__init__(shlex.join(argv), host=host, port=port, title=title)
        self._refused = refused
        self._told = told
        self._token = token
        self._loopback = loopback
        self._hosts = allowed_hosts(host, port, loopback=loopback)
        self.run = ServedRun(argv, download_manager=self.download_manager)

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
        run = self.run
        if run.over.is_set():
            raise web.HTTPGone(text="handrail serve: the run is over\n")
        websocket = web.WebSocketResponse(heartbeat=15)
        await websocket.prepare(request)
        starting = not run.started
        took_over = await run.attach(
            websocket,
            to_int(request.query.get("width", "80"), 80),
            to_int(request.query.get("height", "24"), 24),
        )
        if starting:
            self._told("a page opened the run; it starts now")
        elif took_over:
            self._told("another page took the run over; the previous page was disconnected")
        else:
            self._told("a page came back to the run")
        try:
            await self._process_messages(websocket, run)
        finally:
            if run.detach(websocket) and not run.over.is_set():
                self._told(
                    "the page left; the run goes on. Open the URL again to come back to it "
                    "(Ctrl-C here ends it)"
                )
        return websocket


async def serve_forever(
    server: GuardedServer, *, announce: Callable[[str], None], stopped_by: Callable[[], str]
) -> int:
    """Listen until the served run is over (its observatory exited) and return its exit
    code; ``announce(url)`` once the port is bound. When cancelled (``handrail serve`` was
    stopped), the run is ended first, with ``stopped_by()`` recorded as who ended it, and
    the cancellation goes on. Raises ``OSError`` when the address cannot be bound. No
    access log: it would print the token."""
    runner = web.AppRunner(await server._make_app(), access_log=None, handle_signals=False)
    await runner.setup()
    try:
        site = web.TCPSite(runner, server.host, server.port)
        await site.start()
        server.bound(runner.addresses[0][1])
        announce(server.url)
        await server.run.over.wait()
        return await server.run.exit_code()
    except asyncio.CancelledError:
        await server.run.end(stopped_by())
        raise
    finally:
        await runner.cleanup()
