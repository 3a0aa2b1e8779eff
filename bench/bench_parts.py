"""Where the time of an idle click and of a cold digest goes, part by part.

Run: ``.venv/bin/python bench/bench_parts.py [--clicks 21]``

Prints, against a headless Chromium of its own and the fixture site (tests/site/):

- **click trace**: every CDP command of a timed click of tests/site/page/counter.html, with
  its start and duration in ms from the call (medians over ``--clicks`` clicks; a command
  sent in fewer than half of them is left out);
- **Python CPU per click**: user and system time of the event loop's thread
  (``RUSAGE_THREAD``) over the same clicks;
- **round trip**: ``Runtime.evaluate("1")`` back to back, and after 50 ms of quiet;
- **digest parts** on bench_digest's 5,000-row table, each on a freshly loaded copy:
  ``DOM.performSearch`` for the closed-root count's query (``SHADOW_TOP_QUERY``), for one
  that matches every element (the count's query before 2026-12-02) and for one that
  matches nothing as a selector (its plain-text pass alone), and the three selector queries
  a far run of rows makes (core/eyes/walk.js ``countRun``).

Figures on 2026-12-01/02 (shared 2-core machine, load 1-2.6): click trace as in
bench_actions.py's docstring; Python CPU 6.5 ms user + 0.8 ms system per click; round trip
0.7 ms back to back, 2-4 ms after 50 ms of quiet; performSearch 38 ms (plain-text pass 18 ms);
far-run queries 8.4 + 4.7 + 2.3 ms. On 2026-12-02 at 01:50 UTC (load 1.5): performSearch
``:host > *`` 14.8 ms, ``:not(hr-none)`` 22.5 ms, ``<x-none>`` 14.5 ms; far-run queries
8.0 + 7.6 + 3.5 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import bench_digest  # noqa: E402

from core import cdp  # noqa: E402
from core.browser.browser import Browser, Tab  # noqa: E402
from core.browser.launch import LaunchOptions  # noqa: E402
from core.hands import Page  # noqa: E402
from core.world.closed_roots import SHADOW_TOP_QUERY  # noqa: E402
from tests.helpers.site_server import FixtureSite  # noqa: E402


def _far_queries() -> list[str]:
    """The three selectors ``countRun`` queries a far run with, read from core/eyes/walk.js."""
    source = (ROOT / "core" / "eyes" / "walk.js").read_text(encoding="utf-8")
    tags = re.search(r"const TAG_SELECTOR = \[(.*?)\]\.join", source, re.S)
    attrs = re.search(r'const ATTR_SELECTOR = "(.*?)";', source)
    far = re.search(r'const FAR_SENSITIVE = "(.*?)";', source)
    if not (tags and attrs and far):
        raise SystemExit("core/eyes/walk.js no longer defines the far run's selectors here")
    return [",".join(re.findall(r'"(.*?)"', tags.group(1))), attrs.group(1), far.group(1)]


def _what(method: str, params: dict[str, Any] | None) -> str:
    """A command's short name: the hands' API function (core/hands/api.js) a world call names, or the input type."""
    if params and params.get("arguments") and "functionDeclaration" in params:
        return f"{method} {params['arguments'][0].get('value')}"
    if params and "type" in params:
        return f"{method} {params['type']}"
    if params and "expression" in params:
        return f"{method} {str(params['expression'])[:40]}"
    return method


async def click_parts(clicks: int) -> None:
    log: list[tuple[float, float, str]] = []
    original = cdp.CDPConnection.send

    async def traced(self: cdp.CDPConnection, method: str, params: Any = None, **kw: Any) -> Any:
        started = time.perf_counter()
        try:
            return await original(self, method, params, **kw)
        finally:
            log.append((started, time.perf_counter(), _what(method, params)))

    site = FixtureSite()
    with tempfile.TemporaryDirectory(prefix="handrail-bench-") as profile:
        browser = await Browser.launch(LaunchOptions(profile_dir=Path(profile), headless=True))
        page = Page(browser)
        try:
            await page.navigate(site.url("/page/counter.html"))
            snapshot, _ = await page.observe()
            add = next(e.index for e in snapshot.elements.values() if e.name == "Add one")
            await page.click(add)
            rows: dict[tuple[int, str], list[tuple[float, float]]] = {}
            totals = []
            cdp.CDPConnection.send = traced  # type: ignore[method-assign]
            before = resource.getrusage(resource.RUSAGE_THREAD)
            for _ in range(clicks):
                log.clear()
                started = time.perf_counter()
                await page.click(add)
                totals.append((time.perf_counter() - started) * 1000)
                for k, (s, e, what) in enumerate(log):
                    rows.setdefault((k, what), []).append(((s - started) * 1000, (e - s) * 1000))
            after = resource.getrusage(resource.RUSAGE_THREAD)
            cdp.CDPConnection.send = original  # type: ignore[method-assign]
            print(f"click trace (median of {clicks} clicks: {statistics.median(totals):.1f} ms)")
            for (_, what), values in sorted(rows.items()):
                if len(values) * 2 < clicks:
                    continue
                start = statistics.median(v[0] for v in values)
                took = statistics.median(v[1] for v in values)
                print(f"  {what[:70]:<70} start {start:6.1f}  {took:6.1f} ms  ({len(values)})")
            user = (after.ru_utime - before.ru_utime) / clicks * 1000
            system = (after.ru_stime - before.ru_stime) / clicks * 1000
            print(f"Python CPU per click: {user:.1f} ms user, {system:.1f} ms system")
            tab = browser.current
            for label, gap in (("back to back", 0.0), ("after 50 ms of quiet", 0.05)):
                times = []
                for _ in range(40):
                    await asyncio.sleep(gap)
                    started = time.perf_counter()
                    await tab.send("Runtime.evaluate", {"expression": "1", "returnByValue": True})
                    times.append((time.perf_counter() - started) * 1000)
                print(f"round trip, {label}: median {statistics.median(times[5:]):.2f} ms")
        finally:
            cdp.CDPConnection.send = original  # type: ignore[method-assign]
            page.close()
            await browser.close()
            site.stop()


async def _fresh(tab: Tab, url: str) -> None:
    await bench_digest.load(tab, url)
    # As bench_digest does: let the renderer finish painting the big page first.
    await tab.send("Page.getFrameTree", timeout=120)
    await tab.send("DOM.getDocument", {"depth": 0}, timeout=120)


async def digest_parts(repeat: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="handrail-bench-"))
    (folder / "t.html").write_text(bench_digest.table_page(5000))
    server, base = bench_digest.serve(folder)
    with tempfile.TemporaryDirectory(prefix="handrail-bench-") as profile:
        browser = await Browser.launch(LaunchOptions(profile_dir=Path(profile), headless=True))
        try:
            tab = await browser.new_tab()
            searches: dict[str, list[float]] = {}
            for _ in range(repeat):
                for query in (SHADOW_TOP_QUERY, ":not(hr-none)", "<x-none>"):
                    await _fresh(tab, base + "/t.html")
                    started = time.perf_counter()
                    found = await tab.send("DOM.performSearch", {"query": query})
                    searches.setdefault(query, []).append((time.perf_counter() - started) * 1000)
                    await tab.send("DOM.discardSearchResults", {"searchId": found["searchId"]})
            for query, times in searches.items():
                print(f"DOM.performSearch {query!r}: median {statistics.median(times):.1f} ms")
            queries = _far_queries()
            timing = (
                "(() => { const p = document.querySelector('tbody'); const out = [];"
                f" for (const q of {json.dumps(queries)}) {{ const t = performance.now();"
                " p.querySelectorAll(q); out.push(performance.now() - t); } return out; })()"
            )
            rounds = []
            for _ in range(repeat):
                await _fresh(tab, base + "/t.html")
                got = await tab.send(
                    "Runtime.evaluate", {"expression": timing, "returnByValue": True}
                )
                rounds.append(got["result"]["value"])
            medians = [statistics.median(r[k] for r in rounds) for k in range(len(queries))]
            print("far-run queries: " + " + ".join(f"{m:.1f}" for m in medians) + " ms")
        finally:
            await browser.close()
            server.shutdown()


async def main(clicks: int, repeat: int) -> None:
    await click_parts(clicks)
    await digest_parts(repeat)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clicks", type=int, default=21)
    parser.add_argument("--repeat", type=int, default=4, help="fresh page loads per digest part")
    args = parser.parse_args()
    asyncio.run(main(args.clicks, args.repeat))
