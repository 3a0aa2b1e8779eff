"""The pool's browser: started detached (it outlives ``pool start``), or adopted.

A launched pool browser is a Chrome of its own, in its own process group and session, with
no reaper tied to the command that started it: it runs until ``pool stop``. Its DevTools
endpoint, process id and process start time go into the pool's database, which is how
every later command finds it again (and tells it from a stranger that reused its pid).
An adopted browser (``--cdp-url``, ``--connect``) gets a browser context of the pool's
own: the slots open in a new window of that context, away from the person's tabs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from core.browser.errors import BrowserError
from core.browser.failure import failure_cause
from core.browser.find import (
    find_chrome,
    read_devtools_active_port,
    resolve_cdp_url,
    standard_profile_dirs,
)
from core.browser.launch import LaunchOptions, chrome_args, own_home_env
from core.cdp import JSON, CDPConnection, CDPError
from core.pool import owner
from core.pool.state import PoolKind


@dataclass(frozen=True, slots=True)
class Started:
    """A pool browser that is up: where it listens and, when we launched it, which process."""

    kind: PoolKind
    endpoint: str
    source: str | None = None
    pid: int | None = None
    pid_started: int | None = None
    profile: Path | None = None
    tmp_dir: Path | None = None
    """Chrome's temporary folder (removed by ``pool stop``)."""


async def launch_detached(
    folder: Path,
    *,
    profile: Path,
    headless: bool,
    executable: str | None = None,
    timeout: float = 30.0,
) -> Started:
    """Start Chrome with ``profile`` so that it outlives this process. Its stderr goes to
    ``folder/chrome.log``, its temporary files to a short folder of its own in the system's
    (Chrome's singleton socket path must fit in 108 bytes). Raises BrowserError."""
    executable = executable or find_chrome()
    profile.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="handrail-pool-"))
    port_file = profile / "DevToolsActivePort"
    with contextlib.suppress(FileNotFoundError):
        port_file.unlink()
    try:
        return await _until_ready(executable, profile, folder, tmp, headless, timeout)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


async def _until_ready(
    executable: str, profile: Path, folder: Path, tmp: Path, headless: bool, timeout: float
) -> Started:
    log = folder / "chrome.log"
    logged_before = log.stat().st_size if log.exists() else 0  # earlier starts' lines
    process = _spawn(executable, profile, folder, tmp, headless)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = read_devtools_active_port(profile)
        if found is not None:
            port, path = found
            return Started(
                kind="launch",
                endpoint=f"ws://127.0.0.1:{port}{path}",
                pid=process.pid,
                pid_started=max(owner.start_time(process.pid), 0),
                profile=profile,
                tmp_dir=tmp,
            )
        if process.poll() is not None:
            with log.open("rb") as file:
                file.seek(logged_before)
                written = file.read().decode("utf-8", "replace")[-20_000:]
            cause = failure_cause(written, returncode=process.returncode, profile=profile)
            raise BrowserError(
                f"{executable} exited with code {process.returncode} before it was ready: "
                f"{cause or 'Chrome named no cause'}. Its output is in {log}."
            )
        await asyncio.sleep(0.05)
    kill_group(process.pid)
    raise BrowserError(
        f"{executable} did not open its DevTools port within {timeout:g} s; see {folder / 'chrome.log'}"
    )


def _spawn(
    executable: str, profile: Path, folder: Path, tmp: Path, headless: bool
) -> subprocess.Popen[bytes]:
    """Chrome in a session of its own (no terminal signal reaches it), logging to
    ``folder/chrome.log``; nobody waits for it to end but ``pool stop``."""
    args = chrome_args(profile, LaunchOptions(headless=headless))
    with open(folder / "chrome.log", "ab") as log_file:
        try:
            return subprocess.Popen(
                [executable, *args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log_file,
                start_new_session=True,
                env={**os.environ, "TMPDIR": str(tmp), **own_home_env()},
            )
        except OSError as exc:
            raise BrowserError(f"could not start {executable}: {exc}") from exc


async def adopt(cdp_url: str | None) -> Started:
    """The endpoint of a running browser: ``cdp_url``, or the person's own Chrome."""
    if cdp_url is not None:
        return Started(kind="cdp_url", endpoint=await resolve_cdp_url(cdp_url), source=cdp_url)
    for profile in standard_profile_dirs():
        found = read_devtools_active_port(profile)
        if found is not None:
            port, path = found
            return Started(
                kind="connect",
                endpoint=f"ws://127.0.0.1:{port}{path or '/devtools/browser'}",
                source=str(profile),
            )
    raise BrowserError(
        "no running Chrome with remote debugging enabled was found; open "
        "chrome://inspect/#remote-debugging and turn it on, or use --cdp-url"
    )


async def pages(conn: CDPConnection, context_id: str | None = None) -> list[JSON]:
    infos: list[JSON] = (await conn.send("Target.getTargets"))["targetInfos"]
    return [
        t
        for t in infos
        if t.get("type") == "page"
        and (context_id is None or t.get("browserContextId") == context_id)
    ]


async def initial_pages(conn: CDPConnection, timeout: float = 10.0) -> list[JSON]:
    """The pages a freshly launched Chrome opened by itself (it opens its first tab a
    moment after its DevTools port is up)."""
    deadline = time.monotonic() + timeout
    while True:
        found = await pages(conn)
        if found or time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.05)


async def new_slot_target(
    conn: CDPConnection, context_id: str | None, *, new_window: bool = False
) -> str:
    """A blank tab, opened in the background (never brought to the front)."""
    params: JSON = {"url": "about:blank", "background": True}
    if context_id is not None:
        params["browserContextId"] = context_id
    if new_window:
        params["newWindow"] = True
    created = await conn.send("Target.createTarget", params)
    return str(created["targetId"])


async def close_target(conn: CDPConnection, target_id: str) -> None:
    with contextlib.suppress(CDPError):
        await conn.send("Target.closeTarget", {"targetId": target_id}, timeout=5)


def kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def wait_gone(pid: int, started: int | None, timeout: float) -> bool:
    """Wait until process ``pid`` (started at ``started``) has ended; True if it did."""
    deadline = time.monotonic() + timeout
    while owner.alive(pid, started):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True
