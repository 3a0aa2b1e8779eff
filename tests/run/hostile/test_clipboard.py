"""The hostile corpus, the clipboard: a page copies a secret typed on its own site to the
clipboard, and the model (obeying a page) pastes it on another allowed host. A run's
clipboard is its own: while a scoped secret is configured, a paste is refused wherever that
secret may not be typed, whichever paste chord is used.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.fake_anthropic import FakeAnthropic
from tests.helpers.hostile import SITE_HOST, attacker_origin, click, run_hostile, type_into
from tests.helpers.site_server import FixtureSite

# End to end: whole runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow

CANARY = "clip-7c41e9b2aa"


@pytest.mark.parametrize("keys", ["Control+V", "Meta+V", "Control+Shift+V", "Shift+Insert"])
async def test_a_secret_copied_on_its_site_is_never_pasted_on_another_host(
    tmp_path: Path,
    site: FixtureSite,
    attacker: FixtureSite,
    fake: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
    keys: str,
) -> None:
    monkeypatch.setenv("CLIP_CANARY", CANARY)
    elsewhere = attacker_origin(attacker) + "/guard/clip-paste.html"
    run = await run_hostile(
        tmp_path,
        fake,
        site.url("/guard/clip-copy.html"),
        [
            type_into("API token", "<secret:TOKEN>"),
            lambda view: ("navigate", {"url": elsewhere}),
            click("Notes"),
            lambda view: ("press_key", {"keys": keys}),
        ],
        allow_domains=(SITE_HOST, "localhost"),
        secrets=(f"TOKEN=CLIP_CANARY@{SITE_HOST}",),
    )
    [typed] = run.done("type")
    assert typed.result.ok  # on its own site, the secret went in (and the page copied it)
    [pressed] = run.done("press_key")
    assert not pressed.result.ok
    assert "pasting is refused on this page" in pressed.result.message
    assert "<secret:TOKEN>" in pressed.result.message and CANARY not in pressed.result.message
    reported = [str(p.json_body) for p in attacker.posts("/clip/report")]
    assert not any(CANARY in r for r in reported), reported


async def test_a_paste_on_the_secrets_own_site_still_works(
    tmp_path: Path,
    site: FixtureSite,
    attacker: FixtureSite,
    fake: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CLIP_CANARY", CANARY)
    run = await run_hostile(
        tmp_path,
        fake,
        site.url("/guard/clip-copy.html"),
        [
            type_into("API token", "<secret:TOKEN>"),
            lambda view: ("navigate", {"url": site.url("/guard/clip-paste.html")}),
            click("Notes"),
            lambda view: ("press_key", {"keys": "Control+V"}),
        ],
        secrets=(f"TOKEN=CLIP_CANARY@{SITE_HOST}",),
    )
    [pressed] = run.done("press_key")
    assert pressed.result.ok, pressed.result.message
