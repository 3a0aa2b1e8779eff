"""The navigation family: navigate, go_back, switch_tab, wait, and following a tab
that an action opened."""

from __future__ import annotations

import asyncio
import contextlib
import urllib.parse
from dataclasses import replace

from core.browser.browser import Tab
from core.browser.errors import PopupRefused
from core.cdp import CDPError, CDPTimeout
from core.hands.ctx import Ctx, Refused
from core.hands.messages import clip, describe_changes, net_error_hint, strip_slash
from core.hands.settle import NAV_CAP, NAV_QUIET, compare, frames, network_quiet, probe
from core.result import ActionResult, Changes
from core.world.calls import world_eval
from core.world.errors import WorldError

MAX_WAIT_SECONDS = 30.0
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


def url_problem(url: str, *, allow_file_urls: bool) -> str | None:
    """Why ``url`` cannot be opened by navigate, or None when it can."""
    text = url.strip()
    parsed = urllib.parse.urlsplit(text)
    scheme = parsed.scheme.lower()
    if scheme in ("http", "https"):
        if not parsed.netloc:
            return f"{url!r} has no host; write a full URL such as https://example.com/"
        return None
    if scheme == "file":
        if allow_file_urls:
            return None
        return f"file URLs are not allowed in this run ({url!r}); only http and https"
    if "://" not in text and (not scheme or scheme not in _OTHER_SCHEMES):
        # "example.com/x" or "localhost:8080": a host without a scheme.
        return (
            f"{url!r} is not an absolute URL; navigate needs one with http:// or https://, "
            f"e.g. https://{text.lstrip('/')}"
        )
    return (
        f"navigate only opens http and https URLs; {scheme}: URLs are refused ({clip(url, 100)!r})"
    )


async def navigate(ctx: Ctx, url: str) -> ActionResult:
    tab = ctx.current
    watch = ctx.watch
    url = url.strip()
    # Two independent readings, in one round trip's time.
    before, history = await asyncio.gather(
        probe(ctx), tab.send("Page.getNavigationHistory", timeout=5)
    )
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
            code="navigation_timeout",
            error=f"navigation_timeout: {url} did not answer within {budget:.0f} s",
        )
    error_text = nav.get("errorText")
    if error_text:
        return ActionResult.failure(
            f"could not load {url}: {error_text}{net_error_hint(error_text)}",
            code="navigation_failed",
            error=f"navigation_failed: {error_text}",
        )
    loader = nav.get("loaderId")
    partial = None
    if loader:
        end = await watch.wait_for_navigation(
            watch.marks(), until=ctx.deadline - 0.3, loader=loader
        )
        if end == "timeout":
            seen = watch.lifecycle.get(loader, set())
            if "DOMContentLoaded" in seen or watch.committed_loader == loader:
                partial = "the page is shown, but it was still loading some of its resources"
            else:
                with contextlib.suppress(CDPError):
                    await tab.send("Page.stopLoading", timeout=2)
                return ActionResult.failure(
                    f"{url} did not finish loading within {ctx.hands.options.action_timeout:g} s; "
                    "handrail stopped loading it",
                    code="navigation_timeout",
                    error=f"navigation_timeout: {url}",
                )
        if from_blank and watch.committed_loader == loader:
            # Our fresh tab's about:blank must not be a page the model can go back to.
            with contextlib.suppress(CDPError):
                await tab.send("Page.resetNavigationHistory", timeout=5)
        if partial is None:
            # NAV_QUIET after the load spans many frames: no frame wait after it.
            await network_quiet(ctx, quiet=NAV_QUIET, cap=NAV_CAP)
    if not loader or partial is not None:
        await frames(ctx)
    after = await probe(ctx)
    changes = compare(before, after)
    if loader:
        changes = replace(changes, dom_changed=True)
    final = after.url if after else url
    title = after.title if after else ""
    parts = [f"loaded {final}"]
    if strip_slash(final) != strip_slash(url):
        parts.append(f"(redirected from {url})")
    if title:
        parts.append(f"— title {clip(title, 120)!r}")
    status = watch.doc_status.get(loader or "", 0)
    message = " ".join(parts)
    if status >= 400:
        message += f". The server answered HTTP {status}: the page is probably an error page"
    if partial:
        message += f". Note: {partial}"
    return ActionResult.success(message, changes)


async def go_back(ctx: Ctx) -> ActionResult:
    tab = ctx.current
    watch = ctx.watch
    history = await tab.send("Page.getNavigationHistory", timeout=5)
    current = int(history.get("currentIndex", 0))
    entries = history.get("entries", [])
    if current <= 0 or not entries or entries[current - 1].get("url") in ("about:blank", ""):
        raise Refused(
            "go_back was not done: there is no earlier page in this tab's history",
            code="no_history",
            error="no_history",
        )
    before = await probe(ctx)
    marks = watch.marks()
    target = entries[current - 1]
    ctx.mark_dispatched()
    await tab.send("Page.navigateToHistoryEntry", {"entryId": target["id"]}, timeout=10)
    loop = asyncio.get_running_loop()
    until = loop.time() + max(min(ctx.remaining() - 1.0, 15.0), 0.2)
    end = await watch.wait_for_navigation(marks, until=until)
    note = "the page was still loading when handrail stopped waiting" if end == "timeout" else None
    # NAV_QUIET after the input spans many frames: no frame wait after it.
    await network_quiet(ctx, quiet=NAV_QUIET, cap=NAV_CAP)
    after = await probe(ctx)
    changes = compare(before, after)
    url = after.url if after else target.get("url", "")
    message = f"went back to {url}"
    if after and after.title:
        message += f" — title {clip(after.title, 120)!r}"
    if note:
        message += f". Note: {note}"
    return ActionResult.success(message, changes)


async def wait(ctx: Ctx, seconds: float) -> ActionResult:
    asked = float(seconds)
    seconds = min(
        max(asked, 0.0), MAX_WAIT_SECONDS, max(ctx.hands.options.action_timeout - 2.0, 0.0)
    )
    before = await probe(ctx)
    await asyncio.sleep(seconds)
    await frames(ctx)
    after = await probe(ctx)
    changes = compare(before, after)
    message = f"waited {seconds:g} s"
    if seconds < asked:
        message += f" (the longest wait is {seconds:g} s)"
    message += "; " + (
        describe_changes(changes) if changes.any() else "nothing changed on the page"
    )
    return ActionResult.success(message, changes)


async def switch_tab(ctx: Ctx, which: int | str) -> ActionResult:
    tabs = ctx.hands.browser.our_tabs()
    chosen: Tab | None = None
    if isinstance(which, int) or (isinstance(which, str) and which.strip().isdigit()):
        n = int(which)
        if 0 <= n < len(tabs):
            chosen = tabs[n]
    else:
        chosen = next((t for t in tabs if t.target_id == which), None)
    if chosen is None:
        listing = "; ".join(ctx.hands.tabs.descriptions()) or "none"
        raise Refused(
            f"switch_tab was not done: there is no tab {which!r}. Our tabs: {listing}",
            code="no_such_tab",
            error="no_such_tab",
        )
    before = await probe(ctx)
    previous = ctx.hands.browser.current
    await ctx.hands.browser.activate(chosen)
    ctx.tab = chosen
    ctx.hands.tabs.ensure(chosen)
    after = await probe(ctx)
    n = tabs.index(chosen)
    url = after.url if after else chosen.url
    title = (after.title if after else chosen.title) or "(untitled)"
    changes = Changes(
        url_changed=before is None or before.url != url,
        title_changed=before is None or before.title != title,
        dom_changed=previous is not chosen,
    )
    return ActionResult.success(f"switched to tab [{n}] {clip(title, 80)!r} — {url}", changes)


async def close_tab(ctx: Ctx, which: int) -> ActionResult:
    tabs = ctx.hands.browser.our_tabs()
    if not 0 <= which < len(tabs):
        listing = "; ".join(ctx.hands.tabs.descriptions()) or "none"
        raise Refused(
            f"close_tab was not done: there is no tab {which!r}. Our tabs: {listing}",
            code="no_such_tab",
            error="no_such_tab",
        )
    if len(tabs) == 1:
        raise Refused(
            "close_tab was not done: it is the only tab; the run needs one. Navigate "
            "elsewhere instead",
            code="refused",
            error="refused: the last tab",
        )
    closing = tabs[which]
    read = await probe(replace(ctx, tab=closing))  # the document's title, not the target's
    title = (read.title if read else closing.title) or "(untitled)"
    was_current = ctx.hands.browser.current is closing
    ctx.mark_dispatched()
    await ctx.hands.browser.close_tab(closing)
    message = f"closed tab [{which}] {clip(title, 80)!r}"
    if was_current:
        rest = [t for t in tabs if t is not closing]
        nxt = rest[max(which - 1, 0)]
        await ctx.hands.browser.activate(nxt)
        ctx.tab = nxt
        ctx.hands.tabs.ensure(nxt)
        now = await probe(ctx)
        shown = (now.title if now else nxt.title) or "(untitled)"
        message += f"; tab [{rest.index(nxt)}] {clip(shown, 80)!r} is current"
    changes = Changes(url_changed=was_current, title_changed=was_current, dom_changed=was_current)
    return ActionResult.success(message, changes)


async def follow_popup(ctx: Ctx, mark: int) -> Tab | None:
    if ctx.hands.tabs.popups <= mark:
        return None
    try:
        tab = await ctx.hands.browser.adopt_popup(
            timeout=min(2.0, max(ctx.remaining() - 1, 0.1)),
            opener=ctx.tab.target_id if ctx.tab is not None else None,
        )
    except PopupRefused as exc:
        ctx.notices.append(str(exc))
        return None
    if tab is None:
        return None
    ctx.hands.tabs.ensure(tab)
    await ctx.hands.browser.activate(tab)
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
            watch = ctx.hands.tabs.ensure(tab)
            watch.url, watch.title = str(state[1]), str(state[2])
            break
        await asyncio.sleep(0.1)
    ctx.tab = tab
    return tab
