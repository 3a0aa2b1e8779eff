"""Harness overhead per round, without a model: observe + gate + act + read back + record.

Runs the real agent loop (run_session: audit log fsynced each record, headless Chromium)
on a simple local page with a scripted plan, so the model's own time is ~0 and what is
measured is handrail. Two plans: "interact" alternates clicks and typing (the act includes
the deliberate settle that lets the page react: stability frames, a short hover, a 100 ms
quiet floor after clicks and 300 ms after typing); "bookkeeping" uses wait{0}, which has no
settle, so its rounds are handrail's own cost (observe, parse, gate, events, fsynced audit
records). Reports median and p95 of RoundStarted -> ActionDone, split into observe and act.

    .venv/bin/python bench/bench_round.py [--rounds 60]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.guard.decision import ApprovalDecision
from core.run.events import (
    ActionDone,
    ApprovalRequest,
    Event,
    HumanRequest,
    HumanResponse,
    Observed,
    RoundStarted,
)
from core.run.session import RunSettings, run_session


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


class NoOne:
    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        raise AssertionError("--approve none: nothing should ask")

    async def human(self, request: HumanRequest) -> HumanResponse:
        return "abort"


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


async def measure(
    url: str, work: Path, name: str, steps: list[dict[str, object]], rounds: int
) -> None:
    plan = work / f"{name}.jsonl"
    with plan.open("w") as f:
        for i in range(rounds - 1):
            f.write(json.dumps(steps[i % len(steps)]) + "\n")
        f.write(json.dumps({"tool": "finish", "input": {"success": True, "answer": "done"}}) + "\n")

    marks: dict[int, dict[str, float]] = {}

    def sink(event: Event) -> None:
        now = time.perf_counter()
        if isinstance(event, RoundStarted):
            marks[event.round] = {"start": now}
        elif isinstance(event, Observed):
            marks[event.round]["observe_ms"] = event.duration_ms
        elif isinstance(event, ActionDone):
            marks[event.round]["end"] = now
            marks[event.round]["act_ms"] = event.duration_ms

    settings = RunSettings(
        task="benchmark",
        start_url=url,
        model_spec=f"scripted:{plan}",
        approve="none",
        headless=True,
        profile=work / f"profile-{name}",
        audit_dir=work / "logs",
        max_rounds=rounds,
    )
    finished = await run_session(settings, supervisor=NoOne(), sinks=[sink])
    assert finished.outcome == "success", finished
    # Skip the first rounds (world creation, first paint) and the finish round.
    rows = [m for n, m in sorted(marks.items()) if 3 < n < rounds and "end" in m]
    total = [(m["end"] - m["start"]) * 1000 for m in rows]
    observe = [m["observe_ms"] for m in rows]
    act = [m["act_ms"] for m in rows]
    print(
        f"\n{name}: {len(rows)} rounds measured (of {rounds}); scripted plan, --approve none, audit fsync on"
    )
    print(f"{'':12} {'median':>9} {'p95':>9}")
    for label, values in (("round", total), ("observe", observe), ("act", act)):
        print(f"{label:12} {statistics.median(values):8.1f}ms {percentile(values, 95):8.1f}ms")


async def main(rounds: int) -> None:
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), partial(Quiet, directory=str(Path(__file__).parent / "pages"))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/round.html"
    work = Path(tempfile.mkdtemp(prefix="bench-round-"))
    interact: list[dict[str, object]] = [
        {"tool": "click", "target": "Newsletter"},
        {"tool": "type", "target": "Nickname", "input": {"text": "ada"}},
        {"tool": "click", "target": "Save"},
    ]
    bookkeeping: list[dict[str, object]] = [{"tool": "wait", "input": {"seconds": 0}}]
    try:
        await measure(url, work, "interact", interact, rounds)
        await measure(url, work, "bookkeeping", bookkeeping, rounds)
    finally:
        server.shutdown()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60)
    asyncio.run(main(parser.parse_args().rounds))
