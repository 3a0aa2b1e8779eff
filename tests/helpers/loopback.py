"""Fixture servers on other loopback *addresses*: other sites for Chromium's site isolation.

127.0.0.1:A and 127.0.0.1:B are the same site, so a frame from one inside the other stays
in-process. 127.0.0.2 and 127.0.0.3 are different sites: a frame from them is an
out-of-process frame with a target of its own, and a host ``--allow-domain`` can name apart.
Import the fixtures into a test module to use them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from core.browser.browser import Browser, Tab
from core.eyes.snapshot import follow_frames
from tests.conftest import launch_browser
from tests.helpers.site_server import FixtureSite


@pytest.fixture(scope="session")
def second_site() -> Iterator[FixtureSite]:
    """The same fixture files on http://127.0.0.2:PORT (another site)."""
    server = FixtureSite("127.0.0.2")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def third_site() -> Iterator[FixtureSite]:
    """The same fixture files on http://127.0.0.3:PORT (a third site)."""
    server = FixtureSite("127.0.0.3")
    yield server
    server.stop()


@pytest.fixture(scope="module")
async def own_browser(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Browser]:
    """A headless Chromium for one test module: hooks, service workers and guards installed
    by its tests never reach the session's shared browser."""
    profile: Path = tmp_path_factory.mktemp("own-chrome")
    browser = await launch_browser(profile)
    yield browser
    await browser.close()


@pytest.fixture(scope="module")
async def eyes_browser(own_browser: Browser) -> Browser:
    """A browser of the module's own whose tabs' out-of-process frames the eyes follow."""
    await follow_frames(own_browser)
    return own_browser


@pytest.fixture
async def oop_tab(eyes_browser: Browser) -> AsyncIterator[Tab]:
    """A tab of :func:`eyes_browser`, closed after the test."""
    tab = await eyes_browser.new_tab()
    yield tab
    if not tab.closed:
        await eyes_browser.close_tab(tab)
