"""The network guard: what each --network mode lets reach a host outside --allow-domain.

Real Chromium; the run may reach the site (127.0.0.1) and a partner (127.0.0.3); the
attacker is on 127.0.0.2, a different address and so a different site. The page on the
site holds a canary token and sends it to the attacker through one channel per test.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from urllib.parse import quote

import pytest

from core.browser.browser import Browser, Tab
from core.guard.allowlist import DomainGuard, NetworkMode, webrtc_direct_hosts
from core.guard.decision import ApprovalDecision
from core.guard.policy import url_allowed
from core.run.events import ApprovalRequest, HumanRequest, HumanResponse
from core.run.session import ConfigError, RunSettings, prepare, run_session
from tests.conftest import launch_browser
from tests.helpers import load, page_eval
from tests.helpers.fake_anthropic import FakeAnthropic
from tests.helpers.loopback import second_site, third_site  # noqa: F401
from tests.helpers.site_server import FixtureSite

CANARY = "canary-5d1e0b7a9c"
UNREGISTER = (
    "navigator.serviceWorker.getRegistrations()"
    ".then(all => Promise.all(all.map(r => r.unregister())))"
)

# What README.md says each mode lets through to a host outside --allow-domain.
SUBRESOURCES = (
    "image",
    "fetch-get",
    "fetch-post",
    "beacon",
    "websocket",
    "eventsource",
    "css-background",
    "script",
    "stylesheet",
    "prefetch",
    "worker",
    "worker-websocket",
    "service-worker",
)
# Speculation rules: switched off at launch, so no mode lets them through.
SPECULATIVE = ("prerender", "speculation-prefetch")
FRAME_ESCAPES = ("nest", "navigate", "post", "popup")


class Guarded:
    """A browser of its own with a guard in one mode; waits on the guard's blocks."""

    def __init__(self, browser: Browser, guard: DomainGuard) -> None:
        self.browser = browser
        self.guard = guard
        self._waiters: dict[str, asyncio.Event] = {}
        guard.block_listeners.append(self._blocked)

    def _blocked(self, host: str, url: str) -> None:
        self._waiters.setdefault(host, asyncio.Event()).set()

    async def until_blocked(self, host: str, timeout: float = 10) -> None:
        async with asyncio.timeout(timeout):
            await self._waiters.setdefault(host, asyncio.Event()).wait()

    def forget(self) -> None:
        self._waiters.clear()
        self.guard.drain()


async def guarded_browser(tmp_path: Path, mode: NetworkMode, allow: list[str]) -> Guarded:
    # Launched as handrail launches for this mode (core/run/session.py open_browser).
    direct = webrtc_direct_hosts(allow) if mode == "strict" else None
    browser = await launch_browser(tmp_path, direct_hosts=direct)
    guard = DomainGuard(browser, allow, mode)
    await guard.install()
    return Guarded(browser, guard)


@pytest.fixture(scope="module")
async def strict(
    tmp_path_factory: pytest.TempPathFactory,
    site: FixtureSite,
    third_site: FixtureSite,  # noqa: F811
) -> AsyncIterator[Guarded]:
    g = await guarded_browser(
        tmp_path_factory.mktemp("strict"), "strict", ["127.0.0.1", "127.0.0.3"]
    )
    yield g
    await g.browser.close()


@pytest.fixture(scope="module")
async def documents(
    tmp_path_factory: pytest.TempPathFactory,
    site: FixtureSite,
    third_site: FixtureSite,  # noqa: F811
) -> AsyncIterator[Guarded]:
    g = await guarded_browser(
        tmp_path_factory.mktemp("documents"), "documents", ["127.0.0.1", "127.0.0.3"]
    )
    yield g
    await g.browser.close()


async def leak(g: Guarded, site: FixtureSite, attacker: FixtureSite, via: str) -> Tab:
    """Open the exfiltration page in a new tab, type the canary, press Continue."""
    attacker.clear()
    g.forget()
    tab = await g.browser.new_tab()
    await load(tab, site.url(f"/guard/exfil.html?to={quote(attacker.origin)}&via={via}"))
    await page_eval(
        tab,
        f"document.querySelector('#token').value = {CANARY!r};"
        "document.querySelector('#send').click()",
    )
    return tab


async def settle(tab: Tab) -> None:
    """Let the page's own clock run: a request the allowed site answers after 300 ms.
    Anything the channel was going to send is on its way by then."""
    await page_eval(tab, "fetch('/__slow?ms=300').then(r => r.status)")


async def close(g: Guarded, tab: Tab) -> None:
    await page_eval(tab, UNREGISTER)
    await g.browser.close_tab(tab)


@pytest.mark.parametrize("via", SUBRESOURCES)
async def test_strict_blocks_every_channel_to_another_host(
    strict: Guarded,
    site: FixtureSite,
    second_site: FixtureSite,  # noqa: F811
    via: str,
) -> None:
    tab = await leak(strict, site, second_site, via)
    try:
        await strict.until_blocked("127.0.0.2")
        await settle(tab)
        assert second_site.received == []
    finally:
        await close(strict, tab)


@pytest.mark.parametrize("via", SUBRESOURCES)
async def test_documents_lets_subresources_through(
    documents: Guarded,
    site: FixtureSite,
    second_site: FixtureSite,  # noqa: F811
    via: str,
) -> None:
    tab = await leak(documents, site, second_site, via)
    try:
        await second_site.until(lambda received: any(r.path.startswith("/leak") for r in received))
        assert documents.guard.blocked["127.0.0.2"] == 0
    finally:
        await close(documents, tab)


@pytest.mark.parametrize("mode", ["strict", "documents"])
@pytest.mark.parametrize("via", SPECULATIVE)
async def test_speculative_loads_never_reach_another_host(
    strict: Guarded,
    documents: Guarded,
    site: FixtureSite,
    second_site: FixtureSite,  # noqa: F811
    mode: str,
    via: str,
) -> None:
    g = strict if mode == "strict" else documents
    tab = await leak(g, site, second_site, via)
    try:
        await settle(tab)
        assert second_site.received == []
    finally:
        await close(g, tab)


class Listeners:
    """A UDP and a TCP listener on the attacker's address (STUN/TURN/ICE server ports):
    what arrives there, whole datagrams and the first bytes of each connection."""

    def __init__(self) -> None:
        self.arrived: list[tuple[str, bytes]] = []
        self.any = asyncio.Event()
        self.udp = self.tcp = 0
        self._closers: list[Callable[[], object]] = []

    def got(self, kind: str, data: bytes) -> None:
        self.arrived.append((kind, data))
        self.any.set()

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        listeners = self

        class Udp(asyncio.DatagramProtocol):
            def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
                listeners.got("udp", data)

        transport, _ = await loop.create_datagram_endpoint(Udp, local_addr=("127.0.0.2", 0))
        self.udp = transport.get_extra_info("sockname")[1]

        async def on_tcp(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            listeners.got("tcp", await reader.read(512))
            writer.close()

        server = await asyncio.start_server(on_tcp, "127.0.0.2", 0)
        self.tcp = server.sockets[0].getsockname()[1]
        self._closers += [transport.close, server.close]

    def close(self) -> None:
        for close in self._closers:
            close()


@pytest.fixture
async def attacker_ports() -> AsyncIterator[Listeners]:
    listeners = Listeners()
    await listeners.start()
    yield listeners
    listeners.close()


# WebRTC routes of tests/site/guard/webrtc.html: STUN and TURN servers on the attacker,
# and the canary as the ICE username of checks sent to the attacker (from the page, a
# fresh child frame, a fresh popup).
WEBRTC = ("stun", "turn-udp", "turn-tcp", "ice", "frame-ice", "popup-ice")


async def call(g: Guarded, site: FixtureSite, ports: Listeners, via: str) -> Tab:
    g.forget()
    tab = await g.browser.new_tab()
    query = f"t={CANARY}&to=127.0.0.2&udp={ports.udp}&tcp={ports.tcp}&via={via}"
    await load(tab, site.url(f"/guard/webrtc.html?{query}"))
    if via == "popup-ice":
        await tab.send(
            "Runtime.evaluate",
            {"expression": "document.querySelector('#go').click()", "userGesture": True},
        )
    return tab


@pytest.mark.parametrize("via", WEBRTC)
async def test_strict_keeps_webrtc_from_another_host(
    strict: Guarded, site: FixtureSite, attacker_ports: Listeners, via: str
) -> None:
    tab = await call(strict, site, attacker_ports, via)
    try:
        assert await page_eval(tab, "window.sent") == "sent"
        await settle(tab)
        assert attacker_ports.arrived == []
    finally:
        await strict.browser.close_tab(tab)


@pytest.mark.parametrize("via", ["stun", "turn-tcp", "ice"])
async def test_documents_lets_webrtc_through(
    documents: Guarded, site: FixtureSite, attacker_ports: Listeners, via: str
) -> None:
    tab = await call(documents, site, attacker_ports, via)
    try:
        async with asyncio.timeout(10):
            await attacker_ports.any.wait()
        if via == "ice":  # the ICE username carries the canary
            assert any(CANARY.encode() in data for _, data in attacker_ports.arrived)
    finally:
        await documents.browser.close_tab(tab)


def test_the_direct_hosts_are_the_allowlist_as_chrome_writes_it() -> None:
    rules = webrtc_direct_hosts(["shop.example", "*.cdn.example", "[::1]:8080", "h[0-9]:443"])
    assert rules == ("shop.example", "*.shop.example", "*.cdn.example", "[::1]:8080", "h?:443")


@pytest.fixture(scope="module")
async def persons_chrome(
    tmp_path_factory: pytest.TempPathFactory, chrome_path: str
) -> AsyncIterator[Guarded]:
    """A person's own Chrome, started without any of handrail's flags or preferences (so
    "Preload pages" is on, as by default), which handrail connects to in strict mode."""
    profile = tmp_path_factory.mktemp("persons-profile")
    args = [chrome_path, "--headless", f"--user-data-dir={profile}", "--remote-debugging-port=0"]
    args += ["--no-first-run", "--no-default-browser-check", "--mute-audio"]
    if os.geteuid() == 0:
        args.append("--no-sandbox")
    process = await asyncio.create_subprocess_exec(
        *args,
        "about:blank",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    rest: asyncio.Future[bytes] | None = None
    try:
        assert process.stderr is not None
        async with asyncio.timeout(30):
            line = b""
            while b"DevTools listening on " not in line:
                line = await process.stderr.readline()
                assert line, "Chrome exited before it listened"
        # Keep reading what Chrome writes, so a full pipe never stalls it.
        rest = asyncio.ensure_future(process.stderr.read())
        browser = await Browser.connect(line.split(b"listening on ", 1)[1].strip().decode())
        guard = DomainGuard(browser, ["127.0.0.1"], "strict")
        await guard.install()
        yield Guarded(browser, guard)
        await browser.close()
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
        if rest is not None:
            await rest


# Speculation rules that make the browser prefetch a same-origin URL which redirects to
# the attacker: listed, filled in after insertion, document rules over a link.
SPECULATION_RULES = (
    "prerender",
    "speculation-prefetch",
    "speculation-late-text",
    "speculation-document-rules",
)


@pytest.mark.parametrize("via", SPECULATION_RULES)
async def test_inline_speculation_rules_do_not_prefetch_in_a_browser_we_connect_to(
    persons_chrome: Guarded,
    site: FixtureSite,
    second_site: FixtureSite,  # noqa: F811
    via: str,
) -> None:
    tab = await leak(persons_chrome, site, second_site, via)
    try:
        await settle(tab)
        assert second_site.received == []
        # The rules are gone from the page, so nothing can be prefetched from them later.
        rules = "document.querySelectorAll('script[type=speculationrules]').length"
        assert await page_eval(tab, rules) == 0
    finally:
        await persons_chrome.browser.close_tab(tab)


async def test_a_popup_filled_with_speculation_rules_still_prefetches_in_a_browser_we_connect_to(
    persons_chrome: Guarded,
    site: FixtureSite,
    second_site: FixtureSite,  # noqa: F811
) -> None:
    """What README says remains open: the page writes rules into an about:blank popup it
    opens (no document-start script runs in that first document, and the page writes
    synchronously), so the person's "Preload pages" setting decides."""
    second_site.clear()
    persons_chrome.forget()
    tab = await persons_chrome.browser.new_tab()
    try:
        await load(
            tab, site.url(f"/guard/exfil.html?to={quote(second_site.origin)}&via=speculation-popup")
        )
        press = (
            "document.querySelector('#token').value = 'x'; document.querySelector('#send').click()"
        )
        await tab.send("Runtime.evaluate", {"expression": press, "userGesture": True})
        await second_site.until(lambda received: any(r.path == "/leak" for r in received))
    finally:
        await persons_chrome.browser.close_tab(tab)


async def test_a_speculation_rules_header_does_not_prefetch_in_a_browser_we_connect_to(
    persons_chrome: Guarded,
    site: FixtureSite,
    second_site: FixtureSite,  # noqa: F811
) -> None:
    second_site.clear()
    tab = await persons_chrome.browser.new_tab()
    try:
        await load(tab, site.url(f"/__ruled?to={quote(second_site.url('/leak'), safe='')}"))
        await site.until(lambda received: any(r.path == "/__rules" for r in received))
        await settle(tab)
        assert second_site.received == []
    finally:
        await persons_chrome.browser.close_tab(tab)


async def escape(
    g: Guarded, site: FixtureSite, partner: FixtureSite, attacker: FixtureSite, via: str
) -> Tab:
    """A page on the site with a frame from the partner (allowed, another site: an
    out-of-process frame) that tries to reach the attacker when its button is clicked."""
    attacker.clear()
    g.forget()
    frame = partner.url(f"/guard/escape.html?to={quote(attacker.origin)}&via={via}")
    tab = await g.browser.new_tab()
    await load(tab, site.url(f"/guard/framed.html?frame={quote(frame, safe='')}"))
    # The frame's own load is part of the page's: wait for its button, then click it.
    assert await page_eval(tab, "window.frameReady") is True
    # Press the frame's button as a person would (with a user gesture, so a popup may open).
    (frame_child,) = g.guard.children.children(tab)
    await frame_child.session.send(
        "Runtime.evaluate",
        {"expression": "document.querySelector('#go').click()", "userGesture": True},
    )
    return tab


@pytest.mark.parametrize("mode", ["strict", "documents"])
@pytest.mark.parametrize("via", FRAME_ESCAPES)
async def test_an_allowed_frame_cannot_take_the_page_to_a_blocked_host(
    strict: Guarded,
    documents: Guarded,
    site: FixtureSite,
    second_site: FixtureSite,  # noqa: F811
    third_site: FixtureSite,  # noqa: F811
    mode: str,
    via: str,
) -> None:
    g = strict if mode == "strict" else documents
    tab = await escape(g, site, third_site, second_site, via)
    try:
        await g.until_blocked("127.0.0.2")
        await settle(tab)
        assert second_site.received == []
        assert third_site.requested("/guard/escape.html")  # the partner's frame did load
    finally:
        await g.browser.close_tab(tab)


async def test_a_popup_to_an_allowed_host_loads_and_is_guarded_from_its_first_document(
    strict: Guarded,
    site: FixtureSite,
    second_site: FixtureSite,  # noqa: F811
) -> None:
    second_site.clear()
    strict.forget()
    tab = await strict.browser.new_tab()
    popup = site.url(f"/guard/exfil.html?to={quote(second_site.origin)}&via=websocket&auto=1")
    try:
        await load(tab, site.url("/cdp/hello.html"))
        opened = f"window.open({json.dumps(popup)}, '_blank') !== null"
        assert await page_eval_with_gesture(tab, opened) is True
        # A WebSocket never reaches Fetch: only the connect policy in the popup's first
        # document can refuse it, and its refusal is what the guard reports.
        await strict.until_blocked("127.0.0.2")
        assert site.requested("/guard/exfil.html")
        assert second_site.received == []
    finally:
        targets = await strict.browser.connection.send("Target.getTargets")
        for info in targets["targetInfos"]:
            if "/guard/exfil.html" in info.get("url", ""):
                await strict.browser.connection.send(
                    "Target.closeTarget", {"targetId": info["targetId"]}
                )
        await strict.browser.close_tab(tab)


async def page_eval_with_gesture(tab: Tab, expression: str) -> object:
    result = await tab.send(
        "Runtime.evaluate",
        {"expression": expression, "returnByValue": True, "userGesture": True},
    )
    return result["result"].get("value")


class NoOneAsked:
    """A supervisor for runs that must never ask the person anything."""

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        raise AssertionError(f"asked to approve {request}")

    async def human(self, request: HumanRequest) -> HumanResponse:
        raise AssertionError(f"asked for a person: {request}")


async def test_a_blocked_host_is_one_notice_in_the_digest_and_one_line_in_the_log(
    tmp_path: Path,
    site: FixtureSite,
    fake: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    attacker = FixtureSite("127.0.0.4")
    try:
        monkeypatch.setenv("CANARY_TOKEN", CANARY)
        fake.add_tool_use("finish", {"success": True, "answer": "done", "reason": "test"})
        to = quote(attacker.origin)
        settings = RunSettings(
            task="Look at the page",
            start_url=site.url(f"/guard/exfil.html?to={to}&via=image&auto=5"),
            model_spec="anthropic:claude-sonnet-5-5",
            approve="none",
            headless=True,
            profile=tmp_path / "profile",
            audit_dir=tmp_path / "logs",
            allow_domains=("127.0.0.1",),
            secrets=("TOKEN=CANARY_TOKEN",),  # a secret: strict by default
        )
        finished = await run_session(settings, supervisor=NoOneAsked())
        assert finished.exit_code == 0
        assert attacker.received == []
        digest = json.dumps(fake.message_bodies[0])
        assert digest.count("blocked a request to 127.0.0.4 (image: ") == 1
        (oplog,) = (tmp_path / "logs").glob("*.log")
        lines = [line for line in oplog.read_text().splitlines() if "allowlist.blocked" in line]
        assert len(lines) == 1 and "127.0.0.4" in lines[0]
        (audit,) = (tmp_path / "logs").glob("*.jsonl")
        assert audit.read_text().count("blocked a request to 127.0.0.4 (image: ") == 1
    finally:
        attacker.stop()


async def test_the_persons_own_new_tab_is_not_intercepted(
    tmp_path: Path,
    site: FixtureSite,
    second_site: FixtureSite,  # noqa: F811
) -> None:
    person = await launch_browser(tmp_path / "persons-chrome")
    ours = await Browser.connect(person.ws_url)
    try:
        guard = DomainGuard(ours, ["127.0.0.1"])
        await guard.install()
        blocked = asyncio.Event()
        guard.block_listeners.append(lambda host, url: blocked.set())
        tab = await ours.new_tab()
        await tab.send("Page.navigate", {"url": second_site.url("/cdp/hello.html?who=ours")})
        async with asyncio.timeout(10):
            await blocked.wait()
        # The person opens a tab of their own and goes to the same host: nothing stops them.
        theirs = await person.new_tab()
        await load(theirs, second_site.url("/cdp/hello.html?who=theirs"))
        assert await page_eval(theirs, "document.title") == "Hello"
        who = [r.query.get("who") for r in second_site.received if r.path == "/cdp/hello.html"]
        assert who == [["theirs"]]  # theirs loaded; ours never reached the host
        assert guard.blocked == {"127.0.0.2": 1}
    finally:
        await ours.close()
        await person.close()


@pytest.mark.parametrize(
    ("entry", "url", "allowed"),
    [
        ("[::1]", "http://[::1]:8080/", True),
        ("[::1]:8080", "http://[::1]:8080/", True),
        ("[::1]:8080", "http://[::1]:9090/", False),
        ("::1", "http://[::1]/", True),
        ("127.0.0.1:8080", "http://127.0.0.1:8080/a", True),
        ("127.0.0.1:8080", "http://127.0.0.1:8081/a", False),
        ("shop.example:443", "https://www.shop.example/", True),
        ("shop.example:443", "http://shop.example/", False),
        ("*.shop.example", "https://shop.example/", False),
    ],
)
def test_allow_domain_takes_ipv6_and_ports(entry: str, url: str, allowed: bool) -> None:
    assert url_allowed(url, [entry]) is allowed


@pytest.mark.parametrize("entry", ["[::1", "host:0", "host:http", "http://host/", ""])
def test_a_malformed_allow_domain_is_refused_before_the_browser_starts(entry: str) -> None:
    settings = RunSettings(task="t", allow_domains=(entry,), model_spec="scripted:/nonexistent")
    with pytest.raises(ConfigError, match="--allow-domain"):
        asyncio.run(prepare(settings, env={}, check_model=False))
