"""``handrail serve``'s terminal: a refused request is one line there, shown, never obeyed.

Any web page the person visits can make their browser ask ``http://127.0.0.1:PORT/%1b]52;…``
(an OSC 52 clipboard write, once decoded); another local user can send raw bytes. The guard's
refusal line quotes the path and the Origin, so each case here sends one such request and
reads what ``say`` wrote: one line, no byte a terminal would obey, and the attack shown.
The last tests do the same against the real ``handrail serve`` and a real browser.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import re
import socket
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from core.browser.browser import Tab
from tests.helpers import load, page_eval
from tests.helpers.site_server import FixtureSite
from tests.helpers.waiting import until
from tests.tui.test_serve import WAIT, Served, serving
from tui.web.guard import guard
from tui.web.serve import say

TOKEN = "the-real-token-0123456789"
_OBEYED = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What a terminal would act on rather than show (newline aside: lines end with it)."""


@dataclass(frozen=True)
class Attack:
    name: str
    path: bytes = b"/"
    headers: tuple[tuple[bytes, bytes], ...] = ()
    shown: str = ""
    """What the refusal line must show of it ("" for a part never printed)."""


ATTACKS = [
    Attack("osc52 in the path", b"/%1b%5d52;c;aGFuZHJhaWw=%07", shown="/␛]52;c;aGFuZHJhaWw=␇"),
    Attack("screen clear in the path", b"/%1b[2J%1b[H", shown="/␛[2J␛[H"),
    Attack("C1 CSI in the path", b"/%c2%9b31mred", shown="/⟨U+009B⟩31mred"),
    Attack("bidi override in the path", b"/%e2%80%aeexe.txt", shown="/⟨U+202E⟩exe.txt"),
    Attack("bell and backspaces in the path", b"/ok%07%08%08", shown="/ok␇␈␈"),
    Attack(
        "a forged second line",
        b"/%0ahandrail%20serve:%20open%20http://evil.example/%3Ftoken=x",
        shown="/␊handrail serve: open http://evil.example/?token=x",
    ),
    Attack(
        "a carriage return", b"/%0dhandrail%20serve:%20stopped", shown="/␍handrail serve: stopped"
    ),
    Attack(
        "C1 and bidi in the Origin",
        headers=((b"Origin", b"http://evil.example\xc2\x9b2J\xe2\x80\xae"),),
        shown="(http://evil.example⟨U+009B⟩2J⟨U+202E⟩)",
    ),
    Attack(
        "a websocket path without an Origin",
        b"/ws%1b]8;;http://evil.example/%1b%5c",
        headers=((b"Upgrade", b"websocket"), (b"Connection", b"Upgrade")),
        shown="/ws␛]8;;http://evil.example/␛\\",
    ),
    Attack("an over-long path", b"/" + b"a" * 5000, shown="/" + "a" * 199 + "… (4801 more"),
    Attack(
        "C1 and bidi in the Host, User-Agent and Referer",
        headers=(
            (b"Host", b"evil\xc2\x9b.example:1"),
            (b"User-Agent", b"agent\xc2\x9b2J\xe2\x80\xae"),
            (b"Referer", b"http://evil.example/\xe2\x80\xae"),
        ),
        shown="unexpected Host header",
    ),
    Attack("controls in the query", b"/?token=wrong%1b%5d52;c;aGk=%07", shown="wrong token"),
]


@contextlib.asynccontextmanager
async def guarded() -> AsyncIterator[tuple[int, io.StringIO]]:
    """The port of the guard in front of a page, and the stream its refusals are told in,
    through ``say`` as ``handrail serve`` tells them on its terminal."""
    told = io.StringIO()
    server: TestServer

    def hosts() -> frozenset[str]:
        return frozenset({f"127.0.0.1:{server.port}"})

    app = web.Application(
        middlewares=[guard(TOKEN, hosts, lambda line: say(f"handrail serve: {line}", told))]
    )

    async def page(_request: web.Request) -> web.Response:
        return web.Response(text="ok")

    app.router.add_get("/{tail:.*}", page)
    server = TestServer(app, port=0)
    await server.start_server()
    assert server.port is not None
    try:
        yield server.port, told
    finally:
        await server.close()


async def send(port: int, path: bytes, headers: tuple[tuple[bytes, bytes], ...] = ()) -> int:
    """Send one request as raw bytes (as a script of another local user could); its status."""
    fields = dict(((b"Host", f"127.0.0.1:{port}".encode()), *headers))
    head = b"".join(name + b": " + value + b"\r\n" for name, value in fields.items())
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET " + path + b" HTTP/1.1\r\n" + head + b"Connection: close\r\n\r\n")
    await writer.drain()
    status = await reader.readline()
    writer.close()
    await writer.wait_closed()
    return int(status.split()[1])


@pytest.mark.parametrize("attack", ATTACKS, ids=[attack.name for attack in ATTACKS])
async def test_a_refusal_is_one_line_that_shows_what_the_request_sent(attack: Attack) -> None:
    async with guarded() as (port, told):
        assert await send(port, attack.path, attack.headers) == 403
    text = told.getvalue()
    assert text.count("\n") == 1 and text.startswith("handrail serve: refused GET /"), text
    assert _OBEYED.findall(text.rstrip("\n")) == []
    assert attack.shown in text
    assert len(text) < 400, "a refusal must fit on a screen"


async def test_a_refusal_never_prints_the_query_or_a_token_in_it() -> None:
    async with guarded() as (port, told):
        misplaced = f"/?token={TOKEN}".encode()
        assert await send(port, misplaced, ((b"Host", b"evil.example:1"),)) == 403
    assert TOKEN not in told.getvalue() and "token=" not in told.getvalue()


# -- the real handrail serve, and a page in a real browser --------------------------------


@pytest.fixture(scope="module")
def idle_server(tmp_path_factory: pytest.TempPathFactory, site: FixtureSite) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("serve-terminal"), site) as server:
        yield server


def _written(served: Served) -> bytes:
    return served.stderr.read_bytes()


@pytest.mark.slow
async def test_a_page_the_person_visits_cannot_write_to_the_serve_terminal(
    idle_server: Served, tab: Tab, site: FixtureSite
) -> None:
    await load(tab, site.url("/observe/send.html"), timeout=WAIT)
    attack = json.dumps(idle_server.origin + "/clip%1b%5d52;c;aGFuZHJhaWw=%07%1b[2J%c2%9b")
    await page_eval(tab, f"fetch({attack}, {{mode: 'no-cors'}}).then(() => 1, () => 0)")
    until(lambda: b"/clip" in _written(idle_server), WAIT, "the refusal of the page's request")
    written = _written(idle_server)
    for byte in (b"\x1b", b"\x07", "\x9b".encode()):
        assert byte not in written
    line = next(ln for ln in written.decode().splitlines() if "/clip" in ln)
    assert "refused GET /clip␛]52;c;aGFuZHJhaWw=␇␛[2J⟨U+009B⟩" in line


@pytest.mark.slow
def test_a_raw_escape_in_the_request_line_does_not_reach_the_serve_terminal(
    idle_server: Served,
) -> None:
    # aiohttp's parser refuses it (400) and logs why, quoting the request line as bytes.
    port = int(idle_server.origin.rsplit(":", 1)[1])
    before = len(_written(idle_server))
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT) as conn:
        conn.sendall(b"GET /raw\x1b]52;c;aGk=\x07 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert conn.recv(64).startswith(b"HTTP/1.0 400")
    until(lambda: b"/raw" in _written(idle_server)[before:], WAIT, "aiohttp's report of it")
    written = _written(idle_server)[before:]
    assert b"\x1b" not in written and b"\x07" not in written
