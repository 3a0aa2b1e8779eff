"""``handrail pool ...`` and the ``--pool [NAME]`` option of ``run`` and ``demo``.

Kept apart from tui/cli/main.py, which only calls :func:`add_pool_parser` and
:func:`run_pool`. Nothing here imports core.pool until a pool command runs (``--help``
stays fast).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from core.browser.display import NO_DISPLAY, has_display
from core.cdp import mask_endpoints, shown_endpoint
from core.model.spec import DEFAULT_SPEC
from core.visible import visible
from tui.cli.command import typed_commands
from tui.exit_codes import EXIT_USAGE

if TYPE_CHECKING:
    from core.pool.state import SlotInfo

DEFAULT_NAME = "default"  # core.pool.state.DEFAULT_NAME, without importing it for --help


def add_pool_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``pool`` command, and ``--pool [NAME]`` on ``run``, ``serve``, ``demo`` and
    ``rerun`` (``serve`` copied run's options before these were added, and passes them on
    to the run it starts)."""
    for command in ("run", "serve", "demo", "rerun"):
        sub.choices[command].add_argument(
            "--pool",
            nargs="?",
            const=DEFAULT_NAME,
            default=None,
            metavar="NAME",
            help="claim a slot of a tab pool (`handrail pool start`) instead of launching "
            "Chrome; exit code 4 when every slot is running (default pool: default)",
        )
    # Not on `demo` or `rerun`: both start from their own first page, which a resumed
    # slot's kept page would contradict.
    for command in ("run", "serve"):
        sub.choices[command].add_argument(
            "--resume-slot",
            type=int,
            default=None,
            metavar="N",
            help="with --pool: go on in completed slot N, from its page as the last run left "
            "it (not renewed; no start page unless --start-url); exit code 4 if a run owns it",
        )
    pool = sub.add_parser(
        "pool",
        help="a dedicated browser with N background tabs that runs claim",
        description=(
            "A tab pool: one dedicated browser with N pre-made background tabs (slots), "
            "each idle, running or completed. Runs claim a slot with `handrail run --pool`; "
            "a finished run's page stays for you to look at or take over."
        ),
    )
    pool.add_argument(
        "--name",
        dest="pool_name",
        default=None,
        help="with no ACTION: which pool's screen to open (default: default)",
    )
    pool.add_argument("--theme", metavar="NAME", help="with no ACTION: colour theme")
    # No ACTION: the pool screen, watching runs started elsewhere (its row keys: SlotCommands).
    actions = pool.add_subparsers(dest="pool_command", metavar="ACTION", required=False)

    start = actions.add_parser("start", help="start (or adopt) the pool's browser and its slots")
    start.add_argument("--slots", type=int, default=12, metavar="N", help="slots (default: 12)")
    start.add_argument(
        "--endpoint",
        action="append",
        default=[],
        metavar="URL",
        help="a browser of a grid (repeatable): a browserless ws://HOST:PORT?token=T, or any "
        "browser's ws:// or http:// DevTools address; the pool spans them all",
    )
    start.add_argument(
        "--slots-per-endpoint",
        type=int,
        metavar="N",
        help="with --endpoint: slots in each browser (default: --slots)",
    )
    start.add_argument(
        "--profile", type=Path, metavar="DIR", help="profile folder (default: the pool's own)"
    )
    start.add_argument("--headless", action="store_true", help="no browser window")
    start.add_argument(
        "--cdp-url", metavar="URL", help="adopt a running browser instead of launching one"
    )
    start.add_argument(
        "--connect",
        action="store_true",
        help="adopt your own Chrome: the slots get a window (and browser context) of their own",
    )

    status = actions.add_parser("status", help="the slots: state, run, task, URL, age")
    status.add_argument("--json", action="store_true", help='print {"slots": [...]} for scripts')

    show = actions.add_parser(
        "show", help="bring the browser and a slot's tab to the front (only this command does)"
    )
    show.add_argument("slot", type=int, help="slot number (see pool status)")

    clear = actions.add_parser(
        "clear", help="close slots and drop their browser contexts: idle again, fresh"
    )
    which = clear.add_mutually_exclusive_group(required=True)
    which.add_argument("slot", type=int, nargs="?", help="slot number")
    which.add_argument("--completed", action="store_true", help="every completed slot")

    stop = actions.add_parser("stop", help="stop the pool's browser (refused while a slot runs)")
    stop.add_argument("--force", action="store_true", help="stop even while slots are running")

    for action in (start, status, show, clear, stop):
        action.add_argument("--name", default=None, help=f"which pool (default: {DEFAULT_NAME})")
    _add_fleet_parser(sub)


def _add_fleet_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    fleet = sub.add_parser(
        "fleet",
        help="run the tasks of a TASKS.toml at once, each in a pool slot, in one observatory",
        description=(
            "Start the [[task]]s of TASKS.toml, each in its own slot of a tab pool (`handrail "
            "pool start` first; a pool over a grid spreads them by free slots), as many at "
            "once as the pool has usable slots or --max-parallel says, the rest queued in file "
            "order, under one observatory: the pool screen shows "
            "every slot and run, Enter opens a run, and every run's approvals come up in "
            "one queue, oldest first. Keys at the top of the file are defaults for every "
            "task; an unknown key is an error (exit code 2)."
        ),
        epilog=FLEET_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    fleet.add_argument("tasks", type=Path, metavar="TASKS.toml", help="the tasks file")
    fleet.add_argument(
        "--pool",
        nargs="?",
        const=DEFAULT_NAME,
        default=DEFAULT_NAME,
        metavar="NAME",
        help="which pool the runs claim slots of (default: default)",
    )
    fleet.add_argument(
        "--max-parallel",
        type=int,
        metavar="N",
        help="at most N runs at once (default: the pool's usable slots); the others wait "
        "their turn, shown as queued with their place",
    )
    fleet.add_argument("--theme", metavar="NAME", help="colour theme")


FLEET_EPILOG = f"""\
TASKS.toml:
  model = "{DEFAULT_SPEC}"{" " * max(1, 32 - len(DEFAULT_SPEC))}# defaults for every task
  approve = "ask"                           # ask, risky or none
  allow_domain = ["shop.example"]

  [[task]]
  task = "find the cheapest kettle"
  start_url = "https://shop.example/kettles"

  [[task]]
  task = "fill in the contact form"
  start_url = "https://shop.example/contact"
  secrets = ["EMAIL=SHOP_EMAIL"]            # as --secret NAME=ENVVAR

keys: task, start_url, model, base_url, approve, policy, max_rounds, max_tokens, max_cost,
max_time, allow_domain, network, allow_js, secrets, secrets_file, audit_dir,
action_timeout, screenshots, har, har_content (paths are read relative to the file's
folder); at the top
only, the whole fleet's budget: fleet_max_tokens, fleet_max_cost, fleet_max_time (all the
runs together stop before the model call that would cross it)

exit codes: 0 every run succeeded; otherwise the most serious run's code (1 unsuccessful,
2 configuration, 3 waited for a person, 4 pool full, 5 a budget stopped it, 130 aborted)
"""


def run_fleet(args: argparse.Namespace) -> int:
    """``handrail fleet TASKS.toml``: returns the fleet's exit code."""
    import os

    from core.model.spec import DEFAULT_SPEC
    from tui.screens.fleet import run_fleet_app

    model = os.environ.get("HANDRAIL_MODEL") or DEFAULT_SPEC
    if args.max_parallel is not None and args.max_parallel < 1:
        print("handrail fleet: --max-parallel must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    return run_fleet_app(
        args.tasks, pool=args.pool, theme=args.theme, model=model, max_parallel=args.max_parallel
    )


def run_pool(args: argparse.Namespace) -> int:
    """Run one ``pool`` action; returns the exit code (2 with a message when refused)."""
    from core.browser.errors import BrowserError
    from core.pool.state import PoolError

    if args.pool_command is None:
        return _watch(args.pool_name or DEFAULT_NAME, args.theme)
    if args.pool_name is not None and args.name not in (None, args.pool_name):
        print(
            f"handrail pool: --name {args.pool_name} and --name {args.name} disagree; give "
            "one --name, after the action",
            file=sys.stderr,
        )
        return EXIT_USAGE
    args.name = args.name or args.pool_name or DEFAULT_NAME
    try:
        return asyncio.run(_act(args))
    except (PoolError, BrowserError) as exc:
        # A failed start quotes Chrome's own output: shown, not obeyed.
        said = typed_commands(f"handrail pool {args.pool_command}: {mask_endpoints(str(exc))}")
        print(visible(said), file=sys.stderr)
        return EXIT_USAGE


def _watch(name: str, theme: str | None) -> int:
    """``handrail pool [--name NAME]``: the pool screen (exit 2 for no such pool)."""
    from core.pool.pool import status
    from core.pool.state import PoolError, check_name

    try:
        status(check_name(name))
    except PoolError as exc:
        print(typed_commands(f"handrail pool: {exc}"), file=sys.stderr)
        return EXIT_USAGE
    from tui.screens.pool_screen import PoolWatchApp

    result = PoolWatchApp(name, theme=theme).run()
    return result or 0


def no_display_notice() -> str:
    """Said when ``pool start`` chooses headless because there is no display (as ``run`` and
    ``demo`` do for their own Chrome)."""
    return (
        f"handrail pool start: {NO_DISPLAY}, so the pool's Chrome runs headless: its slots "
        "have no window for hand-overs or `pool show`. Start the pool where a display is "
        "available to see them; pass --headless to choose this and silence this notice."
    )


async def _act(args: argparse.Namespace) -> int:
    from core.pool import pool
    from core.pool.state import check_name

    name = check_name(args.name)
    command = args.pool_command
    if command == "start":
        if args.cdp_url and args.connect:
            print("handrail pool start: use either --cdp-url or --connect", file=sys.stderr)
            return EXIT_USAGE
        if args.endpoint:
            if args.cdp_url or args.connect or args.profile:
                print(
                    "handrail pool start: --endpoint makes a pool over those browsers; drop "
                    "--cdp-url, --connect and --profile",
                    file=sys.stderr,
                )
                return EXIT_USAGE
            per = args.slots_per_endpoint or args.slots
            info = await pool.start(name, slots=per, endpoints=args.endpoint)
            print(
                visible(
                    f"pool {info.name}: {per} slots in each of {len(args.endpoint)} browsers "
                    f"({info.source})"
                )
            )
            return 0
        headless = args.headless
        if not (headless or args.cdp_url or args.connect) and not has_display(os.environ):
            headless = True
            print(visible(no_display_notice()), file=sys.stderr)
        info = await pool.start(
            name,
            slots=args.slots,
            profile=args.profile,
            headless=headless,
            cdp_url=args.cdp_url,
            connect=args.connect,
        )
        print(f"pool {info.name}: {args.slots} slots at {shown_endpoint(info.endpoint)}")
        return 0
    if command == "status":
        health = await pool.check_endpoints(name)
        current = pool.status(name)
        if args.json:
            public = current.public()
            public["endpoints"] = [
                {"endpoint": shown_endpoint(e), "answers": up} for e, up in health.items()
            ]
            print(json.dumps(public, indent=2))
        elif health:
            print(visible(grid_table(name, health, current.slots)))
        else:
            table = status_table(name, current.info.endpoint, current.browser_alive, current.slots)
            print(visible(table))  # slots' page URLs and titles are the pages' text
        return 0
    if command == "show":
        shown = await pool.show(name, args.slot)
        print(visible(f"slot {shown.slot}: {shown.url}", one_line=True))
        return 0
    if command == "clear":
        cleared = await pool.clear(name, None if args.completed else [args.slot])
        print(f"cleared slot(s) {', '.join(map(str, cleared))}" if cleared else "no completed slot")
        return 0
    if command == "stop":
        info = await pool.stop(name, force=args.force)
        what = "browser stopped" if info.kind == "launch" else "slots closed"
        print(f"pool {name}: {what}")
        return 0
    raise AssertionError(command)


def status_table(
    name: str, endpoint: str, alive: bool, slots: tuple[SlotInfo, ...], now: float | None = None
) -> str:
    """``pool status``: one line per slot (state, run, task, URL, age), then how to go on
    in each completed slot."""
    from core.pool.pool import resume_command
    from tui.cli.command import handrail_command

    program = handrail_command()
    now = time.time() if now is None else now
    head = f"pool {name} at {shown_endpoint(endpoint)}" + (
        "" if alive else " (browser not running)"
    )
    lines = [head, f"{'slot':>4}  {'state':<9}  {'run':<12}  {'age':>6}  task / url"]
    for s in slots:
        since = s.claimed_at if s.state == "running" else s.finished_at
        age = _age(now - since) if since else ""
        task = (s.task or "").replace("\n", " ")[:40]
        where = f"{task} — {s.url}" if task else s.url
        if s.state == "lost" and s.lost_reason:
            where = f"{where} (lost: {s.lost_reason})"
        lines.append(f"{s.slot:>4}  {s.state:<9}  {(s.run_id or '')[:12]:<12}  {age:>6}  {where}")
    if not alive:
        lines.append(
            f"its browser is not running: `{program} pool start --name {name}` starts it again"
        )
    resumable = [(s.slot, command) for s in slots if (command := resume_command(name, s, program))]
    if resumable:
        lines.append("completed slots keep their pages; to go on in one:")
        lines.extend(f"  slot {n}: {command}" for n, command in resumable)
    return "\n".join(lines)


def grid_table(
    name: str, health: dict[str, bool], slots: tuple[SlotInfo, ...], now: float | None = None
) -> str:
    """``pool status`` of a pool over a grid: the slots grouped by the browser they are in,
    each browser with its health and its free slots (tokens never shown)."""
    lines = [f"pool {name} over {len(health)} browsers"]
    for endpoint, up in health.items():
        mine = tuple(s for s in slots if s.endpoint == endpoint)
        free = sum(1 for s in mine if s.state in ("idle", "completed"))
        state = "answers" if up else "DOES NOT ANSWER: its slots are lost"
        lines.append("")
        lines.append(f"{shown_endpoint(endpoint)} — {state}; {free} of {len(mine)} slots free")
        table = status_table(name, endpoint, True, mine, now).splitlines()[1:]
        lines.extend(f"  {line}" for line in table)
    return "\n".join(lines)


def _age(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"
