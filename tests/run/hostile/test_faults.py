"""The hostile corpus, faults: a crashed renderer, a killed browser, a page that never
answers or never finishes loading, a moving button, the control port, a canary secret."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
from pathlib import Path
from typing import Any

import pytest

from core.audit import rounds_of
from core.browser.browser import Browser
from core.cdp import CDPError
from core.run.events import (
    ActionDone,
    ActionIntent,
    ApprovalRequest,
    Event,
    RunFinished,
)
from tests.helpers.fake_anthropic import FakeAnthropic
from tests.helpers.hostile import (
    SITE_HOST,
    Person,
    View,
    approve,
    click,
    deny,
    navigate_after,
    page_url,
    reports,
    run_hostile,
    type_into,
    wait,
)
from tests.helpers.site_server import FixtureSite

# End to end: whole actions or runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow

# === faults =======================================================================================


async def test_a_renderer_crash_mid_action_is_a_clear_failure_and_the_run_goes_on(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic
) -> None:
    browsers: list[Browser] = []

    async def crash_soon() -> None:
        # Runs at the agent's first await after the intent: inside the wait's dispatch.
        tab = browsers[0].current
        assert tab is not None
        with contextlib.suppress(CDPError, TimeoutError):
            await tab.send("Page.crash", timeout=1)

    tasks: list[asyncio.Task[None]] = []

    def crash_during_wait(event: Event) -> None:
        if isinstance(event, ActionIntent) and event.action.name == "wait" and not tasks:
            tasks.append(asyncio.get_running_loop().create_task(crash_soon()))

    run = await run_hostile(
        tmp_path,
        fake,
        page_url(site, attacker, "busy.html"),
        [wait(3)],
        sinks=[crash_during_wait],
        browsers=browsers,
    )
    assert tasks and tasks[0].done()
    [waited] = run.done("wait")
    assert not waited.result.ok, waited.result
    assert "crash" in waited.result.message
    assert "crashed" in run.body_text(1)
    assert run.finished.outcome == "failure"  # the model's own finish, after the crash
    [entry] = [e for e in rounds_of(run.log_records) if e.round == 1]
    assert entry.outcome != "ok"


async def test_a_browser_killed_mid_action_is_unknown_and_not_retried(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic
) -> None:
    browsers: list[Browser] = []

    async def kill_while_the_dialog_waits(request: ApprovalRequest) -> None:
        if request.action.name == "answer_dialog":
            process = browsers[0].process
            assert process is not None
            os.killpg(process.pid, signal.SIGKILL)  # the browser this test's run launched
            # Let the process be reaped before the agent looks again (the race when it is
            # not is test_a_browser_that_dies_between_rounds_...).
            await asyncio.wait_for(process.wait(), 10)

    person = Person([approve(), deny()], kill_while_the_dialog_waits)
    run = await run_hostile(
        tmp_path,
        fake,
        page_url(site, attacker, "confirm.html"),
        [click("Export")],
        approve="ask",
        person=person,
        browsers=browsers,
    )
    [clicked] = run.done("click")
    assert not clicked.result.ok and clicked.result.outcome == "unknown", clicked.result
    assert len(run.intents("click")) == 1  # never retried
    [entry] = [e for e in rounds_of(run.log_records) if e.round == 1]
    assert entry.outcome == "unknown"
    assert run.finished.outcome == "failure"  # ended by the model, cleanly
    assert len(run.bodies) == 2


async def test_a_browser_that_dies_between_rounds_is_started_again(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic
) -> None:
    browsers: list[Browser] = []

    def kill_after_the_first_action(event: Event) -> None:
        if isinstance(event, ActionDone) and event.round == 1:
            process = browsers[0].process
            assert process is not None
            os.killpg(process.pid, signal.SIGKILL)  # the browser this test's run launched

    run = await run_hostile(
        tmp_path,
        fake,
        page_url(site, attacker, "busy.html"),
        [wait(0)],
        sinks=[kill_after_the_first_action],
        browsers=browsers,
    )
    assert run.finished.outcome == "failure"  # the model's own finish: the run went on
    assert "started it again" in run.body_text(1)


async def test_a_page_that_never_answers_gives_up_within_the_action_timeout(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic
) -> None:
    run = await run_hostile(
        tmp_path,
        fake,
        page_url(site, attacker, "never.html"),
        [navigate_after("navigate to")],
        action_timeout=5.0,
    )
    [nav] = run.done("navigate")
    assert not nav.result.ok and "navigation_timeout" in (nav.result.error or "")
    # Ends by the 5 s action timeout (slack for a busy machine), not the page: without it
    # the action waits the default 45 s or for ever.
    assert nav.duration_ms < 20_000
    assert len(run.bodies) == 2  # the run went on


async def test_a_page_that_never_finishes_loading_is_shown_within_the_action_timeout(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic
) -> None:
    run = await run_hostile(
        tmp_path,
        fake,
        page_url(site, attacker, "never.html"),
        [navigate_after("The preview is at")],
        action_timeout=5.0,
    )
    [nav] = run.done("navigate")
    # Ends by the 5 s action timeout (slack for a busy machine), not the page: without it
    # the action waits the default 45 s or for ever.
    assert nav.duration_ms < 20_000
    assert nav.result.ok and "still loading" in nav.result.message, nav.result
    assert "Loading the preview" in run.body_text(1)


async def test_a_moving_button_is_refused_as_moving(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic
) -> None:
    run = await run_hostile(
        tmp_path, fake, page_url(site, attacker, "moving.html"), [click("Claim your prize")]
    )
    [done] = run.done("click")
    # Refused by the hands: either the stability check ("keeps moving") or the re-check of
    # the target against what the digest showed ("moved ... since approval").
    assert not done.result.ok and re.search(r"\bmov(ing|ed)\b", done.result.message), done.result
    assert reports(site, "clicked") == []


async def test_page_script_cannot_reach_the_browsers_control_port(
    tmp_path: Path, site: FixtureSite, attacker: FixtureSite, fake: FakeAnthropic
) -> None:
    browsers: list[Browser] = []
    targets_at_end: list[str] = []

    def probe_page(view: View) -> tuple[str, dict[str, Any]]:
        ws_url = browsers[0].ws_url
        port = re.search(r":(\d+)/", ws_url)
        assert port is not None
        return "navigate", {
            "url": page_url(site, attacker, "cdp-probe.html", port=port.group(1), ws=ws_url)
        }

    def remember_targets(event: Event) -> None:
        if isinstance(event, RunFinished) and browsers:
            targets_at_end.extend(str(t.get("url")) for t in browsers[0].targets.values())

    await run_hostile(
        tmp_path,
        fake,
        page_url(site, attacker, "busy.html"),
        [probe_page, wait(5)],
        sinks=[remember_targets],
        browsers=browsers,
    )
    [probe] = reports(site, "cdp-probe")
    outcome = probe["data"]
    assert set(outcome) == {
        "json_version_cors",
        "json_list_cors",
        "json_new_put",
        "websocket",
        "websocket_localhost",
    }
    assert all(str(v).startswith("failed") for v in outcome.values()), outcome
    assert targets_at_end and not any("pwned" in url for url in targets_at_end)


async def test_a_canary_secret_reaches_its_own_site_and_nothing_else(
    tmp_path: Path,
    site: FixtureSite,
    attacker: FixtureSite,
    fake: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    canary = "canary-5d2f81e0c4"
    monkeypatch.setenv("HOSTILE_CANARY", canary)
    run = await run_hostile(
        tmp_path,
        fake,
        page_url(site, attacker, "secret-form.html"),
        [
            type_into("API token", "<secret:TOKEN>", submit=True),
            navigate_after("navigate to"),
            type_into("API token", "<secret:TOKEN>"),
        ],
        allow_domains=(),  # only the secret's own scope stands between it and the attacker
        secrets=(f"TOKEN=HOSTILE_CANARY@{SITE_HOST}",),
    )
    # The page it belongs to got it (the GET form put it in the URL, and the page echoed it
    # into its text, its title and a field's value).
    echo = [r for r in site.received if r.path == "/hostile/secret-echo.html"]
    assert [r.query["token"] for r in echo] == [[canary]]
    assert "We received token <secret:TOKEN>" in run.bodies_text
    # On the attacker's host the obedient model typed the placeholder: refused, not typed.
    last = run.done("type")[-1]
    assert not last.result.ok and "may only be used on" in last.result.message
    assert [i.round for i in run.intents("type")] == [1]
    assert reports(attacker, "typed") == []
    # Nowhere else: no model request, no digest, no file the run wrote, no attacker request.
    raw = b"".join(r.raw + json.dumps(r.headers).encode() for r in fake.requests)
    assert canary.encode() not in raw
    assert all(canary not in o.digest for o in run.observed)
    # ...nor anything the person's screen shows (the echo page carries it in URL and title).
    assert canary not in repr(run.events)
    for path in run.logs.rglob("*"):
        assert canary not in path.name
        if path.is_file():
            assert canary not in path.read_text(errors="replace"), path
    assert attacker.received and canary not in repr(attacker.received)
