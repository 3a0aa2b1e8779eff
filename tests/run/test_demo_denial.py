"""Denial in scripted plans and in the demo: a denied step is explained and the plan
follows its ``on_deny``; approving all clicks and types leaves only real commitments."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anthropic.types import MessageParam

from core.demo import DemoSite, start_demo_site
from core.model import ModelConfigError
from core.result import DENIED_BY_PERSON, ActionResult
from core.run.agent import format_result
from core.run.events import EventSink, RunFinished, Supervisor
from core.run.session import run_session
from tests.helpers.scripted import DIGEST, next_call, plan, state_message
from tests.helpers.tui_driver import wait_until
from tui.app import HandrailApp
from tui.cli.demo import demo_settings
from tui.cli.main import build_parser
from tui.screens.approval import ApprovalScreen
from tui.screens.human_pause import HumanPauseScreen

# End to end: whole actions or runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow


def after(
    messages: list[MessageParam], tool_use_id: str, result: ActionResult
) -> list[MessageParam]:
    """The conversation once the agent ran (or refused) the call ``tool_use_id``."""
    return [
        *messages,
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": tool_use_id, "name": "click", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": tool_use_id,
                    "content": format_result(result, vision=False),
                    "is_error": not result.ok,
                },
                {"type": "text", "text": DIGEST},
            ],
        },
    ]


DENIED = ActionResult.failure(f"{DENIED_BY_PERSON} (not that one). Choose another way.")
DONE = ActionResult(ok=True, message="Clicked.")

PLAN = "\n".join(
    [
        '{"tool": "click", "target": "Sort by price", "on_deny": "skip"}',
        '{"tool": "click", "target": "Details", "on_deny": {"tool": "click", "target": "From"}}',
        '{"tool": "click", "target": "Book now and pay later", "on_deny": "finish"}',
        '{"tool": "click", "target": "Details"}',
    ]
)


async def _first(tmp_path: Path) -> tuple[Any, list[MessageParam]]:
    model = plan(tmp_path, PLAN)
    messages = state_message()
    await next_call(model, messages)
    return model, messages


async def test_skip_goes_on_with_the_next_step(tmp_path: Path) -> None:
    model, messages = await _first(tmp_path)
    name, params = await next_call(model, after(messages, "toolu_plan_001", DENIED))
    assert (name, params["index"]) == ("click", 10)


async def test_an_alternative_step_runs_instead_and_says_why(tmp_path: Path) -> None:
    model, messages = await _first(tmp_path)
    await next_call(model, after(messages, "toolu_plan_001", DONE))
    name, params = await next_call(model, after(messages, "toolu_plan_002", DENIED))
    assert (name, params["index"]) == ("click", 12)
    assert "denied step 2" in str(params["reason"])


async def test_finish_ends_unsuccessfully_naming_the_step(tmp_path: Path) -> None:
    model, messages = await _first(tmp_path)
    await next_call(model, after(messages, "toolu_plan_001", DONE))
    await next_call(model, after(messages, "toolu_plan_002", DONE))
    name, params = await next_call(model, after(messages, "toolu_plan_003", DENIED))
    assert name == "finish" and params["success"] is False
    assert "denied step 3 (click 'Book now and pay later')" in str(params["answer"])


async def test_by_default_a_denied_step_pauses_with_a_clear_question(tmp_path: Path) -> None:
    model = plan(
        tmp_path, '{"tool": "click", "target": "Details"}\n{"tool": "click", "target": "Sort"}'
    )
    messages = state_message()
    await next_call(model, messages)
    name, params = await next_call(model, after(messages, "toolu_plan_001", DENIED))
    assert name == "ask_human"
    assert "You denied step 1 (click 'Details')" in str(params["question"])
    # On resume the plan goes on with its next step.
    resumed = after(
        messages, "toolu_plan_002", ActionResult(ok=True, message="The person is back.")
    )
    name, params = await next_call(model, resumed)
    assert (name, params["index"]) == ("click", 14)


async def test_a_failure_that_is_not_a_denial_does_not_trigger_on_deny(tmp_path: Path) -> None:
    model, messages = await _first(tmp_path)
    await next_call(model, after(messages, "toolu_plan_001", DONE))
    # The page's text quoting the denial words is not the agent's verdict.
    failed = ActionResult.failure("the element moved", f"the element moved\n{DENIED_BY_PERSON}")
    name, params = await next_call(model, after(messages, "toolu_plan_002", failed))
    assert (name, params["index"]) == ("click", 11)


def test_a_bad_on_deny_is_a_config_error_naming_the_line(tmp_path: Path) -> None:
    with pytest.raises(ModelConfigError, match=r"demo.jsonl:1: \"on_deny\" must be"):
        plan(tmp_path, '{"tool": "click", "target": "x", "on_deny": "retry"}')


# --- the demo, end to end -------------------------------------------------------------------------


@pytest.fixture
def demo_site() -> Iterator[DemoSite]:
    site = start_demo_site()
    yield site
    site.stop()


@pytest.fixture(autouse=True)
def no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


def demo_app(tmp_path: Path, site: DemoSite) -> HandrailApp:
    args = build_parser().parse_args(["demo", "--headless", "--audit-dir", str(tmp_path / "logs")])
    settings = demo_settings(args, site_url=site.url, work=tmp_path)

    async def start(sink: EventSink, supervisor: Supervisor) -> RunFinished:
        return await run_session(settings, supervisor=supervisor, sinks=[sink])

    return HandrailApp(start, config_dir=tmp_path / "config", persist_theme=False)


async def test_denying_the_demos_first_step_pauses_and_names_it(
    tmp_path: Path, demo_site: DemoSite
) -> None:
    app = demo_app(tmp_path, demo_site)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), timeout=60)
        await pilot.pause(0.05)
        await pilot.press("n", "enter")  # deny, without a note
        await wait_until(pilot, lambda: isinstance(app.screen, HumanPauseScreen), timeout=60)
        pause = app.screen
        assert isinstance(pause, HumanPauseScreen)
        assert "You denied step 1 (type 'From')" in pause.request.detail
        await pilot.press("x")
        await wait_until(pilot, lambda: app.exit_code is not None, timeout=30)
    assert app.exit_code == 130


async def test_approving_all_clicks_and_types_leaves_only_commitments(
    tmp_path: Path, demo_site: DemoSite
) -> None:
    app = demo_app(tmp_path, demo_site)
    asked: list[tuple[str, bool, str]] = []
    approved_all: set[str] = set()
    async with app.run_test(size=(140, 44)) as pilot:
        while not isinstance(app.screen, HumanPauseScreen):
            await wait_until(
                pilot, lambda: isinstance(app.screen, ApprovalScreen | HumanPauseScreen), timeout=60
            )
            screen = app.screen
            if isinstance(screen, ApprovalScreen):
                request = screen.request
                name = request.action.name
                await pilot.pause(0.05)
                if name in ("click", "type") and name not in approved_all:
                    approved_all.add(name)
                    await pilot.press("A")
                else:
                    asked.append((name, request.risky, f"{request.why}: {request.element_line}"))
                    await pilot.press("a")
                await wait_until(pilot, lambda s=screen: app.screen is not s, timeout=30)
        await pilot.press("x")
        await wait_until(pilot, lambda: app.exit_code is not None, timeout=30)
    assert approved_all == {"click", "type"}
    # What still asks: the two select_option steps (another kind: one press of A each would
    # cover them too) and the plan's three submit buttons, each a real commitment.
    kinds = sorted(name for name, _risky, _why in asked)
    assert kinds == ["click", "click", "click", "select_option", "select_option"], asked
    commitments = [why for name, risky, why in asked if name == "click" and risky]
    assert len(commitments) == 3, asked
    assert all(why.startswith("submits a form") and "type=submit" in why for why in commitments)
