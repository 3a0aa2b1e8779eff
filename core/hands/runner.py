"""The action runner: one deadline per action, every page problem turned into a result,
and ``outcome == "unknown"`` once input was sent but its effect could not be read back."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import replace

import structlog

from core.browser.browser import Tab
from core.browser.errors import BrowserError
from core.cdp import CDPError, CDPTimeout, ConnectionClosed, SessionClosed
from core.hands.ctx import Ctx, Hands, Refused
from core.hands.dialogs import DialogRecord
from core.hands.messages import clip, with_article
from core.result import ActionResult, first_line
from core.world.errors import StaleElement, UnknownIndex, WorldError

log = structlog.get_logger("handrail.page")

Body = Callable[[Ctx], Awaitable[ActionResult]]


async def run_action(hands: Hands, name: str, body: Body) -> ActionResult:
    """Run ``body`` in the current tab within ``hands.options.action_timeout`` seconds (the
    clock stops while a dialog waits for a decision); only CancelledError propagates."""
    loop = asyncio.get_running_loop()
    ctx = Ctx(name=name, deadline=loop.time() + hands.options.action_timeout, hands=hands)
    ctx.dialog_mark = len(hands.dialogs.records)
    ctx.download_mark = len(hands.downloads.order)
    task = asyncio.create_task(_guarded(ctx, body), name=f"page.{name}")
    try:
        result = await _finish_in_time(task, ctx)
    except asyncio.CancelledError:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        raise
    dialogs = hands.dialogs.since(ctx.dialog_mark)
    if dialogs:
        d = dialogs[-1]
        text = f"{d.info.type}: {clip(d.info.message, 200)}"
        result = replace(result, changes=replace(result.changes, dialog=text))
        result = replace(result, message=f"{result.message}. {_dialog_answers(dialogs)}")
    notices = ctx.notices + hands.downloads.finished_notices()
    return result.with_notices(*notices)


async def _finish_in_time(task: asyncio.Task[ActionResult], ctx: Ctx) -> ActionResult:
    """Wait for the action, cancelling it at the deadline; the clock stops while a
    dialog waits for the decider (a person may be answering it)."""
    loop = asyncio.get_running_loop()
    dialogs = ctx.hands.dialogs
    while True:
        done, _ = await asyncio.wait({task}, timeout=max(ctx.remaining(), 0.0))
        if done:
            return task.result()
        if dialogs.deciding:
            paused = loop.time()
            decided = asyncio.ensure_future(dialogs.no_decision_pending.wait())
            try:
                await asyncio.wait({task, decided}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                decided.cancel()
            ctx.deadline += loop.time() - paused + 2.0
            continue
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        return _timed_out(ctx)


def _dialog_answers(dialogs: list[DialogRecord]) -> str:
    if len(dialogs) <= 3:
        return "; ".join(
            f"The page opened {with_article(x.info.type)} dialog ({clip(x.info.message, 200)!r}): {x.answer}"
            for x in dialogs
        )
    kinds = sorted({x.info.type for x in dialogs})
    last = dialogs[-1]
    return (
        f"The page opened {len(dialogs)} dialogs ({', '.join(kinds)}); the last one "
        f"({clip(last.info.message, 200)!r}): {last.answer}"
    )


def _timed_out(ctx: Ctx) -> ActionResult:
    limit = f"{ctx.hands.options.action_timeout:g} s"
    if ctx.dispatched:
        return ActionResult.unknown(
            f"{ctx.name} was sent to the page, but the page did not finish responding within "
            f"{limit}; whether it took effect is unknown. Look at the page state before acting "
            "again (the page may be busy or stuck; `wait` gives it more time).",
            code="timeout",
            error=f"timeout: no answer within {limit} after the input was sent",
        )
    return ActionResult.failure(
        f"{ctx.name} was not done: the page did not respond within {limit} (it may be busy or "
        "stuck). Try `wait`, or navigate elsewhere.",
        code="timeout",
        error=f"timeout: no answer within {limit}",
    )


async def _guarded(ctx: Ctx, body: Body) -> ActionResult:
    """Run an action body, turning every page problem into a result."""
    hands = ctx.hands
    try:
        tab, recovered = await active_tab(hands)
    except (BrowserError, CDPError, OSError) as exc:
        return ActionResult.failure(
            f"{ctx.name} was not done: the browser cannot be reached ({first_line(exc)}). "
            "handrail will try to reconnect on the next action.",
            code="browser_unreachable",
            error=f"browser_unreachable: {first_line(exc)}",
        )
    ctx.tab = tab
    ctx.notices += recovered
    hands.tabs.ensure(tab)
    try:
        await hands.tabs.ensure_connection_listeners()
        return await body(ctx)
    except Refused as exc:
        return ActionResult.failure(exc.message, error=exc.error, code=exc.code, data=exc.data)
    except (StaleElement, UnknownIndex) as exc:
        if ctx.dispatched:
            return ActionResult.unknown(
                f"{ctx.name}: the input was sent, then the element left the page; "
                "the page changed — look at it before acting again",
                code="stale_element",
            )
        return ActionResult.failure(f"{ctx.name} was not done: {exc}", code="stale_element")
    except SessionClosed as exc:
        hostile = hands.dialogs.hostile.get(tab.target_id)
        if hostile is not None:
            return _hostile(ctx, hostile)
        crashed = tab.crashed or "crash" in str(exc)
        what = "the tab's renderer crashed" if crashed else "the tab was closed"
        following = None if crashed else hands.browser.tab_after(tab)
        if following is None:
            where = "a new tab"
        elif following.target_id == tab.opener_id:
            where = f"the tab that opened it ({following.url})"
        else:
            where = f"our other tab ({following.url})"
        return _lost(ctx, what, f"the next action continues in {where}")
    except ConnectionClosed as exc:
        return _lost(
            ctx,
            f"the connection to the browser was lost ({first_line(exc)})",
            "the next action reconnects (or restarts the browser handrail launched)",
        )
    except CDPTimeout as exc:
        if ctx.dispatched:
            return ActionResult.unknown(
                f"{ctx.name} was sent, but the page stopped answering ({first_line(exc)}); "
                "whether it took effect is unknown. Look at the page before acting again.",
                code="timeout",
                error=f"timeout: {first_line(exc)}",
            )
        return ActionResult.failure(
            f"{ctx.name} was not done: the page did not answer ({first_line(exc)}); it may "
            "be busy. Try `wait`.",
            code="timeout",
            error=f"timeout: {first_line(exc)}",
        )
    except WorldError as exc:
        if ctx.dispatched:
            return ActionResult.unknown(
                f"{ctx.name}: the input was sent, but reading the page back failed "
                f"({first_line(exc)}); look at the page before acting again",
                code="page_unreadable",
            )
        return ActionResult.failure(
            f"{ctx.name} was not done: {first_line(exc)}", code="page_unreadable"
        )
    except CDPError as exc:
        if ctx.dispatched:
            return ActionResult.unknown(
                f"{ctx.name}: the input was sent, then the browser reported an error "
                f"({first_line(exc)}); whether it took effect is unknown",
                code="browser_error",
            )
        return ActionResult.failure(
            f"{ctx.name} was not done: the browser said {first_line(exc)}", code="browser_error"
        )


async def active_tab(hands: Hands) -> tuple[Tab, list[str]]:
    """``browser.active_tab()``, tried again shortly when the browser cannot be reached:
    a browser that was just killed needs a moment before it is known to be dead (and
    started again), and a dropped connection may come back."""
    for delay in (0.3, 1.0):
        try:
            return await hands.browser.active_tab()
        except (BrowserError, CDPError, OSError) as exc:
            log.info("page.browser_unreachable_retry", error=first_line(exc), delay=delay)
            await asyncio.sleep(delay)
    return await hands.browser.active_tab()


def _hostile(ctx: Ctx, why: str) -> ActionResult:
    message = (
        f"{ctx.name} did not finish: {why}. The next action continues in a new tab; do not go "
        "back to that page"
    )
    if ctx.dispatched:
        return ActionResult.unknown(message, error=why, code="hostile_page")
    return ActionResult.failure(message, error=why, code="hostile_page")


def _lost(ctx: Ctx, what: str, next_step: str) -> ActionResult:
    if ctx.dispatched:
        return ActionResult.unknown(
            f"{ctx.name} was sent, then {what}; whether it took effect is unknown ({next_step}). "
            "Check the page before repeating it.",
            code="lost",
            error=f"lost: {what}",
        )
    return ActionResult.failure(
        f"{ctx.name} was not done: {what} ({next_step}).", code="lost", error=f"lost: {what}"
    )
