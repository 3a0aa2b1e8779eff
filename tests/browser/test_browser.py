"""Whose Chrome and which tabs: finding, launching, connecting, our own tabs, recovery."""

from __future__ import annotations

import os
import signal
import stat
from pathlib import Path

import pytest
from websockets.asyncio.server import serve
from websockets.datastructures import Headers
from websockets.http11 import Response

from core.browser.browser import Browser
from core.browser.errors import BrowserError, ChromeNotFound
from core.browser.find import default_profile_dir, find_chrome, resolve_cdp_url
from tests.conftest import launch_browser
from tests.helpers import load, page_eval
from tests.helpers.site_server import FixtureSite
from tests.helpers.waiting import eventually


def _fake_exe(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / name
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def test_chrome_path_wins(tmp_path: Path) -> None:
    exe = _fake_exe(tmp_path, "my-chrome")
    assert find_chrome({"CHROME_PATH": str(exe), "PATH": ""}) == str(exe)


def test_chrome_path_that_is_not_executable_is_reported(tmp_path: Path) -> None:
    with pytest.raises(ChromeNotFound, match="CHROME_PATH"):
        find_chrome({"CHROME_PATH": str(tmp_path / "nope"), "PATH": ""})


def test_usual_names_are_found_on_path(tmp_path: Path) -> None:
    exe = _fake_exe(tmp_path / "bin", "chromium-browser")
    assert find_chrome({"PATH": str(tmp_path / "bin"), "HOME": str(tmp_path)}) == str(exe)


def test_not_found_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("core.browser.find.CHROME_LOCATIONS", ())
    with pytest.raises(ChromeNotFound) as err:
        find_chrome({"PATH": str(tmp_path), "HOME": str(tmp_path)})
    text = str(err.value)
    assert "apt-get install chromium" in text and "CHROME_PATH" in text and "--cdp-url" in text


def test_default_profile_is_handrails_own(tmp_path: Path) -> None:
    profile = default_profile_dir({"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data")})
    assert profile == tmp_path / "data" / "handrail" / "chrome-profile"


async def test_launch_uses_its_profile_and_stops_only_its_process(
    tmp_path: Path, site: FixtureSite
) -> None:
    profile = tmp_path / "profile"
    browser = await launch_browser(profile)
    assert browser.process is not None and browser.process.returncode is None
    assert (profile / "DevToolsActivePort").exists()
    tab, notices = await browser.active_tab()
    assert notices == []
    await load(tab, site.url("/cdp/hello.html"))
    assert await page_eval(tab, "document.title") == "Hello"
    pid = browser.process.pid
    await browser.close()
    assert browser.process.returncode is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_a_profile_in_use_is_reported(tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    first = await launch_browser(profile)
    try:
        with pytest.raises(BrowserError, match="profile"):
            await launch_browser(profile)
    finally:
        await first.close()


@pytest.fixture
async def foreign_browser(tmp_path: Path):
    """Someone else's running browser, with a tab of its own open."""
    other = await launch_browser(tmp_path / "foreign")
    foreign_tab, _ = await other.active_tab()
    yield other, foreign_tab
    await other.close()


async def test_cdp_url_http_and_ws_both_connect_without_launching(
    foreign_browser, site: FixtureSite
) -> None:
    other, foreign_tab = foreign_browser
    await load(foreign_tab, site.url("/cdp/hello.html?theirs"))
    port = other.ws_url.split(":")[2].split("/")[0]
    ws_url = await resolve_cdp_url(f"http://127.0.0.1:{port}")
    assert ws_url == other.ws_url
    for url in (f"http://127.0.0.1:{port}", other.ws_url):
        ours = await Browser.connect(url)
        assert ours.process is None
        assert ours.our_tabs() == []
        tab = await ours.new_tab()
        assert [t.target_id for t in ours.our_tabs()] == [tab.target_id]
        assert foreign_tab.target_id not in ours.tabs
        await ours.close()
        # their tab is untouched, ours is gone
        assert await page_eval(foreign_tab, "location.search") == "?theirs"
        targets = (await other.connection.send("Target.getTargets"))["targetInfos"]
        assert tab.target_id not in {t["targetId"] for t in targets}


async def test_connect_local_reads_devtools_active_port(foreign_browser, tmp_path: Path) -> None:
    other, _ = foreign_browser
    assert other.profile_dir is not None
    ours = await Browser.connect_local([tmp_path / "absent", other.profile_dir])
    assert ours.kind == "connect" and ours.process is None
    tab = await ours.new_tab()
    assert not tab.closed
    await ours.close()


async def test_connect_local_without_a_browser_explains_chrome_inspect(tmp_path: Path) -> None:
    with pytest.raises(BrowserError, match="chrome://inspect"):
        await Browser.connect_local([tmp_path / "nothing"])


async def test_handshake_403_explains_the_prompt() -> None:
    # Chrome answers 403 when the person denies its remote-debugging prompt; a loopback
    # server answering the same way stands in for that person.
    def refuse(connection, request):
        return Response(403, "Forbidden", Headers([("Content-Length", "0")]), b"")

    async with serve(lambda ws: None, "127.0.0.1", 0, process_request=refuse) as server:
        port = server.sockets[0].getsockname()[1]
        with pytest.raises(BrowserError) as err:
            await Browser.connect(f"ws://127.0.0.1:{port}/devtools/browser/x")
    assert "403" in str(err.value) and "Allow" in str(err.value)


async def test_cdp_url_with_nothing_there_is_clear() -> None:
    with pytest.raises(BrowserError, match="no DevTools endpoint"):
        await Browser.connect("http://127.0.0.1:9")


async def test_a_closed_tab_is_replaced_and_reported(browser: Browser, site: FixtureSite) -> None:
    tab = await browser.new_tab()
    await browser.connection.send("Target.closeTarget", {"targetId": tab.target_id})
    # tab.closed is set by Target.detachedFromTarget; the wait ends with that event.
    await eventually(lambda: tab.closed, 2.5, "the closed tab to be noticed")
    new_tab, notices = await browser.active_tab()
    assert new_tab.target_id != tab.target_id
    assert any("closed" in n for n in notices)
    await load(new_tab, site.url("/cdp/hello.html"))
    await browser.close_tab(new_tab)


async def test_a_dropped_connection_reconnects_and_keeps_our_tab(
    tmp_path: Path, site: FixtureSite
) -> None:
    browser = await launch_browser(tmp_path / "p")
    tab, _ = await browser.active_tab()
    await load(tab, site.url("/cdp/hello.html?kept"))
    await browser.connection.close()
    again, notices = await browser.active_tab()
    assert any("reconnected" in n for n in notices)
    assert again.target_id == tab.target_id
    assert await page_eval(again, "location.search") == "?kept"
    await browser.close()


async def test_a_killed_browser_is_started_again(tmp_path: Path) -> None:
    browser = await launch_browser(tmp_path / "p")
    assert browser.process is not None
    os.killpg(browser.process.pid, signal.SIGKILL)
    await browser.process.wait()
    tab, notices = await browser.active_tab()
    assert any("started it again" in n for n in notices)
    assert await page_eval(tab, "1 + 1") == 2
    await browser.close()


async def test_popups_from_our_tab_are_ours(browser: Browser, site: FixtureSite) -> None:
    tab = await browser.new_tab()
    await load(tab, site.url("/cdp/hello.html"))
    await tab.send(
        "Runtime.evaluate",
        {"expression": "window.open('/cdp/hello.html?popup'), true", "userGesture": True},
    )
    popup = await browser.adopt_popup(timeout=5)
    assert popup is not None and popup.opener_id == tab.target_id
    await browser.close_tab(popup)
    await browser.close_tab(tab)


async def test_a_popup_nobody_took_is_not_the_answer_to_another_tabs_click(
    browser: Browser, site: FixtureSite
) -> None:
    """One tab of ours opened a window nobody adopted (a picture the person opened, a page
    that pops one up by itself); another tab's click opens its own: that tab gets its own."""
    stray_opener = await browser.new_tab()
    await load(stray_opener, site.url("/cdp/hello.html?stray"))
    await stray_opener.send(
        "Runtime.evaluate",
        {"expression": "window.open('/cdp/hello.html?stray-popup'), true", "userGesture": True},
    )
    await eventually(
        lambda: any("stray-popup" in str(t.get("url")) for t in browser.targets.values()),
        5,
        "the stray popup to exist",
    )
    acting = await browser.new_tab()
    await load(acting, site.url("/cdp/hello.html?acting"))
    await acting.send(
        "Runtime.evaluate",
        {"expression": "window.open('/cdp/hello.html?mine'), true", "userGesture": True},
    )
    popup = await browser.adopt_popup(timeout=5, opener=acting.target_id)
    assert popup is not None and popup.opener_id == acting.target_id
    await eventually(lambda: "mine" in popup.url, 5, "the popup's own page")
    await browser.close_tab(stray_opener)  # its popup's opener is gone: dropped, not adopted
    assert await browser.adopt_popup(timeout=0.2, opener=acting.target_id) is None
    for tab in (popup, acting):
        await browser.close_tab(tab)
    for target_id, info in list(browser.targets.items()):
        if "stray-popup" in str(info.get("url")):  # nobody's tab: closed by the test
            await browser.connection.send("Target.closeTarget", {"targetId": target_id})


async def test_a_popup_that_closes_itself_hands_back_to_its_opener(
    browser: Browser, site: FixtureSite
) -> None:
    opener = await browser.new_tab()
    await load(opener, site.url("/cdp/hello.html?opener"))
    # Another tab of ours, newer than the opener: the one "the newest tab" would pick.
    other = await browser.new_tab()
    await load(other, site.url("/cdp/hello.html?other"))
    await opener.send(
        "Runtime.evaluate",
        {"expression": "window.open('/cdp/hello.html?popup'), true", "userGesture": True},
    )
    popup = await browser.adopt_popup(timeout=5)
    assert popup is not None
    browser.switch_to(popup)
    # Django's related-object popup: saved, it closes its own window.
    await popup.send("Runtime.evaluate", {"expression": "window.close()"})
    await eventually(lambda: popup.closed, 2.5, "the popup to be closed")
    now, notices = await browser.active_tab()
    assert now.target_id == opener.target_id, notices
    assert any("back on the tab that opened it" in n for n in notices), notices
    await browser.close_tab(other)
    await browser.close_tab(opener)
