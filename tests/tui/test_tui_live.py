"""The keyboard workflow against a real run: the agent loop, a fake Messages API answered by
the real SDK, headless Chromium and the fixture site. Each test checks the screen and the
effect (what the server received, what the audit log says, what the model was told)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input

from core.audit import read_log
from core.guard.rules import builtin_policy
from core.run.events import EventSink, RunFinished, Supervisor
from core.run.session import RunSettings, prepare, run_session
from tests.helpers.agent_run import MODEL, act
from tests.helpers.fake_anthropic import FakeAnthropic
from tests.helpers.site_server import FixtureSite
from tests.helpers.tui_driver import wait_until
from tui.app import HandrailApp
from tui.screens.approval import ApprovalScreen
from tui.screens.human_pause import HumanPauseScreen

# End to end: whole actions or runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow

WAIT = 60.0  # generous: a real browser on a loaded two-core machine


def live_app(
    tmp_path: Path, site: FixtureSite, page: str = "/agent/react-form.html"
) -> HandrailApp:
    settings = RunSettings(
        task="Fill in the contact form as Ada",
        start_url=site.url(page),
        model_spec=MODEL,
        approve="ask",
        headless=True,
        profile=tmp_path / "profile",
        audit_dir=tmp_path / "logs",
    )

    async def start(sink: EventSink, supervisor: Supervisor) -> RunFinished:
        prepared = await prepare(settings)
        return await run_session(settings, supervisor=supervisor, sinks=[sink], prepared=prepared)

    return HandrailApp(start, config_dir=tmp_path / "config", persist_theme=False)


def rounds(tmp_path: Path) -> list[dict[str, Any]]:
    (log,) = (tmp_path / "logs").glob("*.jsonl")
    return [r for r in read_log(log).records if r["type"] == "round"]


def last_record(tmp_path: Path) -> dict[str, Any]:
    (log,) = (tmp_path / "logs").glob("*.jsonl")
    return read_log(log).records[-1]


async def approval(pilot: Any, app: HandrailApp) -> ApprovalScreen:
    await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), timeout=WAIT)
    screen = app.screen
    assert isinstance(screen, ApprovalScreen)
    await pilot.pause(0.05)  # let the new modal take focus before keys arrive
    return screen


async def finished(pilot: Any, app: HandrailApp) -> None:
    await wait_until(pilot, lambda: app.exit_code is not None, timeout=WAIT)


async def test_approving_with_a_lets_the_actions_run(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    site.clear()
    for step in (
        act("type", "Your name", text="Ada"),
        act("click", "Send message"),
        act("finish", success=True, answer="sent"),
    ):
        fake.add(step)
    app = live_app(tmp_path, site)
    async with app.run_test(size=(140, 44)) as pilot:
        screen = await approval(pilot, app)
        assert screen.request.action.name == "type"
        await pilot.press("a")
        screen = await approval(pilot, app)
        assert screen.request.action.name == "click" and screen.request.risky
        await pilot.press("a")
        await finished(pilot, app)
        assert app.exit_code == 0
        assert app.run_screen is not None and len(app.run_screen.run_view.rounds) == 3
    assert [p.json_body["name"] for p in site.posts("/agent/submit")] == ["Ada"]
    assert [r["approval"]["decision"] for r in rounds(tmp_path)] == [
        "approved",
        "approved",
        "not_needed",
    ]
    assert rounds(tmp_path)[0]["approval"]["by"] == "person"


async def test_a_denial_note_reaches_the_model(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    site.clear()
    fake.add(act("click", "Send message"))
    fake.add(act("finish", success=False, answer="left unsent"))
    app = live_app(tmp_path, site)
    async with app.run_test(size=(140, 44)) as pilot:
        await approval(pilot, app)
        await pilot.press("d", *"fill the name first", "enter")
        await finished(pilot, app)
        assert app.exit_code == 1
    assert site.posts("/agent/submit") == []
    assert "fill the name first" in json.dumps(fake.message_bodies[-1]["messages"][-1])
    assert rounds(tmp_path)[0]["approval"] == {
        "decision": "denied",
        "by": "person",
        "note": "fill the name first",
        # --approve ask: the built-in policy's default asked.
        "rule": {
            "index": 0,
            "text": 'default = "ask"',
            "policy_sha256": builtin_policy("ask").sha256,
        },
    }


async def test_editing_the_text_types_the_edited_text(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    site.clear()
    for step in (
        act("type", "Your name", text="Ada"),
        act("click", "Send message"),
        act("finish", success=True, answer="sent"),
    ):
        fake.add(step)
    app = live_app(tmp_path, site)
    async with app.run_test(size=(140, 44)) as pilot:
        screen = await approval(pilot, app)
        await pilot.press("e")
        keys = list(screen.request.action.params)
        field = screen.query_one(f"#edit-{keys.index('text')}", Input)
        field.value = "Grace Hopper"
        field.focus()
        await pilot.press("enter")
        await approval(pilot, app)
        await pilot.press("a")
        await finished(pilot, app)
    assert [p.json_body["name"] for p in site.posts("/agent/submit")] == ["Grace Hopper"]
    first = rounds(tmp_path)[0]["approval"]
    assert first["decision"] == "edited" and first["edited_params"]["text"] == "Grace Hopper"


async def test_approve_all_of_a_kind_never_covers_a_risky_action(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    site.clear()
    for step in (
        act("type", "Your name", text="Ada"),
        act("type", "API token", text="tok-1"),
        act("click", "Send message"),
        act("finish", success=True, answer="sent"),
    ):
        fake.add(step)
    app = live_app(tmp_path, site)
    asked: list[str] = []
    async with app.run_test(size=(140, 44)) as pilot:
        screen = await approval(pilot, app)
        asked.append(screen.request.action.name)
        await pilot.press("A")
        screen = await approval(pilot, app)
        asked.append(screen.request.action.name)
        assert screen.request.risky
        await pilot.press("a")
        await finished(pilot, app)
    assert asked == ["type", "click"]
    assert [r["approval"]["decision"] for r in rounds(tmp_path)][:3] == [
        "approved",
        "auto",
        "approved",
    ]
    assert site.posts("/agent/submit")[0].json_body["token"] == "tok-1"


async def test_abort_at_an_approval_ends_the_run_and_closes_the_log(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    site.clear()
    fake.add(act("click", "Send message"))
    app = live_app(tmp_path, site)
    async with app.run_test(size=(140, 44)) as pilot:
        await approval(pilot, app)
        await pilot.press("x")
        await finished(pilot, app)
        assert app.exit_code == 130
    assert site.posts("/agent/submit") == []
    end = last_record(tmp_path)
    assert end["type"] == "run_end" and end["outcome"] == "aborted"


async def test_resume_after_a_human_pause_continues_the_run(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    fake.add(act("finish", success=True, answer="signed in by the person"))
    app = live_app(tmp_path, site, page="/agent/login.html")
    async with app.run_test(size=(140, 44)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HumanPauseScreen), timeout=WAIT)
        screen = app.screen
        assert isinstance(screen, HumanPauseScreen) and screen.request.kind == "password"
        # Nothing reached the model while the person was in control.
        assert fake.message_bodies == []
        await pilot.press("r")
        await finished(pilot, app)
        assert app.exit_code == 0
    told = json.dumps(fake.message_bodies[0]["messages"])
    assert "handed control back" in told
    records = read_log(next((tmp_path / "logs").glob("*.jsonl"))).records
    kinds = [r["type"] for r in records]
    assert kinds.index("human_pause") < kinds.index("human_resume") < kinds.index("round")


async def test_the_model_pane_shows_the_text_as_the_model_writes_it(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    """The real SDK streams the reply from the fake Messages API, which stops after its
    first chunk: the pane shows the half written so far under the running clock, then the
    whole reply; the log keeps only the whole reply."""
    import threading

    from tests.helpers.fake_anthropic import MessageReply, text_block, tool_use_block

    hold = threading.Event()
    words = "The contact form is there, so I am done with this task."
    fake.add(
        MessageReply(
            [
                text_block(words),
                tool_use_block(
                    "finish", {"success": True, "answer": "seen", "reason": "done"}, "tu_1"
                ),
            ],
            hold=hold,
        )
    )
    app = live_app(tmp_path, site)
    try:
        async with app.run_test(size=(160, 45)) as pilot:
            await wait_until(
                pilot,
                lambda: app.run_screen is not None and app.screen is app.run_screen,
                timeout=WAIT,
            )
            screen = app.run_screen
            assert screen is not None
            await pilot.pause()
            pane = screen.panes.pane("model")
            half = words[: len(words) // 2]
            await wait_until(pilot, lambda: half in pane.plain, timeout=WAIT)
            shown = pane.plain
            assert "the model is thinking" in shown and "text (so far)" in shown, shown
            assert words not in shown
            hold.set()
            await finished(pilot, app)
            await wait_until(pilot, lambda: words in pane.plain, timeout=WAIT)
            assert "so far" not in pane.plain
    finally:
        hold.set()
    (log,) = (tmp_path / "logs").glob("*.jsonl")
    assert "so far" not in log.read_text()
    [first] = rounds(tmp_path)
    assert first["model_output"][0]["text"] == words
