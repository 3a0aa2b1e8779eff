"""``handrail doctor``'s report for a person: one line per check, fixes indented below.

Plain text (no Textual), readable without colour; colour only marks the status, and only
on a terminal without NO_COLOR.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import textwrap
from collections.abc import Mapping, Sequence
from typing import TextIO

from core.run.doctor import Check, Status, Terminal, diagnose, ready
from tui.cli.command import handrail_command
from tui.cli.run_options import audit_dir_of

MARKS: dict[Status, str] = {"ok": "✓", "warn": "!", "fail": "✗"}
ASCII_MARKS: dict[Status, str] = {"ok": "+", "warn": "!", "fail": "x"}
COLOURS: dict[Status, str] = {"ok": "\033[32m", "warn": "\033[33m", "fail": "\033[31m"}
RESET = "\033[0m"
NAME_WIDTH = 16
MAX_WIDTH = 100


def run_doctor(args: argparse.Namespace) -> int:
    """Run every check, print the report to stdout; 0 when a run has what it needs, else 1."""
    out = sys.stdout
    env = os.environ
    terminal = measure_terminal(out)
    print(
        "handrail doctor: checking what a run needs (this starts a headless Chrome)…",
        file=out,
        flush=True,
    )
    checks = asyncio.run(
        diagnose(
            env=env,
            cdp_url=args.cdp_url,
            connect=args.connect,
            model_spec=args.model,
            base_url=args.base_url,
            audit_dir=audit_dir_of(args),
            terminal=terminal,
        )
    )
    width = min(terminal.columns, MAX_WIDTH) if terminal else MAX_WIDTH
    out.write(
        render(
            checks,
            colour=use_colour(out, env),
            unicode=_can_encode(out, "✓✗…—"),
            width=width,
        )
    )
    out.flush()
    return 0 if ready(checks) else 1


def render(
    checks: Sequence[Check], *, colour: bool = False, unicode: bool = True, width: int = MAX_WIDTH
) -> str:
    """The report as text: a line per check, the fix indented under a warning or failure,
    and a closing verdict."""
    marks = MARKS if unicode else ASCII_MARKS
    lines: list[str] = [""]
    indent = " " * (2 + NAME_WIDTH + 1)
    for check in checks:
        mark = marks[check.status]
        if colour:
            mark = f"{COLOURS[check.status]}{mark}{RESET}"
        head = f"{mark} {check.name:<{NAME_WIDTH}} "
        lines += _wrap(check.found, width, first=head, rest=indent)
        if check.fix and check.status != "ok":
            lines += _wrap(check.fix, width, first=indent + "fix: ", rest=indent + "     ")
    failed = [c for c in checks if c.status == "fail"]
    warned = [c for c in checks if c.status == "warn"]
    lines.append("")
    if failed:
        names = ", ".join(c.name for c in failed)
        lines.append(f"Not ready: {len(failed)} problem{'s' if len(failed) > 1 else ''} ({names}).")
        lines.append(f"Apply the fixes above and run `{handrail_command()} doctor` again.")
    else:
        note = f" ({len(warned)} warning{'s' if len(warned) > 1 else ''})" if warned else ""
        lines.append(f"Ready: everything a run needs is here{note}.")
    if not unicode:
        lines = [line.replace("…", "...").replace("—", "-") for line in lines]
    return "\n".join(lines) + "\n"


def _wrap(text: str, width: int, *, first: str, rest: str) -> list[str]:
    """Wrap each paragraph of ``text`` to ``width``; ``first`` prefixes the first line and
    shows as wide as ``rest`` (it may hold colour codes)."""
    out: list[str] = []
    for n, paragraph in enumerate(text.splitlines() or [""]):
        prefix = first if n == 0 else rest
        wrapped = textwrap.wrap(
            paragraph,
            width=max(width - len(rest), 30),
            break_long_words=False,
            break_on_hyphens=False,
        ) or [""]
        out.append(prefix + wrapped[0])
        out += [rest + line for line in wrapped[1:]]
    return out


def measure_terminal(stream: TextIO) -> Terminal | None:
    """The terminal ``stream`` goes to, or None when it is not one."""
    try:
        if not stream.isatty():
            return None
        size = os.get_terminal_size(stream.fileno())
    except (OSError, ValueError, AttributeError):
        return None
    # COLUMNS/LINES win, as everywhere; a pty that reports 0x0 counts as 80x24.
    columns, lines = shutil.get_terminal_size((size.columns or 80, size.lines or 24))
    return Terminal(is_tty=True, columns=columns, lines=lines)


def use_colour(stream: TextIO, env: Mapping[str, str]) -> bool:
    """Colour only on a terminal, never with NO_COLOR (https://no-color.org) or TERM=dumb."""
    if env.get("NO_COLOR") or env.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (OSError, ValueError, AttributeError):
        return False


def _can_encode(stream: TextIO, text: str) -> bool:
    try:
        text.encode(stream.encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True
