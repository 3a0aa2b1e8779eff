"""``handrail serve --fleet TASKS.toml``: a fleet's observatory as a web page, behind the same
token rules as ``serve`` (issue 30). Real headless Chromium opens it; what the page shows is
read from the websocket frames it receives; the runs' effect from the fixture server."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest

from core.browser.browser import Tab
from tests.helpers import load
from tests.helpers.site_server import FixtureSite
from tests.pool.test_fleet import ITEMS, tasks_file
from tests.pool.test_fleet import name as name  # a 3-slot pool of the test's own
from tests.tui.test_serve import WAIT, Screen, _press_a, _status, serve_command
from tui.cli.main import dispatch

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


async def test_a_fleet_is_supervised_from_a_browser_with_the_token_and_refused_without(
    tab: Tab, tmp_path: Path, site: FixtureSite, name: str
) -> None:
    site.clear()
    tasks = tasks_file(tmp_path, site)
    with serve_command(tmp_path, "--fleet", str(tasks), "--pool", name) as served:
        url, proc = served.url, served.proc
        assert proc.stdout is not None
        assert "ends the fleet's runs" in proc.stdout.readline()
        origin = served.origin
        assert _status(origin + "/") == 403  # no token: nothing of the fleet
        assert _status(url, {"Host": "evil.example"}) in (400, 403)
        await tab.send("Network.enable")
        screen = Screen(tab)
        try:
            await load(tab, url, timeout=WAIT)
            await screen.until(lambda t: "a/y approve" in t, "a run's approval, from the queue")
            assert site.posts("/fleet/order") == []
            for done in range(1, len(ITEMS) + 1):
                await _press_a(tab)
                await screen.until(
                    lambda t, n=done: len(site.posts("/fleet/order")) >= n,
                    f"{done} order(s) placed",
                )
                if done < len(ITEMS):
                    seen = len(screen.text)
                    await screen.until(
                        lambda t, s=seen: "a/y approve" in t[s:], "the next approval"
                    )
            await screen.until(lambda t: f"{len(ITEMS)} of {len(ITEMS)} runs done" in t, "done")
        finally:
            screen.close()
        proc.send_signal(signal.SIGINT)
        assert await asyncio.to_thread(proc.wait, WAIT) in (0, 130)
    assert sorted(p.form["item"][0] for p in site.posts("/fleet/order")) == sorted(ITEMS)


def test_serve_fleet_takes_no_run_options_and_checks_the_tasks_file_first(
    tmp_path: Path, site: FixtureSite, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = tasks_file(tmp_path, site)
    assert dispatch(["serve", "--fleet", str(tasks), "--pool", name, "--headless"]) == 2
    assert "not --headless" in capsys.readouterr().err
    bad = tmp_path / "bad.toml"
    bad.write_text('[[task]]\ntask = "x"\nalow_domain = ["a"]\n')
    assert dispatch(["serve", "--fleet", str(bad), "--pool", name]) == 2
    assert "alow_domain" in capsys.readouterr().err
    assert dispatch(["serve", "--fleet", str(tasks), "--pool", "never-started"]) == 2
    assert "never-started" in capsys.readouterr().err
