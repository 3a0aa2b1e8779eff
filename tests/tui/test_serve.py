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
from typing import Any

import pytest

from core.actions import Action
from core.audit.key import DATA_DIR_ENV
from core.browser.browser import Browser, Tab
from core.cdp import JSON
from core.guard.decision import ApprovalDecision
from core.guard.rules import builtin_policy
from core.run.events import ApprovalRequest, HumanRequest, HumanResponse, NoSupervisor
from core.run.live import LiveRun, LiveSupervisor
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
    with serve_command(
        tmp_path,
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
    ) as server:
        yield server


@contextlib.contextmanager
def serve_command(tmp_path: Path, *args: str) -> Iterator[Served]:
    """``handrail serve --port 0 ARGS...`` as the person starts it, once it has printed its
    URL; stopped with SIGINT (then killed, if it does not stop) when the block ends."""
    stderr_path = tmp_path / "serve.stderr"
    stderr = stderr_path.open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui.cli.main", "serve", "--port", "0", *args],
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
        if proc.poll() is None:
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
    """The text the browser's terminal was sent over the websockets it opened after this
    screen began to listen (escapes removed). A socket opened before (the page before a
    reload, whose last frames may still arrive) is not this screen's: text seen there
    does not mean the new page's socket is open to take a key."""

    def __init__(self, tab: Tab) -> None:
        self.raw = bytearray()
        self.changed = asyncio.Event()
        self._sockets: set[str] = set()
        self._offs = [
            tab.session.on("Network.webSocketCreated", self._created),
            tab.session.on("Network.webSocketFrameReceived", self._frame),
        ]

    def _created(self, params: JSON) -> None:
        self._sockets.add(params["requestId"])

    def _frame(self, params: JSON) -> None:
        response = params["response"]
        if params["requestId"] in self._sockets and response["opcode"] == 2:
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
        for off in self._offs:
            off()


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


async def _press_a(tab: Tab) -> None:
    """The person presses ``a`` (approve) in the page's terminal."""
    await _press(tab, "a")


async def _press(tab: Tab, key: str) -> None:
    """The person presses a letter key in the page's terminal."""
    await page_eval(tab, "document.querySelector('.xterm-helper-textarea').focus()")
    code = f"Key{key.upper()}"
    for kind in ("keyDown", "keyUp"):
        await tab.send(
            "Input.dispatchKeyEvent",
            {"type": kind, "key": key, "code": code, "text": key if kind == "keyDown" else ""},
        )


def _records(tmp_path: Path) -> list[dict[str, Any]]:
    (log,) = (tmp_path / "logs").glob("*.jsonl")  # one run, whatever the pages did
    return [json.loads(line) for line in log.read_text().splitlines()]


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

        await _press_a(tab)
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


SESSION_ENDED_JS = """new Promise((done) => {
  const body = document.body;
  const ended = () => body.classList.contains("-closed") && done(true);
  new MutationObserver(ended).observe(body, {attributes: true});
  ended();
})"""
"""Resolves once textual-serve's page shows "Session ended" (its websocket closed)."""


async def test_another_local_page_cannot_open_the_websocket(
    served: Served, browser: Browser, tab: Tab, site: FixtureSite
) -> None:
    # The person's tab holds the cookie and views the run.
    await tab.send("Network.enable")
    screen = Screen(tab)
    try:
        await load(tab, served.url, timeout=WAIT)
        await screen.until(lambda t: "Observation" in t, "the observatory")
    finally:
        screen.close()
    # A page on another port of 127.0.0.1 (same site: the cookie goes along) tries, in
    # another tab of the same browser.
    other = await browser.new_tab()
    try:
        await load(other, site.url("/observe/send.html"), timeout=WAIT)
        socket_url = json.dumps(served.origin.replace("http:", "ws:") + "/ws?width=80&height=24")
        assert await page_eval(other, SOCKET_JS % socket_url) == "refused"
    finally:
        await browser.close_tab(other)
    told = served.stderr.read_text()
    # Refused by the guard for its origin, and it took nothing over: the person still views.
    assert f"refused GET /ws ({site.url('/').rstrip('/')}): requests from other" in told
    assert "took the run over" not in told
    assert await page_eval(tab, "document.body.classList.contains('-closed')") is False


async def test_a_second_page_with_the_token_takes_the_run_over(
    served: Served, browser: Browser, tab: Tab, site: FixtureSite, tmp_path: Path
) -> None:
    await tab.send("Network.enable")
    first = Screen(tab)
    try:
        await load(tab, served.url, timeout=WAIT)
        await first.until(lambda t: "Approve round" in t, "the approval")
    finally:
        first.close()
    other = await browser.new_tab()
    await other.send("Network.enable")
    second = Screen(other)
    try:
        await load(other, served.url, timeout=WAIT)  # the printed URL, opened again
        await second.until(lambda t: "Approve round" in t, "the same approval in the new tab")
        # The first page is told its session ended (textual-serve's "Session ended" dialog),
        # and the serving terminal says a page took over.
        async with asyncio.timeout(WAIT):
            assert await page_eval(tab, SESSION_ENDED_JS) is True
        assert "another page took the run over" in served.stderr.read_text()
        await _press_a(other)
        await second.until(lambda t: "Run finished" in t, "the run's end")
        # The run is over: q quits the observatory, and handrail serve with the run's code.
        await other.send(
            "Input.dispatchKeyEvent", {"type": "keyDown", "key": "q", "code": "KeyQ", "text": "q"}
        )
        await other.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": "q", "code": "KeyQ"})
        assert served.proc.wait(timeout=WAIT) == 0
    finally:
        second.close()
        await browser.close_tab(other)
    records = _records(tmp_path)
    assert [r["type"] for r in records].count("run_start") == 1
    assert (records[-1]["type"], records[-1]["outcome"]) == ("run_end", "success")
    assert site.posts("/observe/sent")
    assert "the run is over (exit code 0)" in served.stderr.read_text()


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
    last = _records(tmp_path)[-1]
    assert (last["type"], last["outcome"], last["exit_code"]) == ("run_end", "aborted", 130)
    # Who ended it: handrail serve, told so on its terminal (not a page that went away).
    assert last["reason"] == "handrail serve was stopped (SIGINT: Ctrl-C on its terminal)"
    assert not site.posts("/observe/sent")


async def test_a_reload_during_an_approval_comes_back_to_the_same_run(
    served: Served, tab: Tab, site: FixtureSite, tmp_path: Path
) -> None:
    await tab.send("Network.enable")
    first = Screen(tab)
    try:
        await load(tab, served.url, timeout=WAIT)
        await first.until(lambda t: "Approve round" in t, "the approval")
    finally:
        first.close()
    again = Screen(tab)
    try:
        loaded = tab.session.expect("Page.loadEventFired")
        await tab.send("Page.reload", {"ignoreCache": True})
        async with asyncio.timeout(WAIT):
            await loaded
        # The same run's approval, drawn whole for the new page: not a new run's first frame.
        await again.until(lambda t: "Approve round" in t, "the pending approval, again")
        assert "Send" in again.text
        assert not site.posts("/observe/sent"), "nothing may be sent before the approval"
        await _press_a(tab)
        await site.until(lambda got: any(r.path == "/observe/sent" for r in got), timeout=WAIT)
        await again.until(lambda t: "Run finished" in t, "the run's end")
    finally:
        again.close()
    records = _records(tmp_path)
    starts = [r for r in records if r.get("type") == "run_start"]
    end = records[-1]
    assert len(starts) == 1 and (end["type"], end["outcome"]) == ("run_end", "success"), end
    approvals = [r["approval"] for r in records if r.get("type") == "round" and r.get("approval")]
    asked_by = {
        "index": 0,
        "text": 'default = "ask"',
        "policy_sha256": builtin_policy("ask").sha256,
    }
    assert approvals[0] == {"by": "person", "decision": "approved", "rule": asked_by}, approvals
    told = served.stderr.read_text()
    # The reloaded page came back to the run (or, if its socket beat the old one's close,
    # took it over from the page it replaced); either way no second run started.
    assert "a page came back to the run" in told or "took the run over" in told, told


async def test_o_in_the_web_view_opens_the_targets_picture_as_a_real_image(
    served: Served, browser: Browser, tab: Tab, site: FixtureSite
) -> None:
    """Under serve, ``o`` on the approval hands the picture to the person's browser, which
    opens it in a tab of its own: a PNG, behind the same cookie, not half-blocks."""
    screen = Screen(tab)
    try:
        await load(tab, served.url, timeout=WAIT)
        await screen.until(lambda t: "Approve round" in t and "open the picture" in t, "the crop")
        await _press(tab, "o")

        async def picture_tab() -> str:
            while True:
                got = await browser.connection.send("Target.getTargets")
                for info in got["targetInfos"]:
                    if info["type"] == "page" and "/download/" in info["url"]:
                        return str(info["targetId"])
                await asyncio.sleep(0.1)

        async with asyncio.timeout(WAIT):
            target = await picture_tab()
        attached = await browser.connection.send(
            "Target.attachToTarget", {"targetId": target, "flatten": True}
        )
        session = attached["sessionId"]

        async def shown() -> dict[str, Any]:
            while True:
                got = await browser.connection.send(
                    "Runtime.evaluate",
                    {
                        "expression": "({type: document.contentType, "
                        "w: document.images[0] ? document.images[0].naturalWidth : 0})",
                        "returnByValue": True,
                    },
                    session_id=session,
                )
                value = got.get("result", {}).get("value") or {}
                if value.get("w"):
                    return dict(value)
                await asyncio.sleep(0.1)

        async with asyncio.timeout(WAIT):
            image = await shown()
        assert image["type"] == "image/png" and image["w"] > 40, image
        assert not site.posts("/observe/sent"), "o decides nothing"
    finally:
        screen.close()


def _serve_attach(run: str, stderr_path: Path, config: Path) -> subprocess.Popen[str]:
    """``handrail serve --attach RUN --port 0``, as the person starts it."""
    with stderr_path.open("w") as stderr:
        return subprocess.Popen(
            [sys.executable, "-m", "tui.cli.main", "serve", "--attach", run, "--port", "0"],
            cwd=ROOT,
            env={**os.environ, "XDG_CONFIG_HOME": str(config)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            start_new_session=True,
        )


class _NobodyHere:
    """The run's own supervisor when nobody is at its terminal."""

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        raise NoSupervisor("nobody here")

    async def human(self, request: HumanRequest) -> HumanResponse:
        raise NoSupervisor("nobody here")


async def test_serve_attach_gates_a_live_run_and_stopping_it_leaves_the_run_going(
    tab: Tab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "data"))
    aborted: list[str] = []
    run = LiveRun("5e4e5e4e5e4e", "Send the note", None, on_abort=aborted.append)
    await run.start()
    question = ApprovalRequest(
        round=1,
        action=Action("click", {"index": 2}, reason="send the note"),
        url="http://127.0.0.1:1/send",
        title="Send",
        why="every page-changing action asks",
        element_line="[2]<button>Send</button>",
    )
    asking = asyncio.create_task(LiveSupervisor(_NobodyHere(), run, wait=WAIT).approve(question))
    stderr_path = tmp_path / "serve.stderr"
    proc = _serve_attach("5e4e", stderr_path, tmp_path / "config")
    try:
        assert proc.stdout is not None
        line = await asyncio.to_thread(proc.stdout.readline)
        found = re.search(r"open (http://\S+)", line)
        assert found, f"no URL printed: {line!r} {stderr_path.read_text()}"
        assert "the run goes on" in await asyncio.to_thread(proc.stdout.readline)
        await tab.send("Network.enable")
        screen = Screen(tab)
        try:
            await load(tab, found.group(1), timeout=WAIT)
            await screen.until(lambda t: "Approve round" in t, "the live run's approval")
            assert "Send" in screen.text
            await _press_a(tab)
            decision = await asyncio.wait_for(asking, WAIT)
            assert (decision.decision, decision.by) == ("approved", "person")
        finally:
            screen.close()
        proc.send_signal(signal.SIGINT)
        assert await asyncio.to_thread(proc.wait, WAIT) == 130
        assert "stopped; the run goes on" in stderr_path.read_text()
        assert aborted == [] and run.path is not None and run.path.exists()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
        await run.close()


def test_serve_attach_takes_no_run_options_and_names_a_run_that_is_not_live(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "data"))
    from tui.cli.main import dispatch

    assert dispatch(["serve", "--attach", "abc", "--headless"]) == 2
    assert "only --host, --port, --theme and --watch" in capsys.readouterr().err
    assert dispatch(["serve", "--attach", "abc"]) == 2
    assert "no live run starts with abc" in capsys.readouterr().err
