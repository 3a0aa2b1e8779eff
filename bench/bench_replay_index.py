"""How fast replay opens a huge audit log: LogIndex against a ~100 MB, 10,000-round log.

Run: ``.venv/bin/python bench/bench_replay_index.py [--rounds 10000] [--obs-kb 10]``

The log is generated in a temporary directory with the writer's line format and a valid hash
chain (written directly, without fsync per record, to keep generation fast). Figures are for
a warm page cache: the file was just written.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core.audit import LogIndex, read_log, verify  # noqa: E402


def observation(rnd: int, size: int, rng: random.Random) -> str:
    words = ["Book", "now", "Lyon", "Paris", "train", "seat", "window", "from", "to", "date"]
    lines = [f"URL: https://trains.example/search?step={rnd}", "Title: Search trains"]
    i = 0
    total = sum(len(x) + 1 for x in lines)
    while total < size:
        i += 1
        kind = rng.random()
        if kind < 0.4:
            lines.append(f"[{i}]<button type=submit>{' '.join(rng.choices(words, k=3))}</button>")
        elif kind < 0.6:
            lines.append(
                f'[{i}]<input type=text name=f{i} placeholder="From" value="Par">From</input>'
            )
        else:
            lines.append(" ".join(rng.choices(words, k=12)))
        total += len(lines[-1]) + 1
    return "\n".join(lines)


def generate(path: Path, rounds: int, obs_bytes: int) -> None:
    rng = random.Random(1)
    prev: str | None = None
    seq = 0
    with path.open("wb") as f:

        def emit(record: dict[str, object]) -> None:
            nonlocal prev, seq
            out = {"seq": seq, "prev": prev, **record}
            line = json.dumps(out, ensure_ascii=False, separators=(",", ":")).encode()
            f.write(line + b"\n")
            prev = hashlib.sha256(line).hexdigest()
            seq += 1

        emit(
            {
                "type": "run_start",
                "schema": 1,
                "run_id": "bench",
                "ts": "2026-11-29T19:40:05.000Z",
                "task": "book a train from Lyon to Paris",
                "model": "scripted plan: bench.jsonl",
                "settings": {"approve": "none", "max_rounds": rounds},
            }
        )
        for r in range(1, rounds + 1):
            action = {"name": "click", "params": {"index": r % 50}, "reason": "next step"}
            emit({"type": "intent", "run_id": "bench", "round": r, "action": action})
            emit(
                {
                    "type": "round",
                    "run_id": "bench",
                    "round": r,
                    "ts": "2026-11-29T19:40:06.000Z",
                    "url": f"https://trains.example/search?step={r}",
                    "title": "Search trains",
                    "observation": observation(r, obs_bytes, rng),
                    "model_output": [
                        {"type": "text", "text": "I will click the next button."},
                        {"type": "tool_use", "id": f"tu_{r}", "name": "click", "input": action},
                    ],
                    "action": action,
                    "approval": {"decision": "auto", "by": "policy"},
                    "result": {
                        "ok": True,
                        "message": "clicked",
                        "outcome": "ok",
                        "changes": {"url_changed": True, "dom_changed": True},
                    },
                    "timing_ms": {"observe": 40.0, "model": 900.0, "action": 30.0},
                    "usage": {"input_tokens": 4000, "output_tokens": 60},
                }
            )
        emit({"type": "run_end", "run_id": "bench", "outcome": "success", "rounds": rounds})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=10_000)
    parser.add_argument("--obs-kb", type=float, default=10.0)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.jsonl"
        t0 = time.perf_counter()
        generate(path, args.rounds, int(args.obs_kb * 1024))
        gen_s = time.perf_counter() - t0
        size_mb = path.stat().st_size / 1e6

        t0 = time.perf_counter()
        index = LogIndex(path)
        open_ms = (time.perf_counter() - t0) * 1000
        scan = index.scan()
        first_round = None
        while first_round is None:
            next(scan)
            for i in range(len(index)):
                rec = index.line(i)
                if isinstance(rec, dict) and rec.get("type") == "round":
                    first_round = rec
                    break
        first_ms = (time.perf_counter() - t0) * 1000
        t1 = time.perf_counter()
        for _ in scan:
            pass
        full_scan_s = time.perf_counter() - t0
        rest_s = time.perf_counter() - t1
        lines = len(index)

        rng = random.Random(2)
        picks = [rng.randrange(lines) for _ in range(2000)]
        index._cache.clear()  # measure cold-cache line reads
        times = []
        for i in picks:
            t = time.perf_counter()
            index.line(i)
            times.append((time.perf_counter() - t) * 1e6)
        index.close()

        t0 = time.perf_counter()
        read = read_log(path)
        read_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        report = verify(path)
        verify_s = time.perf_counter() - t0

    rows = [
        ("log size", f"{size_mb:.1f} MB, {lines} lines, {args.rounds} rounds"),
        ("generate (no fsync)", f"{gen_s:.2f} s"),
        ("LogIndex() open", f"{open_ms:.3f} ms"),
        ("open -> first round record decoded", f"{first_ms:.1f} ms"),
        ("full scan (open -> all lines indexed)", f"{full_scan_s * 1000:.0f} ms"),
        ("  of which after the first round", f"{rest_s * 1000:.0f} ms"),
        ("line(i) random, uncached: median", f"{statistics.median(times):.0f} µs"),
        ("line(i) random, uncached: p95", f"{statistics.quantiles(times, n=20)[18]:.0f} µs"),
        ("read_log (whole file, for comparison)", f"{read_s * 1000:.0f} ms"),
        ("verify (hash chain)", f"{verify_s * 1000:.0f} ms, ok={report.ok}"),
    ]
    assert len(read.records) == lines and report.ok
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")


if __name__ == "__main__":
    main()
