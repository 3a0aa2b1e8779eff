"""``handrail mcp --http``: the SDK's own streamable HTTP client drives a real server on
loopback; requests without the token, from another Host or from a web page are refused,
and one session is one run."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from core.audit import read_log, verify
from tests.conftest import browsers_under
from tests.helpers.site_server import FixtureSite
from tests.mcp.test_mcp_server import SHOP, index_of, texts, the_log

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
WAIT = 60.0


class Http:
    def __init__(self, proc: subprocess.Popen[str], url: str, token: str, stderr: Path) -> None:
        self.proc = proc
        self.url = url
        self.token = token
        self.stderr = stderr
        self.port = int(url.rsplit(":", 1)[1].split("/")[0])


@contextlib.contextmanager
def http_server(tmp_path: Path, site: FixtureSite, *options: str) -> Iterator[Http]:
    stderr_path = tmp_path / "server-stderr.txt"
    argv = [
        sys.executable, "-m", "tui.cli.main", "mcp", "--http", "127.0.0.1:0",
        "--headless", "--profile", str(tmp_path / "profile"),
        "--audit-dir", str(tmp_path / "logs"),
        "--allow-domain", f"127.0.0.1:{site.port}", "--start-url", site.url(SHOP),
        *options,
    ]  # fmt: skip
    with stderr_path.open("w") as stderr:
        proc = subprocess.Popen(
            argv,
            cwd=tmp_path,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            start_new_session=True,
        )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # the one line it prints there, once listening
        found = re.search(r"serving MCP at (http://\S+); .*\(token (\S+);", line)
        assert found, line + stderr_path.read_text()
        yield Http(proc, found.group(1), found.group(2), stderr_path)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=WAIT)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


@contextlib.asynccontextmanager
async def client_of(served: Http, token: str | None = None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token or served.token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=WAIT) as http_client,
        streamable_http_client(served.url, http_client=http_client) as (read, write),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        yield client


def status(served: Http, headers: dict[str, str], method: str = "POST") -> int:
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=WAIT)
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    connection.request(
        method,
        "/mcp",
        body=body,
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
    )
    code = connection.getresponse().status
    connection.close()
    return code


async def test_the_sdks_http_client_drives_a_run_and_closing_it_ends_the_run(
    tmp_path: Path, site: FixtureSite
) -> None:
    site.clear()
    with http_server(tmp_path, site, "--approve", "none") as served:
        async with client_of(served) as client:
            listed = {t.name for t in (await client.list_tools()).tools}
            assert {"observe", "click", "type"} <= listed
            box = await index_of(client, "Search the shop")
            typed = await client.call_tool("type", {"index": box, "text": "lamp", "reason": "r"})
            assert not typed.is_error, texts(typed)
            button = await index_of(client, "Search")
            clicked = await client.call_tool("click", {"index": button, "reason": "search"})
            assert "Pressed search" in texts(clicked)
            # One session is one run: a second one is turned away while it lasts.
            with pytest.raises(Exception):  # noqa: B017 (the SDK's error for a 503)
                async with client_of(served):
                    pass
        # The client deleted its session: the run ends, and so does the server.
        assert await asyncio.to_thread(served.proc.wait, WAIT) == 0
    assert [p.json_body for p in site.posts("/agent/submit")] == [
        {"pressed": "search", "query": "lamp"}
    ]
    log = read_log(the_log(tmp_path))
    assert log.records[-1]["type"] == "run_end"
    assert log.records[0]["model"].startswith("MCP client")
    assert verify(the_log(tmp_path)).ok
    assert browsers_under(tmp_path) == []


async def test_without_the_token_from_another_host_or_a_web_page_it_is_refused(
    tmp_path: Path, site: FixtureSite
) -> None:
    with http_server(tmp_path, site, "--approve", "none") as served:
        own = f"127.0.0.1:{served.port}"
        good = {"Host": own, "Authorization": f"Bearer {served.token}"}
        assert status(served, {"Host": own}) == 401
        assert status(served, {**good, "Authorization": "Bearer not-the-token-at-all"}) == 401
        assert status(served, {**good, "Host": f"rebound.example:{served.port}"}) == 403
        assert status(served, {**good, "Origin": "http://evil.example"}) == 403
        assert status(served, {**good, "Host": f"\x1b]52;c;AAAA\x07:{served.port}"}) == 403
        told = served.stderr.read_text()
        assert "refused POST /mcp (no origin): no or wrong token" in told
        assert "requests from web pages are refused" in told
        assert "\x1b" not in told and "\x07" not in told
        assert served.token not in told  # refusals never echo what was sent as a token
        # Refused requests start nothing: the token holder's session is the run's.
        async with client_of(served) as client:
            assert not (await client.call_tool("observe", {})).is_error
        assert await asyncio.to_thread(served.proc.wait, WAIT) == 0


def test_http_is_loopback_only_and_a_token_file_must_be_private(tmp_path: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "tui.cli.main", "mcp", *args],
            cwd=tmp_path,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
            capture_output=True,
            text=True,
            timeout=WAIT,
            check=False,
        )

    wide = run("--http", "0.0.0.0:8766")
    assert wide.returncode == 2 and "only a loopback address" in wide.stderr
    assert run("--http", "8766").returncode == 2
    loose = tmp_path / "token"
    loose.write_text("a-token-long-enough-to-use\n")
    loose.chmod(0o644)
    refused = run("--http", "127.0.0.1:0", "--token-file", str(loose), "--headless")
    assert refused.returncode == 2 and "chmod 600" in refused.stderr
    assert run("--token-file", str(loose)).returncode == 2
