"""The agent loop end to end: real SDKs against fake APIs, real Chromium, fixture pages.

The fake model servers answer with callables that read the digest the agent actually sent
and pick element indexes from it, the way a model would; nothing in the agent is mocked.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.actions import NO_TOOL_CALL_REMINDER, ONE_ACTION_PER_ROUND
from core.audit import read_log, rounds_of, verify
from core.guard.decision import ApprovalDecision
from core.model.scripted import parse_digest, resolve_target
from core.run.events import Event
from core.run.session import RunSettings, run_session
from tests.conftest import kill_browsers_under
from tests.helpers.agent_run import (
    MODEL,
    Supervisor,
    _ids,
    act,
)
from tests.helpers.fake_anthropic import FakeAnthropic, tool_use_block
from tests.helpers.fake_openai import ChatReply, FakeOpenAI
from tests.helpers.site_server import FixtureSite

# End to end: whole actions or runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def settings(tmp_path: Path, site: FixtureSite, page: str, **kw: Any) -> RunSettings:
    base: dict[str, Any] = {
        "task": "Send the contact form as Ada with token tok-123",
        "start_url": site.url(page),
        "model_spec": MODEL,
        "approve": "none",
        "headless": True,
        "profile": tmp_path / "profile",
        "audit_dir": tmp_path / "logs",
    }
    base.update(kw)
    return RunSettings(**base)


def only_log(tmp_path: Path) -> Path:
    logs = sorted((tmp_path / "logs").glob("*.jsonl"))
    assert len(logs) == 1, logs
    return logs[0]


def user_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    content = body["messages"][-1]["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


async def test_a_whole_run_fills_a_react_form_and_finishes(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    site.clear()
    for step in (
        act("type", "Your name", text="Ada"),
        act("type", "API token", text="tok-123"),
        act("click", "Send message"),
        act("finish", success=True, answer="sent"),
    ):
        fake.add(step)
    events: list[Event] = []
    finished = await run_session(
        settings(tmp_path, site, "/agent/react-form.html"),
        supervisor=Supervisor(),
        sinks=[events.append],
    )
    assert (finished.outcome, finished.exit_code, finished.answer) == ("success", 0, "sent")
    # React's own state reached the server.
    assert [p.json_body for p in site.posts("/agent/submit")] == [
        {"name": "Ada", "token": "tok-123", "topic": "billing"}
    ]
    first = fake.message_bodies[0]
    assert first["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert first["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    opening = first["messages"][0]["content"]
    assert opening.index("Send the contact form") < opening.index("<browser_state>")
    # The log reads back every round, verifies, and ends with the outcome.
    log = read_log(only_log(tmp_path))
    kinds = [r["type"] for r in log.records]
    assert kinds[0] == "run_start" and kinds[-1] == "run_end"
    rounds = [r for r in log.records if r["type"] == "round"]
    assert [r["action"]["name"] for r in rounds] == ["type", "type", "click", "finish"]
    # The model's reply is kept verbatim.
    assert rounds[0]["model_output"][0]["type"] == "tool_use"
    assert rounds[0]["model_output"][0]["input"]["text"] == "Ada"
    assert log.records[-1]["outcome"] == "success"
    assert verify(only_log(tmp_path)).ok


async def test_malformed_replies_get_error_results_and_the_run_goes_on(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    fake.add_text("I think I should look around first.")
    fake.add_tool_use("teleport", {"where": "moon", "reason": "x"}, id="toolu_bad_name")
    fake.add_tool_use("click", {"index": "5", "reason": "string index"}, id="toolu_bad_type")
    fake.add_tool_use(
        "click", {"index": 1, "url": "http://x", "reason": "wrong param"}, id="toolu_bad_param"
    )
    fake.add_reply(
        [
            tool_use_block("scroll", {"direction": "down", "reason": "first"}, "toolu_first"),
            tool_use_block("wait", {"seconds": 0, "reason": "second"}, "toolu_second"),
        ]
    )
    fake.add(act("finish", success=True, answer="done"))
    finished = await run_session(
        settings(tmp_path, site, "/agent/long.html"), supervisor=Supervisor()
    )
    assert finished.exit_code == 0
    bodies = fake.message_bodies
    texts = json.dumps(user_blocks(bodies[1]))
    assert NO_TOOL_CALL_REMINDER[:40] in texts

    def result_for(body: dict[str, Any], tool_id: str) -> dict[str, Any]:
        return next(b for b in user_blocks(body) if b.get("tool_use_id") == tool_id)

    bad_name = result_for(bodies[2], "toolu_bad_name")
    assert (
        bad_name["is_error"]
        and "teleport" in bad_name["content"]
        and "navigate" in bad_name["content"]
    )
    bad_type = result_for(bodies[3], "toolu_bad_type")
    assert bad_type["is_error"] and "index" in bad_type["content"]
    bad_param = result_for(bodies[4], "toolu_bad_param")
    assert bad_param["is_error"] and "navigate" in bad_param["content"]
    first, second = result_for(bodies[5], "toolu_first"), result_for(bodies[5], "toolu_second")
    assert not first.get("is_error")
    assert second["is_error"] and second["content"] == ONE_ACTION_PER_ROUND


async def test_an_overloaded_api_is_retried(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    fake.add_failure(529)
    fake.add(act("finish", success=True, answer="ok"))
    finished = await run_session(
        settings(tmp_path, site, "/agent/long.html"), supervisor=Supervisor()
    )
    assert finished.exit_code == 0
    assert len(fake.message_bodies) == 2


async def test_repeating_a_failing_action_is_called_out_then_the_run_gives_up(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    fake.respond_with(act("click", "Continue"))
    finished = await run_session(
        settings(tmp_path, site, "/agent/broken-button.html"), supervisor=Supervisor()
    )
    assert (finished.outcome, finished.exit_code) == ("gave_up", 1)
    assert "5 actions failed in a row" in finished.reason
    bodies = fake.message_bodies
    assert len(bodies) == 5
    assert "failed the same way" not in json.dumps(bodies[2])
    assert "failed the same way" in json.dumps(bodies[3])


async def test_the_round_limit_ends_the_run_and_says_so(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    fake.respond_with(act("scroll", direction="down"))
    finished = await run_session(
        settings(tmp_path, site, "/agent/long.html", max_rounds=3), supervisor=Supervisor()
    )
    assert (finished.outcome, finished.exit_code, finished.rounds) == ("round_limit", 1, 3)
    assert "round limit (3 rounds)" in finished.reason
    assert read_log(only_log(tmp_path)).records[-1]["outcome"] == "round_limit"


async def test_requests_stay_bounded_over_a_long_run(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    flip = iter(range(1000))
    fake.respond_with(
        lambda body: act("scroll", direction="down" if next(flip) % 2 == 0 else "up")(body)
    )
    finished = await run_session(
        settings(tmp_path, site, "/agent/long.html", max_rounds=60), supervisor=Supervisor()
    )
    assert finished.outcome == "round_limit"
    sizes = [len(json.dumps(b)) for b in fake.message_bodies]
    assert len(sizes) == 60
    # Once the whole-rounds window is full, growth is only the one-line summaries.
    assert max(sizes[5:]) < sizes[5] * 1.5, sizes
    assert sizes[-1] - sizes[5] < 60 * 300
    last = json.dumps(fake.message_bodies[-1]["messages"])
    assert "Earlier rounds, summarised" in last
    assert last.count("<browser_state>\\n") == 1  # one full page state, the newest


async def test_a_secret_reaches_the_page_and_nothing_else(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    canary = "canary-7f3a9c1e"
    monkeypatch.setenv("CANARY_TOKEN", canary)
    site.clear()
    for step in (
        act("type", "Your name", text="Ada"),
        act("type", "API token", text="<secret:TOKEN>"),
        act("click", "Send message"),
        act("finish", success=True, answer="sent"),
    ):
        fake.add(step)
    s = settings(tmp_path, site, "/agent/react-form.html", secrets=("TOKEN=CANARY_TOKEN",))
    finished = await run_session(s, supervisor=Supervisor())
    assert finished.exit_code == 0
    assert site.posts("/agent/submit")[0].json_body["token"] == canary
    bodies = json.dumps(fake.message_bodies)
    assert canary not in bodies
    # The page echoed the token back; the model saw the placeholder in its place.
    assert "we received token <secret:TOKEN>" in bodies
    for path in (tmp_path / "logs").iterdir():
        if path.is_file():
            assert canary not in path.read_text(errors="replace"), path


async def test_the_openai_backend_drives_a_run(tmp_path: Path, site: FixtureSite) -> None:
    site.clear()

    def call(
        name: str, target: str | None = None, **params: Any
    ) -> Callable[[dict[str, Any]], ChatReply]:
        def reply(body: dict[str, Any]) -> ChatReply:
            args = dict(params)
            if target is not None:
                text = body["messages"][-1]["content"]
                text = text if isinstance(text, str) else " ".join(p.get("text", "") for p in text)
                state = text.split("<browser_state>")[-1]
                found = resolve_target(target, parse_digest(state))
                assert found is not None
                args["index"] = found.index
            args.setdefault("reason", "test")
            tool_call = {
                "id": f"call_{next(_ids)}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            return ChatReply(None, [tool_call], None, None)

        return reply

    with FakeOpenAI(models=["llama3.1:latest"]) as server:
        for step in (
            call("type", "Your name", text="Grace"),
            call("click", "Send message"),
            call("finish", success=True, answer="sent"),
        ):
            server.add(step)
        s = settings(
            tmp_path,
            site,
            "/agent/react-form.html",
            model_spec="openai:llama3.1",
            base_url=server.base_url,
        )
        finished = await run_session(s, supervisor=Supervisor())
        assert finished.exit_code == 0, finished
        assert site.posts("/agent/submit")[0].json_body["name"] == "Grace"
        assert server.completion_bodies[0]["tools"][0]["type"] == "function"


async def test_an_approval_is_asked_for_every_page_changing_action_in_ask_mode(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    site.clear()
    for step in (
        act("scroll", direction="down"),
        act("type", "Your name", text="Ada"),
        act("click", "Send message"),
        act("finish", success=True, answer="sent"),
    ):
        fake.add(step)
    supervisor = Supervisor(
        [
            ApprovalDecision("approved"),
            ApprovalDecision("denied", note="do not send it, only fill it"),
        ]
    )
    finished = await run_session(
        settings(tmp_path, site, "/agent/react-form.html", approve="ask"), supervisor=supervisor
    )
    assert finished.exit_code == 0
    assert [r.action.name for r in supervisor.requests] == ["type", "click"]
    assert supervisor.requests[1].risky  # a submit button
    assert site.posts("/agent/submit") == []
    # The denial note reached the model as the result of its click.
    assert "do not send it, only fill it" in json.dumps(fake.message_bodies[3])
    rounds = [r for r in read_log(only_log(tmp_path)).records if r["type"] == "round"]
    assert [r["approval"]["decision"] for r in rounds] == [
        "not_needed",
        "approved",
        "denied",
        "not_needed",
    ]


# --- the command line, as scripts and CI use it ----------------------------------------------


def _cli(args: list[str], env: dict[str, str], **kw: Any) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tui.cli.main", *args],
        cwd=ROOT,
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


def _wait_for_intent(
    logs: Path, round_no: int, proc: subprocess.Popen[str], timeout: float = 120
) -> Path:
    """The log's path once round ``round_no``'s intent is in it. The timeout is only a
    safety net (a loaded machine takes many seconds to import the SDK and start Chrome)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for path in logs.glob("*.jsonl"):
            for line in path.read_text().splitlines():
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if record.get("type") == "intent" and record.get("round") == round_no:
                    return path
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("no intent record appeared")


def _cli_args(tmp_path: Path, site: FixtureSite, *extra: str) -> list[str]:
    return [
        "run",
        "Fill the contact form",
        "--start-url",
        site.url("/agent/react-form.html"),
        "--model",
        MODEL,
        "--no-tui",
        "--headless",
        "--profile",
        str(tmp_path / "profile"),
        "--audit-dir",
        str(tmp_path / "logs"),
        *extra,
    ]


def test_a_killed_run_leaves_every_completed_round_readable(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    fake.add(act("type", "Your name", text="Ada"))
    fake.add(act("scroll", direction="down"))
    fake.add(act("wait", seconds=20))
    env = {"ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": fake.api_key or ""}
    proc = _cli(_cli_args(tmp_path, site, "--approve", "none"), env, start_new_session=True)
    log_path = _wait_for_intent(tmp_path / "logs", 3, proc)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    # SIGKILL gives handrail no chance to close the browser it started: the test does.
    kill_browsers_under(tmp_path / "profile")
    log = read_log(log_path)
    assert [r["round"] for r in log.records if r["type"] == "round"] == [1, 2]
    entries = {e.round: e for e in rounds_of(log.records)}
    assert entries[1].outcome == "ok" and entries[3].outcome == "unknown"
    assert verify(log_path).ok


def test_a_non_interactive_run_stops_with_exit_3_at_the_first_approval(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    site.clear()
    fake.add(act("scroll", direction="down"))
    fake.add(act("click", "Send message"))
    env = {"ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": fake.api_key or ""}
    proc = _cli(_cli_args(tmp_path, site), env)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 3, (out, err)
    assert "click" in out and "needs approval" in out
    assert site.posts("/agent/submit") == []
    assert read_log(only_log(tmp_path)).records[-1]["outcome"] == "human_needed"


def test_ctrl_c_stops_cleanly_with_130_and_a_closed_log(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    fake.add(act("wait", seconds=20))
    env = {"ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": fake.api_key or ""}
    proc = _cli(_cli_args(tmp_path, site, "--approve", "none"), env)
    log_path = _wait_for_intent(tmp_path / "logs", 1, proc)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=30)
    assert proc.returncode == 130
    records = read_log(log_path).records
    assert records[-1]["type"] == "run_end" and records[-1]["outcome"] == "aborted"
    assert verify(log_path).ok


def test_a_missing_key_is_a_configuration_error_before_any_browser(
    tmp_path: Path, site: FixtureSite
) -> None:
    env = {
        "ANTHROPIC_API_KEY": "",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        "CHROME_PATH": "/nonexistent",
    }
    proc = _cli(_cli_args(tmp_path, site), env)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert "ANTHROPIC_API_KEY" in err
    assert not (tmp_path / "profile").exists()
