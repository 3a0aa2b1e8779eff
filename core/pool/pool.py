"""Pool operations that touch the browser: start, show, clear, stop, and the lease a run
holds on its slots (:class:`PoolRun`).

Every slot's tab lives in a browser context of its own, made when the slot is (re)claimed
and disposed when it is reclaimed: a run starts as in a fresh browser, whatever the last
run in that slot did and whichever hosts it went through, and runs in other slots never
share its cookies. A run's second tab (a popup, or a tab for a closed one) opens in the
run's own context.

Nothing here brings a window or a tab to the front, except :func:`show`: slots are created
with ``background: true`` and runs never send ``Target.activateTarget``.
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
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import structlog

from core.browser.browser import Browser
from core.browser.errors import BrowserError, PopupRefused
from core.cdp import CDPConnection, CDPError, mask_endpoints, shown_endpoint
from core.pool import owner
from core.pool.detached import (
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
            "endpoint": shown_endpoint(self.info.endpoint),
            "kind": self.info.kind,
            "browser_alive": self.browser_alive,
            "slots": [
                {**s.public(), "resume": resume_command(self.info.name, s)} for s in self.slots
            ],
        }


def resume_command(name: str, slot: SlotInfo, program: str = "handrail") -> str | None:
    """The command that goes on in ``slot`` from its page (None unless it is completed:
    an idle slot holds nothing to resume, a running one belongs to its run); ``program``,
    how the person runs handrail."""
    if slot.state != "completed":
        return None
    pool = "" if name == DEFAULT_NAME else f" {name}"
    return f"{program} run TASK --pool{pool} --resume-slot {slot.slot}"


def browser_alive(info: PoolInfo) -> bool:
    """Whether a launched pool's browser process (a grid's keeper) still runs (adopted
    browsers: assumed; a grid's endpoints are checked one by one, :func:`endpoint_answers`)."""
    if info.kind == "grid":
        return info.browser_pid is None or owner.alive(info.browser_pid, info.browser_started)
    if info.kind != "launch":
        return True
    return owner.alive(info.browser_pid, info.browser_started)


async def check_endpoints(name: str) -> dict[str, bool]:
    """A grid pool's endpoints, each with whether it answers now; the slots of one that
    does not are marked lost (running ones stay their runs'). Other pools: {}."""
    state = PoolState.open(name)
    try:
        if state.info().kind != "grid":
            return {}
        endpoints = state.endpoints()
        health = dict(
            zip(endpoints, await asyncio.gather(*map(endpoint_answers, endpoints)), strict=True)
        )
        for endpoint, up in health.items():
            if not up:
                state.lose(endpoint, "did not answer when the pool was checked")
        return health
    finally:
        state.close()


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
    endpoints: Sequence[str] = (),
) -> PoolInfo:
    """Start (or adopt) the pool's browser and make exactly ``slots`` blank background
    tabs in it; with ``endpoints`` (a grid: browsers elsewhere), ``slots`` tabs in each.
    Raises :class:`PoolError` / BrowserError with what to do."""
    if not 1 <= slots <= 64:
        raise PoolError(f"--slots must be between 1 and 64 (got {slots})")
    if endpoints:
        return await _start_grid(name, endpoints, slots)
    folder = pool_dir(name)
    _refuse_running(name)
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
        tabs = await _make_slots(conn, started, slots)
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
        headless=headless,
        created_at=time.time(),
    )
    PoolState.create(info, tabs).close()
    return info


async def _start_grid(name: str, endpoints: Sequence[str], per_endpoint: int) -> PoolInfo:
    """A pool over browsers elsewhere (a grid's endpoints, or Chromes on other hosts):
    ``per_endpoint`` slots in each, every one in a browser context of its own, in a window
    of its own. An endpoint that cannot be reached stops the start (nothing is kept)."""
    if len(set(endpoints)) != len(endpoints):
        raise PoolError("the same --endpoint is given twice")
    _refuse_running(name)
    folder = pool_dir(name)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    made: list[tuple[str, str, str]] = []
    opened: list[CDPConnection] = []
    kept: list[str] = []
    keeper: subprocess.Popen[bytes] | None = None
    try:
        for given in endpoints:
            service = is_service(given)
            started = (
                Started(kind="grid", endpoint=with_query(given, timeout="0"), source=given)
                if service
                else await adopt(given)
            )
            try:
                conn = await CDPConnection.open(started.endpoint)
            except CDPError as exc:
                raise BrowserError(
                    f"could not reach the endpoint {shown_endpoint(given)}: {mask_endpoints(str(exc))}"
                ) from exc
            opened.append(conn)
            tabs = await _make_slots(conn, started, per_endpoint)
            endpoint = started.endpoint
            if service:
                # The service closes this browser with its last client: the keeper becomes
                # one, on the browser's own address, before this connection closes.
                endpoint = await service_browser_url(given, [t for t, _c in tabs])
                kept.append(endpoint)
            made += [(target, context, endpoint) for target, context in tabs]
        if kept:
            keeper = await start_keeper(folder, kept)
    except BaseException:
        await _undo_slots(made, opened)
        raise
    finally:
        for conn in opened:
            await conn.close()
    info = PoolInfo(
        name=name,
        kind="grid",
        endpoint=made[0][2],
        source=", ".join(shown_endpoint(e) for e in endpoints),
        browser_pid=keeper.pid if keeper is not None else None,
        browser_started=owner.start_time(keeper.pid) if keeper is not None else None,
        created_at=time.time(),
    )
    PoolState.create(info, made).close()
    return info


async def _undo_slots(
    made: Sequence[tuple[str, str, str]], opened: Sequence[CDPConnection]
) -> None:
    """Take back the slots a failed grid start made: their contexts, over the connections
    that made them (a service's browser closes with them anyway)."""
    contexts = [context for _t, context, _e in made]
    for conn in opened:
        if not conn.closed:
            for context in contexts:
                with contextlib.suppress(CDPError):
                    await conn.send("Target.disposeBrowserContext", {"browserContextId": context})


def is_service(endpoint: str) -> bool:
    """Whether ``endpoint`` is a browser service's (browserless): it names a ``token``. Such
    a service launches a browser per connection and closes it with its last client."""
    return "token" in urllib.parse.parse_qs(urllib.parse.urlsplit(endpoint).query)


def with_query(url: str, **params: str) -> str:
    """``url`` with ``params`` added to (or replacing those in) its query."""
    parts = urllib.parse.urlsplit(url)
    query = dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True)) | params
    return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))


async def service_browser_url(endpoint: str, targets: Sequence[str]) -> str:
    """The address of the service's browser that holds ``targets`` (browserless's
    ``/devtools/browser/<id>``), found in its ``/sessions``. Raises BrowserError."""
    parts = urllib.parse.urlsplit(endpoint)
    scheme = "https" if parts.scheme == "wss" else "http"
    token = urllib.parse.parse_qs(parts.query)["token"][0]
    listing = urllib.parse.urlunsplit(
        (scheme, parts.netloc, "/sessions", urllib.parse.urlencode({"token": token}), "")
    )
    # The service lists a new target a moment after it exists: asked again until then.
    deadline = time.monotonic() + 20.0
    while True:
        try:
            sessions = await asyncio.to_thread(_get_json, listing)
        except (OSError, ValueError) as exc:
            raise BrowserError(
                f"{shown_endpoint(endpoint)} did not list its sessions: {exc}"
            ) from exc
        found = _browser_of(sessions, set(targets))
        if found is not None:
            path = f"/devtools/browser/{urllib.parse.quote(found, safe='')}"
            query = urllib.parse.urlencode({"token": token, "timeout": "0"})
            return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, query, ""))
        if time.monotonic() > deadline:
            raise BrowserError(
                f"{shown_endpoint(endpoint)} does not list the browser the pool's slots were "
                "made in"
            )
        await asyncio.sleep(0.1)


def _browser_of(sessions: object, wanted: set[str]) -> str | None:
    """The id of the browser ``/sessions`` lists with one of the ``wanted`` targets."""
    for session in sessions if isinstance(sessions, list) else []:
        if not isinstance(session, dict):
            continue
        # One entry per target (its ``id``), each naming its browser; older versions list
        # a browser's pages under ``pages``.
        listed = session.get("pages")
        pages = listed if isinstance(listed, list) else []
        ids = {str(p.get("id") or p.get("targetId")) for p in pages if isinstance(p, dict)}
        ids.add(str(session.get("id") or session.get("targetId")))
        browser_id = session.get("browserId")
        if ids & wanted and isinstance(browser_id, str) and browser_id:
            return browser_id
    return None


def _get_json(url: str) -> object:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.loads(answer.read(4_000_000))


def _spawn_keeper(folder: Path, endpoints: Sequence[str]) -> subprocess.Popen[bytes]:
    """The keeper in a session of its own (it outlives ``pool start``), told its endpoints
    on stdin (they carry the service's token), logging to ``folder/keeper.log``."""
    with open(folder / "keeper.log", "ab") as log_file:
        keeper = subprocess.Popen(
            [sys.executable, "-m", "core.pool.keeper"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log_file,
            start_new_session=True,
        )
    assert keeper.stdin is not None
    keeper.stdin.write((json.dumps(list(endpoints)) + "\n").encode())
    keeper.stdin.close()
    return keeper


async def start_keeper(folder: Path, endpoints: Sequence[str]) -> subprocess.Popen[bytes]:
    """Start the grid keeper (core/pool/keeper.py), detached, holding ``endpoints``; return
    once it holds them all. Raises BrowserError with what it said."""
    keeper = _spawn_keeper(folder, endpoints)
    assert keeper.stdout is not None
    try:
        line = await asyncio.wait_for(asyncio.to_thread(keeper.stdout.readline), 60)
    except TimeoutError:
        line = b"it did not answer within 60 s"
    said = line.decode(errors="replace").strip()
    if said != "ready":
        kill_group(keeper.pid)
        raise BrowserError(
            f"the grid keeper could not hold the pool's browsers: {said or 'it ended'}"
        )
    return keeper


def _refuse_running(name: str) -> None:
    with contextlib.suppress(PoolMissing):
        existing = status(name)
        if existing.browser_alive:
            raise PoolError(
                f"the pool {name!r} is already running at {shown_endpoint(existing.info.endpoint)}; "
                f"`handrail pool stop --name {name}` first, or pick another --name"
            )


async def _make_slots(conn: CDPConnection, started: Started, count: int) -> list[tuple[str, str]]:
    """``count`` slots, each a blank background tab in a browser context of its own (in an
    adopted browser, in a window of its own, away from the person's tabs)."""
    # Chrome opens a first tab of its own, in the profile's default context, which no slot
    # uses: waited for, then closed once the slots are there.
    initial = await initial_pages(conn) if started.kind == "launch" else []
    # Made side by side: each new context starts a renderer of its own, and the browser
    # starts them in parallel.
    new_window = started.kind != "launch"
    results = await asyncio.gather(
        *(fresh_slot(conn, new_window=new_window) for _ in range(count)), return_exceptions=True
    )
    made = [r for r in results if not isinstance(r, BaseException)]
    failed = [r for r in results if isinstance(r, BaseException)]
    if failed:
        for _, context_id in made:
            await dispose_context(conn, context_id)
        raise failed[0]
    for extra in initial:
        await close_target(conn, str(extra["targetId"]))
    # Closing answers before the tab is gone: the pool is ready once only its slots are.
    closing = {str(extra["targetId"]) for extra in initial}
    deadline = time.monotonic() + 5.0
    while closing & {str(t["targetId"]) for t in await pages(conn)}:
        if time.monotonic() > deadline:
            log.warning("pool.first_tab_not_closed", targets=sorted(closing))
            break
        await asyncio.sleep(0.05)
    return made


def _abandon(started: Started) -> None:
    if started.pid is not None:
        kill_group(started.pid)
    if started.tmp_dir is not None:
        shutil.rmtree(started.tmp_dir, ignore_errors=True)


# -- fresh slots -------------------------------------------------------------------------


async def new_context(conn: CDPConnection) -> str:
    """A browser context of its own: no cookie, storage, cache, service worker or
    permission of any other context reaches it, and disposing it drops all of them."""
    created = await conn.send("Target.createBrowserContext", {"disposeOnDetach": False})
    return str(created["browserContextId"])


async def fresh_slot(conn: CDPConnection, *, new_window: bool = False) -> tuple[str, str]:
    """A blank background tab in a browser context made for it: ``(target id, context
    id)``. This is how every slot starts, and how a reclaimed one starts again."""
    context_id = await new_context(conn)
    try:
        target_id = await new_slot_target(conn, context_id, new_window=new_window)
    except BaseException:
        await dispose_context(conn, context_id)
        raise
    return target_id, context_id


async def dispose_context(conn: CDPConnection, context_id: str) -> None:
    """Drop a browser context with everything in it (its tabs close with it)."""
    try:
        await conn.send("Target.disposeBrowserContext", {"browserContextId": context_id})
    except CDPError as exc:
        log.warning("pool.context_not_disposed", context=context_id, error=str(exc))


async def renew(
    conn: CDPConnection,
    state: PoolState,
    slot: int,
    target_id: str,
    context_id: str | None,
    *,
    keep: Sequence[str] = (),
) -> None:
    """Let slot ``slot`` go of its tab and of its browser context: the tab is closed, and
    the context is disposed unless another slot's tab still lives in it (a second tab of
    the same completed run, whose page is kept) or it is one of ``keep``. The slot's row
    is updated by the caller."""
    await close_target(conn, target_id)
    if context_id is None or context_id in keep:
        return
    if any(other != slot for other in state.context_users(context_id)):
        return
    await dispose_context(conn, context_id)


# -- the person's commands ---------------------------------------------------------------


async def show(name: str, slot: int) -> SlotInfo:
    """Bring the pool's browser and slot ``slot``'s tab to the front (the only command
    that does). Raises :class:`PoolError`."""
    current = status(name)
    chosen = _slot(current, slot)
    conn = await _connect(current.info, chosen.endpoint)
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
    """Close the given slots (None: every completed one) with their browser contexts: each
    is ``idle`` again, with a fresh tab in a fresh context.
    Refuses a running slot. Returns the slots cleared."""
    state = PoolState.open(name)
    try:
        info = state.info()
        current = state.slots()
        if slots is None:
            chosen = [s for s in current if s.state in ("completed", "lost")]
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
        for endpoint in dict.fromkeys(s.endpoint for s in chosen):
            conn = await _connect(info, endpoint)
            try:
                for s in chosen:
                    if s.endpoint != endpoint:
                        continue
                    await renew(conn, state, s.slot, s.target_id, s.context_id)
                    target_id, context_id = await fresh_slot(conn, new_window=info.kind != "launch")
                    state.clear(s.slot, target_id, context_id)
            finally:
                await conn.close()
        return [s.slot for s in chosen]
    finally:
        state.close()


async def stop(name: str, *, force: bool = False) -> PoolInfo:
    """End the pool: a launched browser is stopped; in an adopted one, the slots' browser
    contexts are disposed (their tabs close with them). Refuses while a slot is running, unless ``force``."""
    state = PoolState.open(name)
    try:
        info = state.info()
        every = state.slots()
        running = [s for s in every if s.state == "running"]
        contexts = [*state.contexts(), *filter(None, [info.context_id])]
    finally:
        state.close()
    if running and not force:
        runs = ", ".join(sorted({s.run_id or "?" for s in running}))
        raise PoolError(
            f"{len(running)} slot(s) of pool {name!r} are running (run {runs}); wait for them "
            "to end, or `handrail pool stop --force` to stop them with the browser"
        )
    alive = browser_alive(info)
    if info.kind == "grid":
        await _close_grid_slots(info, every)
    elif alive:
        with contextlib.suppress(CDPError, BrowserError):
            conn = await _connect(info)
            try:
                if info.kind == "launch":
                    with contextlib.suppress(CDPError):
                        await conn.send("Browser.close", timeout=5)
                else:
                    for context_id in contexts:
                        await dispose_context(conn, context_id)
            finally:
                await conn.close()
    if info.kind == "grid" and info.browser_pid is not None and alive:
        # The keeper: SIGTERM closes its connections (a service then closes its browsers).
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(info.browser_pid, signal.SIGTERM)
    pid = info.browser_pid if info.kind in ("launch", "grid") else None
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


async def _close_grid_slots(info: PoolInfo, slots: Sequence[SlotInfo]) -> None:
    """Dispose every slot's browser context on its own endpoint (one that does not answer
    is passed over: its browser is gone, or not ours to reach)."""
    for endpoint in dict.fromkeys(s.endpoint for s in slots):
        try:
            conn = await CDPConnection.open(endpoint, timeout=5)
        except (CDPError, OSError):
            log.warning("pool.endpoint_not_reached", endpoint=shown_endpoint(endpoint))
            continue
        try:
            for context_id in dict.fromkeys(
                s.context_id for s in slots if s.endpoint == endpoint and s.context_id
            ):
                await dispose_context(conn, context_id)
        finally:
            await conn.close()


def _slot(current: PoolStatus, slot: int) -> SlotInfo:
    for s in current.slots:
        if s.slot == slot:
            return s
    raise PoolError(
        f"pool {current.info.name!r} has no slot {slot}; its slots are 1 to {len(current.slots)}"
    )


async def _connect(info: PoolInfo, endpoint: str | None = None) -> CDPConnection:
    """A connection to the pool's browser, or to the grid browser at ``endpoint``."""
    where = endpoint or info.endpoint
    if info.kind == "grid":
        try:
            return await CDPConnection.open(where, timeout=10)
        except (CDPError, OSError) as exc:
            raise PoolError(
                f"the browser at {shown_endpoint(where)} does not answer "
                f"({mask_endpoints(str(exc))}); its slots "
                f"are lost until it is back (then `handrail pool clear --completed --name "
                f"{info.name}` gives them new tabs)"
            ) from exc
    if not browser_alive(info):
        raise PoolError(
            f"the pool {info.name!r}'s browser is not running; `handrail pool stop --name "
            f"{info.name}` clears it, then `handrail pool start --name {info.name}` starts it "
            "again"
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
        self.context_id: str | None = None
        """The browser context of this run's first tab: its other tabs open in it too (one
        run's tabs share a login, as one browser's do; other runs never see it)."""
        self.endpoint: str | None = None
        """The browser this run's slots are in (a grid has several; one run, one browser)."""
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
        """Connect to the claimed slot's browser and attach to that slot only. On a grid,
        a browser that does not answer has its slots marked lost and the run claims a slot
        on another one (until none is left: :class:`PoolFull`)."""
        claim = self._first or self.claim_first()
        while True:
            endpoint = claim.endpoint or self.info.endpoint
            try:
                browser = await Browser.connect(endpoint)
                break
            except (BrowserError, CDPError, OSError) as exc:
                if self.info.kind != "grid":
                    raise
                reason = f"did not answer when run {self.run_id} claimed slot {claim.slot}"
                log.warning(
                    "pool.endpoint_lost",
                    endpoint=shown_endpoint(endpoint),
                    error=mask_endpoints(str(exc)),
                )
                self.state.finish(self.run_id, lost=reason)
                self.state.lose(endpoint, reason)
                claim = self._first = self.state.claim(self.run_id, task=self.task)
        self.endpoint = endpoint
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
        """The claimed slot's tab, ready for this run. A completed run's slot, a slot whose
        tab is gone, and any second slot of this run get a new tab: in a browser context
        made for it (the run's first slot) or in the run's context (its others). The old
        tab is closed and its context disposed, so whatever host set a cookie, storage,
        cache entry, service worker or permission there, none of it is left."""
        target_id = claim.target_id
        present = any(t["targetId"] == target_id for t in await pages(conn))
        if claim.resumed and not present:
            raise BrowserError(self._gone(claim.slot))
        context_id = claim.context_id
        # A slot of a pool started by an earlier handrail has no context of its own yet.
        stale = claim.dirty or not present or claim.context_id is None
        if not claim.resumed and (stale or self.context_id is not None):
            await renew(conn, self.state, claim.slot, target_id, claim.context_id)
            if self.context_id is None:
                target_id, context_id = await fresh_slot(
                    conn, new_window=self.info.kind != "launch"
                )
            else:
                context_id = self.context_id
                target_id = await new_slot_target(conn, context_id)
            self.state.renewed(claim.slot, target_id, context_id)
        if self.context_id is None:
            self.context_id = context_id
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
            claim = self.state.claim(self.run_id, task=self.task, endpoint=self.endpoint)
        except PoolFull as exc:
            raise BrowserError(f"{exc}; no other tab can be opened for this run") from exc
        return await self._ready(browser.connection, claim)

    async def take_popup(self, browser: Browser, target_id: str) -> None:
        """A page of this run opened ``target_id`` (in the run's browser context): it takes
        the place of a claimed slot's tab, whose tab and context go (the pool keeps its
        size). When the pool is full the popup is closed and :class:`PopupRefused` says so."""
        try:
            claim = self.state.claim(self.run_id, task=self.task, endpoint=self.endpoint)
        except PoolFull as exc:
            await close_target(browser.connection, target_id)
            raise PopupRefused(
                f"the page opened a new tab, which was closed at once: {exc}. Go on in this "
                "tab (navigate to the link's address instead)"
            ) from exc
        await renew(
            browser.connection,
            self.state,
            claim.slot,
            claim.target_id,
            claim.context_id,
            keep=[c for c in [self.context_id] if c is not None],
        )
        self.state.renewed(claim.slot, target_id, await _context_of(browser, target_id))
        self.slot_of[target_id] = claim.slot

    # -- the end -----------------------------------------------------------------------

    async def end(
        self, browser: Browser | None, *, scrub: Callable[[str], str] | None = None
    ) -> list[int]:
        """The run ended: its slots become ``completed`` with their pages as they are.
        Records each page's URL and title first, through
        ``scrub`` (the run's secrets redacted: a secret typed into a GET form is in the
        URL, and the database and ``pool status`` must not keep it)."""
        keep = scrub or (lambda text: text)
        lost = await self._lost(browser)
        if browser is not None and lost is None:
            for tab in list(browser.tabs.values()):
                slot = self.slot_of.get(tab.target_id)
                if slot is None or tab.closed:
                    continue
                self.state.note_page(slot, keep(tab.url), keep(tab.title))
        done = self.state.finish(self.run_id, lost=lost)
        if lost is not None and self.endpoint is not None:
            self.state.lose(self.endpoint, lost)
        self.state.close()
        return done

    async def _lost(self, browser: Browser | None) -> str | None:
        """Why the run's browser is gone (a grid endpoint that stopped answering), or None.
        Asked only when the run's connection to it has closed."""
        if self.info.kind != "grid" or self.endpoint is None:
            return None
        if browser is not None and not browser.connection.closed:
            return None
        if await endpoint_answers(self.endpoint):
            return None
        return f"stopped answering during run {self.run_id}"


async def endpoint_answers(endpoint: str, timeout: float = 3.0) -> bool:
    """Whether a browser answers at ``endpoint`` (a DevTools websocket): one
    ``Browser.getVersion``, on a connection closed at once."""
    try:
        conn = await CDPConnection.open(endpoint, timeout=timeout)
    except (CDPError, OSError):
        return False
    try:
        await conn.send("Browser.getVersion", timeout=timeout)
        return True
    except CDPError:
        return False
    finally:
        await conn.close()


async def _context_of(browser: Browser, target_id: str) -> str | None:
    """The browser context ``target_id`` lives in (None if it is gone already)."""
    try:
        reply = await browser.connection.send("Target.getTargetInfo", {"targetId": target_id})
    except CDPError:
        return None
    context_id = reply.get("targetInfo", {}).get("browserContextId")
    return str(context_id) if context_id else None
