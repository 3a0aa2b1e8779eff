"""The hands: page actions over CDP, with trusted input only.

:class:`Page` acts in the current tab of a :class:`~core.browser.Browser` and returns an
:class:`~core.result.ActionResult` written for the model that reads it next round: what
happened, and what changed (URL, title, DOM, a new tab, a dialog, how many new interactive
elements), measured with ``__handrail.probe()`` before the action and after a short settle
(the page's network quiet, bounded, and two animation frames).

What the caller can rely on:

- Every action finishes within ``action_timeout`` seconds (45 by default) — a stuck page
  yields an error result, not a hang. The only exception is while a JavaScript dialog
  waits for ``dialog_decider`` (a person may be deciding); the clock resumes afterwards.
- No action raises for a page problem: stale indexes, covered or moving targets, closed
  or crashed tabs and a dead browser all come back as failure results. Only
  :class:`asyncio.CancelledError` propagates.
- ``outcome == "unknown"`` when input was already sent to the page but its effect could
  not be read back (the tab or browser died, the page stopped answering). Such a result
  is never a success, and the hands never retry anything on their own.
- Clicks are trusted mouse events (``Input.dispatchMouseEvent``) on the element's centre,
  after it was scrolled into view, found visible, enabled and still, and confirmed by a hit
  test to be what receives the click; never ``element.click()``.
- ``run_js`` runs in the page's MAIN world (the page's own globals and framework state are
  visible to it, and it to the page): the person allowed JavaScript for the run explicitly.
  Everything else runs in handrail's isolated world (core/world.py) or through CDP.

Page-side helpers live in ``core/page.js``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import structlog

from core.actions import Action
from core.browser import Browser, BrowserError, Tab
from core.cdp import JSON, CDPError, CDPTimeout, ConnectionClosed, SessionClosed
from core.keys import KeySpecError, char_events, key_events, parse_keys
from core.result import ActionResult, Changes
from core.snapshot import Snapshot, SnapshotOptions, probe, take_snapshot
from core.world import (
    StaleElement,
    UnknownIndex,
    WorldError,
    element_object_id,
    world_call,
    world_eval,
)

log = structlog.get_logger("handrail.page")

_PAGE_JS = Path(__file__).with_name("page.js")
STATE_KEY = "page"

DialogType = Literal["alert", "confirm", "prompt", "beforeunload"]

# Settling after an action: wait until the page has had no request in flight for QUIET
# seconds (counted from the input at the earliest, so a reaction that starts a moment
# later is still seen), at most CAP seconds. A navigation waits for its load first.
ACTION_QUIET, ACTION_CAP = 0.1, 1.5
# Typing often feeds a debounced listener (search-as-you-type, autocomplete) whose timer
# restarts at every key: count quiet from the last key, over a typical debounce delay.
TYPE_QUIET = 0.3
# Time after the input that surely covers two animation frames (60 Hz) of the page's reaction.
FRAMES_COVERED = 0.05
# Pointer rests on the target before pressing, as a person's does (hover menus, tooltips).
HOVER = 0.015
NAV_QUIET, NAV_CAP = 0.5, 5.0
# How far a target may have moved since approval before it counts as a different target.
RECT_TOLERANCE_PX = 4.0
MAX_WAIT_SECONDS = 30.0
# Longer texts are inserted in one go, with only the last character typed as a key press
# (enough for fields that react to keyup).
KEY_BY_KEY_LIMIT = 120
# Schemes that are refused as such (rather than read as a host name missing its scheme).
_OTHER_SCHEMES = {
    "javascript",
    "data",
    "blob",
    "about",
    "chrome",
    "chrome-extension",
    "chrome-untrusted",
    "devtools",
    "view-source",
    "filesystem",
    "ftp",
    "ws",
    "wss",
    "mailto",
    "tel",
    "intent",
    "edge",
    "brave",
    "opera",
    "vivaldi",
}
_RUN_JS_GROUP = "handrail-run-js"
# Runs on run_js's result in the page's main world: JSON, with what JSON cannot hold
# (DOM nodes, functions, cycles, BigInt) described as strings, and a size cap.
_SERIALISE_JS = """function () {
  const seen = new WeakSet();
  const text = JSON.stringify(this, (key, v) => {
    if (typeof v === "bigint") return v.toString();
    if (typeof v === "function") return "[function]";
    if (v && typeof v === "object") {
      if (typeof v.nodeType === "number" && typeof v.nodeName === "string") {
        return v.nodeType === 1 ? "<" + v.nodeName.toLowerCase() + (v.id ? " id=" + v.id : "") + ">" : v.nodeName;
      }
      if (seen.has(v)) return "[circular]";
      seen.add(v);
    }
    return v;
  });
  if (text === undefined) return null;
  return text.length > 100000 ? { truncated: true, json: text.slice(0, 100000) } : JSON.parse(text);
}"""
# Requests that never finish by design must not hold "network quiet" hostage.
_LONG_LIVED_TYPES = {"EventSource", "WebSocket"}


@dataclass(frozen=True, slots=True)
class DialogInfo:
    """A JavaScript dialog the page opened."""

    type: DialogType
    message: str
    default_prompt: str
    url: str


DialogDecider = Callable[[DialogInfo], Awaitable[tuple[bool, str | None]]]
"""Decides a confirm/prompt dialog: ``(accept, prompt text or None for the default)``."""


@dataclass(frozen=True, slots=True)
class TargetExpectation:
    """What the person approved: the tab's URL and the element's index, accessible name and
    rectangle (x, y, width, height in top-level viewport CSS pixels) as the digest showed."""

    url: str
    index: int
    name: str
    rect: tuple[float, float, float, float]


# --- per-tab watching ---------------------------------------------------------------------


@dataclass
class _Marks:
    """Counters of a tab's navigation events, taken before an action to compare after."""

    requested: int
    started: int
    stopped: int
    commits: int
    same_doc: int


@dataclass
class _TabWatch:
    """Network and navigation bookkeeping for one tab, kept in ``tab.state["page"]``."""

    tab: Tab
    owner: object
    inflight: dict[str, float] = field(default_factory=dict)
    last_activity: float = 0.0
    lifecycle: dict[str, set[str]] = field(default_factory=dict)
    """Main-frame loaderId → lifecycle event names seen (init, DOMContentLoaded, load...)."""
    committed_loader: str | None = None
    doc_status: dict[str, int] = field(default_factory=dict)
    requested: int = 0
    started: int = 0
    stopped: int = 0
    commits: int = 0
    same_doc: int = 0
    pulse: asyncio.Event = field(default_factory=asyncio.Event)
    unsubscribe: list[Callable[[], None]] = field(default_factory=list)
    url: str | None = None
    title: str | None = None
    """The latest URL and title read from the page (Chrome's target info lags behind)."""

    def marks(self) -> _Marks:
        return _Marks(self.requested, self.started, self.stopped, self.commits, self.same_doc)

    def bump(self) -> None:
        self.pulse.set()

    async def changed(self, timeout: float) -> None:
        """Wait until any watched event arrives, or ``timeout`` seconds (at most 0.25 s, so
        a closed tab or a dead connection is noticed). Raises SessionClosed /
        ConnectionClosed when the tab or the browser went away."""
        self.pulse.clear()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(min(max(timeout, 0.0), 0.25)):
                await self.pulse.wait()
        self.check_alive()

    def check_alive(self) -> None:
        connection = self.tab.session.connection
        if connection.closed:
            raise ConnectionClosed(
                f"connection to the browser is closed ({connection.closed_reason})"
            )
        if self.tab.crashed:
            raise SessionClosed("the tab's renderer crashed")
        if self.tab.closed:
            raise SessionClosed("the tab was closed")


@dataclass
class _Ctx:
    """One action in progress."""

    name: str
    deadline: float
    tab: Tab | None = None
    dispatched: bool = False
    """Input that may change the page has been sent (an error after this is 'unknown')."""
    dialog_mark: int = 0
    download_mark: int = 0
    notices: list[str] = field(default_factory=list)

    dispatched_at: float = 0.0
    """time.monotonic() of the latest input sent."""

    def remaining(self) -> float:
        return self.deadline - asyncio.get_running_loop().time()

    def mark_dispatched(self) -> None:
        self.dispatched = True
        self.dispatched_at = time.monotonic()


@dataclass(frozen=True, slots=True)
class _Probe:
    url: str
    title: str
    mutations: int
    new_interactive: int
    generation: tuple[int, int]
    """(documents committed in the tab, our world's generation): different means a new
    document, whose counters are not comparable with the old one's."""


@dataclass
class _Download:
    guid: str
    name: str
    url: str
    state: str = "inProgress"
    path: str | None = None
    reported: bool = False


@dataclass
class _DialogRecord:
    info: DialogInfo
    answer: str = "waiting for a decision"
    done: bool = False
    asks_decider: bool = False


class _Refused(Exception):
    """An action refused before anything was sent to the page (becomes a failure result)."""

    def __init__(self, message: str, error: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.error = error or message


def _page_js() -> str:
    return _PAGE_JS.read_text(encoding="utf-8")


class Page:
    """The hands, acting in ``browser``'s current tab. See the module docstring."""

    def __init__(
        self,
        browser: Browser,
        *,
        action_timeout: float = 45.0,
        allow_file_urls: bool = False,
        upload_dir: Path | None = None,
        downloads_dir: Path | None = None,
        screenshots_dir: Path | None = None,
        dialog_decider: DialogDecider | None = None,
    ) -> None:
        self.browser = browser
        self.action_timeout = action_timeout
        self.allow_file_urls = allow_file_urls
        self.upload_dir = upload_dir
        self.downloads_dir = downloads_dir
        self.screenshots_dir = screenshots_dir
        self.dialog_decider = dialog_decider
        self.open_dialog: DialogInfo | None = None
        self._dialogs: list[_DialogRecord] = []
        self._dialogs_reported = 0
        self._dialog_tasks: set[asyncio.Task[None]] = set()
        self._deciding = 0
        self._no_decision_pending = asyncio.Event()
        self._no_decision_pending.set()
        self._downloads: dict[str, _Download] = {}
        self._download_order: list[str] = []
        self._popups = 0
        self._screens = 0
        self._conn_seen: object | None = None
        self._conn_unsubscribe: list[Callable[[], None]] = []
        self._call_source = (
            "function (name, args) {\n"
            "  const api = globalThis.__handrailPage || (globalThis.__handrailPage = (\n"
            f"{_page_js()}\n"
            "  ));\n"
            "  return api[name](...args);\n"
            "}"
        )
        self._mac = sys.platform == "darwin"
        browser.attach_hooks.append(self._watch)
        for tab in list(browser.tabs.values()):
            if not tab.closed:
                self._ensure_watch(tab)

    def close(self) -> None:
        """Stop watching the browser (tabs, downloads, dialogs). The browser stays open."""
        with contextlib.suppress(ValueError):
            self.browser.attach_hooks.remove(self._watch)
        for unsubscribe in self._conn_unsubscribe:
            unsubscribe()
        self._conn_unsubscribe = []
        self._conn_seen = None
        for tab in self.browser.tabs.values():
            watch = tab.state.get(STATE_KEY)
            if isinstance(watch, _TabWatch) and watch.owner is self:
                for unsubscribe in watch.unsubscribe:
                    unsubscribe()
                del tab.state[STATE_KEY]

    # --- the agent's entry points -------------------------------------------------------

    async def observe(self, options: SnapshotOptions | None = None) -> tuple[Snapshot, list[str]]:
        """The digest of the current tab and notices (tab reopened, browser reconnected,
        downloads finished, dialogs handled outside an action, a dialog still open).

        Raises :class:`~core.browser.BrowserError` or ``core.cdp`` errors only when no
        tab can be obtained at all.
        """
        notices: list[str] = []
        for attempt in range(3):
            try:
                tab, recovered = await self._active_tab()
                notices += recovered
                self._ensure_watch(tab)
                await self._ensure_connection_listeners()
                snapshot = await take_snapshot(tab, options=options)
                break
            except (SessionClosed, ConnectionClosed) as exc:
                # The tab or the browser died since the last action (a crash, a kill): the
                # next active_tab() opens a new tab or starts the browser again.
                if attempt == 2:
                    raise
                log.info("page.observe_retry", error=_first_line(exc))
                await asyncio.sleep(0.2 * (attempt + 1))
        notices += self._drain_notices(None)
        if self.open_dialog is not None:
            d = self.open_dialog
            notices.append(f"a {d.type} dialog is open: {d.message!r} (waiting for a decision)")
        return snapshot, notices

    def tab_descriptions(self) -> list[str]:
        """``[N] * Title — url`` for each of our tabs (``*`` marks the current one)."""
        out = []
        for n, tab in enumerate(self.browser.our_tabs()):
            mark = "* " if tab is self.browser.current else ""
            url, title = tab.url, tab.title
            watch = tab.state.get(STATE_KEY)
            if isinstance(watch, _TabWatch) and watch.url:
                url = watch.url
                title = watch.title if watch.title is not None else title
            out.append(f"[{n}] {mark}{_clip(title or '(untitled)', 80)} — {_clip(url, 200)}")
        return out

    async def dispatch(
        self, action: Action, *, expect: TargetExpectation | None = None
    ) -> ActionResult:
        """Run one parsed action. Never raises for page problems; only CancelledError."""
        p = action.params
        try:
            match action.name:
                case "navigate":
                    return await self.navigate(str(p["url"]))
                case "click":
                    return await self.click(int(p["index"]), expect=expect)
                case "type":
                    return await self.type(
                        int(p["index"]),
                        str(p["text"]),
                        clear=bool(p.get("clear", True)),
                        submit=bool(p.get("submit", False)),
                        expect=expect,
                    )
                case "press_key":
                    return await self.press_key(str(p["keys"]))
                case "select_option":
                    return await self.select_option(
                        int(p["index"]), str(p["option"]), expect=expect
                    )
                case "scroll":
                    index = p.get("index")
                    return await self.scroll(
                        direction=p.get("direction"),
                        pages=float(p.get("pages", 1)),
                        index=int(index) if index is not None else None,
                    )
                case "go_back":
                    return await self.go_back()
                case "wait":
                    return await self.wait(float(p.get("seconds", 1)))
                case "switch_tab":
                    return await self.switch_tab(p["tab"])
                case "upload_file":
                    return await self.upload_file(int(p["index"]), str(p["path"]), expect=expect)
                case "screenshot":
                    return await self.screenshot()
                case "run_js":
                    return await self.run_js(str(p["code"]))
                case _:
                    return ActionResult.failure(
                        f"{action.name!r} is not a page action the hands can perform"
                    )
        except asyncio.CancelledError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            return ActionResult.failure(f"{action.name}: bad parameters ({exc})")
        except Exception as exc:  # the loop must get a result, whatever went wrong here
            log.exception("page.dispatch_failed", action=action.name)
            return ActionResult.failure(f"{action.name} failed inside handrail: {exc!r}")

    # --- actions ------------------------------------------------------------------------

    async def navigate(self, url: str) -> ActionResult:
        """Load ``url`` (http/https; file when allowed) in the current tab and wait for the
        new document's load event, then (bounded) for network quiet."""
        problem = self._url_problem(url)
        if problem:
            return ActionResult.failure(problem, error=f"refused: {problem}")
        return await self._act("navigate", lambda ctx: self._navigate(ctx, url))

    async def click(self, index: int, *, expect: TargetExpectation | None = None) -> ActionResult:
        """Trusted click on element ``[index]`` (see the module docstring for the checks)."""
        return await self._act("click", lambda ctx: self._click(ctx, index, expect))

    async def type(
        self,
        index: int,
        text: str,
        *,
        clear: bool = True,
        submit: bool = False,
        expect: TargetExpectation | None = None,
    ) -> ActionResult:
        """Focus field ``[index]``, optionally clear it, type ``text`` (key presses, so
        framework-controlled inputs and keyup listeners see it), optionally press Enter;
        the result says what the field holds afterwards (never a password's value)."""
        return await self._act(
            "type", lambda ctx: self._type(ctx, index, text, clear, submit, expect)
        )

    async def press_key(self, keys: str) -> ActionResult:
        """Press one key or combination (``Enter``, ``Control+A``) on the focused element."""
        try:
            combo = parse_keys(keys)
        except KeySpecError as exc:
            return ActionResult.failure(str(exc))
        return await self._act("press_key", lambda ctx: self._press_key(ctx, combo.spec))

    async def select_option(
        self, index: int, option: str, *, expect: TargetExpectation | None = None
    ) -> ActionResult:
        """Choose ``option`` (value, or visible label: exact, then unique substring,
        case-insensitive) in the native ``<select>`` ``[index]``; fires input and change."""
        return await self._act(
            "select_option", lambda ctx: self._select(ctx, index, option, expect)
        )

    async def scroll(
        self,
        *,
        direction: Literal["up", "down"] | None = None,
        pages: float = 1,
        index: int | None = None,
    ) -> ActionResult:
        """Scroll the page (or its main scrolling container) by ``pages`` viewports, or
        bring element ``[index]`` to the middle of the viewport."""
        return await self._act("scroll", lambda ctx: self._scroll(ctx, direction, pages, index))

    async def go_back(self) -> ActionResult:
        """Go back one entry in the current tab's history and wait for that page."""
        return await self._act("go_back", self._go_back)

    async def wait(self, seconds: float) -> ActionResult:
        """Let the page work for ``seconds`` (0-30), then report what changed."""
        return await self._act("wait", lambda ctx: self._wait(ctx, seconds))

    async def switch_tab(self, tab: int | str) -> ActionResult:
        """Make one of our tabs current: by position in :meth:`tab_descriptions` or target id."""
        return await self._act("switch_tab", lambda ctx: self._switch_tab(ctx, tab))

    async def upload_file(
        self, index: int, path: str, *, expect: TargetExpectation | None = None
    ) -> ActionResult:
        """Put the file ``path`` (inside ``upload_dir`` only) into file input ``[index]``."""
        return await self._act("upload_file", lambda ctx: self._upload(ctx, index, path, expect))

    async def screenshot(self) -> ActionResult:
        """A PNG of the viewport in ``screenshots_dir``; ``result.screenshot`` is its path."""
        return await self._act("screenshot", lambda ctx: self._screenshot(ctx, with_base64=False))

    async def screenshot_base64(self) -> ActionResult:
        """As :meth:`screenshot`, with ``data == {"base64": ...}`` for vision models."""
        return await self._act("screenshot", lambda ctx: self._screenshot(ctx, with_base64=True))

    async def run_js(self, code: str) -> ActionResult:
        """Evaluate ``code`` in the page's MAIN world (awaiting a promise it returns);
        ``data`` holds the JSON value. A thrown exception is reported as its first line."""
        return await self._act("run_js", lambda ctx: self._run_js(ctx, code))

    # --- the action runner --------------------------------------------------------------

    async def _act(
        self, name: str, body: Callable[[_Ctx], Awaitable[ActionResult]]
    ) -> ActionResult:
        loop = asyncio.get_running_loop()
        ctx = _Ctx(name=name, deadline=loop.time() + self.action_timeout)
        ctx.dialog_mark = len(self._dialogs)
        ctx.download_mark = len(self._download_order)
        task = asyncio.create_task(self._guarded(ctx, body), name=f"page.{name}")
        try:
            result = await self._finish_in_time(task, ctx)
        except asyncio.CancelledError:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
            raise
        dialogs = self._dialogs[ctx.dialog_mark :]
        if dialogs:
            self._dialogs_reported = max(self._dialogs_reported, len(self._dialogs))
            d = dialogs[-1]
            text = f"{d.info.type}: {_clip(d.info.message, 200)}"
            result = replace(result, changes=replace(result.changes, dialog=text))
            answers = "; ".join(
                f"The page opened {_a(x.info.type)} dialog ({_clip(x.info.message, 200)!r}): {x.answer}"
                for x in dialogs
            )
            result = replace(result, message=f"{result.message}. {answers}")
        notices = ctx.notices + self._drain_notices(ctx)
        return result.with_notices(*notices)

    async def _finish_in_time(self, task: asyncio.Task[ActionResult], ctx: _Ctx) -> ActionResult:
        """Wait for the action, cancelling it at the deadline; the clock stops while a
        dialog waits for the decider (a person may be answering it)."""
        loop = asyncio.get_running_loop()
        while True:
            done, _ = await asyncio.wait({task}, timeout=max(ctx.remaining(), 0.0))
            if done:
                return task.result()
            if self._deciding:
                paused = loop.time()
                decided = asyncio.ensure_future(self._no_decision_pending.wait())
                try:
                    await asyncio.wait({task, decided}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    decided.cancel()
                ctx.deadline += loop.time() - paused + 2.0
                continue
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
            return self._timed_out(ctx)

    def _timed_out(self, ctx: _Ctx) -> ActionResult:
        limit = f"{self.action_timeout:g} s"
        if ctx.dispatched:
            return ActionResult.unknown(
                f"{ctx.name} was sent to the page, but the page did not finish responding within "
                f"{limit}; whether it took effect is unknown. Look at the page state before acting "
                "again (the page may be busy or stuck; `wait` gives it more time).",
                error=f"timeout: no answer within {limit} after the input was sent",
            )
        return ActionResult.failure(
            f"{ctx.name} was not done: the page did not respond within {limit} (it may be busy or "
            "stuck). Try `wait`, or navigate elsewhere.",
            error=f"timeout: no answer within {limit}",
        )

    async def _guarded(
        self, ctx: _Ctx, body: Callable[[_Ctx], Awaitable[ActionResult]]
    ) -> ActionResult:
        """Run an action body, turning every page problem into a result."""
        try:
            tab, recovered = await self._active_tab()
        except (BrowserError, CDPError, OSError) as exc:
            return ActionResult.failure(
                f"{ctx.name} was not done: the browser cannot be reached ({_first_line(exc)}). "
                "handrail will try to reconnect on the next action.",
                error=f"browser_unreachable: {_first_line(exc)}",
            )
        ctx.tab = tab
        ctx.notices += recovered
        self._ensure_watch(tab)
        try:
            await self._ensure_connection_listeners()
            return await body(ctx)
        except _Refused as exc:
            return ActionResult.failure(exc.message, error=exc.error)
        except (StaleElement, UnknownIndex) as exc:
            if ctx.dispatched:
                return ActionResult.unknown(
                    f"{ctx.name}: the input was sent, then the element left the page; "
                    "the page changed — look at it before acting again"
                )
            return ActionResult.failure(f"{ctx.name} was not done: {exc}")
        except SessionClosed as exc:
            what = (
                "the tab's renderer crashed"
                if tab.crashed or "crash" in str(exc)
                else "the tab was closed"
            )
            return self._lost(ctx, what, "the next action continues in a new tab")
        except ConnectionClosed as exc:
            return self._lost(
                ctx,
                f"the connection to the browser was lost ({_first_line(exc)})",
                "the next action reconnects (or restarts the browser handrail launched)",
            )
        except CDPTimeout as exc:
            if ctx.dispatched:
                return ActionResult.unknown(
                    f"{ctx.name} was sent, but the page stopped answering ({_first_line(exc)}); "
                    "whether it took effect is unknown. Look at the page before acting again.",
                    error=f"timeout: {_first_line(exc)}",
                )
            return ActionResult.failure(
                f"{ctx.name} was not done: the page did not answer ({_first_line(exc)}); it may "
                "be busy. Try `wait`.",
                error=f"timeout: {_first_line(exc)}",
            )
        except WorldError as exc:
            if ctx.dispatched:
                return ActionResult.unknown(
                    f"{ctx.name}: the input was sent, but reading the page back failed "
                    f"({_first_line(exc)}); look at the page before acting again"
                )
            return ActionResult.failure(f"{ctx.name} was not done: {_first_line(exc)}")
        except CDPError as exc:
            if ctx.dispatched:
                return ActionResult.unknown(
                    f"{ctx.name}: the input was sent, then the browser reported an error "
                    f"({_first_line(exc)}); whether it took effect is unknown"
                )
            return ActionResult.failure(
                f"{ctx.name} was not done: the browser said {_first_line(exc)}"
            )

    async def _active_tab(self) -> tuple[Tab, list[str]]:
        """``browser.active_tab()``, tried again shortly when the browser cannot be reached:
        a browser that was just killed needs a moment before it is known to be dead (and
        started again), and a dropped connection may come back."""
        for delay in (0.3, 1.0):
            try:
                return await self.browser.active_tab()
            except (BrowserError, CDPError, OSError) as exc:
                log.info("page.browser_unreachable_retry", error=_first_line(exc), delay=delay)
                await asyncio.sleep(delay)
        return await self.browser.active_tab()

    def _lost(self, ctx: _Ctx, what: str, next_step: str) -> ActionResult:
        if ctx.dispatched:
            return ActionResult.unknown(
                f"{ctx.name} was sent, then {what}; whether it took effect is unknown ({next_step}). "
                "Check the page before repeating it.",
                error=f"lost: {what}",
            )
        return ActionResult.failure(
            f"{ctx.name} was not done: {what} ({next_step}).", error=f"lost: {what}"
        )

    # --- tab watching -------------------------------------------------------------------

    def _watch(self, tab: Tab) -> None:
        self._ensure_watch(tab)

    def _ensure_watch(self, tab: Tab) -> _TabWatch:
        existing = tab.state.get(STATE_KEY)
        if isinstance(existing, _TabWatch):
            if existing.owner is self:
                return existing
            # Another (older) Page watched this tab: one pair of hands per tab.
            for unsubscribe in existing.unsubscribe:
                unsubscribe()
        watch = _TabWatch(tab=tab, owner=self, last_activity=time.monotonic())
        tab.state[STATE_KEY] = watch
        main = tab.target_id
        on = tab.session.on

        def request_sent(p: JSON) -> None:
            if p.get("type") in _LONG_LIVED_TYPES:
                return
            watch.inflight[p["requestId"]] = time.monotonic()
            watch.last_activity = time.monotonic()
            watch.bump()

        def request_done(p: JSON) -> None:
            if watch.inflight.pop(p.get("requestId", ""), None) is not None:
                watch.last_activity = time.monotonic()
                watch.bump()

        def response(p: JSON) -> None:
            if p.get("type") == "Document" and p.get("frameId") == main and p.get("loaderId"):
                watch.doc_status[p["loaderId"]] = int(p.get("response", {}).get("status", 0))

        def lifecycle(p: JSON) -> None:
            if p.get("frameId") != main:
                return
            loader = p.get("loaderId", "")
            if p.get("name") == "init":
                # A new document: requests of the old one will not be answered to us.
                watch.inflight.clear()
            watch.lifecycle.setdefault(loader, set()).add(p.get("name", ""))
            watch.bump()

        def navigated(p: JSON) -> None:
            frame = p.get("frame", {})
            if frame.get("parentId"):
                return
            watch.committed_loader = frame.get("loaderId")
            watch.commits += 1
            if frame.get("url"):
                watch.url, watch.title = frame["url"], None
            watch.bump()

        def load_fired(_p: JSON) -> None:
            if watch.committed_loader:
                watch.lifecycle.setdefault(watch.committed_loader, set()).add("load")
            watch.bump()

        def counter(attr: str) -> Callable[[JSON], None]:
            def handler(p: JSON) -> None:
                if p.get("frameId") == main:
                    setattr(watch, attr, getattr(watch, attr) + 1)
                    watch.bump()

            return handler

        def dialog_opening(p: JSON) -> None:
            self._on_dialog(tab, p)
            watch.bump()

        def dialog_closed(_p: JSON) -> None:
            self.open_dialog = None
            watch.bump()

        watch.unsubscribe += [
            on("Network.requestWillBeSent", request_sent),
            on("Network.loadingFinished", request_done),
            on("Network.loadingFailed", request_done),
            on("Network.responseReceived", response),
            on("Page.lifecycleEvent", lifecycle),
            on("Page.frameNavigated", navigated),
            on("Page.loadEventFired", load_fired),
            on("Page.frameRequestedNavigation", counter("requested")),
            on("Page.frameStartedLoading", counter("started")),
            on("Page.frameStoppedLoading", counter("stopped")),
            on("Page.navigatedWithinDocument", counter("same_doc")),
            on("Page.javascriptDialogOpening", dialog_opening),
            on("Page.javascriptDialogClosed", dialog_closed),
        ]
        return watch

    async def _ensure_connection_listeners(self) -> None:
        """Browser-level listeners (downloads, popups), re-installed after a reconnect."""
        conn = self.browser.connection
        if self._conn_seen is conn:
            return
        self._conn_seen = conn
        self._conn_unsubscribe = [
            conn.on("Browser.downloadWillBegin", self._on_download_begin),
            conn.on("Browser.downloadProgress", self._on_download_progress),
            conn.on("Target.targetCreated", self._on_target_created),
        ]
        if self.downloads_dir is not None:
            await self.browser.set_downloads_dir(self.downloads_dir)

    def _on_target_created(self, p: JSON) -> None:
        info = p.get("targetInfo", {})
        if info.get("type") == "page" and info.get("openerId") in self.browser.tabs:
            self._popups += 1

    # --- dialogs --------------------------------------------------------------------------

    def _on_dialog(self, tab: Tab, p: JSON) -> None:
        kind = p.get("type", "alert")
        if kind not in ("alert", "confirm", "prompt", "beforeunload"):
            kind = "alert"
        info = DialogInfo(
            type=kind,
            message=str(p.get("message", "")),
            default_prompt=str(p.get("defaultPrompt", "")),
            url=str(p.get("url", tab.url)),
        )
        record = _DialogRecord(info)
        self._dialogs.append(record)
        self.open_dialog = info
        # Answering needs an await, and this runs in the CDP reader: hand it to a task.
        # The action that opened the dialog is blocked in its CDP call until we answer.
        decider = self.dialog_decider
        if info.type in ("confirm", "prompt") and decider is not None:
            record.asks_decider = True
            self._deciding += 1
            self._no_decision_pending.clear()
        task = asyncio.get_running_loop().create_task(self._answer_dialog(tab, record))
        self._dialog_tasks.add(task)
        task.add_done_callback(self._dialog_tasks.discard)

    async def _answer_dialog(self, tab: Tab, record: _DialogRecord) -> None:
        info = record.info
        accept, text = True, None
        decider = self.dialog_decider
        try:
            if info.type in ("confirm", "prompt"):
                if not record.asks_decider or decider is None:
                    accept = False
                else:
                    try:
                        accept, text = await decider(info)
                    except Exception as exc:
                        log.warning("page.dialog_decider_failed", error=repr(exc))
                        accept, text = False, None
        finally:
            if record.asks_decider:
                self._deciding -= 1
                if not self._deciding:
                    self._no_decision_pending.set()
            if info.type == "prompt" and accept and text is None:
                text = info.default_prompt
            params: JSON = {"accept": accept}
            if info.type == "prompt" and accept:
                params["promptText"] = text or ""
            record.answer = _dialog_answer(info, accept, text, decided=record.asks_decider)
            try:
                await tab.send("Page.handleJavaScriptDialog", params, timeout=10)
            except CDPError as exc:
                record.answer += f" (answering failed: {_first_line(exc)})"
            record.done = True
            if self.open_dialog is info:
                self.open_dialog = None

    # --- downloads ------------------------------------------------------------------------

    def _on_download_begin(self, p: JSON) -> None:
        guid = str(p.get("guid", ""))
        if not guid or guid in self._downloads:
            return
        self._downloads[guid] = _Download(
            guid=guid, name=str(p.get("suggestedFilename") or "download"), url=str(p.get("url", ""))
        )
        self._download_order.append(guid)

    def _on_download_progress(self, p: JSON) -> None:
        item = self._downloads.get(str(p.get("guid", "")))
        if item is None:
            return
        state = str(p.get("state", "inProgress"))
        if state == item.state:
            return
        item.state = state
        if state == "completed":
            item.path = self._place_download(item)

    def _downloads_folder(self) -> Path | None:
        if self.downloads_dir is not None:
            return self.downloads_dir
        options = self.browser.launch_options
        return options.downloads_dir if options is not None else None

    def _place_download(self, item: _Download) -> str | None:
        """Chrome saves downloads under their GUID; give the file its own name back."""
        folder = self._downloads_folder()
        if folder is None:
            return None
        saved = folder / item.guid
        if not saved.exists():
            return str(folder / item.name) if (folder / item.name).exists() else None
        safe = Path(item.name).name or "download"
        target = folder / safe
        stem, suffix = target.stem, target.suffix
        n = 1
        while target.exists():
            target = folder / f"{stem} ({n}){suffix}"
            n += 1
        try:
            saved.rename(target)
        except OSError:
            return str(saved)
        return str(target)

    def _drain_notices(self, ctx: _Ctx | None) -> list[str]:
        notices: list[str] = []
        for guid in self._download_order:
            item = self._downloads[guid]
            if item.reported or item.state == "inProgress":
                continue
            item.reported = True
            if item.state == "completed":
                where = f" (saved as {item.path})" if item.path else ""
                notices.append(f"download finished: {item.name}{where}")
            else:
                notices.append(f"download canceled: {item.name}")
        if ctx is None and self._dialogs_reported < len(self._dialogs):
            for record in self._dialogs[self._dialogs_reported :]:
                if record.done:
                    notices.append(
                        f"the page opened {_a(record.info.type)} dialog "
                        f"({_clip(record.info.message, 200)!r}): {record.answer}"
                    )
            self._dialogs_reported = len(self._dialogs)
        return notices

    # --- helpers: page-side calls, probes, settling -----------------------------------------

    async def _js(self, ctx: _Ctx, name: str, *args: Any, await_promise: bool = False) -> Any:
        assert ctx.tab is not None
        timeout = max(min(ctx.remaining(), 15.0), 0.5)
        return await world_call(
            ctx.tab,
            self._call_source,
            name,
            list(args),
            timeout=timeout,
            await_promise=await_promise,
        )

    async def _probe(self, ctx: _Ctx) -> _Probe | None:
        """URL, title and DOM counters of the tab, or a CDP-only reading when our world
        cannot answer (a page still loading, a dialog). Tab/connection loss propagates."""
        assert ctx.tab is not None
        watch = self._ensure_watch(ctx.tab)
        watch.check_alive()
        try:
            reading = await probe(ctx.tab, timeout=max(min(ctx.remaining(), 3.0), 0.5))
        except (SessionClosed, ConnectionClosed):
            raise
        except (WorldError, CDPError, KeyError, TypeError, ValueError):
            # A crashed or closed tab also fails here: that is not a page still loading.
            watch.check_alive()
            return _Probe(ctx.tab.url, ctx.tab.title, 0, 0, (watch.commits, -1))
        watch.url, watch.title = reading.url, reading.title
        return _Probe(
            url=reading.url,
            title=reading.title,
            mutations=reading.mutations,
            new_interactive=reading.new_interactive,
            generation=(watch.commits, reading.world),
        )

    def _changes(
        self, before: _Probe | None, after: _Probe | None, *, new_tab: bool = False
    ) -> Changes:
        if before is None or after is None:
            return Changes(new_tab=new_tab)
        new_doc = after.generation != before.generation
        dom = new_doc or after.mutations != before.mutations
        if new_doc:
            new_elements = after.new_interactive
        else:
            new_elements = max(0, after.new_interactive - before.new_interactive)
        return Changes(
            url_changed=after.url != before.url,
            title_changed=after.title != before.title,
            dom_changed=dom,
            new_tab=new_tab,
            new_elements=new_elements,
        )

    async def _settle(
        self, ctx: _Ctx, marks: _Marks, *, quiet: float = ACTION_QUIET, cap: float = ACTION_CAP
    ) -> str | None:
        """Let the page react to an action: follow a navigation it started (also one that
        starts while the page's requests settle) to its load, then wait (bounded) for
        network quiet and two animation frames. Returns a note when a navigation was
        still loading at the end."""
        assert ctx.tab is not None
        watch = self._ensure_watch(ctx.tab)
        note = None
        seen = marks
        for _ in range(3):
            if watch.requested > seen.requested or watch.started > seen.started:
                loaded = await self._follow_navigation(ctx, watch, seen)
                note = (
                    None if loaded else "the page was still loading when handrail stopped waiting"
                )
                quiet, cap = NAV_QUIET, NAV_CAP
                seen = watch.marks()
            await self._network_quiet(ctx, quiet=quiet, cap=cap)
            if not (watch.requested > seen.requested or watch.started > seen.started):
                break
        # The quiet window counted from the input already spans several frames; only wait
        # for frames when the settle was shorter than that.
        if not ctx.dispatched_at or time.monotonic() - ctx.dispatched_at < FRAMES_COVERED:
            await self._frames(ctx)
        return note

    async def _follow_navigation(self, ctx: _Ctx, watch: _TabWatch, marks: _Marks) -> bool:
        """Wait for a navigation the page started to commit and load (a download or a 204
        answer stops it without a commit). False when it was still loading at the limit."""
        loop = asyncio.get_running_loop()
        limit = loop.time() + min(max(ctx.remaining() - 1.0, 0.2), 15.0)
        start_by = loop.time() + 1.0
        while loop.time() < limit:
            started = watch.started > marks.started
            if not started and loop.time() > start_by:
                return True
            committed = watch.commits > marks.commits
            stopped = watch.stopped >= watch.started
            if watch.same_doc > marks.same_doc and not committed and stopped:
                return True
            if started and stopped:
                return True
            if committed and "load" in watch.lifecycle.get(watch.committed_loader or "", set()):
                return True
            await watch.changed(min(0.25, limit - loop.time()))
        return False

    async def _network_quiet(self, ctx: _Ctx, *, quiet: float, cap: float) -> None:
        assert ctx.tab is not None
        watch = self._ensure_watch(ctx.tab)
        loop = asyncio.get_running_loop()
        end = loop.time() + max(0.0, min(cap, ctx.remaining() - 0.5))
        while loop.time() < end:
            now = time.monotonic()
            if not watch.inflight:
                # Quiet counts from the input at the earliest: the page's reaction to it
                # (a request, a delayed navigation) may take a moment to start.
                idle = now - max(watch.last_activity, ctx.dispatched_at)
                if idle >= quiet:
                    return
                await watch.changed(min(quiet - idle, end - loop.time()))
            else:
                await watch.changed(min(0.1, end - loop.time()))

    async def _frames(self, ctx: _Ctx) -> None:
        """Two animation frames (so the page has painted its reaction), bounded."""
        assert ctx.tab is not None
        with contextlib.suppress(WorldError, CDPTimeout):
            await world_eval(
                ctx.tab,
                "new Promise((resolve) => { let n = 0; const step = () => (++n >= 2 ? resolve(true) : requestAnimationFrame(step));"
                " requestAnimationFrame(step); setTimeout(() => resolve(false), 200); })",
                await_promise=True,
                timeout=max(min(ctx.remaining(), 1.0), 0.3),
            )

    async def _check_expect(
        self, ctx: _Ctx, index: int, expect: TargetExpectation | None, before: _Probe | None
    ) -> None:
        """Raise _Refused("target_changed: ...") when the target is not what was approved."""
        if expect is None:
            return
        url = before.url if before is not None else (ctx.tab.url if ctx.tab else "")
        if url != expect.url:
            raise _Refused(
                f"{ctx.name} was not done: the page changed since it was approved "
                f"(it is now at {url}, approved at {expect.url})",
                error=f"target_changed: the tab is now at {url} (approved at {expect.url})",
            )
        if index != expect.index:
            raise _Refused(
                f"{ctx.name} was not done: element [{index}] is not the approved [{expect.index}]",
                error=f"target_changed: index {index} differs from the approved [{expect.index}]",
            )
        try:
            info = await self._js(ctx, "target", index)
        except (StaleElement, UnknownIndex) as exc:
            raise _Refused(
                f"{ctx.name} was not done: {exc}",
                error=f"target_changed: element [{index}] is no longer on the page",
            ) from exc
        if not _name_matches(expect.name, info.get("names") or [info.get("name", "")]):
            now = _clip(str(info.get("name", "")), 80)
            raise _Refused(
                f"{ctx.name} was not done: element [{index}] is now named {now!r} "
                f"(approved as {_clip(expect.name, 80)!r})",
                error=f"target_changed: [{index}] was relabelled from {_clip(expect.name, 80)!r} to {now!r}",
            )
        rect = info.get("rect") or {}
        got = (
            float(rect.get("x", 0)),
            float(rect.get("y", 0)),
            float(rect.get("w", 0)),
            float(rect.get("h", 0)),
        )
        if any(abs(a - b) > RECT_TOLERANCE_PX for a, b in zip(got, expect.rect, strict=True)):
            raise _Refused(
                f"{ctx.name} was not done: element [{index}] moved or changed size since approval "
                f"(was at {_fmt_rect(expect.rect)}, now at {_fmt_rect(got)})",
                error=f"target_changed: [{index}] moved from {_fmt_rect(expect.rect)} to {_fmt_rect(got)}",
            )

    async def _mouse_click(self, ctx: _Ctx, x: float, y: float) -> None:
        assert ctx.tab is not None
        tab = ctx.tab
        base = {"x": x, "y": y, "modifiers": 0, "pointerType": "mouse"}
        await tab.send(
            "Input.dispatchMouseEvent",
            {**base, "type": "mouseMoved", "button": "none", "buttons": 0},
            timeout=max(ctx.remaining(), 0.5),
        )
        # A short hover first, as a person's pointer would (hover menus, tooltips).
        await asyncio.sleep(HOVER)
        ctx.mark_dispatched()
        # A dialog opened by the page blocks these calls until it is answered (by our
        # dialog task), so they wait as long as the action may.
        press = {**base, "button": "left", "clickCount": 1}
        await tab.send(
            "Input.dispatchMouseEvent",
            {**press, "type": "mousePressed", "buttons": 1},
            timeout=None,
        )
        await tab.send(
            "Input.dispatchMouseEvent",
            {**press, "type": "mouseReleased", "buttons": 0},
            timeout=None,
        )

    def _where(self, tab: Tab) -> str:
        watch = self._ensure_watch(tab)
        url = watch.url or tab.url
        title = watch.title if watch.title is not None else tab.title
        return f"{url} ({_clip(title, 80)!r})" if title else url

    async def _keys(self, ctx: _Ctx, events: list[dict[str, Any]]) -> None:
        assert ctx.tab is not None
        ctx.mark_dispatched()
        for event in events:
            await ctx.tab.send("Input.dispatchKeyEvent", event, timeout=None)

    async def _follow_popup(self, ctx: _Ctx, mark: int) -> Tab | None:
        if self._popups <= mark:
            return None
        tab = await self.browser.adopt_popup(timeout=min(2.0, max(ctx.remaining() - 1, 0.1)))
        if tab is None:
            return None
        self._ensure_watch(tab)
        await self.browser.activate(tab)
        # The new tab may still be loading its first page.
        loop = asyncio.get_running_loop()
        limit = loop.time() + min(5.0, max(ctx.remaining() - 1.0, 0.1))
        while loop.time() < limit:
            try:
                state = await world_eval(
                    tab, "[document.readyState, location.href, document.title]", timeout=2.0
                )
            except (WorldError, CDPError):
                state = None
            if isinstance(state, list) and state[0] == "complete" and state[1] != "about:blank":
                watch = self._ensure_watch(tab)
                watch.url, watch.title = str(state[1]), str(state[2])
                break
            await asyncio.sleep(0.1)
        ctx.tab = tab
        return tab

    # --- action bodies ------------------------------------------------------------------

    def _url_problem(self, url: str) -> str | None:
        text = url.strip()
        parsed = urllib.parse.urlsplit(text)
        scheme = parsed.scheme.lower()
        if scheme in ("http", "https"):
            if not parsed.netloc:
                return f"{url!r} has no host; write a full URL such as https://example.com/"
            return None
        if scheme == "file":
            if self.allow_file_urls:
                return None
            return f"file URLs are not allowed in this run ({url!r}); only http and https"
        if "://" not in text and (not scheme or scheme not in _OTHER_SCHEMES):
            # "example.com/x" or "localhost:8080": a host without a scheme.
            return (
                f"{url!r} is not an absolute URL; navigate needs one with http:// or https://, "
                f"e.g. https://{text.lstrip('/')}"
            )
        return (
            f"navigate only opens http and https URLs; {scheme}: URLs are refused "
            f"({_clip(url, 100)!r})"
        )

    async def _navigate(self, ctx: _Ctx, url: str) -> ActionResult:
        assert ctx.tab is not None
        tab = ctx.tab
        watch = self._ensure_watch(tab)
        loop = asyncio.get_running_loop()
        url = url.strip()
        before = await self._probe(ctx)
        history = await tab.send("Page.getNavigationHistory", timeout=5)
        entries = history.get("entries", [])
        from_blank = len(entries) <= 1 and all(e.get("url") in ("about:blank", "") for e in entries)
        # Leave a margin so our own message, not the backstop, reports a slow page.
        budget = max(ctx.remaining() - 0.5, 0.5)
        ctx.mark_dispatched()
        try:
            nav = await tab.send("Page.navigate", {"url": url}, timeout=budget)
        except CDPTimeout:
            with contextlib.suppress(CDPError):
                await tab.send("Page.stopLoading", timeout=2)
            return ActionResult.failure(
                f"{url} did not answer within {budget:.0f} s; handrail stopped loading it. The "
                "server may be down or very slow: try again later or another page.",
                error=f"navigation_timeout: {url} did not answer within {budget:.0f} s",
            )
        error_text = nav.get("errorText")
        if error_text:
            return ActionResult.failure(
                f"could not load {url}: {error_text}{_net_error_hint(error_text)}",
                error=f"navigation_failed: {error_text}",
            )
        loader = nav.get("loaderId")
        partial = None
        if loader:
            while True:
                seen = watch.lifecycle.get(loader, set())
                if "load" in seen:
                    break
                left = ctx.deadline - 0.3 - loop.time()
                if left <= 0:
                    if "DOMContentLoaded" in seen or watch.committed_loader == loader:
                        partial = (
                            "the page is shown, but it was still loading some of its resources"
                        )
                        break
                    with contextlib.suppress(CDPError):
                        await tab.send("Page.stopLoading", timeout=2)
                    return ActionResult.failure(
                        f"{url} did not finish loading within {self.action_timeout:g} s; handrail "
                        "stopped loading it",
                        error=f"navigation_timeout: {url}",
                    )
                await watch.changed(min(left, 0.5))
            if from_blank and watch.committed_loader == loader:
                # Our fresh tab's about:blank must not be a page the model can go back to.
                with contextlib.suppress(CDPError):
                    await tab.send("Page.resetNavigationHistory", timeout=5)
            if partial is None:
                await self._network_quiet(ctx, quiet=NAV_QUIET, cap=NAV_CAP)
        await self._frames(ctx)
        after = await self._probe(ctx)
        changes = self._changes(before, after)
        if loader:
            changes = replace(changes, dom_changed=True)
        final = after.url if after else url
        title = after.title if after else ""
        parts = [f"loaded {final}"]
        if _strip_slash(final) != _strip_slash(url):
            parts.append(f"(redirected from {url})")
        if title:
            parts.append(f"— title {_clip(title, 120)!r}")
        status = watch.doc_status.get(loader or "", 0)
        message = " ".join(parts)
        if status >= 400:
            message += f". The server answered HTTP {status}: the page is probably an error page"
        if partial:
            message += f". Note: {partial}"
        return ActionResult.success(message, changes)

    async def _click(self, ctx: _Ctx, index: int, expect: TargetExpectation | None) -> ActionResult:
        assert ctx.tab is not None
        watch = self._ensure_watch(ctx.tab)
        before = await self._probe(ctx)
        await self._check_expect(ctx, index, expect, before)
        target = await self._js(ctx, "target", index)
        label = _element_label(index, target)
        toggle_before = await self._js(ctx, "toggleState", index)
        prep = await self._js(ctx, "prepareClick", index, {}, await_promise=True)
        if not prep.get("ok"):
            raise _Refused(*_not_actionable("click", label, prep))
        if expect is not None and not _name_matches(expect.name, prep.get("names") or []):
            # Re-checked after scrolling and the stability wait, just before the press.
            raise _Refused(
                f"click was not done: {label} was relabelled while handrail got ready",
                error=f"target_changed: [{index}] was relabelled just before the click",
            )
        marks = watch.marks()
        popup_mark = self._popups
        download_mark = len(self._download_order)
        await self._mouse_click(ctx, float(prep["x"]), float(prep["y"]))
        note = await self._settle(ctx, marks)
        await self._await_downloads(ctx, download_mark)
        origin_tab = ctx.tab
        new_tab = await self._follow_popup(ctx, popup_mark)
        after_origin = await self._probe(replace(ctx, tab=origin_tab))
        changes = self._changes(before, after_origin, new_tab=new_tab is not None)
        parts = [f"clicked {label}"]
        if prep.get("scrolled"):
            parts.append("(scrolled it into view first)")
        if new_tab is not None:
            parts.append(
                f"; it opened a new tab, which is now the current tab: {self._where(new_tab)}"
            )
        if toggle_before is not None and new_tab is None:
            toggle_after = await self._toggle_after(ctx, index)
            if toggle_after is not None:
                kind = toggle_after.get("kind", "toggle")
                state = toggle_after.get("state")
                if state == toggle_before.get("state"):
                    parts.append(f"; the {kind} is still {state}")
                else:
                    parts.append(f"; the {kind} is now {state}")
        downloads = [self._downloads[g].name for g in self._download_order[download_mark:]]
        if downloads:
            parts.append(f"; it started a download: {', '.join(downloads)}")
        message = " ".join(parts).replace(" ;", ";")
        if note:
            message += f". Note: {note}"
        dialog_opened = len(self._dialogs) > ctx.dialog_mark
        if not changes.any() and not downloads and toggle_before is None and not dialog_opened:
            message += (
                ". Nothing changed on the page: the element may not react to clicks (try another "
                "element, e.g. its parent link or button), or the page may need more time (wait)"
            )
        return ActionResult.success(message, changes)

    async def _toggle_after(self, ctx: _Ctx, index: int) -> dict[str, Any] | None:
        try:
            state = await self._js(ctx, "toggleState", index)
        except (StaleElement, UnknownIndex, WorldError):
            return None
        return state if isinstance(state, dict) else None

    async def _await_downloads(self, ctx: _Ctx, mark: int) -> None:
        """A download the action started usually finishes at once; wait briefly for it."""
        loop = asyncio.get_running_loop()
        limit = loop.time() + min(3.0, max(ctx.remaining() - 1.0, 0.0))
        while loop.time() < limit:
            pending = [
                g for g in self._download_order[mark:] if self._downloads[g].state == "inProgress"
            ]
            if not pending:
                return
            await asyncio.sleep(0.05)

    async def _type(
        self,
        ctx: _Ctx,
        index: int,
        text: str,
        clear: bool,
        submit: bool,
        expect: TargetExpectation | None,
    ) -> ActionResult:
        assert ctx.tab is not None
        tab = ctx.tab
        watch = self._ensure_watch(tab)
        before = await self._probe(ctx)
        await self._check_expect(ctx, index, expect, before)
        info = await self._js(ctx, "fieldInfo", index)
        label = _element_label(index, await self._js(ctx, "target", index))
        if not info.get("editable"):
            raise _Refused(
                f"type was not done: {label} is not a text field (it is {info.get('describe')}). "
                "Use the index of the input, textarea or editor itself; for a list use "
                "select_option, for a checkbox click it",
                error="not_editable",
            )
        if info.get("disabled"):
            raise _Refused(
                f"type was not done: {label} is disabled", error="not_actionable: disabled"
            )
        if info.get("readOnly"):
            raise _Refused(
                f"type was not done: {label} is read-only", error="not_actionable: read-only"
            )
        sensitive = bool(info.get("sensitive"))
        kind = str(info.get("kind"))
        marks = watch.marks()
        if not info.get("focused"):
            prep = await self._js(ctx, "prepareClick", index, {}, await_promise=True)
            if not prep.get("ok"):
                raise _Refused(*_not_actionable("type", label, prep))
            await self._mouse_click(ctx, float(prep["x"]), float(prep["y"]))
            if not await self._js(ctx, "focusField", index):
                raise _Refused(
                    f"type was not done: {label} did not take the keyboard focus when clicked "
                    "(the page may have moved focus elsewhere)",
                    error="not_focusable",
                )
        ctx.mark_dispatched()
        previous = str(info.get("value") or "")
        if clear:
            current = await self._js(ctx, "selectAll", index)
            if current:
                await self._keys(ctx, key_events(parse_keys("Backspace"), mac=self._mac))
                remaining = str((await self._js(ctx, "fieldInfo", index)).get("value") or "")
                if remaining:
                    # Some widgets swallow Backspace; set the value as a framework expects.
                    await self._js(ctx, "setValue", index, "")
            previous = ""
        else:
            await self._js(ctx, "caretToEnd", index)
        await self._enter_text(ctx, text, single_line=kind == "input")
        after_info = await self._js(ctx, "fieldInfo", index)
        holds = str(after_info.get("value") or "")
        expected = previous + text
        readback = _readback(label, text, expected, holds, after_info, sensitive=sensitive)
        if submit:
            await self._keys(ctx, key_events(parse_keys("Enter"), mac=self._mac))
        ctx.dispatched_at = time.monotonic()
        note = await self._settle(ctx, marks, quiet=TYPE_QUIET)
        after = await self._probe(ctx)
        changes = self._changes(before, after)
        if not text:
            readback = f"cleared {label}" if clear else f"typed nothing into {label}"
        message = readback + (" and pressed Enter" if submit else "")
        if note:
            message += f". Note: {note}"
        return ActionResult.success(message, changes)

    async def _enter_text(self, ctx: _Ctx, text: str, *, single_line: bool) -> None:
        """Key presses for what a US keyboard types, ``Input.insertText`` for the rest; a
        long text is inserted at once with only its last character pressed as a key."""
        assert ctx.tab is not None
        tab = ctx.tab
        if not text:
            return
        head, tail = ("", text) if len(text) <= KEY_BY_KEY_LIMIT else (text[:-1], text[-1])
        if head:
            await tab.send("Input.insertText", {"text": head}, timeout=None)
        pending = ""
        for char in tail:
            events = None if (single_line and char in "\r\n") else char_events(char)
            if char == "\r":
                events = None
            if events is None:
                pending += char
                continue
            if pending:
                await tab.send("Input.insertText", {"text": pending}, timeout=None)
                pending = ""
            for event in events:
                await tab.send("Input.dispatchKeyEvent", event, timeout=None)
        if pending:
            await tab.send("Input.insertText", {"text": pending}, timeout=None)
        ctx.mark_dispatched()

    async def _press_key(self, ctx: _Ctx, spec: str) -> ActionResult:
        assert ctx.tab is not None
        watch = self._ensure_watch(ctx.tab)
        combo = parse_keys(spec)
        before = await self._probe(ctx)
        focus_before = await self._js(ctx, "focusDescription")
        marks = watch.marks()
        await self._keys(ctx, key_events(combo, mac=self._mac))
        note = await self._settle(ctx, marks)
        after = await self._probe(ctx)
        changes = self._changes(before, after)
        parts = [f"pressed {combo.spec}"]
        focus_after = None
        if after is not None and before is not None and after.generation == before.generation:
            with contextlib.suppress(WorldError, CDPTimeout):
                focus_after = await self._js(ctx, "focusDescription")
        if focus_after != focus_before and focus_after:
            parts.append(f"; focus moved to {focus_after}")
        elif focus_after:
            parts.append(f"on {focus_after}")
        elif focus_before is None:
            parts.append("(no element had the focus; the key went to the page)")
        message = " ".join(parts).replace(" ;", ";")
        if note:
            message += f". Note: {note}"
        return ActionResult.success(message, changes)

    async def _select(
        self, ctx: _Ctx, index: int, option: str, expect: TargetExpectation | None
    ) -> ActionResult:
        assert ctx.tab is not None
        watch = self._ensure_watch(ctx.tab)
        before = await self._probe(ctx)
        await self._check_expect(ctx, index, expect, before)
        label = _element_label(index, await self._js(ctx, "target", index))
        marks = watch.marks()
        ctx.mark_dispatched()
        res = await self._js(ctx, "selectOption", index, option)
        if not res.get("ok"):
            ctx.dispatched = False
            code = res.get("code")
            if code in ("not_select", "disabled"):
                raise _Refused(
                    f"select_option was not done: {res.get('reason')}",
                    error=f"not_actionable: {code}",
                )
            listed = ", ".join(
                f"{o['label']!r}"
                + (f" (value {o['value']!r})" if o["value"] != o["label"] else "")
                + (" [disabled]" if o.get("disabled") else "")
                for o in res.get("options", [])[:40]
            )
            more = len(res.get("options", [])) - 40
            if more > 0:
                listed += f" and {more} more"
            if code == "ambiguous":
                matches = ", ".join(repr(m) for m in res.get("matches", []))
                msg = f"{option!r} matches several options of {label}: {matches}; name one exactly"
            elif code == "disabled_option":
                msg = f"the option {option!r} of {label} is disabled"
            else:
                msg = f"no option of {label} matches {option!r}"
            raise _Refused(
                f"select_option was not done: {msg}. Its options: {listed}", error=f"option_{code}"
            )
        note = await self._settle(ctx, marks)
        after = await self._probe(ctx)
        changes = self._changes(before, after)
        chosen = res.get("label") or res.get("value")
        message = f"selected {chosen!r} in {label}"
        if not res.get("changed"):
            message += " (it was already selected)"
        if note:
            message += f". Note: {note}"
        return ActionResult.success(message, changes)

    async def _scroll(
        self, ctx: _Ctx, direction: str | None, pages: float, index: int | None
    ) -> ActionResult:
        before = await self._probe(ctx)
        if index is not None:
            res = await self._js(ctx, "scrollToElement", index)
            state = res.get("after") or {}
            await self._frames(ctx)
            after = await self._probe(ctx)
            where = _position(state)
            message = f"scrolled to [{index}] {res.get('describe', '')}; {where}"
            if not res.get("visible"):
                message += ". It is still not visible (it may be clipped by its container)"
            return ActionResult.success(message, self._changes(before, after))
        if direction not in (None, "up", "down"):
            raise _Refused(f"scroll direction must be 'up' or 'down', not {direction!r}")
        pages = min(max(float(pages), 0.1), 20.0)
        res = await self._js(ctx, "scrollBy", direction or "down", pages)
        await self._frames(ctx)
        after = await self._probe(ctx)
        b, a = res.get("before") or {}, res.get("after") or {}
        moved = abs(float(a.get("top", 0)) - float(b.get("top", 0)))
        where = (
            "the page" if res.get("container") is None else f"the scrolling area {res['container']}"
        )
        word = "page" if pages == 1 else "pages"
        if moved < 1:
            end = "top" if (direction or "down") == "up" else "bottom"
            return ActionResult.success(
                f"nothing moved: {where} is already at the {end} ({_position(a)})",
                self._changes(before, after),
            )
        return ActionResult.success(
            f"scrolled {where} {direction or 'down'} {pages:g} {word}; {_position(a)}",
            self._changes(before, after),
        )

    async def _go_back(self, ctx: _Ctx) -> ActionResult:
        assert ctx.tab is not None
        tab = ctx.tab
        watch = self._ensure_watch(tab)
        history = await tab.send("Page.getNavigationHistory", timeout=5)
        current = int(history.get("currentIndex", 0))
        entries = history.get("entries", [])
        if current <= 0 or not entries or entries[current - 1].get("url") in ("about:blank", ""):
            raise _Refused(
                "go_back was not done: there is no earlier page in this tab's history",
                error="no_history",
            )
        before = await self._probe(ctx)
        marks = watch.marks()
        target = entries[current - 1]
        ctx.mark_dispatched()
        await tab.send("Page.navigateToHistoryEntry", {"entryId": target["id"]}, timeout=10)
        loop = asyncio.get_running_loop()
        limit = loop.time() + max(min(ctx.remaining() - 1.0, 15.0), 0.2)
        note = None
        while True:
            committed = watch.commits > marks.commits
            if watch.same_doc > marks.same_doc and not committed:
                break
            if committed and (
                "load" in watch.lifecycle.get(watch.committed_loader or "", set())
                or watch.stopped >= watch.started
            ):
                break
            if loop.time() >= limit:
                note = "the page was still loading when handrail stopped waiting"
                break
            await watch.changed(min(0.25, limit - loop.time()))
        await self._network_quiet(ctx, quiet=NAV_QUIET, cap=NAV_CAP)
        await self._frames(ctx)
        after = await self._probe(ctx)
        changes = self._changes(before, after)
        url = after.url if after else target.get("url", "")
        message = f"went back to {url}"
        if after and after.title:
            message += f" — title {_clip(after.title, 120)!r}"
        if note:
            message += f". Note: {note}"
        return ActionResult.success(message, changes)

    async def _wait(self, ctx: _Ctx, seconds: float) -> ActionResult:
        asked = float(seconds)
        seconds = min(max(asked, 0.0), MAX_WAIT_SECONDS, max(self.action_timeout - 2.0, 0.0))
        before = await self._probe(ctx)
        await asyncio.sleep(seconds)
        await self._frames(ctx)
        after = await self._probe(ctx)
        changes = self._changes(before, after)
        message = f"waited {seconds:g} s"
        if seconds < asked:
            message += f" (the longest wait is {seconds:g} s)"
        message += "; " + (
            _describe_changes(changes) if changes.any() else "nothing changed on the page"
        )
        return ActionResult.success(message, changes)

    async def _switch_tab(self, ctx: _Ctx, which: int | str) -> ActionResult:
        tabs = self.browser.our_tabs()
        chosen: Tab | None = None
        if isinstance(which, int) or (isinstance(which, str) and which.strip().isdigit()):
            n = int(which)
            if 0 <= n < len(tabs):
                chosen = tabs[n]
        else:
            chosen = next((t for t in tabs if t.target_id == which), None)
        if chosen is None:
            listing = "; ".join(self.tab_descriptions()) or "none"
            raise _Refused(
                f"switch_tab was not done: there is no tab {which!r}. Our tabs: {listing}",
                error="no_such_tab",
            )
        before = await self._probe(ctx)
        previous = self.browser.current
        await self.browser.activate(chosen)
        ctx.tab = chosen
        self._ensure_watch(chosen)
        after = await self._probe(ctx)
        n = tabs.index(chosen)
        url = after.url if after else chosen.url
        title = (after.title if after else chosen.title) or "(untitled)"
        changes = Changes(
            url_changed=before is None or before.url != url,
            title_changed=before is None or before.title != title,
            dom_changed=previous is not chosen,
        )
        return ActionResult.success(f"switched to tab [{n}] {_clip(title, 80)!r} — {url}", changes)

    async def _upload(
        self, ctx: _Ctx, index: int, path: str, expect: TargetExpectation | None
    ) -> ActionResult:
        assert ctx.tab is not None
        if self.upload_dir is None:
            raise _Refused(
                "upload_file was not done: uploads are off in this run (the person can allow them "
                "with --upload-dir FOLDER)",
                error="refused: no upload folder",
            )
        root = self.upload_dir.resolve()
        candidate = Path(path).expanduser()
        if not candidate.is_absolute():
            candidate = root / candidate
        try:
            resolved = candidate.resolve(strict=True)
        except (OSError, RuntimeError):
            raise _Refused(
                f"upload_file was not done: there is no file {path!r} in the upload folder",
                error="refused: no such file",
            ) from None
        if not resolved.is_relative_to(root) or not resolved.is_file():
            raise _Refused(
                f"upload_file was not done: {path!r} is not a file inside the upload folder; only "
                "files the person put there can be uploaded",
                error="refused: outside the upload folder",
            )
        before = await self._probe(ctx)
        await self._check_expect(ctx, index, expect, before)
        info = await self._js(ctx, "fileInput", index)
        if not info.get("ok"):
            raise _Refused(
                f"upload_file was not done: [{index}] {info.get('describe')} is not a file input "
                "(<input type=file>); use the index of the file input itself",
                error="not_file_input",
            )
        if info.get("disabled"):
            raise _Refused(
                f"upload_file was not done: the file input [{index}] is disabled",
                error="not_actionable: disabled",
            )
        object_id = await element_object_id(
            ctx.tab, index, timeout=max(min(ctx.remaining(), 10.0), 0.5)
        )
        marks = self._ensure_watch(ctx.tab).marks()
        ctx.mark_dispatched()
        await ctx.tab.send(
            "DOM.setFileInputFiles",
            {"files": [str(resolved)], "objectId": object_id},
            timeout=max(ctx.remaining(), 0.5),
        )
        names = await self._js(ctx, "fileNames", index)
        await self._settle(ctx, marks)
        after = await self._probe(ctx)
        holds = ", ".join(names) if names else "no file"
        return ActionResult.success(
            f"put {resolved.name} into the file input [{index}]; it now holds: {holds}",
            self._changes(before, after),
        )

    async def _screenshot(self, ctx: _Ctx, *, with_base64: bool) -> ActionResult:
        assert ctx.tab is not None
        shot = await ctx.tab.send(
            "Page.captureScreenshot",
            {"format": "png"},
            timeout=max(min(ctx.remaining(), 30.0), 1.0),
        )
        data = base64.b64decode(shot["data"])
        folder = self.screenshots_dir or Path(tempfile.gettempdir()) / "handrail-screenshots"
        folder.mkdir(parents=True, exist_ok=True)
        self._screens += 1
        path = folder / f"screenshot-{time.strftime('%Y%m%d-%H%M%S')}-{self._screens:03d}.png"
        path.write_bytes(data)
        return ActionResult.success(
            f"saved a screenshot of the viewport to {path}",
            screenshot=str(path),
            data={"base64": shot["data"]} if with_base64 else None,
        )

    async def _json_value(self, tab: Tab, remote: JSON, timeout: float) -> Any:
        """The JSON form of a main-world value: objects are serialised in the page, with
        DOM nodes, functions and cycles described instead of failing."""
        if remote.get("type") == "undefined":
            return None
        if "objectId" not in remote:
            if "unserializableValue" in remote:
                return str(remote["unserializableValue"])
            return remote.get("value")
        answer = await tab.send(
            "Runtime.callFunctionOn",
            {
                "objectId": remote["objectId"],
                "functionDeclaration": _SERIALISE_JS,
                "returnByValue": True,
            },
            timeout=timeout,
        )
        if "exceptionDetails" in answer:
            return remote.get("description")
        return answer.get("result", {}).get("value")

    async def _run_js(self, ctx: _Ctx, code: str) -> ActionResult:
        assert ctx.tab is not None
        tab = ctx.tab
        watch = self._ensure_watch(tab)
        before = await self._probe(ctx)
        marks = watch.marks()
        params: JSON = {
            "returnByValue": False,
            "awaitPromise": True,
            "userGesture": True,
            "objectGroup": _RUN_JS_GROUP,
        }
        ctx.mark_dispatched()
        timeout = max(ctx.remaining() - 1.0, 0.5)
        try:
            result = await tab.send(
                "Runtime.evaluate", {**params, "expression": code}, timeout=timeout
            )
            details = result.get("exceptionDetails")
            if details and _is_syntax_error(details) and ("return" in code or "await" in code):
                # A function body (`return x`, top-level await): it did not run; run it as one.
                wrapped = f"(async () => {{\n{code}\n}})()"
                result = await tab.send(
                    "Runtime.evaluate", {**params, "expression": wrapped}, timeout=timeout
                )
                details = result.get("exceptionDetails")
            if details:
                first = _exception_first_line(details)
                await self._settle(ctx, marks)
                return ActionResult.failure(
                    f"the script threw: {first}", error=f"js_exception: {first}"
                )
            value = await self._json_value(tab, result.get("result", {}), timeout)
        finally:
            with contextlib.suppress(CDPError):
                await tab.send(
                    "Runtime.releaseObjectGroup", {"objectGroup": _RUN_JS_GROUP}, timeout=2
                )
        note = await self._settle(ctx, marks)
        after = await self._probe(ctx)
        shown = json.dumps(value, ensure_ascii=False, default=str)
        message = f"the script returned {_clip(shown, 2000)}"
        if note:
            message += f". Note: {note}"
        return ActionResult.success(message, self._changes(before, after), data=value)


# --- small pure helpers -----------------------------------------------------------------


def _clip(text: str, n: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _a(word: str) -> str:
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _strip_slash(url: str) -> str:
    return url.rstrip("/")


def _fmt_rect(rect: tuple[float, float, float, float]) -> str:
    x, y, w, h = rect
    return f"x={x:.0f} y={y:.0f} {w:.0f}×{h:.0f}"


def _normalise_name(name: str) -> str:
    # The digest escapes page strings (‹ › for < >, ［ ］ for brackets) and cuts long names.
    table = str.maketrans({"‹": "<", "›": ">", "［": "[", "］": "]", "꞉": ":"})
    text = " ".join(name.translate(table).split()).lower()
    return text.removesuffix("…").strip()


def _name_matches(expected: str, candidates: list[str]) -> bool:
    want = _normalise_name(expected)
    if not want:
        return True
    for cand in candidates:
        got = _normalise_name(str(cand))
        if got == want or (got.startswith(want) and expected.rstrip().endswith("…")):
            return True
        if (
            want
            and got
            and (got.startswith(want) or want.startswith(got))
            and min(len(got), len(want)) >= 0.9 * max(len(got), len(want))
        ):
            return True
    return False


def _element_label(index: int, target: Any) -> str:
    if not isinstance(target, dict):
        return f"[{index}]"
    name = _clip(str(target.get("name") or ""), 60)
    tag = target.get("tag", "element")
    return f"[{index}] <{tag}> {name!r}" if name else f"[{index}] <{tag}>"


_ADVICE = {
    "covered": "Close or dismiss what covers it first (a dialog, banner or overlay), or scroll so it is free",
    "moving": "Wait until it stops moving (wait), then try again",
    "hidden": "It may appear after another step (open its menu or section first)",
    "zero_size": "It may appear after another step (open its menu or section first)",
    "transparent": "It is invisible; it may appear after another step",
    "disabled": "It may become enabled once the form is complete",
    "outside": "Scroll its container or the page to reach it",
    "detached": "Read the new digest and use its indexes",
    "inert": "Something else (e.g. a dialog) must be closed first",
}


def _not_actionable(action: str, label: str, prep: dict[str, Any]) -> tuple[str, str]:
    code = str(prep.get("code", "not_actionable"))
    reason = str(prep.get("reason", "it cannot be clicked"))
    advice = _ADVICE.get(code, "")
    message = f"{action} was not done: {label}: {reason}."
    if advice:
        message += f" {advice}."
    return message, f"not_actionable: {code}: {reason}"


def _readback(
    label: str, text: str, expected: str, holds: str, info: dict[str, Any], *, sensitive: bool
) -> str:
    if sensitive:
        what = "password field" if info.get("type") == "password" else "sensitive field"
        base = f"typed {len(text)} characters into the {what} {label}"
        if len(holds) != len(expected):
            base += f"; it now holds {len(holds)} characters, not {len(expected)} (the page limited or changed it)"
        return base
    base = f"typed {_clip(text, 200)!r} into {label}"
    norm = (
        (lambda s: " ".join(s.split())) if info.get("kind") == "contenteditable" else (lambda s: s)
    )
    if norm(holds) == norm(expected):
        return base
    max_length = info.get("maxLength")
    if max_length and len(holds) == max_length and expected.startswith(holds):
        return (
            f"{base}; the field accepts at most {max_length} characters, so it holds "
            f"{_clip(holds, 200)!r} (the rest was cut)"
        )
    if not holds:
        return f"{base}; but the field is empty now: the page rejected or cleared the text"
    return f"{base}; the page changed it: the field now holds {_clip(holds, 200)!r}"


def _position(state: dict[str, Any]) -> str:
    top = float(state.get("top", 0))
    height = float(state.get("height", 0))
    view = float(state.get("view", 0))
    scrollable = height - view
    if scrollable <= 1:
        return "the whole page fits in the viewport"
    percent = round(100 * min(max(top / scrollable, 0.0), 1.0))
    return f"now at {percent}% of the page ({top:.0f} px of {scrollable:.0f} px scrollable)"


def _describe_changes(changes: Changes) -> str:
    parts = []
    if changes.url_changed:
        parts.append("the URL changed")
    if changes.title_changed:
        parts.append("the title changed")
    if changes.new_elements:
        parts.append(f"{changes.new_elements} new interactive elements")
    elif changes.dom_changed:
        parts.append("the page content changed")
    return ", ".join(parts)


def _dialog_answer(info: DialogInfo, accept: bool, text: str | None, *, decided: bool) -> str:
    if info.type == "alert":
        return "dismissed it (OK)"
    if info.type == "beforeunload":
        return "accepted leaving the page"
    who = "" if decided else " (the default when nobody decides)"
    if info.type == "confirm":
        return f"answered OK{who}" if accept else f"answered Cancel{who}"
    if accept:
        return f"answered {_clip(text or '', 100)!r}"
    return f"cancelled the prompt{who}"


_NET_HINTS = {
    "ERR_NAME_NOT_RESOLVED": " (no such host: check the address)",
    "ERR_CONNECTION_REFUSED": " (nothing answers at that address)",
    "ERR_CONNECTION_TIMED_OUT": " (the server did not answer)",
    "ERR_INTERNET_DISCONNECTED": " (the browser has no network)",
    "ERR_CERT": " (the site's certificate is not trusted)",
    "ERR_ABORTED": " (the navigation was cancelled, e.g. by the page or a download)",
    "ERR_BLOCKED": " (the browser blocked it)",
}


def _net_error_hint(error_text: str) -> str:
    for key, hint in _NET_HINTS.items():
        if key in error_text:
            return hint
    return ""


def _is_syntax_error(details: JSON) -> bool:
    exception = details.get("exception") or {}
    return exception.get("className") == "SyntaxError" or "SyntaxError" in str(
        exception.get("description", "")
    )


def _exception_first_line(details: JSON) -> str:
    exception = details.get("exception") or {}
    text = exception.get("description")
    if not text and "value" in exception:
        text = f"Uncaught {json.dumps(exception['value'], default=str)}"
    text = str(text or details.get("text") or "unknown error").strip()
    return text.splitlines()[0] if text else "unknown error"
