"""``handrail permissions``: what you allowed on a site from now on (``s`` in an approval).

``list`` (the default) shows them, ``revoke HOST [ACTION]`` forgets some, ``clear`` all;
``--json`` for scripts. Each browser identity keeps its own: handrail's own profile by
default, ``--profile DIR``, ``--pool NAME``, or a browser handrail attaches to
(``--cdp-url URL``, ``--connect``), as the run that gave them.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from tui.exit_codes import EXIT_USAGE

if TYPE_CHECKING:
    from core.run.permissions import Permission, PermissionStore

DESCRIPTION = """\
In an approval, s approves the action and allows that kind of action (click, type,
select_option, ...) on that site from now on, in later runs too. A remembered permission
never covers a risky action (a commitment, a form submission, a new host, a secret, an
upload, run_js): those ask every time. The record of an action one let through names it.
"""


def add_permissions_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "permissions",
        help="list, revoke or clear what you allowed on a site from now on (s in an approval)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _whose_options(p, None)
    actions = p.add_subparsers(dest="permissions_command", metavar="ACTION")
    listing = actions.add_parser("list", help="show them (the default)")
    revoke = actions.add_parser("revoke", help="forget the permissions on a host")
    revoke.add_argument("host", metavar="HOST", help="the site, as listed (rail.example)")
    revoke.add_argument(
        "action", nargs="?", metavar="ACTION", help="only this kind of action (click, type...)"
    )
    clear = actions.add_parser("clear", help="forget them all")
    for each in (listing, revoke, clear):
        # Also after the action (`revoke HOST --profile DIR`); SUPPRESS keeps what was given
        # before it from being overwritten by the subcommand's defaults.
        _whose_options(each, argparse.SUPPRESS)


def _whose_options(p: argparse.ArgumentParser, default: object) -> None:
    p.add_argument("--json", action="store_true", default=default, help="print JSON (for scripts)")
    whose = p.add_mutually_exclusive_group()
    whose.add_argument(
        "--profile",
        type=Path,
        metavar="DIR",
        default=default,
        help="the permissions of runs with this --profile",
    )
    whose.add_argument(
        "--pool", metavar="NAME", default=default, help="the permissions of runs in this tab pool"
    )
    whose.add_argument(
        "--cdp-url",
        metavar="URL",
        default=default,
        help="the permissions of runs attached to this browser",
    )
    whose.add_argument(
        "--connect",
        action="store_true",
        default=default,
        help="the permissions of runs attached to your Chrome",
    )


def run_permissions_command(args: argparse.Namespace) -> int:
    """The stored hosts and actions are data: printed through visible()."""
    from core.run.permissions import PermissionStore, store_name
    from core.visible import visible

    store = PermissionStore(
        store_name(pool=args.pool, profile=args.profile, cdp_url=args.cdp_url, connect=args.connect)
    )
    command = args.permissions_command or "list"
    if command == "list":
        found = store.load()
        if args.json:
            print(visible(json.dumps(_listing(store, found), ensure_ascii=True)))
        elif not found:
            print(visible(f"No permissions remembered ({store.path})."))
        else:
            print(visible(f"Remembered permissions ({store.path}):"))
            for p in found:
                print(visible(f"  {p.action:14} on {p.host}   since {p.since}", one_line=True))
        return 0
    if command == "revoke":
        gone = store.revoke(args.host, args.action)
        if args.json:
            print(visible(json.dumps(_listing(store, gone), ensure_ascii=True)))
        elif not gone:
            what = f"{args.action} on {args.host}" if args.action else args.host
            print(visible(f"handrail permissions: nothing remembered for {what}"))
            return EXIT_USAGE
        else:
            for p in gone:
                print(visible(f"revoked: {p.action} on {p.host} (since {p.since})", one_line=True))
        return 0
    gone = store.clear()
    if args.json:
        print(visible(json.dumps(_listing(store, gone), ensure_ascii=True)))
    else:
        print(visible(f"cleared {len(gone)} permission{'s' if len(gone) != 1 else ''}"))
    return 0


def _listing(store: PermissionStore, found: list[Permission]) -> dict[str, object]:
    return {"file": str(store.path), "permissions": [p.to_json() for p in found]}
