"""``handrail mcp`` against ``@playwright/mcp``, side by side: one SDK client, the same
pages, the same Chromium (/usr/bin/chromium), approvals off.

Per step: handrail's ``click`` (its result is the action's and the fresh digest) against
playwright-mcp's ``browser_click`` plus ``browser_snapshot`` (0.0.83's click result links the
snapshot as a file instead of carrying it, so a client that wants to see the page asks for
it). Two figures, each the median over ``--clicks`` steps on each page:

- latency: from sending the call to its result, in the client;
- tokens: of the result's text as the client receives it (o200k_base, offline, through
  ``bpe-openai`` from bench/requirements.txt).

Set-up (bench-only; nothing here is part of handrail)::

    (cd bench/mcp-peer && npm ci --no-audit --no-fund)      # @playwright/mcp, pinned
    .venv-bench/bin/python bench/bench_mcp.py [--clicks 15]

The client runs in ``.venv-bench`` (bench/requirements.txt: its token counter, and the
``mcp`` SDK browser-use pins there); the handrail server it spawns runs in handrail's own
``.venv``, with the SDK version handrail requires.

Measured 2026-12-07 05:14 UTC, load 0.9 (1 min), 15 steps a page, medians, @playwright/mcp
0.0.83 and handrail at de36238 on /usr/bin/chromium 156:

    a small settings page     handrail click  133 ms  136 tokens
                              playwright      558 ms  284 tokens   (tokens 0.48x)
    the demo's search page    handrail click  147 ms  341 tokens
                              playwright      568 ms  788 tokens   (tokens 0.43x)

Latency is about a quarter of playwright-mcp's (most of its ~0.55 s is its own settling
after a click); the tokens a client reads per step are under half. Both issue-36 goals hold
on these two pages; no run_js-heavy or long page is in the set yet.

Each page's button changes the page at every click (a "Saved at …" line), so each result
has something new to say. The servers run one after the other, A then B, per page.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.demo import start_demo_site  # noqa: E402
from tests.helpers.site_server import FixtureSite  # noqa: E402

CHROMIUM = os.environ.get("CHROME_PATH", "/usr/bin/chromium")
QUIET = open(os.devnull, "w")  # noqa: SIM115  # the servers' stderr, for the whole run
HANDRAIL_PYTHON = ROOT / ".venv" / "bin" / "python"
PEER = ROOT / "bench" / "mcp-peer" / "node_modules" / "@playwright" / "mcp" / "cli.js"


def tokens(text: str) -> int:
    from bpe_openai import get_encoding  # type: ignore[import-not-found]

    return len(get_encoding("o200k_base").encode(text))


def text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


@asynccontextmanager
async def client(command: str, args: list[str], cwd: Path) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=command, args=args, cwd=str(cwd), env={"PYTHONPATH": str(ROOT)}
    )
    async with stdio_client(params, errlog=QUIET) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        yield s


async def handrail_clicks(
    url: str, host: str, name: str, n: int, work: Path
) -> list[tuple[float, int]]:
    from core.model.scripted import parse_digest, resolve_target

    args = [
        "-m", "tui.cli.main", "mcp", "--headless", "--approve", "none",
        "--allow-domain", host, "--start-url", url,
        "--audit-dir", str(work / "logs"), "--profile", str(work / "profile"),
    ]  # fmt: skip
    out: list[tuple[float, int]] = []
    work.mkdir(parents=True, exist_ok=True)
    async with client(str(HANDRAIL_PYTHON), args, work) as s:
        state = text_of(await s.call_tool("observe", {}))
        found = resolve_target(name, parse_digest(state[state.index("<browser_state>") :]))
        assert found is not None, state
        for _ in range(n):
            start = time.perf_counter()
            result = await s.call_tool("click", {"index": found.index, "reason": "bench"})
            took = time.perf_counter() - start
            assert not result.is_error, text_of(result)
            out.append((took, tokens(text_of(result))))
    return out


async def peer_clicks(url: str, name: str, n: int, work: Path) -> list[tuple[float, int]]:
    args = [
        str(PEER), "--headless", "--isolated", "--no-sandbox", "--browser", "chromium",
        "--executable-path", CHROMIUM,
    ]  # fmt: skip
    out: list[tuple[float, int]] = []
    work.mkdir(parents=True, exist_ok=True)
    async with client("node", args, work) as s:
        await s.call_tool("browser_navigate", {"url": url})
        snapshot = text_of(await s.call_tool("browser_snapshot", {}))
        found = re.search(rf'button "{re.escape(name)}"[^\n]*\[ref=(e\d+)\]', snapshot)
        assert found is not None, snapshot
        for _ in range(n):
            start = time.perf_counter()
            result = await s.call_tool("browser_click", {"element": name, "target": found.group(1)})
            assert not result.is_error, text_of(result)
            # 0.0.83 writes the page's snapshot to a file and links it: the client that wants
            # to see the page asks for it.
            snapshot = await s.call_tool("browser_snapshot", {})
            took = time.perf_counter() - start
            out.append((took, tokens(text_of(result)) + tokens(text_of(snapshot))))
    return out


def line(label: str, runs: list[tuple[float, int]]) -> str:
    ms = statistics.median(t for t, _ in runs) * 1000
    tok = statistics.median(k for _, k in runs)
    return f"  {label:22} {ms:7.1f} ms   {tok:7.0f} tokens"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clicks", type=int, default=15)
    args = parser.parse_args()
    work = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-mcp-{os.getpid()}"
    work.mkdir(parents=True, exist_ok=True)
    site = FixtureSite("127.0.0.1", root=ROOT / "bench" / "pages")
    demo = start_demo_site()
    pages = [
        ("a small settings page", site.url("/round.html"), f"127.0.0.1:{site.port}", "Save"),
        ("the demo's search page", demo.url, demo.url.removeprefix("http://").rstrip("/"), "Search trains"),
    ]  # fmt: skip
    print(f"load: {os.getloadavg()[0]:.2f} (1 min); {args.clicks} clicks a page, medians")
    try:
        for label, url, host, name in pages:
            mine = await handrail_clicks(url, host, name, args.clicks, work / "h")
            theirs = await peer_clicks(url, name, args.clicks, work / "p")
            print(label)
            print(line("handrail click", mine))
            print(line("playwright click+snap", theirs))
            ratio = statistics.median(k for _, k in mine) / statistics.median(k for _, k in theirs)
            print(f"  tokens: {ratio:.2f}x playwright-mcp's")
    finally:
        site.stop()
        demo.stop()


if __name__ == "__main__":
    asyncio.run(main())
