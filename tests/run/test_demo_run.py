"""`handrail demo` end to end: the scripted plan through the real agent loop, gates, hands
and log, on the bundled site, in console mode and in the observatory."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from core.audit import read_log, verify
from core.demo import DemoSite, start_demo_site
from core.demo.plan import first_friday_of_next_month
from core.demo.timetable import cheapest_morning, find_station, journeys_for
from core.run.events import EventSink, RunFinished, Supervisor
from core.run.session import prepare, run_session
from tests.helpers.tui_driver import wait_until
from tui.app import HandrailApp
from tui.cli.demo import demo_settings
from tui.cli.main import build_parser
from tui.console import ConsoleSupervisor
from tui.screens.approval import ApprovalScreen
from tui.screens.human_pause import HumanPauseScreen

# End to end: whole actions or runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def demo_site() -> Iterator[DemoSite]:
    site = start_demo_site()
    yield site
    site.stop()


def demo_args(tmp_path: Path, *extra: str) -> argparse.Namespace:
    return build_parser().parse_args(
        ["demo", "--headless", "--audit-dir", str(tmp_path / "logs"), *extra]
    )


@pytest.fixture(autouse=True)
def no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


def booked(site: DemoSite) -> dict[str, object]:
    bookings = site.state()["bookings"]
    assert len(bookings) == 1, bookings
    booking: dict[str, object] = bookings[0]
    return booking


async def test_the_scripted_demo_stops_at_the_payment_page(
    tmp_path: Path, demo_site: DemoSite
) -> None:
    settings = demo_settings(
        demo_args(tmp_path, "--approve", "none", "--no-tui"), site_url=demo_site.url, work=tmp_path
    )
    assert settings.model_spec.startswith("scripted:")
    finished = await run_session(settings, supervisor=ConsoleSupervisor(interactive=False))
    assert (finished.outcome, finished.exit_code) == ("human_needed", 3)
    assert "payment" in finished.reason
    booking = booked(demo_site)
    passenger = booking["passenger"]
    assert isinstance(passenger, dict)
    assert (passenger["first_name"], passenger["last_name"]) == ("Ada", "Lovelace")
    lyon, paris = find_station("Lyon Part-Dieu"), find_station("Paris Gare de Lyon")
    assert lyon is not None and paris is not None
    expected = cheapest_morning(journeys_for(lyon, paris, first_friday_of_next_month(date.today())))
    assert booking["journey_id"] == expected.id
    assert booking["status"] == "details_given"  # stopped before paying
    assert not booking.get("payment")
    (log,) = (tmp_path / "logs").glob("*.jsonl")
    assert verify(log).ok
    records = read_log(log).records
    assert records[-1]["outcome"] == "human_needed"
    assert any(r["type"] == "human_pause" and r["kind"] == "payment" for r in records)
    # The operational log beside it says what ran and how long each part took (issue 27,
    # minor 8: it was empty), one JSON line each, naming the run.
    lines = [json.loads(line) for line in log.with_suffix(".log").read_text().splitlines()]
    events = [line["event"] for line in lines]
    assert events[0] == "run.start" and events[-1] == "run.end", events
    rounds = len([r for r in records if r["type"] == "round"])
    for step in ("round.observed", "round.model", "round.action"):
        assert events.count(step) >= rounds - 1, (step, events)
    assert all(line["run_id"] == records[0]["run_id"] for line in lines)
    assert all(isinstance(line["ms"], float) for line in lines if "ms" in line)


def test_handrail_demo_no_tui_exits_3_at_the_payment_pause(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tui.cli.main",
            "demo",
            "--no-tui",
            "--approve",
            "none",
            "--headless",
            "--audit-dir",
            str(tmp_path / "logs"),
        ],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 3, done.stdout[-3000:] + done.stderr[-3000:]
    assert "scripted plan" in done.stdout
    assert "payment" in done.stdout


async def test_the_demo_in_the_observatory_approves_its_way_to_the_pause(
    tmp_path: Path, demo_site: DemoSite
) -> None:
    settings = demo_settings(demo_args(tmp_path), site_url=demo_site.url, work=tmp_path)

    async def start(sink: EventSink, supervisor: Supervisor) -> RunFinished:
        prepared = await prepare(settings)
        return await run_session(settings, supervisor=supervisor, sinks=[sink], prepared=prepared)

    app = HandrailApp(start, config_dir=tmp_path / "config", persist_theme=False)
    approvals = 0
    async with app.run_test(size=(140, 44)) as pilot:
        while not isinstance(app.screen, HumanPauseScreen):
            await wait_until(
                pilot, lambda: isinstance(app.screen, ApprovalScreen | HumanPauseScreen), timeout=60
            )
            screen = app.screen
            if isinstance(screen, ApprovalScreen):
                approvals += 1
                await pilot.pause(0.05)  # let the new modal take focus
                await pilot.press("a")
                await wait_until(pilot, lambda s=screen: app.screen is not s, timeout=30)
        pause = app.screen
        assert isinstance(pause, HumanPauseScreen)
        assert pause.request.kind == "payment" and "/payment" in pause.request.url
        assert app.run_screen is not None
        assert "scripted plan" in app.run_screen.run_view.model
        await pilot.press("x")
        await wait_until(pilot, lambda: app.exit_code is not None, timeout=30)
        assert app.exit_code == 130
    assert approvals >= 15  # every page-changing step of the plan asked
    assert booked(demo_site)["status"] == "details_given"


async def test_the_demo_policy_asks_once_before_the_payment_hand_over(
    tmp_path: Path, demo_site: DemoSite
) -> None:
    """README's example policy: the search and the details go through, going on to pay
    asks (once), and the payment page is still handed to the person."""
    from tests.helpers.agent_run import Supervisor

    policy = ROOT / "docs" / "examples" / "demo-policy.toml"
    settings = demo_settings(
        demo_args(tmp_path, "--policy", str(policy), "--no-tui"),
        site_url=demo_site.url,
        work=tmp_path,
    )
    supervisor = Supervisor()
    events: list[object] = []
    finished = await run_session(settings, supervisor=supervisor, sinks=[events.append])
    assert finished.outcome == "success", finished.reason
    (asked,) = supervisor.requests
    assert asked.target_name == "Continue to payment"
    assert asked.asked_by == "rule 1 (the booking: going on to pay)"
    (human,) = supervisor.humans
    assert human.kind == "payment"
    # The one approval came before the hand-over.
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("ApprovalNeeded") < kinds.index("HumanNeeded")
    assert booked(demo_site)["status"] == "details_given"
