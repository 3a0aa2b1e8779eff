"""The hands: page actions over CDP, with trusted input only.

:class:`Page` acts in the current tab of a :class:`~core.browser.browser.Browser` and returns an
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
  Everything else runs in handrail's isolated world (core/world/) or through CDP.

Page-side helpers are the stages ``core/hands/*.js`` (``PAGE_PARTS`` in :mod:`.ctx`). The package: :mod:`.facade` (this class),
:mod:`.runner` (deadline, outcomes), :mod:`.tabs` (tab watch, navigation wait),
:mod:`.settle`, :mod:`.dialogs`, :mod:`.downloads`, input (:mod:`.mouse`, :mod:`.keyboard`),
the action families (:mod:`.navigation`, :mod:`.pointer`, :mod:`.hover`, :mod:`.drag`,
:mod:`.at_point`, :mod:`.scroll`, :mod:`.forms`, :mod:`.script`, :mod:`.capture`) and
:mod:`.messages`.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Literal

import structlog

from core.actions import Action
from core.browser.browser import Browser, Tab
from core.browser.errors import BrowserError
from core.cdp import ConnectionClosed, SessionClosed
from core.eyes.snapshot import Snapshot, SnapshotOptions, take_snapshot
from core.hands import (
    at_point,
    capture,
    drag,
    find,
    forms,
    hover,
    navigation,
    pointer,
    script,
    scroll,
)
from core.hands.ctx import Ctx, Hands, Options, js
from core.hands.dialogs import DialogDecider, DialogInfo, Dialogs
from core.hands.downloads import Downloads
from core.hands.expect import TargetExpectation
from core.hands.mouse import Clicks
from core.hands.runner import active_tab, run_action
from core.hands.shot import PointHit
from core.hands.tab_watch import STATE_KEY, AuthChallenge, TabWatch, TabWatcher
from core.keys import KeySpecError, parse_keys
from core.result import ActionResult, first_line

log = structlog.get_logger("handrail.page")


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
        options = Options(
            action_timeout=action_timeout,
            allow_file_urls=allow_file_urls,
            upload_dir=upload_dir,
            downloads_dir=downloads_dir,
            screenshots_dir=screenshots_dir,
        )
        dialogs = Dialogs()
        dialogs.decider = dialog_decider
        dialogs.on_storm = self._close_hostile
        downloads = Downloads(self._downloads_folder)
        tabs = TabWatcher(browser, dialogs, downloads, downloads_dir)
        self._hands = Hands(browser, options, dialogs, downloads, tabs)

    @property
    def action_timeout(self) -> float:
        return self._hands.options.action_timeout

    @property
    def allow_file_urls(self) -> bool:
        return self._hands.options.allow_file_urls

    @property
    def dialog_decider(self) -> DialogDecider | None:
        """Answers confirm and prompt dialogs; None cancels them."""
        return self._hands.dialogs.decider

    @dialog_decider.setter
    def dialog_decider(self, decider: DialogDecider | None) -> None:
        self._hands.dialogs.decider = decider

    def take_auth_challenge(self) -> AuthChallenge | None:
        """The HTTP authentication challenge the current tab met since the last call, if any
        (once: a hand-over answers it)."""
        tab = self.browser.current
        watch = tab.state.get(STATE_KEY) if tab is not None else None
        if not isinstance(watch, TabWatch) or watch.auth is None:
            return None
        challenge, watch.auth = watch.auth, None
        return challenge

    @property
    def open_dialog(self) -> DialogInfo | None:
        """The JavaScript dialog open right now, if any."""
        return self._hands.dialogs.open

    def _downloads_folder(self) -> Path | None:
        if self._hands.options.downloads_dir is not None:
            return self._hands.options.downloads_dir
        options = self.browser.launch_options
        return options.downloads_dir if options is not None else None

    async def _close_hostile(self, tab: Tab) -> None:
        """A tab that stormed dialogs is closed; the next action opens a new one."""
        if tab.target_id in self.browser.tabs and not tab.closed:
            with contextlib.suppress(BrowserError):
                await self.browser.close_tab(tab)

    def close(self) -> None:
        """Stop watching the browser (tabs, downloads, dialogs). The browser stays open."""
        self._hands.tabs.close()

    # --- the agent's entry points -------------------------------------------------------

    async def observe(self, options: SnapshotOptions | None = None) -> tuple[Snapshot, list[str]]:
        """The digest of the current tab and notices (tab reopened, browser reconnected,
        downloads finished, dialogs handled outside an action, a dialog still open).

        Raises :class:`~core.browser.browser.BrowserError` or ``core.cdp`` errors only when no
        tab can be obtained at all.
        """
        hands = self._hands
        notices: list[str] = []
        for attempt in range(3):
            try:
                tab, recovered = await active_tab(hands)
                notices += recovered
                hands.tabs.ensure(tab)
                await hands.tabs.ensure_connection_listeners()
                snapshot = await take_snapshot(tab, options=options)
                break
            except (SessionClosed, ConnectionClosed) as exc:
                # The tab or the browser died since the last action (a crash, a kill): the
                # next active_tab() opens a new tab or starts the browser again.
                if attempt == 2:
                    raise
                log.info("page.observe_retry", error=first_line(exc))
                await asyncio.sleep(0.2 * (attempt + 1))
        notices += hands.downloads.finished_notices()
        notices += hands.dialogs.storm_notices()
        notices += hands.dialogs.unreported_notices()
        if hands.dialogs.open is not None:
            d = hands.dialogs.open
            notices.append(f"a {d.type} dialog is open: {d.message!r} (waiting for a decision)")
        return snapshot, notices

    def tab_descriptions(self) -> list[str]:
        """``[N] * Title — url`` for each of our tabs (``*`` marks the current one)."""
        return self._hands.tabs.descriptions()

    async def dispatch(
        self,
        action: Action,
        *,
        expect: TargetExpectation | None = None,
        secret: bool = False,
        expect_to: TargetExpectation | None = None,
        at: int | None = None,
    ) -> ActionResult:
        """Run one parsed action. Never raises for page problems; only CancelledError.
        ``secret``: a ``type`` action's text is only configured secrets (see :meth:`type`).
        ``expect_to``: a drag's destination as approved; ``at``: the element approved at
        the end point of a drag by an offset (see :meth:`drag`)."""
        p = action.params
        try:
            match action.name:
                case "navigate":
                    return await self.navigate(str(p["url"]))
                case "click":
                    return await self.click(
                        int(p["index"]),
                        expect=expect,
                        count=int(p.get("count", 1)),
                        button=str(p.get("button", "left")),
                    )
                case "type":
                    return await self.type(
                        int(p["index"]),
                        str(p["text"]),
                        clear=bool(p.get("clear", True)),
                        submit=bool(p.get("submit", False)),
                        expect=expect,
                        secret=secret,
                    )
                case "press_key":
                    return await self.press_key(str(p["keys"]))
                case "select_option":
                    return await self.select_option(
                        int(p["index"]), str(p["option"]), expect=expect
                    )
                case "hover":
                    return await self.hover(int(p["index"]), expect=expect)
                case "drag":
                    spec = drag.DragSpec(
                        index=int(p["index"]) if "index" in p else None,
                        path=str(p["path"]) if "path" in p else None,
                        to=int(p["to"]) if "to" in p else None,
                        dx=float(p.get("dx", 0)),
                        dy=float(p.get("dy", 0)),
                        at=at,
                    )
                    return await self.drag(spec, expect=expect, expect_to=expect_to)
                case "click_at":
                    return await self.click_at(float(p["x"]), float(p["y"]), expect=expect)
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
                case "close_tab":
                    return await self.close_tab(int(p["tab"]))
                case "find_text":
                    return await self.find_text(str(p["text"]))
                case "upload_file":
                    return await self.upload_file(int(p["index"]), str(p["path"]), expect=expect)
                case "screenshot":
                    return await self.screenshot()
                case "run_js":
                    return await self.run_js(str(p["code"]))
                case _:
                    return ActionResult.failure(
                        f"{action.name!r} is not a page action the hands can perform",
                        code="bad_parameters",
                    )
        except asyncio.CancelledError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            return ActionResult.failure(
                f"{action.name}: bad parameters ({exc})", code="bad_parameters"
            )
        except Exception as exc:  # the loop must get a result, whatever went wrong here
            log.exception("page.dispatch_failed", action=action.name)
            return ActionResult.failure(
                f"{action.name} failed inside handrail: {exc!r}", code="internal"
            )

    # --- actions ------------------------------------------------------------------------

    async def navigate(self, url: str) -> ActionResult:
        """Load ``url`` (http/https; file when allowed) in the current tab and wait for the
        new document's load event, then (bounded) for network quiet."""
        problem = navigation.url_problem(url, allow_file_urls=self.allow_file_urls)
        if problem:
            return ActionResult.failure(problem, code="refused", error=f"refused: {problem}")
        return await run_action(self._hands, "navigate", lambda ctx: navigation.navigate(ctx, url))

    async def click(
        self,
        index: int,
        *,
        expect: TargetExpectation | None = None,
        count: int = 1,
        button: str = "left",
    ) -> ActionResult:
        """Trusted click on element ``[index]`` (see the module docstring for the checks):
        ``count`` 2 is a double click, ``button`` "right" a context click."""
        clicks = Clicks(count=count, button=button)
        return await run_action(
            self._hands, "click", lambda ctx: pointer.click(ctx, index, expect, clicks)
        )

    async def hover(self, index: int, *, expect: TargetExpectation | None = None) -> ActionResult:
        """Move the pointer onto element ``[index]`` after the click's checks (approved,
        in view, still, hit at its centre), press nothing, and say what appeared."""
        return await run_action(self._hands, "hover", lambda ctx: hover.hover(ctx, index, expect))

    async def drag(
        self,
        spec: drag.DragSpec,
        *,
        expect: TargetExpectation | None = None,
        expect_to: TargetExpectation | None = None,
    ) -> ActionResult:
        """Drag element ``spec.index`` onto ``spec.to`` (or by ``spec.dx``/``spec.dy`` CSS
        pixels), or drop the file ``spec.path`` (inside ``upload_dir`` only) onto
        ``spec.to``: trusted pointer input, and HTML5 drag and drop when the page starts
        one, with a click's checks at both ends (see :mod:`core.hands.drag`)."""
        return await run_action(
            self._hands, "drag", lambda ctx: drag.drag(ctx, spec, expect, expect_to)
        )

    async def click_at(
        self, x: float, y: float, *, expect: TargetExpectation | None = None
    ) -> ActionResult:
        """Click the point (x, y) of the latest screenshot (its pixels), with a click's
        checks on the element hit there; ``expect`` is that element as approved."""
        return await run_action(
            self._hands, "click_at", lambda ctx: at_point.click_at(ctx, x, y, expect)
        )

    async def locate(self, x: float, y: float) -> PointHit | ActionResult:
        """What is at (x, y) of the latest screenshot now (nothing is sent to the page but
        readings), or the failure saying why it cannot be clicked."""
        found: list[PointHit] = []

        async def body(ctx: Ctx) -> ActionResult:
            found.append(await at_point.locate(ctx, x, y))
            return ActionResult.success("located")

        result = await run_action(self._hands, "click_at", body)
        return found[0] if found and result.ok else result

    async def hit_test(self, x: float, y: float) -> PointHit | ActionResult:
        """What the browser hits at (x, y), top-level viewport CSS pixels (a drag's end)."""
        found: list[PointHit] = []

        async def body(ctx: Ctx) -> ActionResult:
            raw = await js(ctx, "pointHit", float(x), float(y))
            if not raw.get("ok"):
                return ActionResult.failure(
                    f"drag was not done: {raw.get('reason')}; drag a shorter way, or scroll first",
                    code="not_actionable",
                )
            found.append(PointHit.of(x, y, raw))
            return ActionResult.success("located")

        result = await run_action(self._hands, "drag", body)
        return found[0] if found and result.ok else result

    async def type(
        self,
        index: int,
        text: str,
        *,
        clear: bool = True,
        submit: bool = False,
        expect: TargetExpectation | None = None,
        secret: bool = False,
    ) -> ActionResult:
        """Focus field ``[index]``, optionally clear it, type ``text`` (key presses, so
        framework-controlled inputs and keyup listeners see it), optionally press Enter;
        the result says what the field holds afterwards (never a password's value).

        A password, one-time-code or card field (judged when the action starts and again
        once the field has the focus) is refused (``code == "sensitive_field"``) unless
        ``secret`` says the text is only configured secrets."""
        return await run_action(
            self._hands,
            "type",
            lambda ctx: forms.type_text(ctx, index, text, clear, submit, expect, secret=secret),
        )

    async def press_key(self, keys: str) -> ActionResult:
        """Press one key or combination (``Enter``, ``Control+A``) on the focused element."""
        try:
            combo = parse_keys(keys)
        except KeySpecError as exc:
            return ActionResult.failure(str(exc), code="bad_parameters")
        return await run_action(
            self._hands, "press_key", lambda ctx: forms.press_key(ctx, combo.spec)
        )

    async def select_option(
        self, index: int, option: str, *, expect: TargetExpectation | None = None
    ) -> ActionResult:
        """Choose ``option`` (value, or visible label: exact, then unique substring,
        case-insensitive) in the native ``<select>`` ``[index]``; fires input and change."""
        return await run_action(
            self._hands,
            "select_option",
            lambda ctx: forms.select_option(ctx, index, option, expect),
        )

    async def scroll(
        self,
        *,
        direction: Literal["up", "down", "left", "right"] | None = None,
        pages: float = 1,
        index: int | None = None,
    ) -> ActionResult:
        """Scroll the page (or its main scrolling container) by ``pages`` viewports, up or
        down; or, with ``index``: when that element is a scrolling area (or, with a
        ``direction``, inside one), move its content by ``pages`` of its visible size
        (default: toward where it has more, down first), otherwise bring the element to the
        middle of the viewport."""
        return await run_action(
            self._hands, "scroll", lambda ctx: scroll.scroll(ctx, direction, pages, index)
        )

    async def go_back(self) -> ActionResult:
        """Go back one entry in the current tab's history and wait for that page."""
        return await run_action(self._hands, "go_back", navigation.go_back)

    async def wait(self, seconds: float) -> ActionResult:
        """Let the page work for ``seconds`` (0-30), then report what changed."""
        return await run_action(self._hands, "wait", lambda ctx: navigation.wait(ctx, seconds))

    async def switch_tab(self, tab: int | str) -> ActionResult:
        """Make one of our tabs current: by position in :meth:`tab_descriptions` or target id."""
        return await run_action(
            self._hands, "switch_tab", lambda ctx: navigation.switch_tab(ctx, tab)
        )

    async def close_tab(self, tab: int) -> ActionResult:
        """Close one of our tabs by its position in :meth:`tab_descriptions` (never the last)."""
        return await run_action(
            self._hands, "close_tab", lambda ctx: navigation.close_tab(ctx, tab)
        )

    async def find_text(self, text: str) -> ActionResult:
        """Where ``text`` appears on the whole current page (read-only)."""
        return await run_action(self._hands, "find_text", lambda ctx: find.find_text(ctx, text))

    async def upload_file(
        self, index: int, path: str, *, expect: TargetExpectation | None = None
    ) -> ActionResult:
        """Put the file ``path`` (inside ``upload_dir`` only) into file input ``[index]``."""
        return await run_action(
            self._hands, "upload_file", lambda ctx: forms.upload_file(ctx, index, path, expect)
        )

    async def screenshot(self) -> ActionResult:
        """A PNG of the viewport in ``screenshots_dir``; ``result.screenshot`` is its path."""
        return await run_action(
            self._hands, "screenshot", lambda ctx: capture.screenshot(ctx, with_base64=False)
        )

    async def screenshot_base64(self) -> ActionResult:
        """As :meth:`screenshot`, with ``data["base64"]`` for vision models (and
        ``data["masked"]``, the boxes covering secrets, when there are any)."""
        return await run_action(
            self._hands, "screenshot", lambda ctx: capture.screenshot(ctx, with_base64=True)
        )

    async def run_js(self, code: str) -> ActionResult:
        """Evaluate ``code`` in the page's MAIN world (awaiting a promise it returns);
        ``data`` holds the JSON value. A thrown exception is reported as its first line."""
        return await run_action(self._hands, "run_js", lambda ctx: script.run_js(ctx, code))
