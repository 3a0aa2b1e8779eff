"""The real applications, one of each per test session (each xdist worker has its own):
the travel agency's Django admin and Datasette, on free loopback ports, stopped by PID."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from core.browser.browser import Tab
from tests.apps.servers import DatasetteApp, DjangoApp, datasette, django_admin


@pytest.fixture(scope="session")
def travel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DjangoApp]:
    """The travel agency's Django admin, seeded (tests.apps.travel.seed)."""
    with django_admin(tmp_path_factory.mktemp("travel")) as app:
        yield app


@pytest.fixture(scope="session")
def agency(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DatasetteApp]:
    """Datasette over the agency's flights (tests.apps.servers.FLIGHTS)."""
    with datasette(tmp_path_factory.mktemp("agency")) as app:
        yield app


@pytest.fixture
async def signed_in(tab: Tab, travel: DjangoApp) -> Tab:
    """The test's tab holding the seeded signed-in session of the agency (test set-up, not
    the hands: the sign-in form has a test of its own)."""
    name, value = travel.session_cookie
    await tab.send("Network.setCookie", {"name": name, "value": value, "url": travel.url})
    return tab


@pytest.fixture
async def signed_out(tab: Tab, travel: DjangoApp) -> Tab:
    """The test's tab with no session of the agency (the shared browser may hold one)."""
    name, _ = travel.session_cookie
    await tab.send("Network.deleteCookies", {"name": name, "url": travel.url})
    return tab


@pytest.fixture(autouse=True)
async def _no_cookies_left(tab: Tab) -> AsyncIterator[None]:
    """The session's browser is shared with the other test files of this worker: the apps'
    cookies (a session, a CSRF token, on 127.0.0.1 whatever the port) go with each test."""
    yield
    if not tab.closed:
        await tab.send("Network.clearBrowserCookies")
