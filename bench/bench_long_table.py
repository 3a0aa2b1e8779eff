"""A long table away from its top: the digest scrolled to its middle, and the probe the
hands take before and after every action.

Run: ``.venv/bin/python bench/bench_long_table.py [--rows 5000] [--repeat 5]``

The page is bench_digest.py's table (a link, a button, an input and text per row). After a
first digest at the top (as a run makes one), the bench times ``core.eyes.snapshot.probe`` there,
then scrolls to the middle row and times the digest there (median of ``--repeat``, with the
walk's own time and the number of nodes it visited).

Figures on 2026-12-01, 5,000 rows, 18:41 UTC, load 1.3 (throwaway scripts that became this
one): probe 120-170 ms before far runs were skipped, 21 ms after; scrolled to row 2,500,
digest 257 ms (walk 178 ms, 3,504 nodes) before the rows far above became a run, 214 ms
(walk 127 ms, 1,053 nodes) after.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from bench_digest import CHROME, load, serve, table_page  # noqa: E402

from core.browser.browser import Browser  # noqa: E402
from core.browser.launch import LaunchOptions  # noqa: E402
from core.eyes.snapshot import follow_frames, probe, take_snapshot  # noqa: E402
from core.world.calls import world_eval  # noqa: E402


async def measure(rows: int, repeat: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="handrail-bench-"))
    (folder / "table.html").write_text(table_page(rows), encoding="utf-8")
    server, origin = serve(folder)
    browser = await Browser.launch(
        LaunchOptions(executable=CHROME, profile_dir=folder / "profile", headless=True)
    )
    try:
        await follow_frames(browser)
        tab = await browser.new_tab()
        await load(tab, f"{origin}/table.html")
        await take_snapshot(tab)
        probes = []
        for _ in range(repeat * 2):
            started = time.perf_counter()
            await probe(tab)
            probes.append((time.perf_counter() - started) * 1000)
        middle = rows // 2
        await world_eval(tab, f"document.querySelectorAll('tr')[{middle}].scrollIntoView(), 1")
        digests, walks, nodes = [], [], 0
        for _ in range(repeat):
            started = time.perf_counter()
            snap = await take_snapshot(tab)
            digests.append((time.perf_counter() - started) * 1000)
            walks.append(float(snap.stats["total_ms"]))
            nodes = int(snap.stats["nodes"])
        print(f"load: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores, {rows} rows")
        print(f"probe at the top        median {statistics.median(probes):6.1f} ms")
        print(
            f"digest at row {middle:<9} median {statistics.median(digests):6.1f} ms"
            f"  (walk {statistics.median(walks):.1f} ms, {nodes} nodes visited)"
        )
    finally:
        await browser.close()
        server.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(measure(args.rows, args.repeat))


if __name__ == "__main__":
    main()
