"""The grid keeper: one DevTools connection to each browser of a grid pool, held open.

A browser-as-a-service such as browserless launches a browser for a client and closes it
when its last client leaves. A pool's slots must outlive the runs that use them (and
``pool start`` itself), so ``pool start`` leaves this process behind, detached, holding a
connection to each such browser: runs then come and go as further clients. ``pool stop``
ends it with SIGTERM; its connections close, and the service closes the browsers.

The endpoints carry the service's token, so they come on stdin (one JSON list), never on
the command line, which every local user can read. The keeper says ``ready`` on stdout
once it holds them all, or ``failed: ...`` and exits 1. It exits by itself once every
connection has closed (the service went away: nothing is left to keep).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys

from core.cdp import CDPConnection, CDPError, mask_endpoints, shown_endpoint
from core.visible import visible


async def keep(endpoints: list[str]) -> int:
    connections: list[CDPConnection] = []
    try:
        for endpoint in endpoints:
            connections.append(await CDPConnection.open(endpoint, timeout=15))
    except (CDPError, OSError) as exc:
        # One line: ``pool start`` reads one.
        said = f"failed: {shown_endpoint(endpoint)}: {mask_endpoints(str(exc))}"
        print(visible(said, one_line=True), flush=True)
        for conn in connections:
            await conn.close()
        return 1
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    gone = 0

    def closed(_reason: str) -> None:
        nonlocal gone
        gone += 1
        if gone == len(connections):
            stop.set()

    for conn in connections:
        conn.on_close(closed)
    print("ready", flush=True)
    await stop.wait()
    for conn in connections:
        with contextlib.suppress(CDPError, OSError):
            await conn.close()
    return 0


def main() -> int:
    try:
        endpoints = json.loads(sys.stdin.readline())
    except ValueError:
        endpoints = None
    if not isinstance(endpoints, list) or not all(isinstance(e, str) for e in endpoints):
        print("failed: give a JSON list of endpoints on stdin", flush=True)
        return 2
    return asyncio.run(keep(endpoints))


if __name__ == "__main__":
    sys.exit(main())
