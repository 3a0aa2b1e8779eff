"""``handrail attach`` on the command line: the list of live runs, the errors a person can
make, and the console follower, against a live run's real socket."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from core.audit.key import DATA_DIR_ENV
from core.run.events import RunFinished, RunStarted
from core.run.live import LiveRun

ROOT = Path(__file__).resolve().parents[2]
WAIT = 60.0


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "data"
    monkeypatch.setenv(DATA_DIR_ENV, str(path))
    return path


async def attach(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tui.cli.main",
        "attach",
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    out, err = await asyncio.wait_for(proc.communicate(), WAIT)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_with_no_live_run_it_says_so_and_a_wrong_id_is_named() -> None:
    code, out, _ = await attach()
    assert code == 0 and "No live run" in out
    code, out, _ = await attach("--json")
    assert code == 0 and json.loads(out) == []
    code, _, err = await attach("nope")
    assert code == 2 and "no live run starts with nope" in err
    code, _, err = await attach("../../x\x1b]52;c;AAAA\x07")
    assert code == 2 and "\x1b" not in err and "\x07" not in err


async def test_the_list_shows_each_run_with_its_text_made_safe() -> None:
    run = LiveRun("c0ffee000001", "book\x1b]52;c;QUJD\x07 a seat\nand more", Path("/l/x.jsonl"))
    await run.start()
    try:
        code, out, _ = await attach()
        assert code == 0 and "c0ffee000001" in out
        assert "\x1b" not in out and "\x07" not in out and "book" in out
        assert "gate: nobody (attach to hold it)" in out
        code, out, _ = await attach("--json")
        (row,) = json.loads(out)
        assert (row["run_id"], row["pid"], row["log"]) == (
            "c0ffee000001",
            os.getpid(),
            "/l/x.jsonl",
        )
    finally:
        await run.close()


async def test_the_console_follower_prints_the_run_and_ends_with_its_code() -> None:
    run = LiveRun("c0ffee000002", "book a seat", None)
    await run.start()
    try:
        run.event(RunStarted("c0ffee000002", "book a seat", "scripted", "launched", 5))
        run.event(RunFinished("failure", "no seat left", 3, 1, reason="sold out"))
        # A terminal that attaches late gets the run so far, its end included.
        following = asyncio.create_task(attach("c0ffee", "--no-tui"))
        code, out, err = await following
    finally:
        await run.close()
    assert code == 1, err
    assert "handrail: book a seat" in out and "finished: not successful after 3 rounds" in out
    assert "watching; the gate is held by nobody" in err  # stdin is no terminal: it watches


async def test_a_watching_observatory_cannot_abort_and_q_leaves_the_run_going(
    tmp_path: Path,
) -> None:
    from tests.helpers.tui_driver import still_clock, wait_until
    from tui.attach_app import AttachApp

    aborted: list[str] = []
    run = LiveRun(
        "c0ffee000003",
        "book a seat",
        None,
        local_holder="the run's own observatory (pid 1)",
        on_abort=aborted.append,
    )
    await run.start()
    try:
        run.event(RunStarted("c0ffee000003", "book a seat", "scripted", "launched", 5))
        app = AttachApp(
            "c0ffee000003", "book a seat", config_dir=tmp_path, clock=still_clock,
            persist_theme=False,
        )  # fmt: skip
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: app.client is not None and app.run_screen is not None)
            await wait_until(pilot, lambda: bool(app.run_screen and app.run_screen.run_view.task))
            await pilot.press("x")
            await wait_until(
                pilot,
                lambda: any("only the gate's holder" in n.message for n in app._notifications),
            )
            assert app.run_screen is not None and app.run_screen.running
            await pilot.press("q")
            await wait_until(pilot, lambda: not app.is_running)
        assert app.return_code == 0 and aborted == []
        assert run.path is not None and run.path.exists()  # the run goes on, attachable
    finally:
        await run.close()
