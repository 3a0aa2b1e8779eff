"""Tasks a person would give handrail on a real Django admin (the travel agency of
tests/apps/travel), each done with handrail's own eyes and hands (the names the digest
shows) and checked against the application's own state, through its ORM (issue 26)."""

from __future__ import annotations

import pytest

from core.browser.browser import Tab
from core.hands import Page
from tests.apps.servers import DjangoApp
from tests.helpers import index_of

pytestmark = pytest.mark.slow


async def test_signing_in_through_the_form(page: Page, signed_out: Tab, travel: DjangoApp) -> None:
    assert travel.orm("print(json.dumps(str(User.objects.get().last_login)))") == "None"
    result = await page.navigate(travel.admin())
    assert result.ok, result.message
    snap, _ = await page.observe()
    assert "/admin/login/" in snap.url, snap.text
    result = await page.type(index_of(snap, "Username:"), travel.username)
    assert result.ok, result.message
    result = await page.type(index_of(snap, "Password:"), travel.password, secret=True)
    assert result.ok, result.message
    result = await page.click(index_of(snap, "Log in"))
    assert result.ok, result.message
    snap, _ = await page.observe()
    assert snap.url == travel.admin(), snap.text
    assert "Welcome, admin." in snap.text
    assert travel.orm("print(json.dumps(User.objects.get().last_login is not None))") is True
