"""``handrail serve``: the observatory in a real (headless) Chromium, behind a token.

The server runs as the person starts it (a subprocess of ``python -m tui.cli.main serve``); the
browser is our own headless Chromium. What the page shows is read from the websocket frames
the browser received (xterm.js draws on a canvas), and the run's effect from the fixture
site (what it was sent) and the audit log.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from core.browser.browser import Tab
from core.cdp import JSON
from tests.helpers import load, page_eval
from tests.helpers.site_server import FixtureSite
from tui.cli.main import build_parser
from tui.web.serve import bind_warning, run_argv

# End to end: whole actions or runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
WAIT = 90.0  # a run with its own Chromium, inside a served observatory, on a busy machine
_ESCAPE = re.compile(r"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


class Served:
    """A running ``handrail serve`` and the URL it printed."""

    def __init__(self, proc: subprocess.Popen[str], url: str, stderr: Path) -> None:
        self.proc = proc
        self.url = url
        self.stderr = stderr
        self.origin = url.split("/?", 1)[0]


@pytest.fixture(autouse=True)
def _fresh_site(site: FixtureSite) -> None:
    site.clear()  # what an earlier test's run sent is not this test's


@contextlib.contextmanager
def serving(tmp_path: Path, site: FixtureSite) -> Iterator[Served]:
    """``handrail serve`` of a run that clicks Send (after approval), until SIGINT."""
    plan = tmp_path / "plan.jsonl"
    plan.write_text(
        '{"tool": "click", "target": "Send", "reason": "send the note"}\n'
        '{"tool": "finish", "input": {"success": true, "answer": "sent"}}\n'
    )
    stderr_path = tmp_path / "serve.stderr"
    stderr = stderr_path.open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tui.cli.main",
            "serve",
            "--port",
            "0",
            "Send the note",
            "--headless",
            "--model",
            f"scripted:{plan}",
            "--start-url",
            site.url("/observe/send.html"),
            "--audit-dir",
            str(tmp_path / "logs"),
            "--profile",
            str(tmp_path / "profile"),
        ],
        cwd=ROOT,
        env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"open (http://\S+)", line)
        assert found, f"no URL printed: {line!r} {stderr_path.read_text()}"
        yield Served(proc, found.group(1), stderr_path)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
        stderr.close()


@pytest.fixture
def served(tmp_path: Path, site: FixtureSite) -> Iterator[Served]:
    """A server of our own: the test starts the run it serves."""
    with serving(tmp_path, site) as server:
        yield server


@pytest.fixture(scope="module")
def idle_server(tmp_path_factory: pytest.TempPathFactory, site: FixtureSite) -> Iterator[Served]:
    """One server for the tests that are refused before any run starts."""
    with serving(tmp_path_factory.mktemp("serve"), site) as server:
        yield server


def _status(url: str, headers: dict[str, str] | None = None) -> int:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


class Screen:
    """The text the browser's terminal was sent over the websocket (escapes removed)."""

    def __init__(self, tab: Tab) -> None:
        self.raw = bytearray()
        self.changed = asyncio.Event()
        self._off = tab.session.on("Network.webSocketFrameReceived", self._frame)

    def _frame(self, params: JSON) -> None:
        response = params["response"]
        if response["opcode"] == 2:
            self.raw += base64.b64decode(response["payloadData"])
            self.changed.set()

    @property
    def text(self) -> str:
        return _ESCAPE.sub("", self.raw.decode("utf-8", errors="replace"))

    async def until(self, ok: Callable[[str], bool], what: str) -> None:
        async with asyncio.timeout(WAIT):
            while not ok(self.text):
                self.changed.clear()
                await self.changed.wait()
        assert ok(self.text), what

    def close(self) -> None:
        self._off()


def test_run_argv_drops_only_the_serve_options() -> None:
    argv = ["serve", "--host", "127.0.0.2", "task", "--port=9", "--headless", "--", "--port"]
    assert run_argv(argv) == ["task", "--headless", "--", "--port"]


def test_serve_listens_on_loopback_unless_told_and_warns_then() -> None:
    args = build_parser().parse_args(["serve", "a task"])
    assert (args.host, bind_warning(args.host)) == ("127.0.0.1", None)
    assert bind_warning("localhost") is None and bind_warning("::1") is None
    warning = bind_warning("0.0.0.0")
    assert warning is not None and "approve its actions" in warning


def test_requests_without_the_token_are_refused(idle_server: Served) -> None:
    served = idle_server
    assert _status(served.origin + "/") == 403
    assert _status(served.origin + "/static/js/textual.js") == 403
    assert _status(served.origin + "/?token=not-the-token") == 403
    # A page of another site that learnt the port still cannot get in with a good token
    # (DNS rebinding: its Host is its own name; a websocket from it has its Origin).
    token_query = served.url.split("/?", 1)[1]
    port = served.origin.rsplit(":", 1)[1]
    assert _status(served.url, {"Host": f"evil.example:{port}"}) == 403
    assert _status(served.url, {"Origin": "http://evil.example"}) == 403
    # Another port of 127.0.0.1 is the same site, so its requests carry the cookie.
    assert _status(served.url, {"Sec-Fetch-Site": "same-site"}) == 403
    assert token_query.startswith("token=")


def test_the_token_becomes_an_httponly_strict_cookie(idle_server: Served) -> None:
    served = idle_server

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kw: object) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect)
    with pytest.raises(urllib.error.HTTPError) as answer:
        opener.open(served.url, timeout=10)
    headers = answer.value.headers
    assert answer.value.code == 303 and headers["Location"] == "/"
    cookie = headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie, cookie
    assert "Access-Control-Allow-Origin" not in headers
    assert headers["X-Frame-Options"] == "DENY"


async def test_the_browser_shows_the_observatory_and_a_approves(
    served: Served, tab: Tab, site: FixtureSite, tmp_path: Path
) -> None:
    await tab.send("Network.enable")
    screen = Screen(tab)
    try:
        await load(tab, served.url, timeout=WAIT)
        # The token left the address bar for the cookie; page scripts cannot read it.
        assert await page_eval(tab, "location.href") == served.origin + "/"
        assert await page_eval(tab, "document.cookie") == ""

        titles = ("Observation", "Model output", "Action", "Result")
        await screen.until(lambda t: all(title in t for title in titles), "the four panes")
        await screen.until(lambda t: "Approve round" in t, "the approval")
        assert not site.posts("/observe/sent"), "nothing may be sent before the approval"

        await page_eval(tab, "document.querySelector('.xterm-helper-textarea').focus()")
        for kind in ("keyDown", "keyUp"):
            await tab.send(
                "Input.dispatchKeyEvent",
                {
                    "type": kind,
                    "key": "a",
                    "code": "KeyA",
                    "text": "a" if kind == "keyDown" else "",
                },
            )
        await site.until(lambda got: any(r.path == "/observe/sent" for r in got), timeout=WAIT)
        await screen.until(lambda t: "Run finished" in t, "the run's end")
    finally:
        screen.close()
    (log,) = (tmp_path / "logs").glob("*.jsonl")
    records = [json.loads(line) for line in log.read_text().splitlines()]
    approvals = [r["approval"] for r in records if r.get("type") == "round" and r.get("approval")]
    assert approvals and approvals[0]["decision"] == "approved", approvals


async def test_a_browser_without_the_token_gets_403(idle_server: Served, tab: Tab) -> None:
    served = idle_server
    await tab.send("Network.enable")
    answered = tab.session.expect("Network.responseReceived")
    await load(tab, served.origin + "/", timeout=WAIT)
    response = (await answered)["response"]
    assert response["status"] == 403
    assert "open the URL handrail printed" in await page_eval(tab, "document.body.innerText")


SOCKET_JS = """new Promise((done) => {
  const ws = new WebSocket(%s);
  ws.onopen = () => { ws.close(); done("opened"); };
  ws.onerror = () => done("refused");
})"""


async def test_another_local_page_cannot_open_the_websocket(
    served: Served, tab: Tab, site: FixtureSite
) -> None:
    # The person's browser holds the cookie; their tab then leaves (its session ends).
    await load(tab, served.url, timeout=WAIT)
    await load(tab, site.url("/observe/send.html"), timeout=WAIT)
    # A page on another port of 127.0.0.1 (same site: the cookie goes along) tries.
    socket_url = json.dumps(served.origin.replace("http:", "ws:") + "/ws?width=80&height=24")
    assert await page_eval(tab, SOCKET_JS % socket_url) == "refused"
    # Refused by the guard for its origin (not merely busy with the person's session).
    assert f"refused GET /ws ({site.url('/').rstrip('/')}): requests from other" in (
        served.stderr.read_text()
    )


async def test_stopping_serve_during_an_approval_aborts_the_run_and_closes_its_log(
    served: Served, tab: Tab, site: FixtureSite, tmp_path: Path
) -> None:
    await tab.send("Network.enable")
    screen = Screen(tab)
    try:
        await load(tab, served.url, timeout=WAIT)
        await screen.until(lambda t: "Approve round" in t, "the approval")
    finally:
        screen.close()
    served.proc.send_signal(signal.SIGINT)
    served.proc.wait(timeout=WAIT)
    (log,) = (tmp_path / "logs").glob("*.jsonl")
    last = json.loads(log.read_text().splitlines()[-1])
    assert (last["type"], last["outcome"], last["exit_code"]) == ("run_end", "aborted", 130)
    assert not site.posts("/observe/sent")
