"""The wire: ids matched to answers, events by session, timeouts, and a dead socket."""

from __future__ import annotations

import asyncio
import os
import signal
from urllib.parse import quote

import pytest

from core.browser.browser import Browser
from core.cdp import CDPConnection, CDPError, CDPTimeout, ConnectionClosed, SessionClosed
from core.keys import char_events
from tests.conftest import launch_browser
from tests.helpers import load, page_eval
from tests.helpers.loopback import second_site  # noqa: F401
from tests.helpers.site_server import FixtureSite
from tests.helpers.waiting import eventually


async def test_concurrent_calls_get_their_own_answers(browser: Browser, tab) -> None:
    exprs = [f"{n} * 3" for n in range(20)]
    results = await asyncio.gather(
        *(tab.send("Runtime.evaluate", {"expression": e, "returnByValue": True}) for e in exprs)
    )
    assert [r["result"]["value"] for r in results] == [n * 3 for n in range(20)]


async def test_error_answer_names_the_method(tab) -> None:
    with pytest.raises(CDPError) as err:
        await tab.send("DOM.describeNode", {"nodeId": 987654})
    assert "DOM.describeNode" in str(err.value)


async def test_events_are_delivered_per_session(browser: Browser, site: FixtureSite) -> None:
    first = await browser.new_tab()
    second = await browser.new_tab()
    seen_first: list[str] = []
    first.session.on("Page.frameNavigated", lambda p: seen_first.append(p["frame"]["url"]))
    await load(second, site.url("/cdp/hello.html"))
    await load(first, site.url("/cdp/hello.html?first"))
    assert seen_first == [site.url("/cdp/hello.html?first")]
    await browser.close_tab(first)
    await browser.close_tab(second)


async def test_a_call_the_browser_never_answers_times_out(tab) -> None:
    with pytest.raises(CDPTimeout) as err:
        await tab.send(
            "Runtime.evaluate",
            {"expression": "new Promise(() => {})", "awaitPromise": True},
            timeout=0.3,
        )
    assert "0.3 s" in str(err.value)


async def test_cancelling_the_caller_cancels_the_wait(tab) -> None:
    task = asyncio.create_task(
        tab.send(
            "Runtime.evaluate",
            {"expression": "new Promise(() => {})", "awaitPromise": True},
            timeout=None,
        )
    )
    await eventually(lambda: tab.session.connection._pending, 5, "the call to be sent")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert tab.session.connection._pending == {}
    # the connection is still usable afterwards
    value = await tab.send("Runtime.evaluate", {"expression": "1+1", "returnByValue": True})
    assert value["result"]["value"] == 2


async def test_large_frames_arrive_whole(tab, site: FixtureSite) -> None:
    await load(tab, site.url("/cdp/hello.html"))
    big = await tab.send(
        "Runtime.evaluate", {"expression": "'x'.repeat(8 * 1024 * 1024)", "returnByValue": True}
    )
    assert len(big["result"]["value"]) == 8 * 1024 * 1024


async def test_dead_socket_fails_every_waiting_call_at_once(tmp_path) -> None:
    browser = await launch_browser(tmp_path / "p")
    tab, _ = await browser.active_tab()
    never = {"expression": "new Promise(() => {})", "awaitPromise": True}
    waiting = [
        asyncio.create_task(tab.send("Runtime.evaluate", never, timeout=60)) for _ in range(3)
    ]
    event_waiter = tab.session.expect("Page.loadEventFired")
    pending = tab.session.connection._pending
    await eventually(lambda: len(pending) >= 3, 5, "the three calls to be sent")
    assert browser.process is not None
    os.killpg(browser.process.pid, signal.SIGKILL)
    loop = asyncio.get_running_loop()
    started = loop.time()
    results = await asyncio.gather(*waiting, event_waiter, return_exceptions=True)
    assert loop.time() - started < 5
    assert all(isinstance(r, ConnectionClosed) for r in results), results
    with pytest.raises(ConnectionClosed):
        await tab.send("Runtime.evaluate", {"expression": "1"})
    await browser.close()


async def test_nothing_listening_is_a_clear_error() -> None:
    with pytest.raises(ConnectionClosed) as err:
        await CDPConnection.open("ws://127.0.0.1:9/devtools/browser/x", timeout=2)
    assert "127.0.0.1:9" in str(err.value)


async def test_a_call_in_a_frame_fails_at_once_when_the_frame_goes(
    browser: Browser,
    site: FixtureSite,
    second_site: FixtureSite,  # noqa: F811
) -> None:
    """A frame's session is a child of the tab's session, so Chrome says it detached on the
    tab's session; a call still waiting in it must fail then, not wait out its timeout."""
    from core.browser.child_targets import (
        ChildTargets,
    )  # the children of a tab are attached by the guard

    frame = second_site.url("/guard/child-frame.html?who=iframe")
    tab = await browser.new_tab()
    try:
        await ChildTargets.of(browser).install(tab)
        await load(tab, site.url(f"/guard/children.html?frame={quote(frame, safe='')}"))
        await ChildTargets.of(browser).settled()
        [child] = [c for c in ChildTargets.of(browser).children(tab) if c.kind == "iframe"]
        waiting = asyncio.ensure_future(
            child.session.send(
                "Runtime.evaluate",
                {"expression": "new Promise(() => {})", "awaitPromise": True},
                timeout=60,
            )
        )
        await page_eval(tab, "document.querySelector('iframe').remove()")
        with pytest.raises(SessionClosed):
            await waiting
    finally:
        await browser.close_tab(tab)


async def test_commands_sent_back_to_back_reach_the_page_in_order(tab, site: FixtureSite) -> None:
    # The hands send a press and its follow-up move, or a text's keys, without waiting for
    # each answer: the page must still see them in the order sent.
    await load(tab, site.url("/page/counter.html"))
    await page_eval(tab, "document.getElementById('name').focus()")
    text = "the quick brown fox jumps over 13 lazy dogs"
    calls = [("Input.dispatchKeyEvent", e) for c in text for e in char_events(c) or []]
    answers = await tab.session.send_in_order(calls)
    assert len(answers) == len(calls)
    assert await page_eval(tab, "document.getElementById('name').value") == text


async def test_a_failing_command_sent_back_to_back_is_reported_after_the_rest_ran(tab) -> None:
    calls = [
        ("Runtime.evaluate", {"expression": "globalThis.__order = ['first']"}),
        ("DOM.describeNode", {"nodeId": 987654}),
        ("Runtime.evaluate", {"expression": "globalThis.__order.push('third')"}),
    ]
    with pytest.raises(CDPError) as err:
        await tab.session.send_in_order(calls)
    assert "DOM.describeNode" in str(err.value)
    assert await page_eval(tab, "globalThis.__order") == ["first", "third"]


async def test_a_posted_command_runs_before_the_next_and_its_error_is_dropped(tab) -> None:
    # Clean-up sent without waiting: the browser still runs it before what follows, and an
    # error answer to it neither raises nor leaves an unanswered call behind.
    await tab.session.post("Runtime.evaluate", {"expression": "globalThis.__posted = 41"})
    await tab.session.post("DOM.describeNode", {"nodeId": 987654})
    got = await tab.send("Runtime.evaluate", {"expression": "++globalThis.__posted"})
    assert got["result"]["value"] == 42
    assert not tab.session.connection._pending
