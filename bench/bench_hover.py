"""What a hover costs: the whole action, and the look at the page before and after it.

A hover finds what appeared by listing the elements shown before the move and after it
(hover.js ``hoverBaseline`` / ``hoverAppeared``, each one walk of the element's document,
at most 20,000 elements). This bench times that walk on a table of N rows (each row a link,
a button, an input and text: 7 elements) with a CSS hover menu above it, and the whole
hover action as the agent calls it, whose floor is the 0.5 s the page's clock runs past the
move (``core.hands.hover.HOVER_QUIET``), next to a click on the same element.

    .venv/bin/python bench/bench_hover.py [--rows 100 5000] [--reps 9]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_digest import CHROME, serve, table_page
from core.browser.browser import Browser
from core.browser.launch import LaunchOptions
from core.hands import Page
from core.hands.ctx import Ctx, js

MENU = (
    "<style>#m ul{display:none}#m:hover ul{display:block}</style>"
    "<nav><ul><li id=m><a href='#f'>File</a><ul><li><a href='#n'>New</a></li>"
    "<li><a href='#e'>Export</a></li></ul></li></ul></nav>"
)


def _figures(times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
    return f"median {statistics.median(ordered):7.1f} ms, p95 {p95:7.1f} ms"


async def bench(url: str, reps: int) -> tuple[list[float], list[float], list[float]]:
    profile = Path(tempfile.mkdtemp(prefix="handrail-bench-"))
    browser = await Browser.launch(
        LaunchOptions(executable=CHROME, profile_dir=profile, headless=True)
    )
    walks: list[float] = []
    hovers: list[float] = []
    clicks: list[float] = []
    try:
        await browser.new_tab()
        page = Page(browser, action_timeout=60)
        for _ in range(reps):
            assert (await page.navigate(url)).ok
            snapshot, _ = await page.observe()
            index = next(e.index for e in snapshot.elements.values() if e.name == "File")

            loop = asyncio.get_running_loop()
            ctx = Ctx(name="bench", deadline=loop.time() + 30, hands=page._hands)
            ctx.tab = browser.current
            started = time.perf_counter()
            await js(ctx, "hoverBaseline", index)
            await js(ctx, "hoverAppeared", index)
            walks.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            result = await page.hover(index)
            hovers.append((time.perf_counter() - started) * 1000)
            if not result.ok or "'Export'" not in result.message:
                raise SystemExit(f"the hover did not show the menu: {result.message}")
            # For comparison: a click on the same element, the same checks and a settle.
            started = time.perf_counter()
            result = await page.click(index)
            clicks.append((time.perf_counter() - started) * 1000)
            if not result.ok:
                raise SystemExit(f"the click failed: {result.message}")
        page.close()
    finally:
        await browser.close()
    return walks, hovers, clicks


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[100, 5000])
    parser.add_argument("--reps", type=int, default=9)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="handrail-bench-pages-"))
    for rows in args.rows:
        html = table_page(rows).replace("<h1>Orders</h1>", MENU + "<h1>Orders</h1>")
        (folder / f"hover-{rows}.html").write_text(html, encoding="utf-8")
    server, origin = serve(folder)
    try:
        for rows in args.rows:
            walks, hovers, clicks = await bench(f"{origin}/hover-{rows}.html", args.reps)
            print(f"{rows:>6} rows: both walks {_figures(walks)}")
            print(f"{'':>6}       hover      {_figures(hovers)}")
            print(f"{'':>6}       click      {_figures(clicks)}")
    finally:
        server.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
