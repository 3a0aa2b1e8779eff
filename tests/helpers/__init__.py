"""What the tests share, one module per job: this one reads a page's own state (never
through handrail's hands); :mod:`.site_server` serves the fixture pages, :mod:`.fake_anthropic`
and :mod:`.fake_openai` are the local model APIs the real SDKs talk to, :mod:`.waiting` waits
on events or a deadline scaled by HANDRAIL_TEST_SLOWDOWN, :mod:`.hostile` runs the hostile
corpus, :mod:`.tui_driver` and :mod:`.tui_scenes` drive the observatory, :mod:`.agent_run`
and :mod:`.scripted` a run and a plan, :mod:`.loopback` and :mod:`.pty_terminal` the network
and a real terminal. Test modules import helpers from here, never from each other."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from core.browser.browser import Tab
from core.eyes.snapshot import Snapshot
from core.hands import Page
from tests.helpers.site_server import FixtureSite


async def page_eval(tab: Tab, expression: str) -> Any:
    """Evaluate in the page's main world and return the JSON value (awaits promises)."""
    result = await tab.send(
        "Runtime.evaluate",
        {"expression": expression, "returnByValue": True, "awaitPromise": True},
    )
    if "exceptionDetails" in result:
        raise AssertionError(
            f"page_eval({expression!r}) threw: {json.dumps(result['exceptionDetails'])[:500]}"
        )
    return result["result"].get("value")


async def load(tab: Tab, url: str, timeout: float = 10.0) -> None:
    """Navigate with raw CDP and wait for the load event (test set-up, not the hands)."""
    loaded = tab.session.expect("Page.loadEventFired")
    await tab.send("Page.navigate", {"url": url})
    async with asyncio.timeout(timeout):
        await loaded


async def open_page(page: Page, site: FixtureSite, path: str) -> Snapshot:
    """Navigate the hands to ``path`` of ``site`` and return the digest they then observe."""
    result = await page.navigate(site.url(path))
    assert result.ok, result.message
    snapshot, _ = await page.observe()
    return snapshot


def index_of(snapshot: Snapshot, name: str) -> int:
    """The index of the element whose accessible name is ``name`` (exactly one)."""
    found = [e.index for e in snapshot.elements.values() if e.name == name]
    assert len(found) == 1, f"{name!r} found {len(found)} times in:\n{snapshot.text}"
    return found[0]
