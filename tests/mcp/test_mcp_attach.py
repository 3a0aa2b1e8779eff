"""``handrail attach`` on a ``handrail mcp`` run: the SDK's client calls, a person in the
attached observatory (driven by Textual's pilot) approves, denies and takes a page over,
and the log says who decided."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import pytest

from core.audit import read_log, verify
from core.audit.key import DATA_DIR_ENV
from core.run.live import live_runs
from tests.helpers.site_server import FixtureSite
from tests.helpers.tui_driver import still_clock, wait_until
from tests.mcp.test_mcp_server import index_of, session, texts, the_log
from tui.attach_app import AttachApp
from tui.screens.approval import ApprovalScreen
from tui.screens.human_pause import HumanPauseScreen

pytestmark = pytest.mark.slow

WAIT = 60.0
ROOT = Path(__file__).resolve().parents[2]


async def test_the_attached_person_approves_denies_and_takes_the_page_over(
    tmp_path: Path, site: FixtureSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server and this test share a data folder of their own: its one live run is ours.
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "data"))
    site.clear()
    async with session(tmp_path, site, "--approval-timeout", str(WAIT)) as client:
        box = await index_of(client, "Search the shop")  # the run is live from its first call
        (entry,) = await live_runs()
        assert entry.holder is None  # nobody yet: the first to attach holds the gate
        app = AttachApp(
            entry.run_id,
            entry.task,
            config_dir=tmp_path / "config",
            clock=still_clock,
            persist_theme=False,
        )
        async with app.run_test(size=(120, 40)) as pilot:

            def asking(kind: type) -> bool:
                return isinstance(app.screen, kind)

            typing = asyncio.create_task(
                client.call_tool("type", {"index": box, "text": "lamp", "reason": "search"})
            )
            await wait_until(pilot, lambda: asking(ApprovalScreen), timeout=WAIT)
            shown = app.screen
            assert isinstance(shown, ApprovalScreen)
            assert shown.request.action.params["text"] == "lamp"  # the person sees the text
            await pilot.press("a")
            typed = await asyncio.wait_for(typing, WAIT)
            assert not typed.is_error, texts(typed)

            button = await index_of(client, "Search")
            clicking = asyncio.create_task(
                client.call_tool("click", {"index": button, "reason": "search"})
            )
            await wait_until(pilot, lambda: asking(ApprovalScreen), timeout=WAIT)
            await pilot.press("d")
            await pilot.press(*"not yet")
            await pilot.press("enter")
            refused = await asyncio.wait_for(clicking, WAIT)
            assert refused.is_error and "not yet" in texts(refused)
            assert site.posts("/agent/submit") == []

            # A page that must be handed to a person waits for the one attached.
            going = asyncio.create_task(
                client.call_tool(
                    "navigate", {"url": site.url("/agent/account.html"), "reason": "account"}
                )
            )
            await wait_until(pilot, lambda: asking(ApprovalScreen), timeout=WAIT)
            await pilot.press("a")
            # The call's result carries the page it reached: that page is handed over first.
            await wait_until(pilot, lambda: asking(HumanPauseScreen), timeout=WAIT)
            assert not going.done()
            await pilot.press("r")
            gone = await asyncio.wait_for(going, WAIT)
            assert "<browser_state>" in texts(gone)
            # The observatory drew every call as a round.
            assert app.run_screen is not None
            assert len(app.run_screen.run_view.rounds) >= 5
            await pilot.press("q")  # leaving is not ending: the run goes on
        assert not (await client.call_tool("observe", {})).is_error
    log = read_log(the_log(tmp_path))
    decided = [
        (r["action"]["name"], r["approval"]["decision"], r["approval"]["by"])
        for r in log.records
        if r["type"] == "round" and r["approval"]["decision"] in ("approved", "denied")
    ]
    assert decided == [
        ("type", "approved", "person"),
        ("click", "denied", "person"),
        ("navigate", "approved", "person"),
    ]
    assert [r["type"] for r in log.records if r["type"].startswith("human_")] == [
        "human_pause",
        "human_resume",
    ]
    assert verify(the_log(tmp_path)).ok
    assert await live_runs() == []  # the run's socket went with it


async def test_two_terminals_the_example_agent_books_and_the_attached_person_gates_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's walk-through: docs/examples/mcp_client.py --supervised in one terminal,
    `handrail attach` in the other; each step waits for the person, and the booking stops
    at the payment page, handed to the person (who aborts: the browser is headless)."""
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "data"))
    agent = await asyncio.create_subprocess_exec(
        sys.executable,
        str(ROOT / "docs" / "examples" / "mcp_client.py"),
        "--supervised",
        cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert agent.stdout is not None
    try:
        said = ""
        found = None
        while found is None:
            line = (await asyncio.wait_for(agent.stdout.readline(), WAIT)).decode()
            assert line, said  # the agent said how to attach before anything else ended
            said += line
            found = re.search(r"handrail attach (\w+)", line)
        (entry,) = await live_runs()
        assert entry.run_id == found.group(1)
        app = AttachApp(
            entry.run_id,
            entry.task,
            config_dir=tmp_path / "config",
            clock=still_clock,
            persist_theme=False,
        )
        approved: list[str] = []
        async with app.run_test(size=(120, 40)) as pilot:
            while True:
                await wait_until(
                    pilot,
                    lambda: isinstance(app.screen, ApprovalScreen | HumanPauseScreen),
                    timeout=WAIT,
                )
                screen = app.screen
                if isinstance(screen, HumanPauseScreen):
                    assert screen.request.kind == "payment"
                    await pilot.press("x")
                    break
                assert isinstance(screen, ApprovalScreen)
                approved.append(screen.request.action.name)
                await pilot.press("a")
                await wait_until(pilot, lambda s=screen: app.screen is not s, timeout=WAIT)
            await wait_until(pilot, lambda: app.exit_code is not None, timeout=WAIT)
        out, err = await asyncio.wait_for(agent.communicate(), WAIT)
    finally:
        if agent.returncode is None:
            agent.kill()
            await agent.wait()
    assert agent.returncode == 0, err.decode()[-2000:]
    assert "the payment page is handed to a person" in out.decode()
    assert approved and {"type", "click"} <= set(approved)
    (log,) = (tmp_path / "audit_logs").glob("*.jsonl")
    records = read_log(log).records
    assert records[-1]["type"] == "run_end" and records[-1]["outcome"] == "aborted"
    assert records[-1]["reason"] == "the person aborted the run at a hand-over (payment)"
