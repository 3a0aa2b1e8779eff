"""Pool operations that touch the browser: start, wipe, show, clear, stop, and the lease a
run holds on its slots (:class:`PoolRun`).

Nothing here brings a window or a tab to the front, except :func:`show`: slots are created
with ``background: true`` and runs never send ``Target.activateTarget``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import time
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import structlog

from core.browser.browser import Browser
from core.browser.errors import BrowserError, PopupRefused
from core.cdp import CDPConnection, CDPError, CDPSession
from core.pool import owner
from core.pool.detached import (
    BLANK_DOM,
    Started,
    adopt,
    close_target,
    initial_pages,
    kill_group,
    launch_detached,
    new_slot_target,
    pages,
    wait_gone,
)
from core.pool.state import (
    DEFAULT_NAME,
    Claim,
    PoolError,
    PoolFull,
    PoolInfo,
    PoolMissing,
    PoolState,
    SlotInfo,
    pool_dir,
)

log = structlog.get_logger("handrail.pool")

DEFAULT_SLOTS = 12


@dataclass(frozen=True, slots=True)
class PoolStatus:
    """What ``pool status`` shows and a pool screen polls: the browser and every slot."""

    info: PoolInfo
    browser_alive: bool
    slots: tuple[SlotInfo, ...]

    def public(self) -> dict[str, object]:
        return {
            "name": self.info.name,
            "endpoint": self.info.endpoint,
            "kind": self.info.kind,
            "browser_alive": self.browser_alive,
            "slots": [
                {**s.public(), "resume": resume_command(self.info.name, s)} for s in self.slots
            ],
        }


def resume_command(name: str, slot: SlotInfo) -> str | None:
    """The command that goes on in ``slot`` from its page (None unless it is completed:
    an idle slot holds nothing to resume, a running one belongs to its run)."""
    if slot.state != "completed":
        return None
    pool = "" if name == DEFAULT_NAME else f" {name}"
    return f"handrail run TASK --pool{pool} --resume-slot {slot.slot}"


def browser_alive(info: PoolInfo) -> bool:
    """Whether a launched pool's browser process still runs (adopted ones: assumed)."""
    if info.kind != "launch":
        return True
    return owner.alive(info.browser_pid, info.browser_started)


def status(name: str) -> PoolStatus:
    """The pool's state now (dead owners' slots already marked completed). Raises
    :class:`PoolMissing`."""
    state = PoolState.open(name)
    try:
        info = state.info()
        return PoolStatus(info=info, browser_alive=browser_alive(info), slots=tuple(state.slots()))
    finally:
        state.close()


# -- start -----------------------------------------------------------------------------


async def start(
    name: str,
    *,
    slots: int = DEFAULT_SLOTS,
    profile: Path | None = None,
    headless: bool = False,
    cdp_url: str | None = None,
    connect: bool = False,
    executable: str | None = None,
) -> PoolInfo:
    """Start (or adopt) the pool's browser and make exactly ``slots`` blank background
    tabs in it. Raises :class:`PoolError` / BrowserError with what to do."""
    if not 1 <= slots <= 64:
        raise PoolError(f"--slots must be between 1 and 64 (got {slots})")
    folder = pool_dir(name)
    with contextlib.suppress(PoolMissing):
        existing = status(name)
        if existing.browser_alive:
            raise PoolError(
                f"the pool {name!r} is already running at {existing.info.endpoint}; "
                f"`handrail pool stop --name {name}` first, or pick another --name"
            )
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    if cdp_url is not None or connect:
        started = await adopt(cdp_url)
    else:
        started = await launch_detached(
            folder, profile=profile or folder / "profile", headless=headless, executable=executable
        )
    try:
        conn = await CDPConnection.open(started.endpoint)
    except CDPError as exc:
        _abandon(started)
        raise BrowserError(
            f"could not reach the pool's browser at {started.endpoint}: {exc}"
        ) from exc
    try:
        context_id, targets = await _make_slots(conn, started, slots)
    except BaseException:
        await conn.close()
        _abandon(started)
        raise
    await conn.close()
    info = PoolInfo(
        name=name,
        kind=started.kind,
        endpoint=started.endpoint,
        source=started.source,
        browser_pid=started.pid,
        browser_started=started.pid_started,
        profile=str(started.profile) if started.profile else None,
        tmp_dir=str(started.tmp_dir) if started.tmp_dir else None,
        context_id=context_id,
        headless=headless,
        created_at=time.time(),
    )
    PoolState.create(info, targets).close()
    return info


async def _make_slots(
    conn: CDPConnection, started: Started, count: int
) -> tuple[str | None, list[str]]:
    if started.kind == "launch":
        # Chrome opened one blank tab of its own: it becomes slot 1 (no extra blank page).
        found = await initial_pages(conn)
        targets = [str(t["targetId"]) for t in found[:count]]
        for extra in found[count:]:
            await close_target(conn, str(extra["targetId"]))
        while len(targets) < count:
            targets.append(await new_slot_target(conn, None))
        return None, targets
    # Someone else's browser: a context of our own, its slots in a window of their own.
    created = await conn.send("Target.createBrowserContext", {"disposeOnDetach": False})
    context_id = str(created["browserContextId"])
    targets = [await new_slot_target(conn, context_id, new_window=True)]
    while len(targets) < count:
        targets.append(await new_slot_target(conn, context_id))
    return context_id, targets


def _abandon(started: Started) -> None:
    if started.pid is not None:
        kill_group(started.pid)
    if started.tmp_dir is not None:
        shutil.rmtree(started.tmp_dir, ignore_errors=True)


# -- wiping ----------------------------------------------------------------------------


def origin_of(url: str) -> str | None:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc}"


async def wipe(
    conn: CDPConnection,
    target_id: str,
    *,
    origins: Sequence[str] = (),
    spare: Sequence[str] = (),
    context_id: str | None = None,
) -> str:
    """Leave the slot's tab holding nothing of its last run: at ``about:blank``, one
    history entry, no storage of the sites it visited (the ones in ``origins`` and in its
    history, except ``spare``: origins a running slot is using now), and no old DOM.
    Returns the slot's target id: a new tab when the old one was gone or would not come
    clean."""
    if not any(t["targetId"] == target_id for t in await pages(conn)):
        return await new_slot_target(conn, context_id)
    attached = await conn.send("Target.attachToTarget", {"targetId": target_id, "flatten": True})
    session = conn.session(attached["sessionId"])
    clean = False
    try:
        history = await session.send("Page.getNavigationHistory")
        entries = history.get("entries", [])
        visited = {o for e in entries if (o := origin_of(str(e.get("url", ""))))}
        current = entries[history.get("currentIndex", -1)] if entries else {}
        here = origin_of(str(current.get("url", "")))
        if here is not None:
            # sessionStorage belongs to the tab, and CDP reaches it only for the origin the
            # tab is on: cleared now, before the tab leaves it.
            await session.send(
                "DOMStorage.clear",
                {"storageId": {"securityOrigin": here, "isLocalStorage": False}},
            )
        for origin in sorted((visited | set(origins)) - set(spare)):
            # Cookies, localStorage, IndexedDB, caches, service workers: the profile's.
            try:
                await session.send(
                    "Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"}
                )
            except CDPError as exc:
                log.warning("pool.storage_not_cleared", origin=origin, error=str(exc))
        await session.send("Page.enable")
        committed = session.expect(
            "Page.frameNavigated", lambda p: p.get("frame", {}).get("url") == "about:blank"
        )
        try:
            await session.send("Page.navigate", {"url": "about:blank"})
            async with asyncio.timeout(10):
                await committed
        finally:
            committed.cancel()
        await _reset_history(session)
        # Another site's sessionStorage in this tab is out of CDP's reach: a new tab then.
        clean = visited <= {here} and await _is_blank(session)
    except (CDPError, TimeoutError) as exc:
        log.warning("pool.wipe_failed", target=target_id, error=str(exc))
    finally:
        with contextlib.suppress(CDPError):
            await conn.send("Target.detachFromTarget", {"sessionId": attached["sessionId"]})
    if clean:
        return target_id
    # It would not come clean: a fresh tab holds nothing for certain.
    await close_target(conn, target_id)
    return await new_slot_target(conn, context_id)


async def _reset_history(session: CDPSession) -> None:
    """``Page.resetNavigationHistory``, once the tab's new document is the active one (a
    moment after about:blank commits, the page may still be swapping processes)."""
    deadline = time.monotonic() + 5.0
    while True:
        try:
            await session.send("Page.resetNavigationHistory")
            return
        except CDPError:
            # Chrome answers "not attached to an active page" until then; any other error
            # repeats past the deadline and is raised.
            if time.monotonic() > deadline:
                raise
        await asyncio.sleep(0.05)


_BLANK_CHECK = (
    "JSON.stringify([location.href, document.title, "
    "document.documentElement.outerHTML, history.length])"
)


async def _is_blank(session: CDPSession) -> bool:
    """No old DOM, title or history remains (a navigation to about:blank commits a moment
    after Page.navigate answers)."""
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        reply = await session.send(
            "Runtime.evaluate", {"expression": _BLANK_CHECK, "returnByValue": True}
        )
        value = json.loads(reply.get("result", {}).get("value") or "[]")
        if value == ["about:blank", "", BLANK_DOM, 1]:
            return True
        await asyncio.sleep(0.05)
    return False


# -- the person's commands ---------------------------------------------------------------


async def show(name: str, slot: int) -> SlotInfo:
    """Bring the pool's browser and slot ``slot``'s tab to the front (the only command
    that does). Raises :class:`PoolError`."""
    current = status(name)
    chosen = _slot(current, slot)
    conn = await _connect(current.info)
    try:
        await conn.send("Target.activateTarget", {"targetId": chosen.target_id})
        attached = await conn.send(
            "Target.attachToTarget", {"targetId": chosen.target_id, "flatten": True}
        )
        with contextlib.suppress(CDPError):
            await conn.send("Page.bringToFront", session_id=attached["sessionId"])
    except CDPError as exc:
        raise PoolError(
            f"slot {slot}'s tab could not be shown ({exc}); was it closed? "
            f"`handrail pool clear {slot} --name {name}` gives the slot a new tab"
        ) from exc
    finally:
        await conn.close()
    return chosen


async def clear(name: str, slots: Sequence[int] | None) -> list[int]:
    """Close and wipe the given slots (None: every completed one), back to ``idle``.
    Refuses a running slot. Returns the slots cleared."""
    state = PoolState.open(name)
    try:
        info = state.info()
        current = state.slots()
        if slots is None:
            chosen = [s for s in current if s.state == "completed"]
        else:
            chosen = [_slot(PoolStatus(info, True, tuple(current)), n) for n in slots]
        running = [s for s in chosen if s.state == "running"]
        if running:
            s = running[0]
            raise PoolError(
                f"slot {s.slot} is running (run {s.run_id}, pid {s.pid}); a running slot is "
                "never cleared. Stop that run first"
            )
        if not chosen:
            return []
        spare = _busy_origins(current)
        conn = await _connect(info)
        try:
            for s in chosen:
                origins = {*s.origins, *filter(None, [origin_of(s.url)])}
                wiped = await wipe(
                    conn,
                    s.target_id,
                    origins=sorted(origins),
                    spare=spare,
                    context_id=info.context_id,
                )
                # "Closes" the slot: a new tab holds no history, DOM or sessionStorage.
                await close_target(conn, wiped)
                state.clear(s.slot, await new_slot_target(conn, info.context_id))
        finally:
            await conn.close()
        return [s.slot for s in chosen]
    finally:
        state.close()


async def stop(name: str, *, force: bool = False) -> PoolInfo:
    """End the pool: a launched browser is stopped; in an adopted one, the slots and the
    pool's browser context are closed. Refuses while a slot is running, unless ``force``."""
    state = PoolState.open(name)
    try:
        info = state.info()
        running = [s for s in state.slots() if s.state == "running"]
    finally:
        state.close()
    if running and not force:
        runs = ", ".join(sorted({s.run_id or "?" for s in running}))
        raise PoolError(
            f"{len(running)} slot(s) of pool {name!r} are running (run {runs}); wait for them "
            "to end, or `handrail pool stop --force` to stop them with the browser"
        )
    alive = browser_alive(info)
    if alive:
        with contextlib.suppress(CDPError, BrowserError):
            conn = await _connect(info)
            try:
                if info.kind == "launch":
                    with contextlib.suppress(CDPError):
                        await conn.send("Browser.close", timeout=5)
                elif info.context_id is not None:
                    await conn.send(
                        "Target.disposeBrowserContext", {"browserContextId": info.context_id}
                    )
            finally:
                await conn.close()
    pid = info.browser_pid if info.kind == "launch" else None
    if pid is not None and not await wait_gone(pid, info.browser_started, 10.0):
        kill_group(pid)
        await wait_gone(pid, info.browser_started, 5.0)
    folder = pool_dir(name)
    for leftover in ("pool.sqlite3", "pool.sqlite3-wal", "pool.sqlite3-shm"):
        with contextlib.suppress(FileNotFoundError):
            (folder / leftover).unlink()
    if info.tmp_dir:
        shutil.rmtree(info.tmp_dir, ignore_errors=True)
    return info


def _slot(current: PoolStatus, slot: int) -> SlotInfo:
    for s in current.slots:
        if s.slot == slot:
            return s
    raise PoolError(
        f"pool {current.info.name!r} has no slot {slot}; its slots are 1 to {len(current.slots)}"
    )


def _busy_origins(slots: Sequence[SlotInfo]) -> list[str]:
    """Sites a running slot is on now: their storage is left alone by a wipe elsewhere."""
    return sorted({o for s in slots if s.state == "running" and (o := origin_of(s.url))})


async def _connect(info: PoolInfo) -> CDPConnection:
    if not browser_alive(info):
        raise PoolError(
            f"the pool {info.name!r}'s browser is not running; `handrail pool stop --name "
            f"{info.name}` clears it, then `handrail pool start` starts it again"
        )
    try:
        return await CDPConnection.open(info.endpoint)
    except CDPError as exc:
        raise PoolError(
            f"the pool {info.name!r}'s browser does not answer at {info.endpoint} ({exc})"
        ) from exc


# -- a run's lease ---------------------------------------------------------------------


class PoolRun:
    """One run's slots in a pool, and the source of its tabs (the Browser asks it for a
    tab instead of opening one, and hands it each popup).

    Several runs in one process (a fleet) each hold their own PoolRun on the same pool.
    """

    def __init__(self, name: str, run_id: str, task: str, *, resume: int | None = None) -> None:
        self.name = name
        self.run_id = run_id
        self.task = task
        self.resume = resume
        """``--resume-slot``: the first slot is this completed one, its page kept."""
        self.state = PoolState.open(name)
        self.info = self.state.info()
        self.slot_of: dict[str, int] = {}
        """Target id → slot number, for every slot this run holds."""
        self._first: Claim | None = None

    def claim_first(self) -> Claim:
        """Claim the run's first slot (database only: nothing in the browser changes).
        Raises :class:`PoolFull`."""
        if not browser_alive(self.info):
            raise PoolError(
                f"the pool {self.name!r}'s browser is not running; `handrail pool stop --name "
                f"{self.name} --force`, then `handrail pool start --name {self.name}`"
            )
        self._first = self.state.claim(self.run_id, task=self.task, resume=self.resume)
        return self._first

    def set_audit_path(self, path: Path) -> None:
        self.state.set_audit_path(self.run_id, str(path))

    async def open(self) -> Browser:
        """Connect to the pool's browser and attach to the first claimed slot only."""
        claim = self._first or self.claim_first()
        browser = await Browser.connect(self.info.endpoint)
        browser.slots = self
        try:
            target_id = await self._ready(browser.connection, claim)
            try:
                await browser.adopt_target(target_id)
            except CDPError as exc:
                if not claim.resumed:
                    raise
                # Closed between the check and the attach: the same answer as a gone tab.
                raise BrowserError(self._gone(claim.slot)) from exc
        except BaseException:
            await browser.close()
            raise
        return browser

    async def _ready(self, conn: CDPConnection, claim: Claim) -> str:
        target_id = claim.target_id
        present = any(t["targetId"] == target_id for t in await pages(conn))
        if claim.resumed and not present:
            raise BrowserError(self._gone(claim.slot))
        if claim.dirty or not present:
            target_id = await wipe(
                conn,
                target_id,
                origins=claim.origins,
                spare=_busy_origins(self.state.slots()),
                context_id=self.info.context_id,
            )
            self.state.wiped(claim.slot, target_id)
        self.slot_of[target_id] = claim.slot
        return target_id

    def _gone(self, slot: int) -> str:
        return (
            f"slot {slot}'s tab is gone (closed in the browser?): there is no page to resume; "
            f"`handrail pool clear {slot} --name {self.name}` gives the slot a new tab"
        )

    # -- core.browser.browser.SlotSource ---------------------------------------------------------

    async def new_target(self, browser: Browser) -> str:
        """Another slot for this run (its tab was closed): raises BrowserError when full."""
        try:
            claim = self.state.claim(self.run_id, task=self.task)
        except PoolFull as exc:
            raise BrowserError(f"{exc}; no other tab can be opened for this run") from exc
        return await self._ready(browser.connection, claim)

    async def take_popup(self, browser: Browser, target_id: str) -> None:
        """A page of this run opened ``target_id``: it takes the place of a claimed slot's
        tab (the pool keeps its size). When the pool is full the popup is closed and
        :class:`PopupRefused` says so."""
        try:
            claim = self.state.claim(self.run_id, task=self.task)
        except PoolFull as exc:
            await close_target(browser.connection, target_id)
            raise PopupRefused(
                f"the page opened a new tab, which was closed at once: {exc}. Go on in this "
                "tab (navigate to the link's address instead)"
            ) from exc
        if claim.dirty:
            spare = _busy_origins(self.state.slots())
            old = await wipe(
                browser.connection,
                claim.target_id,
                origins=claim.origins,
                spare=spare,
                context_id=self.info.context_id,
            )
        else:
            old = claim.target_id
        await close_target(browser.connection, old)
        self.state.wiped(claim.slot, target_id)
        self.slot_of[target_id] = claim.slot

    # -- the end -----------------------------------------------------------------------

    async def end(
        self, browser: Browser | None, *, scrub: Callable[[str], str] | None = None
    ) -> list[int]:
        """The run ended: its slots become ``completed`` with their pages as they are.
        Records each page's URL, title and visited sites first (best effort), through
        ``scrub`` (the run's secrets redacted: a secret typed into a GET form is in the
        URL, and the database and ``pool status`` must not keep it)."""
        keep = scrub or (lambda text: text)
        if browser is not None:
            for tab in list(browser.tabs.values()):
                slot = self.slot_of.get(tab.target_id)
                if slot is None or tab.closed:
                    continue
                origins: list[str] = []
                with contextlib.suppress(CDPError):
                    history = await tab.send("Page.getNavigationHistory", timeout=5)
                    origins = [
                        o
                        for e in history.get("entries", [])
                        if (o := origin_of(str(e.get("url", ""))))
                    ]
                self.state.note_page(slot, keep(tab.url), keep(tab.title), origins)
        done = self.state.finish(self.run_id)
        self.state.close()
        return done
