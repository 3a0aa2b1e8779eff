"""Budgets with a hard stop, in real runs: the real Anthropic SDK against the fake Messages
API (its replies carry ``usage``), real Chromium. The run stops before the model call that
would cross a limit, with outcome ``budget`` and exit code 5, and the sealed ``run_end``
says what was spent."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from core.audit import read_log, verify
from core.run.events import BudgetSpent, Event
from core.run.session import RunSettings, run_session
from tests.helpers.agent_run import MODEL, Supervisor, act
from tests.helpers.fake_anthropic import FakeAnthropic, MessageReply
from tests.helpers.site_server import FixtureSite

# End to end: whole actions or runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
CALL = {"input_tokens": 100_000, "output_tokens": 0}
"""Each reply's usage: at $1 per million input tokens, $0.10 a call."""


@pytest.fixture
def prices(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "prices.toml"
    path.write_text('[anthropic."claude-sonnet-5-5"]\ninput = 1.0\noutput = 5.0\n')
    monkeypatch.setenv("HANDRAIL_PRICES", str(path))
    return path


def queue_scrolls(fake: FakeAnthropic, n: int) -> None:
    for _ in range(n):
        reply = act("scroll", direction="down")
        fake.add(lambda body, reply=reply: MessageReply(reply(body), usage=CALL))


def settings(tmp_path: Path, site: FixtureSite, **kw: Any) -> RunSettings:
    base: dict[str, Any] = {
        "task": "Scroll through the shop",
        "start_url": site.url("/agent/policy-shop.html"),
        "model_spec": MODEL,
        "approve": "none",
        "headless": True,
        "profile": tmp_path / "profile",
        "audit_dir": tmp_path / "logs",
    }
    return RunSettings(**(base | kw))


def run_end(tmp_path: Path) -> dict[str, Any]:
    (log,) = sorted((tmp_path / "logs").glob("*.jsonl"))
    assert verify(log).ok
    record: dict[str, Any] = read_log(log).records[-1]
    return record


async def test_max_cost_stops_before_the_call_that_would_cross_it(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic, prices: Path
) -> None:
    queue_scrolls(fake, 5)
    events: list[Event] = []
    finished = await run_session(
        settings(tmp_path, site, max_cost=0.25), supervisor=Supervisor(), sinks=[events.append]
    )
    # $0.10 and $0.20 were spent; a third call would have reached $0.30.
    assert (finished.outcome, finished.exit_code) == ("budget", 5)
    assert len(fake.message_bodies) == 2
    assert "cost budget" in finished.reason and "--max-cost" in finished.reason
    end = run_end(tmp_path)
    assert (end["outcome"], end["exit_code"]) == ("budget", 5)
    assert end["spent"]["cost_usd"] == pytest.approx(0.20)
    assert end["spent"]["tokens"] == 200_000
    assert end["spent"]["limits"]["max_cost"] == 0.25
    # The person was warned once the cost passed 80% ($0.20 of $0.25).
    spent = [e for e in events if isinstance(e, BudgetSpent)]
    assert [e.warn for e in spent] == [(), (), ("cost",)]


async def test_max_tokens_from_the_policy_file_and_the_command_line_over_it(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('default = "allow"\n[budget]\nmax_tokens = 150000\n')
    queue_scrolls(fake, 5)
    finished = await run_session(
        settings(tmp_path, site, policy=str(policy)), supervisor=Supervisor()
    )
    assert (finished.outcome, finished.exit_code) == ("budget", 5)
    assert len(fake.message_bodies) == 1  # 100,000 spent; the next would reach 200,000

    again = tmp_path / "again"
    again.mkdir()
    queue_scrolls(fake, 5)
    before = len(fake.message_bodies)
    finished = await run_session(
        settings(again, site, policy=str(policy), max_tokens=350_000), supervisor=Supervisor()
    )
    assert finished.exit_code == 5
    assert len(fake.message_bodies) - before == 3


def test_a_model_without_a_price_makes_max_cost_an_error_naming_it(tmp_path: Path) -> None:
    env = dict(os.environ, ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL="http://127.0.0.1:9")
    env.pop("HANDRAIL_PRICES", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tui.cli.main",
            "run",
            "a task",
            "--no-tui",
            "--headless",
            "--max-cost",
            "1",
            "--audit-dir",
            str(tmp_path / "logs"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "no price for the model anthropic:claude-sonnet-5-5" in done.stderr
    assert "HANDRAIL_PRICES" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "logs").exists() or not list((tmp_path / "logs").glob("*.jsonl"))
