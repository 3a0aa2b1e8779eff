"""Book a seat on handrail's demo site through ``handrail mcp``, as a coding agent would:
the official MCP SDK's own client spawns the server and calls its tools one by one.

    .venv/bin/python docs/examples/mcp_client.py               # from a checkout
    python docs/examples/mcp_client.py --handrail handrail      # an installed handrail
    .venv/bin/python docs/examples/mcp_client.py --supervised  # a person approves each call

No model and no key: each step is the demo's own plan (core/demo/plan.py), its target
found by name in the page state the server returns, as an agent would read it. Every call
goes through handrail's gate and into its audit log; the booking stops at the payment page,
which handrail hands to a person.

With ``--supervised`` every call that changes the page waits for a person: run
``handrail attach`` in another terminal (the id to give it is printed here first), approve
each step there, and take the payment page over when it comes (in a headless browser: abort
the run, or resume it). Without it nobody is attached, so the run ends at the payment page:
replay its log with ``handrail replay``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
from datetime import date
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.demo.plan import demo_plan_lines  # noqa: E402
from core.model.scripted import parse_digest, resolve_target  # noqa: E402


def page_state(result: Any) -> str:
    text = "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    start = text.find("<browser_state>")
    return text[start:] if start >= 0 else ""


async def book(command: list[str], env: dict[str, str] | None, *, supervised: bool) -> int:
    # Supervised: each change waits for the person at `handrail attach`. Unsupervised, the
    # demo lets every step through, and nobody is waited for at the payment page.
    how = ["--approve", "ask"] if supervised else ["--approval-timeout", "0"]
    server = StdioServerParameters(
        command=command[0], args=[*command[1:], "mcp", "--demo", "--headless", *how], env=env
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as client:
        started = await client.initialize()
        tools = [t.name for t in (await client.list_tools()).tools]
        print(f"handrail offers {len(tools)} tools: {', '.join(tools)}")
        state = page_state(await client.call_tool("observe", {}))  # the run is live now
        run = re.search(r"handrail attach (\w+)", started.instructions or "")
        if supervised and run:
            print(f"supervise it from another terminal: handrail attach {run.group(1)}", flush=True)
        for step in demo_plan_lines(date.today()):
            if step["tool"] == "finish":
                break
            arguments = dict(step["input"])
            arguments["reason"] = step["reason"]
            if "target" in step:
                found = resolve_target(step["target"], parse_digest(state))
                if found is None:
                    print(f"  {step['target']!r} is not on the page; stopping")
                    return 1
                arguments["index"] = found.index
            result = await client.call_tool(step["tool"], arguments)
            said = "\n".join(
                c.text for c in result.content if getattr(c, "type", "") == "text"
            ).split("\n<browser_state>")[0]
            print(f"→ {step['tool']} {step.get('target', '')}: {said.splitlines()[0][:100]}")
            if result.is_error and "the run has ended" in said:
                print("  the run has ended: the payment page is handed to a person")
                return 0
            state = page_state(result) or state
        return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--handrail",
        default=None,
        help="the handrail command (default: this checkout's, through its .venv)",
    )
    parser.add_argument(
        "--supervised",
        action="store_true",
        help="every change waits for a person at `handrail attach` (in another terminal)",
    )
    args = parser.parse_args()
    command = (
        [args.handrail]
        if args.handrail
        else [str(ROOT / ".venv" / "bin" / "python"), "-m", "tui.cli.main"]
    )
    # From a checkout, its modules; the run's log goes where handrail puts it by default.
    # The SDK passes the server a few safe variables (HOME, PATH...); handrail's data folder
    # goes along too, so that `handrail attach` finds the run where the server put it.
    env = {k: v for k, v in os.environ.items() if k in ("HANDRAIL_DATA_DIR", "XDG_DATA_HOME")}
    if not args.handrail:
        env["PYTHONPATH"] = str(ROOT)
    return asyncio.run(book(command, env or None, supervised=args.supervised))


if __name__ == "__main__":
    raise SystemExit(main())
