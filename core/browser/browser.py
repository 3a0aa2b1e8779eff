"""Whose Chrome, and which tabs.

Launch mode (default) finds Chrome or Chromium, starts it with a dedicated profile (never
the person's everyday one) and ``--remote-debugging-port=0``, and reads the port Chrome
chose from the profile's ``DevToolsActivePort``. Connect mode attaches to a browser that is
already running: a CDP URL (``http://host:port`` or ``ws://...``), or the person's own
Chrome through chrome://inspect's remote-debugging switch. Connect mode never launches.

handrail works only in tabs it opened (and tabs those tabs opened): it never navigates,
reads or closes anyone else's. If the person closes our tab, :meth:`Browser.active_tab`
opens a new one; if the connection died, it reconnects (or relaunches the browser it
started). Both are reported to the caller as notices.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import structlog

from core.browser.preloading import PRERENDER_FEATURES, disable_preloading, restrict_webrtc
from core.cdp import JSON, CDPConnection, CDPError, CDPSession, ConnectionClosed, HandshakeRefused

log = structlog.get_logger("handrail.browser")

# Flags that keep Chrome from phoning home; on a closed network it retries endlessly otherwise.
QUIET_FLAGS = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-default-apps",
    # Prerendering loads pages outside the tab's Fetch: the network guard could not see it.
    f"--disable-features=Translate,MediaRouter,OptimizationHints,{','.join(PRERENDER_FEATURES)}",
    "--metrics-recording-only",
    "--password-store=basic",
    "--use-mock-keychain",
)

CHROME_NAMES = (
    "google-chrome",
    "google-chrome-stable",
    "chromium",
    "chromium-browser",
    "chrome",
    "google-chrome-beta",
    "google-chrome-unstable",
)

# Places outside the usual PATH (folders on PATH are searched by name first).
CHROME_LOCATIONS = (
    "/opt/google/chrome/chrome",
    "/snap/bin/chromium",
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
    "/Applications/Google Chrome Canary.app/Contents/MacOS/Google Chrome Canary",
)


class BrowserError(Exception):
    """Finding, starting or reaching the browser failed. The message says what to do."""


class ChromeNotFound(BrowserError):
    pass


class TabGone(BrowserError):
    """Our tab was closed or crashed and could not be replaced."""


class PopupRefused(BrowserError):
    """A page opened a tab the run may not have (its pool is full); the tab was closed."""


class SlotSource(Protocol):
    """Where a pooled run's tabs come from (core/pool): it never opens or lists tabs itself."""

    async def new_target(self, browser: Browser) -> str:
        """A slot's target for another tab of this run; raises BrowserError when none."""
        ...

    async def take_popup(self, browser: Browser, target_id: str) -> None:
        """Give a popup a slot, or close it and raise :class:`PopupRefused`."""
        ...


def find_chrome(env: Mapping[str, str] | None = None) -> str:
    """Path of a Chrome/Chromium executable: ``CHROME_PATH``, then the usual names on
    ``PATH``, then the usual install locations on Linux and macOS.

    Raises :class:`ChromeNotFound` with installation advice.
    """
    env = os.environ if env is None else env
    explicit = env.get("CHROME_PATH")
    if explicit:
        if os.path.isfile(explicit) and os.access(explicit, os.X_OK):
            return explicit
        raise ChromeNotFound(f"CHROME_PATH is set to {explicit!r}, which is not an executable file")
    path_var = env.get("PATH", os.defpath)
    for name in CHROME_NAMES:
        found = shutil.which(name, path=path_var)
        if found:
            return found
    home = env.get("HOME", "")
    for location in (
        *CHROME_LOCATIONS,
        f"{home}/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    ):
        if os.path.isfile(location) and os.access(location, os.X_OK):
            return location
    raise ChromeNotFound(
        "no Chrome or Chromium found (looked at CHROME_PATH, PATH and the usual install places). "
        "Install one (Debian/Ubuntu: `sudo apt-get install chromium`), set CHROME_PATH to its "
        "executable, or attach to a running browser with --cdp-url or --connect."
    )


def default_profile_dir(env: Mapping[str, str] | None = None) -> Path:
    """handrail's own browser profile, under the user's data directory."""
    env = os.environ if env is None else env
    home = Path(env.get("HOME", str(Path.home())))
    if sys.platform == "darwin":
        base = home / "Library" / "Application Support"
    else:
        base = Path(env.get("XDG_DATA_HOME") or home / ".local" / "share")
    return base / "handrail" / "chrome-profile"


def standard_profile_dirs(env: Mapping[str, str] | None = None) -> list[Path]:
    """Where the person's everyday Chrome keeps its profile (for ``--connect``)."""
    env = os.environ if env is None else env
    home = Path(env.get("HOME", str(Path.home())))
    if sys.platform == "darwin":
        support = home / "Library" / "Application Support"
        names = ["Google/Chrome", "Google/Chrome Beta", "Google/Chrome Canary", "Chromium"]
        return [support / n for n in names]
    config = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    names = ["google-chrome", "google-chrome-beta", "google-chrome-unstable", "chromium"]
    return [config / n for n in names]


def read_devtools_active_port(profile: Path) -> tuple[int, str] | None:
    """``(port, browser websocket path)`` from a profile's DevToolsActivePort, if present."""
    try:
        lines = (profile / "DevToolsActivePort").read_text().splitlines()
        port = int(lines[0].strip())
        path = lines[1].strip() if len(lines) > 1 else ""
    except (OSError, ValueError, IndexError):
        return None
    return port, path


def _http_get_json(url: str, timeout: float) -> Any:
    # Loopback and explicit endpoints must not go through a proxy taken from the environment.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=timeout) as response:
        return json.loads(response.read().decode())


async def resolve_cdp_url(cdp_url: str, *, timeout: float = 10.0) -> str:
    """Turn ``--cdp-url`` into a browser websocket URL (``http(s)://`` asks ``/json/version``)."""
    parsed = urllib.parse.urlparse(cdp_url)
    if parsed.scheme in ("ws", "wss"):
        return cdp_url
    if parsed.scheme not in ("http", "https"):
        raise BrowserError(
            f"--cdp-url must start with http://, https://, ws:// or wss:// (got {cdp_url!r})"
        )
    version_url = urllib.parse.urljoin(cdp_url.rstrip("/") + "/", "json/version")
    try:
        info = await asyncio.to_thread(_http_get_json, version_url, timeout)
    except urllib.error.HTTPError as exc:
        raise BrowserError(
            f"{version_url} answered HTTP {exc.code}; this endpoint does not publish /json/version. "
            "Pass the browser's ws:// URL to --cdp-url instead"
        ) from exc
    except (OSError, ValueError) as exc:
        raise BrowserError(f"no DevTools endpoint answered at {version_url}: {exc}") from exc
    ws_url = info.get("webSocketDebuggerUrl") if isinstance(info, dict) else None
    if not isinstance(ws_url, str):
        raise BrowserError(f"{version_url} did not name a webSocketDebuggerUrl")
    # Chrome answers with its own idea of its host name; keep the host the person gave us.
    ws = urllib.parse.urlparse(ws_url)
    scheme = "wss" if parsed.scheme == "https" else "ws"
    return urllib.parse.urlunparse(ws._replace(scheme=scheme, netloc=parsed.netloc))


@dataclass(frozen=True, slots=True)
class LaunchOptions:
    executable: str | None = None
    profile_dir: Path | None = None
    headless: bool = False
    extra_args: tuple[str, ...] = ()
    window_size: tuple[int, int] = (1280, 900)
    timeout: float = 30.0
    downloads_dir: Path | None = None
    remove_on_exit: tuple[Path, ...] = ()
    """Paths removed when the browser stops, however handrail ends (a temporary profile)."""
    direct_hosts: tuple[str, ...] | None = None
    """Strict network mode (see core/guard/allowlist.py ``webrtc_direct_hosts``): Chrome proxy
    bypass rules naming the only hosts the *browser process* may reach directly. WebRTC is
    then kept off UDP, and every other host goes to a proxy that refuses it. Requests of
    the page are guarded by DevTools ``Fetch`` as well; this closes what ``Fetch`` never
    sees (STUN, TURN and ICE checks). None: no restriction."""


ConnectKind = Literal["launch", "cdp_url", "connect"]


@dataclass(slots=True)
class Tab:
    """One of our tabs, attached over a flattened session."""

    target_id: str
    session: CDPSession
    url: str = "about:blank"
    title: str = ""
    opener_id: str | None = None
    closed: bool = False
    crashed: bool = False
    state: dict[str, Any] = field(default_factory=dict)
    """Per-tab state owned by the layers above (the hands, the eyes)."""

    async def send(
        self, method: str, params: JSON | None = None, *, timeout: float | None = 30.0
    ) -> JSON:
        return await self.session.send(method, params, timeout=timeout)


TabListener = Callable[[Tab], None]


class Browser:
    """A connection to one browser and the set of tabs that are ours."""

    def __init__(
        self,
        *,
        kind: ConnectKind,
        ws_url: str,
        connection: CDPConnection,
        process: asyncio.subprocess.Process | None = None,
        launched: _Launched | None = None,
        launch: LaunchOptions | None = None,
        profile_dir: Path | None = None,
        source: str | None = None,
    ) -> None:
        self.kind = kind
        self.ws_url = ws_url
        self.connection = connection
        self.process = process
        self._launched = launched
        self._retired: list[_Launched] = []
        self.launch_options = launch
        self.profile_dir = profile_dir
        self._source = source
        self.tabs: dict[str, Tab] = {}
        self.current: Tab | None = None
        self.targets: dict[str, JSON] = {}
        self.new_tab_listeners: list[TabListener] = []
        self.attach_hooks: list[Callable[[Tab], Any]] = []
        """Async callables run on every tab we attach to (enable domains, install handlers)."""
        self._pending_popups: list[str] = []
        self._closing = False
        self.slots: SlotSource | None = None
        """Set for a run in a tab pool: tabs are the pool's slots, never brought to the
        front, and left open (with their pages) when the run ends."""

    # -- construction ------------------------------------------------------------------

    @classmethod
    async def launch(cls, options: LaunchOptions | None = None) -> Browser:
        """Start a browser of our own. Raises :class:`BrowserError` with what to do."""
        options = options or LaunchOptions()
        executable = options.executable or find_chrome()
        profile = options.profile_dir or default_profile_dir()
        profile.mkdir(parents=True, exist_ok=True)
        launched = await _start_chrome(executable, profile, options)
        try:
            connection = await CDPConnection.open(launched.ws_url)
        except CDPError:
            await launched.abandon()
            raise
        browser = cls(
            kind="launch",
            ws_url=launched.ws_url,
            connection=connection,
            process=launched.process,
            launched=launched,
            launch=options,
            profile_dir=profile,
        )
        try:
            await browser._start(adopt_initial=True)
        except BaseException:
            # Never leave a browser of ours running behind a failed launch.
            await connection.close()
            await launched.abandon()
            raise
        return browser

    @classmethod
    async def connect(cls, cdp_url: str) -> Browser:
        """Attach to a running browser at a CDP URL. Never launches anything."""
        ws_url = await resolve_cdp_url(cdp_url)
        connection = await _open_or_explain(ws_url, source=cdp_url)
        browser = cls(kind="cdp_url", ws_url=ws_url, connection=connection, source=cdp_url)
        await browser._start(adopt_initial=False)
        return browser

    @classmethod
    async def connect_local(cls, profiles: Sequence[Path] | None = None) -> Browser:
        """Attach to the person's own Chrome (chrome://inspect → remote debugging switch).

        That path publishes the port and browser path only in the profile's
        ``DevToolsActivePort``; ``/json/version`` answers 404 there.
        """
        searched = list(profiles) if profiles is not None else standard_profile_dirs()
        for profile in searched:
            found = read_devtools_active_port(profile)
            if found is None:
                continue
            port, path = found
            ws_url = f"ws://127.0.0.1:{port}{path or '/devtools/browser'}"
            connection = await _open_or_explain(ws_url, source=str(profile))
            browser = cls(kind="connect", ws_url=ws_url, connection=connection, source=str(profile))
            await browser._start(adopt_initial=False)
            return browser
        where = ", ".join(str(p) for p in searched)
        raise BrowserError(
            "no running Chrome with remote debugging enabled was found "
            f"(no DevToolsActivePort in {where}). In Chrome, open chrome://inspect/#remote-debugging "
            "and turn on remote debugging, then run again; or use --cdp-url."
        )

    async def _start(self, *, adopt_initial: bool) -> None:
        conn = self.connection
        conn.on("Target.targetCreated", self._on_target_created)
        conn.on("Target.targetInfoChanged", self._on_target_info_changed)
        conn.on("Target.targetDestroyed", self._on_target_destroyed)
        conn.on("Target.detachedFromTarget", self._on_detached)
        conn.on("Target.targetCrashed", self._on_target_crashed)
        await conn.send("Target.setDiscoverTargets", {"discover": True})
        if self.launch_options and self.launch_options.downloads_dir:
            await self.set_downloads_dir(self.launch_options.downloads_dir)
        if adopt_initial:
            # The browser we launched opened one blank tab; it is ours to use.
            infos = (await conn.send("Target.getTargets"))["targetInfos"]
            pages = [t for t in infos if t.get("type") == "page"]
            if pages:
                self.current = await self._attach(pages[0]["targetId"])

    async def set_downloads_dir(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(CDPError):
            await self.connection.send(
                "Browser.setDownloadBehavior",
                {"behavior": "allowAndName", "downloadPath": str(path), "eventsEnabled": True},
            )

    # -- description -------------------------------------------------------------------

    @property
    def headless(self) -> bool:
        return bool(self.launch_options and self.launch_options.headless)

    def describe(self) -> str:
        if self.kind == "launch":
            return f"launched, {'headless' if self.headless else 'headed'}"
        return f"connected to {self._source or self.ws_url}"

    # -- tabs --------------------------------------------------------------------------

    async def new_tab(self, url: str = "about:blank") -> Tab:
        """Open a tab of our own and make it current."""
        await self._ensure_connection()
        if self.slots is not None:
            tab = await self.adopt_target(await self.slots.new_target(self))
            if url != "about:blank":
                await tab.send("Page.navigate", {"url": url})
            return tab
        params: JSON = {"url": url}
        if self.kind != "launch":
            params["background"] = False
        created = await self.connection.send("Target.createTarget", params)
        tab = await self._attach(created["targetId"])
        self.current = tab
        return tab

    async def adopt_target(self, target_id: str) -> Tab:
        """Attach to an existing target that is ours (a pool slot) and make it current."""
        tab = await self._attach(target_id)
        self.current = tab
        return tab

    async def active_tab(self) -> tuple[Tab, list[str]]:
        """A live tab of ours to act in, and notices of what had to be done to get it.

        If the connection died it is re-established (relaunching the browser we started
        when its process is gone); if our tab was closed, another of ours is used or a new
        one is opened.
        """
        notices: list[str] = []
        notice = await self._ensure_connection()
        if notice:
            notices.append(notice)
        tab = self.current
        if tab is not None and not tab.closed and not tab.crashed:
            return tab, notices
        if tab is not None and tab.crashed:
            notices.append(
                "the tab's renderer crashed; continuing in a new tab (the page must be loaded again)"
            )
            self.tabs.pop(tab.target_id, None)
            with contextlib.suppress(CDPError):
                await self.connection.send(
                    "Target.closeTarget", {"targetId": tab.target_id}, timeout=5
                )
        live = [t for t in self.tabs.values() if not t.closed and not t.crashed]
        if live:
            self.current = live[-1]
            notices.append(f"our tab was closed; switched to our other tab ({self.current.url})")
            return self.current, notices
        tab = await self.new_tab()
        if not any("crashed" in n for n in notices):
            notices.append("our tab was closed; opened a new one (it is blank: navigate again)")
        return tab, notices

    def our_tabs(self) -> list[Tab]:
        return [t for t in self.tabs.values() if not t.closed]

    def switch_to(self, tab: Tab) -> None:
        if tab.target_id not in self.tabs:
            raise TabGone("that tab is not one of handrail's tabs")
        self.current = tab

    async def activate(self, tab: Tab) -> None:
        """Bring a tab to the front (headed mode) and make it current. A pooled run only
        makes it current: its slots stay in the background."""
        self.switch_to(tab)
        if self.slots is not None:
            return
        with contextlib.suppress(CDPError):
            await self.connection.send("Target.activateTarget", {"targetId": tab.target_id})

    async def close_tab(self, tab: Tab) -> None:
        if tab.target_id not in self.tabs:
            raise TabGone("refusing to close a tab handrail did not open")
        with contextlib.suppress(CDPError):
            await self.connection.send("Target.closeTarget", {"targetId": tab.target_id}, timeout=5)
        tab.closed = True

    async def adopt_popup(self, timeout: float = 0.0) -> Tab | None:
        """Attach to the newest tab opened by one of ours (a target=_blank link), if any."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            while self._pending_popups:
                target_id = self._pending_popups.pop(0)
                if target_id in self.tabs or target_id not in self.targets:
                    continue
                if self.slots is not None:
                    await self.slots.take_popup(self, target_id)
                with contextlib.suppress(CDPError):
                    return await self._attach(target_id)
            if asyncio.get_running_loop().time() >= deadline:
                return None
            await asyncio.sleep(0.05)

    # -- lifecycle ---------------------------------------------------------------------

    async def close(self) -> None:
        """Close the connection; stop the browser only if we launched it.

        In connect mode our tabs are closed and, when this returns, gone from the person's
        browser (each close is awaited up to a few seconds).
        """
        self._closing = True
        if self.slots is not None:
            pass  # a pool's slots keep their pages for the person (core/pool)
        elif self.kind != "launch":
            # Leave the person's browser as it was, minus the tabs we opened.
            for tab in list(self.tabs.values()):
                if tab.closed:
                    continue
                target_id = tab.target_id
                gone = self.connection.expect("Target.targetDestroyed", _is_target(target_id))
                try:
                    await self.connection.send(
                        "Target.closeTarget", {"targetId": target_id}, timeout=5
                    )
                    async with asyncio.timeout(5):
                        await gone
                except (CDPError, TimeoutError):
                    pass
                finally:
                    gone.cancel()
        else:
            with contextlib.suppress(CDPError):
                await self.connection.send("Browser.close", timeout=5)
        await self.connection.close()
        if self.process is not None:
            await _stop_process(self.process)
        for launched in [*self._retired, self._launched]:
            if launched is not None:
                await launched.finish()

    async def _ensure_connection(self) -> str | None:
        process_alive = self.process is None or self.process.returncode is None
        if not self.connection.closed and process_alive:
            return None
        reason = self.connection.closed_reason or "the browser process exited"
        if self._closing:
            raise ConnectionClosed("the browser is being closed")
        old_tabs = dict(self.tabs)
        self.tabs.clear()
        self.targets.clear()
        self.current = None
        if self.kind == "launch":
            assert self.launch_options is not None and self.profile_dir is not None
            process_alive = self.process is not None and self.process.returncode is None
            if process_alive:
                try:
                    self.connection = await CDPConnection.open(self.ws_url)
                except ConnectionClosed:
                    # The websocket drops before the dead process is reaped: a refused
                    # reconnect to the browser we launched means it is gone. Make sure.
                    assert self.process is not None
                    _kill(self.process)
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self.process.wait(), 5)
                    process_alive = False
                else:
                    await self._start(adopt_initial=False)
                    what = "reconnected to the browser"
            if not process_alive:
                executable = self.launch_options.executable or find_chrome()
                if self._launched is not None:
                    # Its reaper keeps waiting until we end: released now, it would remove
                    # the temporary profile the new browser is about to use.
                    self._retired.append(self._launched)
                self._launched = await _start_chrome(
                    executable, self.profile_dir, self.launch_options
                )
                self.process, self.ws_url = self._launched.process, self._launched.ws_url
                self.connection = await CDPConnection.open(self.ws_url)
                await self._start(adopt_initial=True)
                what = "the browser had stopped; started it again (same profile, tabs are gone)"
        else:
            self.connection = await _open_or_explain(self.ws_url, source=self._source)
            await self._start(adopt_initial=False)
            what = "reconnected to the browser"
        # Tabs that survived a dropped connection are still ours: re-attach them.
        for target_id, tab in old_tabs.items():
            if target_id in self.targets and not tab.closed:
                with contextlib.suppress(CDPError):
                    new = await self._attach(target_id)
                    if self.current is None:
                        self.current = new
        log.warning("browser.recovered", reason=reason, action=what)
        return f"{what} (connection lost: {reason})"

    async def _attach(self, target_id: str) -> Tab:
        attached = await self.connection.send(
            "Target.attachToTarget", {"targetId": target_id, "flatten": True}
        )
        session = self.connection.session(attached["sessionId"])
        info = self.targets.get(target_id, {})
        tab = Tab(
            target_id=target_id,
            session=session,
            url=info.get("url", "about:blank"),
            title=info.get("title", ""),
            opener_id=info.get("openerId"),
        )
        self.tabs[target_id] = tab
        session.on("Inspector.targetCrashed", lambda _p: setattr(tab, "crashed", True))
        await asyncio.gather(
            tab.send("Page.enable"),
            tab.send("Page.setLifecycleEventsEnabled", {"enabled": True}),
            tab.send("Network.enable"),
            tab.send("Inspector.enable"),
            # A headed window that is not focused must still give our page focus events.
            tab.send("Emulation.setFocusEmulationEnabled", {"enabled": True}),
        )
        for hook in self.attach_hooks:
            result = hook(tab)
            if asyncio.iscoroutine(result):
                await result
        for listener in self.new_tab_listeners:
            listener(tab)
        return tab

    # -- target events (run in the reader task: no awaiting here) ------------------------

    def _on_target_created(self, params: JSON) -> None:
        info = params["targetInfo"]
        if info.get("type") != "page":
            return
        self.targets[info["targetId"]] = info
        opener = info.get("openerId")
        if opener and opener in self.tabs:
            self._pending_popups.append(info["targetId"])

    def _on_target_info_changed(self, params: JSON) -> None:
        info = params["targetInfo"]
        if info.get("type") != "page":
            return
        self.targets[info["targetId"]] = info
        tab = self.tabs.get(info["targetId"])
        if tab is not None:
            tab.url = info.get("url", tab.url)
            tab.title = info.get("title", tab.title)

    def _on_target_destroyed(self, params: JSON) -> None:
        target_id = params["targetId"]
        self.targets.pop(target_id, None)
        tab = self.tabs.get(target_id)
        if tab is not None:
            tab.closed = True

    def _on_detached(self, params: JSON) -> None:
        target_id = params.get("targetId")
        tab = self.tabs.get(target_id) if target_id else None
        if tab is not None and tab.session.session_id == params.get("sessionId"):
            tab.closed = True

    def _on_target_crashed(self, params: JSON) -> None:
        tab = self.tabs.get(params.get("targetId", ""))
        if tab is not None:
            tab.crashed = True


def _is_target(target_id: str) -> Callable[[JSON], bool]:
    return lambda params: params.get("targetId") == target_id


# -- launching -------------------------------------------------------------------------


def chrome_args(profile: Path, options: LaunchOptions) -> list[str]:
    width, height = options.window_size
    disable_preloading(
        profile
    )  # speculation rules prefetch has no flag (core/browser/preloading.py)
    args = [
        f"--user-data-dir={profile}",
        "--remote-debugging-port=0",
        f"--window-size={width},{height}",
        *QUIET_FLAGS,
    ]
    if options.direct_hosts is not None:
        args += _direct_only(profile, options.direct_hosts)
    if options.headless:
        args += ["--headless", "--hide-scrollbars", "--mute-audio"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        # Chrome refuses to start as root with its sandbox.
        args.append("--no-sandbox")
    args += list(options.extra_args)
    args.append("about:blank")
    return args


REFUSING_PROXY = "http://127.0.0.1:1"
"""A proxy address nothing listens on (port 1, tcpmux, is served nowhere these days): a
connection through it is refused at once. Were something listening, it would still be on
this machine: the request never reaches the host it names."""


def _direct_only(profile: Path, hosts: Sequence[str]) -> list[str]:
    # Measured with Chromium 156 (bench-free: tests/guard/test_allowlist.py, WebRTC tests): the
    # WebRTC policy alone stops STUN, TURN over UDP and ICE checks, but TURN over TCP still
    # goes straight to the host; with this proxy it goes to the proxy and fails. "<-loopback>"
    # ends Chrome's implicit direct route to loopback hosts, which are sites like any other.
    if not restrict_webrtc(profile):
        raise BrowserError(
            f"could not write the WebRTC setting into the profile {profile} (its Preferences "
            "file is not JSON); strict network mode cannot be guaranteed. Use another --profile."
        )
    bypass = ";".join(["<-loopback>", *hosts])
    return [f"--proxy-server={REFUSING_PROXY}", f"--proxy-bypass-list={bypass}"]


_REAPER = Path(__file__).with_name("reaper.py")


class _Lifeline:
    """The reaper (core/browser/reaper.py) that stops the browser if handrail dies, and the pipe that
    keeps it waiting: its only write end is ours, so the kernel closes it however we end."""

    def __init__(self, pgid: int, remove: Sequence[Path]) -> None:
        read_fd, self._write_fd = os.pipe()
        self._reaper: subprocess.Popen[bytes] | None = None
        try:
            self._reaper = subprocess.Popen(
                [
                    sys.executable,
                    "-I",
                    "-S",
                    str(_REAPER),
                    f"--pgid={pgid}",
                    *(f"--remove={path}" for path in remove),
                ],
                stdin=read_fd,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            # Still usable: close() stops the browser; only a hard kill of handrail leaks it.
            log.warning("browser.no_reaper", error=str(exc))
            os.close(self._write_fd)
            self._write_fd = -1
        finally:
            os.close(read_fd)

    def release(self) -> None:
        """Let the reaper go (it stops the group if still alive, then removes the paths)."""
        if self._write_fd >= 0:
            os.close(self._write_fd)
            self._write_fd = -1

    async def finish(self, timeout: float = 10.0) -> None:
        self.release()
        if self._reaper is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                await asyncio.to_thread(self._reaper.wait, timeout)


@dataclass(slots=True)
class _Launched:
    """A browser process of ours, with its reaper and its (anonymous) stderr log."""

    process: asyncio.subprocess.Process
    ws_url: str
    stderr: Any
    lifeline: _Lifeline
    remove: tuple[Path, ...]

    async def finish(self) -> None:
        """After the process stopped: close our ends and remove the temporary paths."""
        with contextlib.suppress(OSError):
            self.stderr.close()
        for path in self.remove:
            shutil.rmtree(path, ignore_errors=True)
        await self.lifeline.finish()

    async def abandon(self) -> None:
        _kill(self.process)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.process.wait(), 5)
        await self.finish()


async def _start_chrome(executable: str, profile: Path, options: LaunchOptions) -> _Launched:
    port_file = profile / "DevToolsActivePort"
    with contextlib.suppress(FileNotFoundError):
        port_file.unlink()
    # Anonymous (unlinked at once): read for error messages, never left behind in /tmp.
    stderr_log = tempfile.TemporaryFile(prefix="handrail-chrome-")  # noqa: SIM115
    # Chrome's own temporary files (its singleton socket folder, which it does not remove when
    # stopped by a signal) go to a folder of ours that goes with it.
    chrome_tmp = Path(tempfile.mkdtemp(prefix="handrail-chrome-"))
    remove = (*options.remove_on_exit, chrome_tmp)
    try:
        process = await asyncio.create_subprocess_exec(
            executable,
            *chrome_args(profile, options),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=stderr_log,
            start_new_session=True,
            env={**os.environ, "TMPDIR": str(chrome_tmp)},
        )
    except OSError as exc:
        stderr_log.close()
        shutil.rmtree(chrome_tmp, ignore_errors=True)
        raise BrowserError(f"could not start {executable}: {exc}") from exc
    # Chrome leads its own process group (start_new_session): the reaper stops that group.
    launched = _Launched(
        process=process,
        ws_url="",
        stderr=stderr_log,
        lifeline=_Lifeline(process.pid, remove),
        remove=remove,
    )
    loop = asyncio.get_running_loop()
    deadline = loop.time() + options.timeout
    try:
        while loop.time() < deadline:
            found = read_devtools_active_port(profile)
            if found is not None:
                port, path = found
                launched.ws_url = f"ws://127.0.0.1:{port}{path}"
                return launched
            if process.returncode is not None:
                tail = _tail(stderr_log)
                hint = ""
                if (
                    process.returncode == 0
                    or "ProcessSingleton" in tail
                    or "profile" in tail.lower()
                ):
                    hint = (
                        f" The profile {profile} may be in use by another Chrome; close it or "
                        "choose another with --profile DIR."
                    )
                raise BrowserError(
                    f"{executable} exited with code {process.returncode} before it was ready.{hint}\n{tail}"
                )
            await asyncio.sleep(0.05)
        raise BrowserError(
            f"{executable} did not open its DevTools port within {options.timeout:g} s.\n{_tail(stderr_log)}"
        )
    except BaseException:
        await launched.abandon()
        raise


def _tail(log_file: Any, lines: int = 8) -> str:
    try:
        log_file.seek(0)
        text = log_file.read().decode("utf-8", "replace").splitlines()
    except (OSError, ValueError):
        return ""
    useful = [line for line in text if "dbus" not in line.lower()]
    return "\n".join(useful[-lines:])


def _kill(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)


async def _stop_process(process: asyncio.subprocess.Process, grace: float = 5.0) -> None:
    """Stop the browser process we started (and only it, with its own process group)."""
    if process.returncode is None:
        try:
            await asyncio.wait_for(process.wait(), timeout=grace)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), timeout=grace)
            except TimeoutError:
                _kill(process)
                await process.wait()


async def _open_or_explain(ws_url: str, *, source: str | None) -> CDPConnection:
    try:
        return await CDPConnection.open(ws_url)
    except HandshakeRefused as exc:
        if exc.status == 403:
            raise BrowserError(
                f"Chrome refused the connection (HTTP 403 at {ws_url}). Chrome asks the person to "
                "allow remote debugging each time a client connects: the prompt was denied or "
                "dismissed. Run again and click Allow in Chrome's dialog; if no dialog shows, open "
                "chrome://inspect/#remote-debugging and turn remote debugging off and on."
            ) from exc
        raise BrowserError(str(exc)) from exc
    except ConnectionClosed as exc:
        raise BrowserError(
            f"could not reach the browser at {ws_url} ({source or 'given URL'}): {exc}. "
            "Is it running, and is another client holding its only debugging connection?"
        ) from exc
