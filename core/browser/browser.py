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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import structlog

from core.browser.errors import BrowserError, TabGone
from core.browser.find import (
    default_profile_dir,
    find_chrome,
    read_devtools_active_port,
    resolve_cdp_url,
    standard_profile_dirs,
)
from core.browser.launch import Launched, LaunchOptions, kill_process, start_chrome, stop_process
from core.cdp import (
    JSON,
    CDPConnection,
    CDPError,
    CDPSession,
    ConnectionClosed,
    HandshakeRefused,
    shown_endpoint,
)

log = structlog.get_logger("handrail.browser")


class SlotSource(Protocol):
    """Where a pooled run's tabs come from (core/pool): it never opens or lists tabs itself."""

    async def new_target(self, browser: Browser) -> str:
        """A slot's target for another tab of this run; raises BrowserError when none."""
        ...

    async def take_popup(self, browser: Browser, target_id: str) -> None:
        """Give a popup a slot, or close it and raise :class:`PopupRefused`."""
        ...


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
        launched: Launched | None = None,
        launch: LaunchOptions | None = None,
        profile_dir: Path | None = None,
        source: str | None = None,
    ) -> None:
        self.kind = kind
        self.ws_url = ws_url
        self.connection = connection
        self.process = process
        self._launched = launched
        self._retired: list[Launched] = []
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
        launched = await start_chrome(executable, profile, options)
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
        return f"connected to {shown_endpoint(self._source or self.ws_url)}"

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
        following = self.tab_after(tab)
        if following is not None:
            self.current = following
            if tab is not None and following.target_id == tab.opener_id:
                notices.append(
                    f"our tab was closed; back on the tab that opened it ({following.url})"
                )
            else:
                notices.append(f"our tab was closed; switched to our other tab ({following.url})")
            return following, notices
        tab = await self.new_tab()
        if not any("crashed" in n for n in notices):
            notices.append("our tab was closed; opened a new one (it is blank: navigate again)")
        return tab, notices

    def tab_after(self, gone: Tab | None) -> Tab | None:
        """The tab of ours that takes over when ``gone`` closes: the one that opened it (a
        popup that closes itself hands back to its opener, as a browser's window does),
        else the newest other live tab; None when no other tab of ours is left."""
        live = [t for t in self.tabs.values() if t is not gone and not t.closed and not t.crashed]
        opener = [t for t in live if gone is not None and t.target_id == gone.opener_id]
        if opener:
            return opener[0]
        return live[-1] if live else None

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

    async def adopt_popup(self, timeout: float = 0.0, *, opener: str | None = None) -> Tab | None:
        """Attach to a tab opened by one of ours (a target=_blank link), if any; with
        ``opener``, only one that tab opened (a popup another of our tabs opened earlier, and
        nobody took, is not the answer to this tab's click). Popups of tabs that are gone are
        dropped."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            for target_id in list(self._pending_popups):
                info = self.targets.get(target_id)
                parent = self.tabs.get(str(info.get("openerId"))) if info else None
                if target_id in self.tabs or info is None or parent is None or parent.closed:
                    self._pending_popups.remove(target_id)
                    continue
                if opener is not None and parent.target_id != opener:
                    continue
                self._pending_popups.remove(target_id)
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
            await stop_process(self.process)
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
                    kill_process(self.process)
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
                self._launched = await start_chrome(
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


async def _open_or_explain(ws_url: str, *, source: str | None) -> CDPConnection:
    try:
        return await CDPConnection.open(ws_url)
    except HandshakeRefused as exc:
        if exc.status == 403:
            raise BrowserError(
                f"Chrome refused the connection (HTTP 403 at {shown_endpoint(ws_url)}). Chrome asks "
                "the person to "
                "allow remote debugging each time a client connects: the prompt was denied or "
                "dismissed. Run again and click Allow in Chrome's dialog; if no dialog shows, open "
                "chrome://inspect/#remote-debugging and turn remote debugging off and on."
            ) from exc
        raise BrowserError(str(exc)) from exc
    except ConnectionClosed as exc:
        raise BrowserError(
            f"could not reach the browser at {shown_endpoint(ws_url)} "
            f"({shown_endpoint(source) if source else 'given URL'}): {exc}. "
            "Is it running, and is another client holding its only debugging connection?"
        ) from exc
