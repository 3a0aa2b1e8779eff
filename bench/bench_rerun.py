"""Rerun: the demo repeated from its log against the original scripted run, and the time to
find one step's target again on the 5,000-row page.

Run: ``.venv/bin/python bench/bench_rerun.py [--repeat 3] [--match-repeat 20] [--rows 5000]``

1. **Demo.** The demo's scripted plan runs to the payment hand-over on a fresh Rail & Co
   (``--approve none``, headless, console supervisor: exit 3 at the hand-over), then
   ``handrail rerun`` repeats its log with ``--rebase`` onto another fresh site, with no model
   (a step that did not fit would stop it with exit 1, so exit 3 at the same hand-over means
   every step was found again). Wall time of each, from settings to the run's end (Chrome's
   start included in both), alternating, ``--repeat`` times; the rerun's model calls are
   counted by the plan.
2. **Matching.** The 5,000-row table of bench_digest.py is observed twice, in two loads of the
   same tab (so every index differs, as in a rerun). For targets at the start, middle and end
   of the first digest, the time to parse the second digest and find the target in it
   (:func:`core.rerun.read_digest` + :func:`core.rerun.find_target`, what a replayed round
   adds), median of ``--match-repeat``.

Figures on 2026-12-01, shared 2-core machine with other engineers' Chromium tests running:
14:35-14:38 UTC, ``--repeat 3``: scripted 22.9 / 30.5 / 23.3 s, rerun 27.8 / 28.7 / 19.0 s,
both exit 3 at the payment hand-over, rerun model calls 0 (13:57 UTC: scripted 19.6 / 19.5 s,
rerun 17.7 / 21.5 s). The scripted run has no model latency either, so the two are the same
work (page loads, settling, the agent's observations) and differ by the machine's noise; a run
with a real model adds its seconds per round, which the rerun does not pay. Matching on the
5,000-row page (the digest as the model gets it: 15,078 characters, 234 elements listed):
7-11 ms per step (13:59 UTC: 4-23 ms), most of it parsing the live digest.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.bench_digest import CHROME, load, serve, table_page  # noqa: E402
from core.browser.browser import Browser  # noqa: E402
from core.browser.launch import LaunchOptions  # noqa: E402
from core.demo import start_demo_site  # noqa: E402
from core.eyes.snapshot import take_snapshot  # noqa: E402
from core.model.envelope import wrap  # noqa: E402
from core.rerun import Rebase, find_target, read_digest, recorded_entry  # noqa: E402
from core.rerun.rerun import NO_MODEL, Rerun, run_rerun  # noqa: E402
from core.run.session import run_session  # noqa: E402
from tui.cli.demo import demo_settings  # noqa: E402
from tui.cli.main import build_parser  # noqa: E402
from tui.console import ConsoleSupervisor  # noqa: E402


async def demo_pair(work: Path) -> tuple[float, float, int, int, int]:
    """(scripted s, rerun s, scripted exit, rerun exit, rerun model calls)."""
    recorded_site, fresh_site = start_demo_site(), start_demo_site()
    try:
        logs = work / "logs"
        args = build_parser().parse_args(
            ["demo", "--headless", "--approve", "none", "--no-tui", "--audit-dir", str(logs)]
        )
        settings = demo_settings(args, site_url=recorded_site.url, work=work)
        started = time.perf_counter()
        first = await run_session(settings, supervisor=ConsoleSupervisor(interactive=False))
        scripted = time.perf_counter() - started
        (log,) = logs.glob("*.jsonl")
        rerun = Rerun.load(log, [fresh_site.url])
        rerun_settings = rerun.settings(
            settings.__class__(
                task="",
                model_spec=NO_MODEL,
                approve="none",
                headless=True,
                profile=work / "rerun-profile",
                audit_dir=work / "rerun-logs",
            )
        )
        started = time.perf_counter()
        again, plan = await run_rerun(
            rerun, rerun_settings, supervisor=ConsoleSupervisor(interactive=False)
        )
        repeated = time.perf_counter() - started
        return scripted, repeated, first.exit_code, again.exit_code, plan.model_requests
    finally:
        recorded_site.stop()
        fresh_site.stop()


async def observations(url: str) -> tuple[str, str]:
    """The page's observation in two loads of one tab (every index differs)."""
    profile = Path(tempfile.mkdtemp(prefix="handrail-bench-"))
    browser = await Browser.launch(
        LaunchOptions(executable=CHROME, profile_dir=profile, headless=True)
    )
    try:
        tab = await browser.new_tab()
        texts = []
        for _ in range(2):
            await load(tab, url)
            await tab.send("DOM.getDocument", {"depth": 0}, timeout=120)
            snap = await take_snapshot(tab)
            texts.append(wrap([snap.header()], snap.text))
        return texts[0], texts[1]
    finally:
        await browser.close()


def match_times(recorded: str, live: str, repeat: int) -> list[tuple[str, float, bool]]:
    entries = read_digest(recorded).entries
    picks = [entries[0], entries[len(entries) // 2], entries[-1]]
    out = []
    for pick in picks:
        target = recorded_entry(pick.element.line, recorded)
        assert target is not None
        url = read_digest(recorded).url
        times = []
        found = False
        for _ in range(repeat):
            started = time.perf_counter()
            fit = find_target(target, url, read_digest(live), Rebase())
            times.append(time.perf_counter() - started)
            found = fit.found is not None and fit.found.element.name == pick.element.name
        out.append((pick.element.line, statistics.median(times), found))
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--match-repeat", type=int, default=20)
    parser.add_argument("--rows", type=int, default=5000)
    args = parser.parse_args()

    print("demo: scripted run vs rerun of its log (wall time, exit code, rerun model calls)")
    for n in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="handrail-bench-rerun-") as tmp:
            scripted, repeated, code1, code2, calls = await demo_pair(Path(tmp))
        print(
            f"  #{n + 1}: scripted {scripted:6.2f} s (exit {code1}) | rerun {repeated:6.2f} s "
            f"(exit {code2}) | model calls {calls}"
        )

    with tempfile.TemporaryDirectory(prefix="handrail-bench-site-") as tmp:
        site = Path(tmp)
        (site / "rows.html").write_text(table_page(args.rows), encoding="utf-8")
        server, origin = serve(site)
        try:
            recorded, live = await observations(f"{origin}/rows.html")
        finally:
            server.shutdown()
    count = len(read_digest(live).entries)
    print(f"matching on the {args.rows:,}-row page ({len(live):,} chars, {count} elements listed)")
    for line, seconds, found in match_times(recorded, live, args.match_repeat):
        print(f"  {seconds * 1000:7.2f} ms  {'found' if found else 'NOT FOUND'}  {line}")


if __name__ == "__main__":
    asyncio.run(main())
