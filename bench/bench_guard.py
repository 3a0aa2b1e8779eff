"""Per-request cost of the network guard: ``--network strict`` against ``documents``.

Run: ``.venv/bin/python bench/bench_guard.py [--subresources 200] [--repeat 7] [--mask-rows N]``

The strict browser is launched as the session launches it (WebRTC held to proxied TCP,
a refusing proxy for other hosts: core/browser/browser.py ``direct_hosts``).

A loopback server serves one page that loads N distinct images (tiny, same host, no
cache). For each mode a fresh headless Chromium with a guard allowing the server's host
loads the page ``repeat`` times; the figure is the median time from ``Page.navigate`` to
the load event (all N images done). The per-request overhead is
``(strict - documents) / N``; ``none`` (no guard at all) is shown for reference.

``--mask-rows N`` also times a masked screenshot (core/hands/screenshot_mask.py, one secret
configured) against a plain one, on a page of N table rows (three cells of text each), 20
images and the secret shown once: the median of ``repeat`` captures each.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core.browser.browser import Browser  # noqa: E402
from core.browser.launch import LaunchOptions  # noqa: E402
from core.guard.allowlist import DomainGuard, NetworkMode, webrtc_direct_hosts  # noqa: E402
from core.hands.screenshot_mask import capture_masked, register  # noqa: E402
from core.secrets import Secret, Secrets  # noqa: E402

SECRET = "k9Tq2Wv7Lp4Xz8Rm"

PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


def serve(n: int) -> ThreadingHTTPServer:
    images = "".join(f'<img src="/img/{i}.png" width=1 height=1>' for i in range(n))
    page = f"<!doctype html><title>bench</title>{images}".encode()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            body, kind = (
                (page, "text/html") if self.path.startswith("/page") else (PIXEL, "image/png")
            )
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


async def measure(mode: NetworkMode | None, url: str, repeat: int) -> float:
    with tempfile.TemporaryDirectory() as profile:
        # Launched as the session launches for the mode (strict: WebRTC proxy and policy).
        direct = webrtc_direct_hosts(["127.0.0.1"]) if mode == "strict" else None
        options = LaunchOptions(profile_dir=Path(profile), headless=True, direct_hosts=direct)
        browser = await Browser.launch(options)
        try:
            if mode is not None:
                await DomainGuard(browser, ["127.0.0.1"], mode).install()
            tab = await browser.new_tab()
            times = []
            for i in range(repeat + 1):
                loaded = tab.session.expect("Page.loadEventFired")
                started = time.perf_counter()
                await tab.send("Page.navigate", {"url": f"{url}?run={i}"})
                await loaded
                if i:  # the first load warms the process up
                    times.append(time.perf_counter() - started)
            return statistics.median(times)
        finally:
            await browser.close()


def masked_page(path: str) -> bytes:
    rows = int(path.split("=", 1)[1]) if "=" in path else 1000
    cells = "".join(
        f"<tr><td>row {i}</td><td>item {i * 7}</td><td>note {i % 13}</td></tr>" for i in range(rows)
    )
    images = "".join(f'<img src="/img/m{i}.png" width=20 height=20>' for i in range(20))
    return (
        f"<!doctype html><title>mask</title><p>Your token: <b>{SECRET}</b></p>{images}"
        f"<table>{cells}</table>"
    ).encode()


async def measure_mask(url: str, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as profile:
        browser = await Browser.launch(LaunchOptions(profile_dir=Path(profile), headless=True))
        try:
            register(browser, Secrets([Secret("TOKEN", SECRET)]))
            tab = await browser.new_tab()
            loaded = tab.session.expect("Page.loadEventFired")
            await tab.send("Page.navigate", {"url": url})
            await loaded
            for name, masked in (("plain", False), ("masked", True)):
                times = []
                for i in range(repeat + 1):
                    started = time.perf_counter()
                    if masked:
                        await capture_masked(browser, tab, timeout=60)
                    else:
                        await tab.send("Page.captureScreenshot", {"format": "png"})
                    if i:
                        times.append(time.perf_counter() - started)
                print(
                    f"{name:>10}: {statistics.median(times) * 1000:8.1f} ms per screenshot (median)"
                )
        finally:
            await browser.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subresources", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--mask-rows", type=int, default=0)
    args = parser.parse_args()
    server = serve(args.subresources)
    url = f"http://127.0.0.1:{server.server_address[1]}/page"
    try:
        if args.mask_rows:
            rows_url = f"http://127.0.0.1:{server.server_address[1]}/rows?n={args.mask_rows}"
            print(f"screenshot of {args.mask_rows} rows, 20 images, the secret once:")
            await measure_mask(rows_url, args.repeat)
            return
        results = {}
        for mode in (None, "documents", "strict"):
            results[mode] = await measure(mode, url, args.repeat)
            print(f"{mode or 'no guard':>10}: {results[mode] * 1000:8.1f} ms per load (median)")
        extra = (results["strict"] - results["documents"]) / args.subresources
        print(
            f"strict over documents: {extra * 1000:.2f} ms per request ({args.subresources} subresources)"
        )
    finally:
        server.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
