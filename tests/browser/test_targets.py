"""Every child of our tabs is attached, paused, and handed to the hooks before it runs."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from urllib.parse import quote

import pytest

from core.browser.browser import Browser, Tab
from core.browser.child_targets import ChildTarget, ChildTargets
from core.cdp import JSON
from tests.helpers import load, page_eval
from tests.helpers.loopback import own_browser, second_site, third_site  # noqa: F401
from tests.helpers.site_server import SITE_ROOT, FixtureSite, Received

MARK = "self.__hooked = 'hooked'"


@dataclass
class Probes:
    """A hook that leaves a mark in each child before its first script: a frame's
    documents get it as a new-document script, a dedicated worker's global scope by
    evaluation while it is paused, and a service worker (paused before even its script is
    fetched) in the probe.js it imports, answered by the hook. Each child reports the mark
    it finds to the fixture server."""

    kinds: list[tuple[str, str]] = field(default_factory=list)
    _answers: set[asyncio.Task[JSON]] = field(default_factory=set)

    async def hook(self, child: ChildTarget) -> None:
        self.kinds.append((child.kind, child.url))
        if child.kind == "iframe":
            await child.session.send("Page.enable")
            await child.session.send("Page.addScriptToEvaluateOnNewDocument", {"source": MARK})
        elif child.kind == "service_worker":
            child.session.on("Fetch.requestPaused", lambda p: self._marked_probe(child, p))
            await child.session.send("Fetch.enable", {"patterns": [{"urlPattern": "*/probe.js"}]})
        else:
            await child.session.send("Runtime.evaluate", {"expression": MARK})

    def _marked_probe(self, child: ChildTarget, params: JSON) -> None:
        source = f"{MARK};\n{(SITE_ROOT / 'guard' / 'probe.js').read_text()}"
        answer = child.session.send(
            "Fetch.fulfillRequest",
            {
                "requestId": params["requestId"],
                "responseCode": 200,
                "responseHeaders": [{"name": "Content-Type", "value": "text/javascript"}],
                "body": base64.b64encode(source.encode()).decode(),
            },
        )
        self._answers.add(asyncio.get_running_loop().create_task(answer))


def reports(received: list[Received]) -> dict[str, str]:
    """who -> what that child found, from the /__report requests among ``received``."""
    return {r.query["who"][0]: r.query["got"][0] for r in received if r.path == "/__report"}


async def reported(server: FixtureSite, *who: str) -> dict[str, str]:
    """The server's reports, once those of every child in ``who`` have arrived."""
    await server.until(lambda received: set(who) <= set(reports(received)))
    return reports(server.received)


@pytest.fixture
async def probes(own_browser: Browser) -> AsyncIterator[Probes]:  # noqa: F811
    probes = Probes()
    children = ChildTargets.of(own_browser)
    children.add_hook(probes.hook)
    yield probes
    children.remove_hook(probes.hook)


UNREGISTER = (
    "navigator.serviceWorker.getRegistrations()"
    ".then(all => Promise.all(all.map(r => r.unregister())))"
)


async def open_children_page(browser: Browser, url: str, *servers: FixtureSite) -> Tab:
    """A new tab of ours with its children installed, on ``url``; ``servers`` start the
    page with no reports recorded."""
    for server in servers:
        server.clear()
    tab = await browser.new_tab()
    await ChildTargets.of(browser).install(tab)
    await load(tab, url)
    return tab


async def test_frames_nested_frames_and_workers_are_hooked_before_they_run(
    own_browser: Browser,  # noqa: F811
    probes: Probes,
    site: FixtureSite,
    second_site: FixtureSite,  # noqa: F811
    third_site: FixtureSite,  # noqa: F811
) -> None:
    leaf = third_site.url("/guard/child-frame.html?who=nested")
    frame = second_site.url(f"/guard/child-frame.html?who=iframe&nest={quote(leaf, safe='')}")
    url = site.url(f"/guard/children.html?frame={quote(frame, safe='')}&worker=1")
    tab = await open_children_page(own_browser, url, site, second_site, third_site)
    try:
        assert await reported(site, "worker") == {"worker": "hooked"}
        assert await reported(second_site, "iframe") == {"iframe": "hooked"}
        assert await reported(third_site, "nested") == {"nested": "hooked"}
        children = ChildTargets.of(own_browser).children(tab)
        assert sorted(c.kind for c in children) == ["iframe", "iframe", "worker"]
        # The nested frame was attached by the frame's session, and belongs to our tab.
        frames = [c for c in children if c.kind == "iframe"]
        assert [c.parent_session_id for c in frames] == [
            tab.session.session_id,
            frames[0].session.session_id,
        ]
        assert all(c.tab is tab for c in children)
    finally:
        await own_browser.close_tab(tab)


async def test_a_service_worker_is_hooked_before_it_runs(
    own_browser: Browser,  # noqa: F811
    probes: Probes,
    site: FixtureSite,
) -> None:
    tab = await open_children_page(own_browser, site.url("/guard/children.html?sw=1"), site)
    try:
        assert await reported(site, "service_worker") == {"service_worker": "hooked"}
        assert ("service_worker", site.url("/guard/probe-sw.js")) in probes.kinds
    finally:
        await page_eval(tab, UNREGISTER)
        await own_browser.close_tab(tab)


async def test_a_hook_that_fails_keeps_the_child_from_running(
    own_browser: Browser,  # noqa: F811
    probes: Probes,
    site: FixtureSite,
    second_site: FixtureSite,  # noqa: F811
) -> None:
    children = ChildTargets.of(own_browser)

    async def refuse(child: ChildTarget) -> None:
        if child.kind == "worker":
            raise RuntimeError("no world for this worker")

    children.add_hook(refuse)
    # The frame's report proves the page went on; the worker's never comes.
    frame = second_site.url("/guard/child-frame.html?who=iframe")
    tab = await open_children_page(
        own_browser,
        site.url(f"/guard/children.html?frame={quote(frame, safe='')}&worker=1"),
        site,
        second_site,
    )
    try:
        assert await reported(second_site, "iframe") == {"iframe": "hooked"}
        await children.settled()
        notices = children.drain_notices()
        assert len(notices) == 1
        assert "worker" in notices[0] and "no world for this worker" in notices[0]
        # The page's own clock: a request the site answers 300 ms later, and still no word
        # from the worker. (Not a new page: Chrome releases a paused worker as its page
        # unloads, and the notice says so.)
        await page_eval(tab, "fetch('/__slow?ms=300').then(r => r.status)")
        assert "worker" not in reports(site.received), notices
    finally:
        children.remove_hook(refuse)
        await own_browser.close_tab(tab)
