"""The network allowlist guards our tabs, and only ours."""

from __future__ import annotations

import asyncio
from pathlib import Path

from core.allowlist import DomainGuard
from core.browser import Browser
from tests.conftest import launch_browser
from tests.helpers import load, page_eval
from tests.site_server import FixtureSite


async def test_the_persons_own_new_tab_is_not_intercepted(
    tmp_path: Path, site: FixtureSite, other_site: FixtureSite
) -> None:
    person = await launch_browser(tmp_path / "persons-chrome")
    ours = await Browser.connect(person.ws_url)
    try:
        guard = DomainGuard(ours, ["127.0.0.1"])
        await guard.install()
        blocked_url = other_site.url("/cdp/hello.html?who=ours").replace("127.0.0.1", "localhost")
        tab = await ours.new_tab()
        await tab.send("Page.navigate", {"url": blocked_url})
        # The person opens a tab of their own and goes to the same host: nothing stops them.
        theirs = await person.new_tab()
        await load(
            theirs, other_site.url("/cdp/hello.html?who=theirs").replace("127.0.0.1", "localhost")
        )
        assert await page_eval(theirs, "document.title") == "Hello"
        await asyncio.sleep(0.3)
        who = [r.query.get("who") for r in other_site.received if r.path == "/cdp/hello.html"]
        assert who == [["theirs"]]  # theirs loaded; ours never reached the host
        assert guard.blocked == [blocked_url]
    finally:
        await ours.close()
        await person.close()
