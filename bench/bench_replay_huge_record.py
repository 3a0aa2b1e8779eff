"""Replay and verify of a log whose first round holds a 5 MB model reply.

Writes a sealed log with core's writer (in a temporary data dir, with a throwaway key),
then, each in a fresh child process so peak memory is the measured step's own:

- replay: seconds from constructing the app to the first round on screen (stamped by the
  screen after the refresh that draws it), and to the whole log read; peak RSS of the process;
- verify: seconds and peak RSS of ``core.audit.verify``.

    .venv/bin/python bench/bench_replay_huge_record.py [--reply-mb 5] [--rounds 50]
        [--huge-rounds 1] [--runs 3] [--code OTHER_CHECKOUT]

The issue's bar: the first round on screen in under 1 s, in under 200 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

REPLAY_CHILD = """
import asyncio, json, resource, sys, time
from pathlib import Path
from tui.screens.replay import ReplayApp

async def main():
    started = time.perf_counter()
    app = ReplayApp(Path(sys.argv[1]), config_dir=Path(sys.argv[2]), persist_theme=False)
    async with app.run_test(size=(160, 40)) as pilot:
        while app.replay_screen is None or app.replay_screen.scan_done_at is None:
            await asyncio.sleep(0.01)
        screen = app.replay_screen
        while screen.first_round_shown_at is None:
            await asyncio.sleep(0.01)
        await pilot.pause()
        first = screen.first_round_shown_at - started
        # Comparable across versions whatever their stamp means: the app idle again after
        # showing the first round (older versions stamped before drawing).
        idle = time.perf_counter() - started
        whole = screen.scan_done_at - started
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"first_s": first, "idle_s": idle, "whole_s": whole, "peak_mb": rss}))

asyncio.run(main())
"""

VERIFY_CHILD = """
import json, resource, sys, time
from pathlib import Path
from core.audit import verify

started = time.perf_counter()
report = verify(Path(sys.argv[1]))
elapsed = time.perf_counter() - started
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": elapsed, "peak_mb": rss, "status": getattr(report, "status", report.ok)}))
"""

BASELINE_CHILD = """
import json, resource
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
import tui.screens.replay, core.audit
print(json.dumps({"peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def generate(path: Path, reply_bytes: int, rounds: int, huge_rounds: int = 1) -> None:
    from core.actions import Action
    from core.audit import AuditWriter
    from core.audit.records import ApprovalRecord
    from core.result import ActionResult
    from core.run.events import (
        ActionDone,
        ActionIntent,
        ActionParsed,
        ModelReplied,
        Observed,
        RoundStarted,
        RunFinished,
        RunStarted,
    )
    from core.run.recorder import AuditRecorder

    words = [
        "the",
        "model",
        "thinks",
        "out",
        "loud",
        "about",
        "the",
        "page",
        "and",
        "repeats",
        "itself",
        "at",
        "length",
    ]
    text_parts: list[str] = []
    size = 0
    i = 0
    while size < reply_bytes:
        line = " ".join(words[(i + k) % len(words)] for k in range(12)) + f" ({i})\n"
        text_parts.append(line)
        size += len(line)
        i += 1
    huge = "".join(text_parts)
    digest = "\n".join(f"[{n}]<a href=/item/{n}>Item {n}</a>" for n in range(1, 200))
    with AuditWriter(path, run_id="bench") as writer:
        rec = AuditRecorder(writer)
        rec(RunStarted("bench", "Read a long answer", "scripted plan: bench", "headless", rounds))
        for n in range(1, rounds + 1):
            action = Action("click", {"index": n % 150 + 1}, reason="next")
            rec(RoundStarted(n, rounds))
            rec(Observed(n, f"http://127.0.0.1:8765/{n}", "Catalogue", digest))
            reply = huge if n <= huge_rounds else "Opening the next item."
            rec(ModelReplied(n, ({"type": "text", "text": reply},), {"input_tokens": 3000}))
            rec(ActionParsed(n, action))
            rec(ActionIntent(n, action))
            rec(ActionDone(n, action, ActionResult.success("clicked"), ApprovalRecord.automatic()))
        rec(RunFinished("success", "done", rounds, 0))


def child(code: str, *args: str, env: dict[str, str]) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        env=env,
        cwd=env["PYTHONPATH"],  # `-c` puts the working directory first on sys.path
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reply-mb", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--huge-rounds", type=int, default=1, help="how many rounds (from round 1) hold the reply"
    )
    parser.add_argument(
        "--code",
        type=Path,
        default=ROOT,
        help="checkout whose replay and verify to measure (e.g. an older one, for comparison); "
        "the log is always written by this one",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="handrail-bench-") as tmp:
        work = Path(tmp)
        env = {**os.environ, "PYTHONPATH": str(args.code), "HANDRAIL_DATA_DIR": str(work / "data")}
        os.environ["HANDRAIL_DATA_DIR"] = env["HANDRAIL_DATA_DIR"]
        sys.path.insert(0, str(ROOT))
        log = work / "huge.jsonl"
        generate(log, int(args.reply_mb * 1_000_000), args.rounds, args.huge_rounds)
        print(f"log: {log.stat().st_size / 1e6:.1f} MB, {args.rounds} rounds, "
              f"{args.huge_rounds} of them with a {args.reply_mb} MB reply")  # fmt: skip
        base = child(BASELINE_CHILD, env=env)
        print(f"imports alone: peak {base['peak_mb']:.0f} MB")
        for _ in range(args.runs):
            r = child(REPLAY_CHILD, str(log), str(work / "config"), env=env)
            print(f"replay: first round shown {float(r['first_s']) * 1000:6.0f} ms "
                  f"(idle after it {float(r['idle_s']) * 1000:6.0f} ms), "
                  f"whole log read {float(r['whole_s']) * 1000:6.0f} ms, "
                  f"peak {float(r['peak_mb']):.0f} MB")  # fmt: skip
        for _ in range(args.runs):
            v = child(VERIFY_CHILD, str(log), env=env)
            print(f"verify: {float(v['seconds']) * 1000:6.0f} ms, peak {float(v['peak_mb']):.0f} MB, "
                  f"{v['status']}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
