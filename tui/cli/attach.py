"""``handrail attach [RUN]``: supervise a live run from another terminal.

Without RUN it lists the live runs of this user. With one (its id, or the start of it) it
opens the observatory on that run: the rounds so far, then each as it happens. When the run
has nobody of its own to ask (``handrail mcp``, ``run --no-tui`` without a terminal), the
first terminal that attaches holds the gate: approvals and hand-overs are asked here. Every
other terminal watches, read-only, and is told who holds it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import TYPE_CHECKING

from core.visible import visible
from tui.exit_codes import EXIT_USAGE

if TYPE_CHECKING:
    from core.run.live import LiveClient, LiveEntry

DESCRIPTION = """\
Every run listens on a socket of its own in handrail's data folder (private to you, 0700;
the socket 0600), so you can supervise it from another terminal: a `handrail mcp` server a
coding agent started, a `run --no-tui`, a fleet's or a pool's run.

One terminal holds the gate: the run's own observatory or console when it has one,
otherwise the first `handrail attach` (approvals and hand-overs are asked there; x aborts
the run). The others watch, read-only, and are told who holds it; when the holder leaves,
the next attached terminal that did not pass --watch takes the gate and the open question.
q leaves; the run goes on.
"""
EPILOG = """\
examples:
  handrail attach                 list the live runs
  handrail attach 3f9c            supervise the run whose id starts with 3f9c
  handrail attach 3f9c --watch    only watch it
"""


def add_attach_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "attach",
        help="supervise a live run from this terminal (without RUN: list the live runs)",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "run", nargs="?", metavar="RUN", help="the run's id, or enough of its start (as listed)"
    )
    p.add_argument(
        "--watch",
        action="store_true",
        help="only watch: never hold the gate, even when nobody holds it",
    )
    p.add_argument(
        "--no-tui",
        action="store_true",
        help="print the rounds and ask on this terminal instead of the observatory (with "
        "stdin not a terminal: only watch)",
    )
    p.add_argument("--json", action="store_true", help="without RUN: list the live runs as JSON")
    p.add_argument("--theme", metavar="NAME", help="the observatory's colour theme")


def say(text: str) -> None:
    print(visible(f"handrail attach: {text}"), file=sys.stderr, flush=True)


def run_attach(args: argparse.Namespace) -> int:
    import asyncio  # here: `handrail --help` builds this parser

    from core.run.live import LiveClient, LiveError, live_ids, live_runs, match_run

    if args.run is None:
        entries = asyncio.run(live_runs())
        print_runs(entries, as_json=args.json)
        return 0
    try:
        run_id = match_run(args.run, live_ids())

        async def probe() -> LiveClient:
            client = await LiveClient.connect(run_id, watch=True, listing=True)
            client.close()
            return client

        welcome = asyncio.run(probe()).welcome
    except LiveError as exc:
        say(str(exc))
        return EXIT_USAGE
    if args.no_tui:
        # Without a terminal to ask on, holding the gate would only keep questions waiting.
        watch = args.watch or not sys.stdin.isatty()
        return asyncio.run(_attach_console(run_id, watch=watch))
    return _attach_tui(run_id, str(welcome.get("task", "")), watch=args.watch, theme=args.theme)


def print_runs(entries: list[LiveEntry], *, as_json: bool) -> None:
    if as_json:
        rows = [
            {
                "run_id": e.run_id,
                "task": e.task,
                "pid": e.pid,
                "started": e.started,
                "holder": e.holder,
                "log": e.log,
            }
            for e in entries
        ]
        print(visible(json.dumps(rows, indent=2)))  # JSON escapes control characters too
        return
    if not entries:
        print("No live run. A run can be attached to while it runs (handrail attach RUN).")
        return
    now = time.time()
    for e in entries:
        minutes = max(0, int(now - e.started)) // 60
        holder = e.holder or "nobody (attach to hold it)"
        print(visible(f"{e.run_id}  {e.task}", one_line=True, limit=100))
        print(visible(f"    pid {e.pid} · {minutes} min · gate: {holder}", one_line=True))
        if e.log:
            print(visible(f"    log: {e.log}", one_line=True))
    print("\nhandrail attach RUN  (the id, or enough of its start)")


async def _attach_console(run_id: str, *, watch: bool) -> int:
    from core.run.live import LiveClient, LiveError, follow
    from tui.attach_app import introduce
    from tui.console import ConsoleReporter, ConsoleSupervisor

    try:
        client = await LiveClient.connect(run_id, watch=watch)
    except LiveError as exc:
        say(str(exc))
        return EXIT_USAGE
    introduce(client, say)
    finished = await follow(client, ConsoleReporter(), ConsoleSupervisor(), say)
    return finished.exit_code


def _attach_tui(run_id: str, task: str, *, watch: bool, theme: str | None) -> int:
    from tui.attach_app import AttachApp

    code = AttachApp(run_id, task, watch=watch, theme=theme).run()
    return code if isinstance(code, int) else 0
