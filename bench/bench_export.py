"""How long ``handrail export`` takes on a long run: a sealed log of 5,000 rounds (issue 29's
goal: under 10 s), written here with core's own writer, each round shaped as a real one
(a digest of ~4 KB, a model reply with a tool call, an approval by rule, a result, usage),
followed by the ``requests`` record of the 12 requests its page made.

    .venv/bin/python bench/bench_export.py [--rounds 5000] [--runs 3]

Four figures, each the median of ``--runs`` runs of the command in a new process (what a
person waits for): ``verify`` (the export verifies the log first, so its floor), ``export
--otel-json`` (verify, read, build the spans with the SDK, encode OTLP JSON, write),
``export --har`` (verify, read, HAR 1.2 of the 60,000 requests, write) and ``diff`` of the
log against itself.

2026-12-07 08:18 UTC, this 2-core machine, load 3.0 (a CI run had just ended), 5,000 rounds
without requests records (30.9 MB), median of 3: verify 0.29 s, export --otel-json 3.32 s
(goal: under 10 s), diff 5.60 s.

2026-12-07 10:12 UTC, load 1.3-1.8, 5,000 rounds each with its 12 requests (56.8 MB),
median of 3: verify 0.61 s, export --otel-json 4.15 s, export --har 5.22 s (60,000
entries; 7.45 s while the HAR was still written indented, by the pure-Python encoder),
diff 7.92 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def write_log(path: Path, rounds: int) -> None:
    from core.audit import AuditWriter

    digest = (
        "<browser_state>\nURL: http://127.0.0.1:8000/search\n\n"
        + "\n".join(
            f"[{i}]<button type=button>Option {i}</button> some text around it" for i in range(80)
        )
        + "\n</browser_state>"
    )
    with AuditWriter(path, run_id="bench-export") as writer:
        writer.write({"type": "run_start", "schema": 2, "run_id": "bench-export",
                      "ts": "2026-12-07T10:00:00.000Z", "task": "a long run",
                      "model": "anthropic:claude-x", "settings": {"model": "anthropic:claude-x"},
                      "browser": "launched, headless", "max_rounds": rounds})  # fmt: skip
        for n in range(1, rounds + 1):
            seconds = 10 + n
            ts = f"2026-12-07T{10 + seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.000Z"
            writer.write({
                "type": "round", "run_id": "bench-export", "round": n, "ts": ts,
                "url": f"http://127.0.0.1:8000/search?page={n}", "title": "Search",
                "observation": digest,
                "model_output": [{"type": "text", "text": "Next, the next option."},
                                 {"type": "tool_use", "id": f"toolu_{n:05d}", "name": "click",
                                  "input": {"index": n % 80, "reason": "the next one"}}],
                "action": {"name": "click", "params": {"index": n % 80}, "reason": "the next one"},
                "element": f"[{n % 80}]<button type=button>Option {n % 80}</button>",
                "target_name": f"Option {n % 80}",
                "approval": {"decision": "auto", "by": "policy",
                             "rule": {"index": 1, "text": "action = click", "note": None,
                                      "policy_sha256": "ab" * 32}},
                "result": {"ok": True, "message": f"clicked [{n % 80}]", "outcome": "ok"},
                "timing_ms": {"observe": 40.0, "model": 900.0, "action": 120.0, "round": 1060.0},
                "usage": {"input_tokens": 3000, "output_tokens": 60},
            })  # fmt: skip
            writer.write({
                "type": "requests", "run_id": "bench-export", "round": n, "ts": ts,
                "pages": [{"id": f"page_{n}", "round": n, "start": ts,
                           "url": f"http://127.0.0.1:8000/search?page={n}"}],
                "entries": [{"round": n, "page": f"page_{n}", "method": "GET",
                             "url": f"http://127.0.0.1:8000/static/part-{i}.js?v={n}",
                             "type": "Script", "start": ts, "status": 200,
                             "status_text": "OK", "http": "http/1.1",
                             "mime": "text/javascript", "ip": "127.0.0.1", "time_ms": 12.5,
                             "timings": {"blocked": 1.0, "dns": -1, "connect": -1, "ssl": -1,
                                         "send": 0.2, "wait": 9.1, "receive": 2.2},
                             "size": 2100, "body_size": 1900, "guard": "allowed"}
                            for i in range(12)],
            })  # fmt: skip
        writer.write({"type": "run_end", "run_id": "bench-export", "outcome": "success",
                      "ts": "2026-12-07T12:00:00.000Z", "exit_code": 0})  # fmt: skip


def timed(argv: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - began)
        if done.returncode not in (0, 1):
            raise SystemExit(f"{argv} failed: {done.stderr[-500:]}")
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        os.environ["HANDRAIL_DATA_DIR"] = str(Path(folder) / "data")  # a key of its own
        log = Path(folder) / "long.jsonl"
        write_log(log, args.rounds)
        size = log.stat().st_size / 1e6
        handrail = [sys.executable, "-m", "tui.cli.main"]
        out = Path(folder) / "long.otlp.json"
        print(f"{args.rounds} rounds, {size:.1f} MB; median of {args.runs} runs")
        print(f"  verify               {timed([*handrail, 'verify', str(log)], args.runs):6.2f} s")
        export = [*handrail, "export", str(log), "--otel-json", str(out)]
        print(f"  export --otel-json   {timed(export, args.runs):6.2f} s")
        har = [*handrail, "export", str(log), "--har", str(Path(folder) / "long.har")]
        print(f"  export --har         {timed(har, args.runs):6.2f} s")
        print(
            f"  diff (itself)        {timed([*handrail, 'diff', str(log), str(log)], args.runs):6.2f} s"
        )


if __name__ == "__main__":
    main()
