"""``handrail diff A.jsonl B.jsonl``: did two runs do the same? (core/rerun/diff.py)"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from core.visible import visible
from tui.exit_codes import EXIT_USAGE

DESCRIPTION = """\
Aligns two runs step by step on what they did: the action, its target (the element's role,
name and frame, never its index), its arguments. Aligned steps may still differ in the
page they acted on (path and query: the origin may differ), how the action ended, and how
it was approved; the runs may end differently. Rounds that only waited are left out.

Exit codes: 0 the runs are equivalent, 1 they diverge, 2 an input is not a verifiable
audit log (`handrail verify` says why).
"""
EPILOG = """\
in CI:
  handrail rerun last-week.jsonl --headless --audit-dir out/ && \\
    handrail diff last-week.jsonl out/*.jsonl --json > diff.json
"""


def add_diff_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "diff",
        help="compare two runs step by step (exit 0 equivalent, 1 diverge, 2 not a log)",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("a", type=Path, metavar="A.jsonl", help="one run's audit log")
    p.add_argument("b", type=Path, metavar="B.jsonl", help="the other's")
    p.add_argument("--json", action="store_true", help="print the whole comparison as JSON")


def run_diff(args: argparse.Namespace) -> int:
    from core.audit import read_log, verify
    from core.rerun.diff import diff_runs, steps_of, summary_lines

    runs = []
    for label, path in (("A", args.a), ("B", args.b)):
        report = verify(path)
        if not report.ok:
            print(
                visible(
                    f"handrail diff: {label} ({path}) is not a verifiable audit log: "
                    f"{report.first_break or report.status}"
                ),
                file=sys.stderr,
            )
            return EXIT_USAGE
        runs.append(steps_of(read_log(path).records))
    diff = diff_runs(runs[0], runs[1])
    if args.json:
        print(visible(json.dumps(diff.to_json(), indent=2, ensure_ascii=True)))
    else:
        print(visible(f"A: {args.a} ({diff.a.run_id})\nB: {args.b} ({diff.b.run_id})"))
        for line in summary_lines(diff):
            print(visible(line))
    return 0 if diff.equivalent else 1
