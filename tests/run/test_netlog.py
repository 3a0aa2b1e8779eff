"""The network log on a real page: what a hand-over, a binary body, a flood of requests and
a data: URL leave in the entries (core/run/netlog.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from core.browser.browser import Browser, Tab
from core.run import netlog
from core.run.netlog import NetworkLog
from core.secrets import Secret, Secrets
from tests.helpers import load, page_eval
from tests.helpers.site_server import FixtureSite

pytestmark = pytest.mark.slow

SECRETS = Secrets([Secret("BLOB", "SECRET-BYTES-42")])


@pytest.fixture
async def recording(browser: Browser, tab: Tab, site: FixtureSite) -> AsyncIterator[NetworkLog]:
    log = NetworkLog(browser, None, scrub=SECRETS.scrub_json, keep_full=True, content="embed")
    await log.install()
    await load(tab, site.url("/har/result.html"))  # (no favicon: it names a data: icon)
    await log.settled()
    log.take()
    yield log
    log.close()


def full_entries(log: NetworkLog) -> list[dict[str, Any]]:
    return log._full  # what network.har is made of


async def fetch(tab: Tab, log: NetworkLog, script: str) -> None:
    # The page's promise settles after Chromium reported the request's end on the same
    # session, so its entry is made by now; reading a body is the one thing left.
    await page_eval(tab, script)
    await log.settled()


async def test_nothing_sent_or_received_during_a_hand_over_keeps_a_body(
    tab: Tab, recording: NetworkLog
) -> None:
    recording.handover = True
    await fetch(
        tab,
        recording,
        "fetch('/har/post', {method: 'POST', headers: {'Content-Type': "
        "'application/x-www-form-urlencoded'}, body: 'note=typed-by-the-person'})"
        ".then(r => r.text())",
    )
    recording.handover = False
    await fetch(
        tab,
        recording,
        "fetch('/har/post', {method: 'POST', headers: {'Content-Type': "
        "'application/x-www-form-urlencoded'}, body: 'note=typed-by-the-model'})"
        ".then(r => r.text())",
    )
    during, after = [e for e in full_entries(recording) if e["url"].endswith("/har/post")]
    assert during["handover"] is True and "post_data" not in during
    assert "hand" in during["content"]["comment"] and "text" not in during["content"]
    assert after["post_data"]["text"] == "note=typed-by-the-model"
    assert "typed-by-the-model" in after["content"]["text"]  # the page's answer echoes it
    _pages, short = recording.take()
    assert [e.get("handover", False) for e in short if e["url"].endswith("/har/post")] == [
        True,
        False,
    ]


async def test_a_binary_body_is_kept_only_when_no_secret_shows_in_its_bytes(
    tab: Tab, recording: NetworkLog
) -> None:
    await fetch(
        tab,
        recording,
        "Promise.all(['/har/with-secret.bin', '/har/plain.bin'].map(u => "
        "fetch(u).then(r => r.arrayBuffer())))",
    )
    by_name = {e["url"].rsplit("/", 1)[1]: e for e in full_entries(recording)}
    assert by_name["with-secret.bin"]["content"] == {"comment": "not kept: it held a secret"}
    kept = by_name["plain.bin"]["content"]
    assert kept["encoding"] == "base64" and kept["text"]


async def test_a_page_that_floods_requests_fills_the_log_only_to_its_limit(
    tab: Tab, recording: NetworkLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(netlog, "MAX_ENTRIES", len(full_entries(recording)) + 3)
    await fetch(
        tab,
        recording,
        "Promise.all([1,2,3,4,5,6,7].map(i => fetch('/har/data.json?n=' + i).then(r => r.text())))",
    )
    _pages, short = recording.take()
    assert len(short) == 3 and recording.dropped == 4


async def test_data_urls_are_not_requests_of_the_network(tab: Tab, recording: NetworkLog) -> None:
    await fetch(
        tab,
        recording,
        "fetch('data:text/plain,' + 'x'.repeat(50000)).then(r => r.text())"
        ".then(() => fetch('/har/data.json?after')).then(r => r.text())",
    )
    _pages, short = recording.take()
    assert [e["url"].rsplit("/", 1)[1] for e in short] == ["data.json?after"]


def test_requests_a_page_holds_open_are_kept_only_to_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A page can open requests that never end (a server that never answers): the ones
    waiting are bounded like the finished ones, so the page cannot grow the run's memory."""

    class Session:
        session_id = "s1"

    log = NetworkLog(None, None, scrub=SECRETS.scrub_json)  # type: ignore[arg-type]
    monkeypatch.setattr(netlog, "MAX_ENTRIES", 50)
    for n in range(80):
        log._sent(
            Session(),  # type: ignore[arg-type]
            "tab",
            {
                "requestId": f"r{n}",
                "request": {"url": f"http://127.0.0.1:1/never?n={n}", "method": "GET"},
                "type": "Fetch",
                "wallTime": 1_700_000_000.0,
                "timestamp": 1.0,
            },
        )
    assert len(log._live) == 50 and log.dropped == 30
    log.end()  # the run ends: the 50 are written as still open
    _pages, short = log.take()
    assert len(short) == 50 and all(e["error"] == "still open when the run ended" for e in short)
