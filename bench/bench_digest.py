"""Digest time and size against Playwright's aria_snapshot() on generated table pages, and
the digest time of a page with cross-origin frames.

Run: ``.venv/bin/python bench/bench_digest.py [--rows 100 1000 5000] [--repeat 5]
[--frames 10] [--delegated 1000] [--no-playwright]``

Each page is a table whose rows hold a link, a button, an input and text. Both tools drive the
same Chromium (``/usr/bin/chromium`` unless ``CHROME_PATH`` says otherwise), headless, against
the same loopback server, in the same run. For handrail, "cold" is the first digest after a
load (it includes creating our isolated world and installing the page script); "warm" is the
median of the following digests of the same document. Playwright's figure is the median of
``page.locator("body").aria_snapshot()`` calls. The check column verifies that every link,
button and input inside the viewport has a line in the digest.

The frames page (``--frames N``, 0 to skip) holds N iframes of 50 interactive elements each,
served from 127.0.0.2 (another site, so each frame is out of process and read through its
own CDP session); "cold" there also creates our world in every frame. Its check verifies that
every frame's 50 elements are listed under its header.

Figures on 2026-12-01 (shared 2-core machine, other Chromium tests running), 5,000 rows:
cold 92-105 ms, warm 54-68 ms (main before issue 9, run alternately with it: cold 200-281 ms,
warm 66-95 ms); 10 out-of-process frames x 50 elements: cold 394-415 ms, warm 137-143 ms.

Later the same day, ``--rows 5000 --frames 10 --no-playwright`` (``--repeat 9`` after):
at load 0.3-2.6, before the closed-root count and the shared judge: cold 151-177 ms, warm
112-164 ms; frames cold 483-863 ms, warm 220-236 ms. With them, alternating with main at load
18-22 (figures 4-8x the quiet ones): main cold 599-1239 ms, warm 562-652 ms; this code cold
613-1531 ms, warm 552-806 ms, of which the closed-root count took 134-318 ms (its CDP search
is ~25 ms when the machine is quiet); frames main cold 1.7-2.0 s, warm 0.9-1.4 s, this code
cold 3.9-4.4 s (a count in each frame's renderer, and the judge's first call in each new
world), warm 0.70-0.72 s.

Issue 15 (widget states, SVG, icon names, list items; no listener discovery yet), 12:11-12:13
UTC, ``--rows 5000 --frames 0 --no-playwright``, alternating with main at load 9-11: this code
cold 280-906 ms, warm 183-251 ms; main cold 274-742 ms, warm 256-516 ms. The spread is the
machine's; no difference shows between the two.

The delegated page (``--delegated N``, 0 to skip) holds N cells handled by one plain listener
on their list (``data-action``) and, when tests/site/node_modules has jQuery, N ``<a title>``
handled by one jQuery delegated handler; it is digested with listener discovery on and off.

Issue 15 (scroll areas, listener discovery), 13:30 UTC, ``--rows 5000 --frames 10
--no-playwright --repeat 5`` before the change at load 0.7-4.1: cold 154-295 ms (closed-root
count 50-73 ms of it), warm 103-259 ms. After, 14:28-14:33 UTC, alternating with main at load
12-24 (4-8x the quiet figures): main cold 301-1042 ms, warm 635-1206 ms (closed-root count cold
66-109 ms); this code cold 426-1316 ms, warm 963-1256 ms (closed-root count cold 152-221 ms,
listener discovery cold 32-62 ms, warm 22-172 ms, for no listener on the page). Delegated page,
1,000 items x 2 lists: discovery cold 72-444 ms, warm 103-138 ms; digest with discovery on cold
1.7-3.1 s, warm 2.0-2.8 s (1,757 elements listed), off cold 0.3-2.1 s, warm 0.2-0.7 s (none
listed): most of the difference is listing the 1,757 cells, not finding them.

Later that day (far rows counted as runs, our world ready at document start, smaller
answers; "cold" now follows ``follow_frames`` as a run does), ``--rows 5000 --frames 0
--no-playwright --repeat 5 --delegated 0``, 11 launches at 18:17-18:18 UTC, load 1.5-2.6:
cold median 161 ms (127-201), warm 87-146 ms; closed-root count cold 36-58 ms, listener
discovery cold 12-18 ms. Before (7671d7f, 16:38 UTC, load 1.2): cold 210 ms, warm 141 ms.
Where a cold digest's time goes (best run, 127 ms): about 31 ms of CDP audits the renderer
runs one after another (reach 7, getEventListeners 8, DOM.performSearch 24), the walk 79 ms
(54 ms warm: its code is not yet optimised), 13 ms copying the answer, 4 ms in Python.

2026-12-01 23:47 UTC (ddf3cf4, no change to the eyes since), 5 launches at load 1.2-2.6:
cold 129, 144, 181, 185, 206 ms (median 181), warm 101-163 ms; closed-root count cold 33-49
ms, listener discovery cold 30-50 ms (most of it waiting behind the count in the renderer).
Measured apart, on a freshly loaded copy of the page: ``DOM.performSearch`` for
``:not(hr-none)`` takes 38 ms, of which 18 ms is its plain-text pass (a query that matches
nothing as a selector, ``<x-none>``, takes 18 ms); the three selector queries of a far run
8.4 + 4.7 + 2.3 ms; one query of their union plus sorting its 15,000 answers in our world,
34 ms against 25 ms for the three (so the three stay); returning the digest as one JSON
string instead of an object saves 2-3 ms of the 10-12 ms copy (left as it is); V8's
``//# allFunctionsCalledOnLoad`` hint on our world's script made cold no faster (cold 164-204
ms with it, 137-184 without, alternately).

2026-12-02 01:36-02:34 UTC (the closed-root count's query ``:host > *``, the count sent before
our world's contexts are looked up, the judge's one-expression reject), ``--rows 5000
--frames 0 --no-playwright --delegated 0``, alternating with 95d7cfc in 6 series at load
0.4-3.9: cold median over 46 launches 136 ms (quartiles 112/162; 31 of 46 under 150 ms)
against 151 ms (132/176; 23 of 46) before; the series' medians 114-163 ms against 128-170.
Closed-root count cold 12-30 ms (37-49 before), listener discovery cold 4-10 ms (35-43
before: it waited behind the count). The first observation after the navigate action (the
line added that day), 8 launches each at load 2-4: median 143 ms against 159. Tried and
dropped the same day: V8's ``--always-sparkplug`` and ``--no-lazy`` (no difference); one
selector query for all three of a far run's selectors takes 10 ms against 18.7 for the three,
but telling its answers apart needs each element in our world (the 34 ms above). A walk
in our world while the page is idle after its load would make the first digest warm (a dry
walk before it: 113 ms median against 133 for the same wait without it) but moves that
cost onto every page load, and does not change the figure right after the load event.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core.browser.browser import Browser, Tab  # noqa: E402
from core.browser.launch import LaunchOptions  # noqa: E402
from core.eyes.snapshot import SnapshotOptions, follow_frames, take_snapshot  # noqa: E402
from core.hands import Page  # noqa: E402
from core.world.calls import world_call  # noqa: E402

CHROME = os.environ.get("CHROME_PATH", "/usr/bin/chromium")
PW_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def table_page(rows: int) -> str:
    body = "".join(
        f"<tr><td><a href='/row/{i}'>Row {i}</a></td>"
        f"<td><button type=button>Edit {i}</button></td>"
        f"<td><input name='qty{i}' placeholder='Quantity'></td>"
        f"<td>Item {i} ships in {i % 7 + 1} days from warehouse {i % 13}</td></tr>"
        for i in range(1, rows + 1)
    )
    return (
        "<!doctype html><meta charset=utf-8><title>Table of "
        f"{rows} rows</title><h1>Orders</h1><table><tbody>{body}</tbody></table>"
    )


FRAME_ELEMENTS = 50
JQUERY = ROOT / "tests" / "site" / "node_modules" / "jquery" / "dist" / "jquery.min.js"


def delegated_page(items: int, jquery: bool) -> str:
    """``items`` calendar-like cells with no href, role or tabindex, whose clicks one handler on
    their list acts on: a plain listener reading ``data-action``, and (with jQuery) as many
    ``<a title>`` handled by ``$(list).on("click", "a[title]", f)``."""
    plain = "".join(f"<li><span data-action='open-{i}'>Day {i}</span></li>" for i in range(items))
    script = (
        "<script>document.getElementById('plain').addEventListener('click', (e) => {"
        " const t = e.target.closest('[data-action]'); if (t) document.title = t.dataset.action;"
        " });</script>"
    )
    body = f"<ul id=plain>{plain}</ul>{script}"
    if jquery:
        linked = "".join(f"<li><a title='Pick {i}'>{i}</a></li>" for i in range(items))
        body += (
            f"<ul id=jq>{linked}</ul><script src=jquery.min.js></script><script>"
            "$('#jq').on('click', 'a[title]', function () { document.title = this.title; });"
            "</script>"
        )
    return (
        "<!doctype html><meta charset=utf-8><title>Delegated</title><style>li{display:inline-block;"
        f"width:60px}}</style>{body}"
    )


def frames_page(frames: int, frame_origin: str) -> str:
    """``frames`` iframes from ``frame_origin``, two per row, all within the listing margin."""
    body = "".join(
        f"<iframe title='Partner {k}' src='{frame_origin}/frame.html?k={k}'"
        " style='width:620px;height:330px;border:0'></iframe>"
        for k in range(1, frames + 1)
    )
    return f"<!doctype html><meta charset=utf-8><title>{frames} frames</title>{body}"


def frame_page() -> str:
    """50 interactive elements in a grid of 5 columns."""
    cells = []
    for i in range(1, FRAME_ELEMENTS + 1):
        if i % 3 == 0:
            cells.append(f"<input name='f{i}' placeholder='Field {i}'>")
        elif i % 3 == 1:
            cells.append(f"<button type=button>Button {i}</button>")
        else:
            cells.append(f"<a href='/x/{i}'>Link {i}</a>")
    grid = "".join(f"<div>{c}</div>" for c in cells)
    return (
        "<!doctype html><meta charset=utf-8><title>Partner frame</title><style>"
        "body{margin:0;display:grid;grid-template-columns:repeat(5,120px);grid-auto-rows:30px}"
        "input{width:100px}</style>" + grid
    )


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def serve(directory: Path, host: str = "127.0.0.1") -> tuple[ThreadingHTTPServer, str]:
    handler = lambda *a, **kw: _Quiet(*a, directory=str(directory), **kw)  # noqa: E731
    server = ThreadingHTTPServer((host, 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://{host}:{server.server_address[1]}"


async def load(tab: Tab, url: str) -> None:
    loaded = tab.session.expect("Page.loadEventFired")
    await tab.send("Page.navigate", {"url": url})
    async with asyncio.timeout(60):
        await loaded


MISSING_JS = """function (listed) {
  const shown = new Set(listed);
  let inView = 0, missing = 0;
  for (const el of document.querySelectorAll('a, button, input')) {
    const r = el.getBoundingClientRect();
    if (r.bottom <= 0 || r.top >= innerHeight || r.right <= 0 || r.left >= innerWidth) continue;
    inView++;
    if (!shown.has(globalThis.__handrail.indexOf(el))) missing++;
  }
  return [inView, missing];
}"""


async def bench_handrail(
    url: str, repeat: int, options: SnapshotOptions | None = None
) -> dict[str, Any]:
    profile = Path(tempfile.mkdtemp(prefix="handrail-bench-"))
    browser = await Browser.launch(
        LaunchOptions(executable=CHROME, profile_dir=profile, headless=True)
    )
    try:
        await follow_frames(browser)  # as a run does (core/run/session.py)
        tab = await browser.new_tab()
        await load(tab, url)
        # The renderer is still busy painting a big page after its load event; wait for it
        # (a round trip through the page's main thread) so "cold" measures us, not that.
        await tab.send("Page.getFrameTree", timeout=120)
        await tab.send("DOM.getDocument", {"depth": 0}, timeout=120)
        started = time.perf_counter()
        snap = await take_snapshot(tab, options=options)
        cold = time.perf_counter() - started
        roots_cold = roots_ms(snap.stats)
        listeners_cold = listeners_ms(snap.stats)
        warm: list[float] = []
        walk: list[float] = []
        roots: list[float] = []
        listen: list[float] = []
        for _ in range(repeat):
            started = time.perf_counter()
            snap = await take_snapshot(tab, options=options)
            warm.append(time.perf_counter() - started)
            walk.append(float(snap.stats["total_ms"]))
            roots.append(roots_ms(snap.stats))
            listen.append(listeners_ms(snap.stats))
        in_view, missing = await world_call(tab, MISSING_JS, sorted(snap.elements))
        return {
            "cold": cold,
            "warm": statistics.median(warm),
            "walk_ms": statistics.median(walk),
            "roots_cold": roots_cold,
            "roots_warm": statistics.median(roots),
            "listeners_cold": listeners_cold,
            "listeners_warm": statistics.median(listen),
            "chars": len(snap.text),
            "listed": len(snap.elements),
            "in_view": in_view,
            "missing": missing,
            "truncated": snap.truncated is not None,
            "tail": snap.text.splitlines()[-1],
        }
    finally:
        await browser.close()


async def bench_navigated(url: str) -> dict[str, float]:
    """The first observation of a page as a run makes it: after core.hands's ``navigate``
    action (whose settle waits for the load, then for half a second without requests),
    ``Page.observe()``, in a browser of its own. Also what the digest's walk took."""
    profile = Path(tempfile.mkdtemp(prefix="handrail-bench-"))
    browser = await Browser.launch(
        LaunchOptions(executable=CHROME, profile_dir=profile, headless=True)
    )
    page = Page(browser)
    try:
        await follow_frames(browser)  # as a run does (core/run/session.py)
        went = await page.navigate(url)
        if not went.ok:
            raise SystemExit(f"could not open {url}: {went.message}")
        started = time.perf_counter()
        snap, _ = await page.observe()
        return {"cold": time.perf_counter() - started, "walk_ms": float(snap.stats["total_ms"])}
    finally:
        page.close()
        await browser.close()


def listeners_ms(stats: dict[str, Any]) -> float:
    """Time listener discovery took in a digest (0 when it was off)."""
    got = stats.get("listeners")
    return float(got["ms"]) if isinstance(got, dict) else 0.0


def roots_ms(stats: dict[str, Any]) -> float:
    """Time the closed-root count took in a digest (all sessions; 0 before it existed)."""
    return sum(float(r["ms"]) for r in stats.get("roots", []) if isinstance(r, dict))


async def bench_frames(url: str, frames: int, repeat: int) -> dict[str, Any]:
    profile = Path(tempfile.mkdtemp(prefix="handrail-bench-"))
    browser = await Browser.launch(
        LaunchOptions(executable=CHROME, profile_dir=profile, headless=True)
    )
    try:
        await follow_frames(browser)
        tab = await browser.new_tab()
        await load(tab, url)
        await tab.send("Page.getFrameTree", timeout=120)
        started = time.perf_counter()
        snap = await take_snapshot(tab)
        cold = time.perf_counter() - started
        warm: list[float] = []
        for _ in range(repeat):
            started = time.perf_counter()
            snap = await take_snapshot(tab)
            warm.append(time.perf_counter() - started)
        per_frame = [
            sum(1 for e in snap.elements.values() if e.frame_label == f.label)
            for f in snap.frames
            if f.cross_origin
        ]
        return {
            "cold": cold,
            "warm": statistics.median(warm),
            "frames_read": len(per_frame),
            "complete": sum(1 for n in per_frame if n == FRAME_ELEMENTS),
            "listed": len(snap.elements),
            "chars": len(snap.text),
        }
    finally:
        await browser.close()


async def bench_playwright(urls: list[str], repeat: int) -> dict[str, dict[str, float]]:
    from playwright.async_api import async_playwright

    out: dict[str, dict[str, float]] = {}
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROME, args=PW_ARGS, headless=True)
        page = await browser.new_page(viewport={"width": 1280, "height": 900})
        for url in urls:
            await page.goto(url, wait_until="load", timeout=120_000)
            times: list[float] = []
            size = 0
            for _ in range(repeat):
                started = time.perf_counter()
                text = await page.locator("body").aria_snapshot(timeout=120_000)
                times.append(time.perf_counter() - started)
                size = len(text)
            out[url] = {"time": statistics.median(times), "chars": size}
        await browser.close()
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[100, 1000, 5000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--frames", type=int, default=10)
    parser.add_argument("--no-playwright", action="store_true")
    parser.add_argument(
        "--delegated",
        type=int,
        default=1000,
        help="items on the delegated-handlers page (listener discovery's cost); 0 to skip",
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="handrail-bench-site-") as tmp:
        site = Path(tmp)
        for rows in args.rows:
            (site / f"rows{rows}.html").write_text(table_page(rows), encoding="utf-8")
        (site / "frame.html").write_text(frame_page(), encoding="utf-8")
        jquery = JQUERY.is_file()
        if jquery:
            (site / "jquery.min.js").write_bytes(JQUERY.read_bytes())
        (site / "delegated.html").write_text(delegated_page(args.delegated, jquery), "utf-8")
        server, origin = serve(site)
        frame_server, frame_origin = serve(site, "127.0.0.2")
        (site / "frames.html").write_text(frames_page(args.frames, frame_origin), "utf-8")
        try:
            urls = {rows: f"{origin}/rows{rows}.html" for rows in args.rows}
            ours = {rows: await bench_handrail(url, args.repeat) for rows, url in urls.items()}
            navigated = {rows: await bench_navigated(url) for rows, url in urls.items()}
            delegated = (
                {
                    on: await bench_handrail(
                        f"{origin}/delegated.html", args.repeat, SnapshotOptions(listeners=on)
                    )
                    for on in (True, False)
                }
                if args.delegated
                else None
            )
            framed = (
                await bench_frames(f"{origin}/frames.html", args.frames, args.repeat)
                if args.frames
                else None
            )
            theirs = (
                {}
                if args.no_playwright
                else await bench_playwright(list(urls.values()), args.repeat)
            )
        finally:
            server.shutdown()
            frame_server.shutdown()

    print(
        f"{'rows':>6} | {'handrail cold':>13} | {'warm (median)':>13} | {'in-page':>8} | "
        f"{'chars':>7} | {'listed':>6} | {'in view ok':>10} | {'playwright':>10} | "
        f"{'pw chars':>9} | {'ratio':>6}"
    )
    print("-" * 112)
    ok = True
    for rows, url in urls.items():
        h, p = ours[rows], theirs.get(url, {"time": float("nan"), "chars": 0})
        check = f"{h['in_view'] - h['missing']}/{h['in_view']}"
        ok = ok and h["missing"] == 0 and h["chars"] <= 40_000
        print(
            f"{rows:>6} | {h['cold'] * 1000:>10.0f} ms | {h['warm'] * 1000:>10.0f} ms | "
            f"{h['walk_ms']:>5.0f} ms | {h['chars']:>7,} | {h['listed']:>6} | {check:>10} | "
            f"{p['time'] * 1000:>7.0f} ms | {int(p['chars']):>9,} | "
            f"{p['time'] / max(h['warm'], 1e-9):>5.1f}x"
        )
    for rows in urls:
        print(
            f"{rows:>6} rows, first observation after the navigate action (a run's first "
            f"round): {navigated[rows]['cold'] * 1000:.0f} ms (walk {navigated[rows]['walk_ms']:.0f} ms)"
        )
    for rows in urls:
        print(f"{rows:>6} rows, last line: {ours[rows]['tail']}")
        print(
            f"{rows:>6} rows, closed-root count (part of the above): "
            f"cold {ours[rows]['roots_cold']:.0f} ms, warm {ours[rows]['roots_warm']:.0f} ms"
        )
    for rows in urls:
        print(
            f"{rows:>6} rows, listener discovery (part of the above): "
            f"cold {ours[rows]['listeners_cold']:.0f} ms, warm {ours[rows]['listeners_warm']:.0f} ms"
        )
    if delegated is not None:
        on, off = delegated[True], delegated[False]
        print(
            f"{args.delegated} delegated items x {2 if jquery else 1} lists"
            f"{'' if jquery else ' (no jQuery in tests/site/node_modules: plain listener only)'}:"
            f" discovery on: cold {on['cold'] * 1000:.0f} ms, warm {on['warm'] * 1000:.0f} ms"
            f" (discovery cold {on['listeners_cold']:.0f} ms, warm {on['listeners_warm']:.0f} ms),"
            f" {on['listed']} listed; off: cold {off['cold'] * 1000:.0f} ms,"
            f" warm {off['warm'] * 1000:.0f} ms, {off['listed']} listed"
        )
    if framed is not None:
        ok = ok and framed["complete"] == args.frames
        print(
            f"{args.frames} cross-origin frames x {FRAME_ELEMENTS} elements: "
            f"cold {framed['cold'] * 1000:.0f} ms, warm (median) {framed['warm'] * 1000:.0f} ms, "
            f"{framed['frames_read']} frames read, {framed['complete']} complete, "
            f"{framed['listed']} listed, {framed['chars']:,} chars"
        )
    print("all checks passed" if ok else "CHECK FAILED: see the table")


if __name__ == "__main__":
    asyncio.run(main())
