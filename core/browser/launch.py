"""Starting our own Chrome: the flags (quiet, no preloading, a refusing proxy for what must not
go out), the process with its lifeline, and stopping it again."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.browser.errors import BrowserError
from core.browser.failure import failure_cause
from core.browser.find import chrome_home_dir, read_devtools_active_port
from core.browser.lifeline import Lifeline
from core.browser.preloading import PRERENDER_FEATURES, disable_preloading, restrict_webrtc

# Flags that keep Chrome from phoning home; on a closed network it retries endlessly otherwise.
QUIET_FLAGS = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-default-apps",
    # Prerendering loads pages outside the tab's Fetch: the network guard could not see it.
    f"--disable-features=Translate,MediaRouter,OptimizationHints,{','.join(PRERENDER_FEATURES)}",
    "--metrics-recording-only",
    "--password-store=basic",
    "--use-mock-keychain",
)


@dataclass(frozen=True, slots=True)
class LaunchOptions:
    executable: str | None = None
    profile_dir: Path | None = None
    headless: bool = False
    extra_args: tuple[str, ...] = ()
    window_size: tuple[int, int] = (1280, 900)
    timeout: float = 30.0
    downloads_dir: Path | None = None
    remove_on_exit: tuple[Path, ...] = ()
    """Paths removed when the browser stops, however handrail ends (a temporary profile)."""
    direct_hosts: tuple[str, ...] | None = None
    """Strict network mode (see core/guard/allowlist.py ``webrtc_direct_hosts``): Chrome proxy
    bypass rules naming the only hosts the *browser process* may reach directly. WebRTC is
    then kept off UDP, and every other host goes to a proxy that refuses it. Requests of
    the page are guarded by DevTools ``Fetch`` as well; this closes what ``Fetch`` never
    sees (STUN, TURN and ICE checks). None: no restriction."""


def chrome_args(profile: Path, options: LaunchOptions) -> list[str]:
    width, height = options.window_size
    disable_preloading(
        profile
    )  # speculation rules prefetch has no flag (core/browser/preloading.py)
    args = [
        f"--user-data-dir={profile}",
        "--remote-debugging-port=0",
        f"--window-size={width},{height}",
        *QUIET_FLAGS,
    ]
    if options.direct_hosts is not None:
        args += _direct_only(profile, options.direct_hosts)
    if options.headless:
        args += ["--headless", "--hide-scrollbars", "--mute-audio"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        # Chrome refuses to start as root with its sandbox.
        args.append("--no-sandbox")
    args += list(options.extra_args)
    args.append("about:blank")
    return args


REFUSING_PROXY = "http://127.0.0.1:1"
"""A proxy address nothing listens on (port 1, tcpmux, is served nowhere these days): a
connection through it is refused at once. Were something listening, it would still be on
this machine: the request never reaches the host it names."""


def _direct_only(profile: Path, hosts: Sequence[str]) -> list[str]:
    # Measured with Chromium 156 (bench-free: tests/guard/test_allowlist.py, WebRTC tests): the
    # WebRTC policy alone stops STUN, TURN over UDP and ICE checks, but TURN over TCP still
    # goes straight to the host; with this proxy it goes to the proxy and fails. "<-loopback>"
    # ends Chrome's implicit direct route to loopback hosts, which are sites like any other.
    if not restrict_webrtc(profile):
        raise BrowserError(
            f"could not write the WebRTC setting into the profile {profile} (its Preferences "
            "file is not JSON); strict network mode cannot be guaranteed. Use another --profile."
        )
    bypass = ";".join(["<-loopback>", *hosts])
    return [f"--proxy-server={REFUSING_PROXY}", f"--proxy-bypass-list={bypass}"]


@dataclass(slots=True)
class Launched:
    """A browser process of ours, with its reaper and its (anonymous) stderr log."""

    process: asyncio.subprocess.Process
    ws_url: str
    stderr: Any
    lifeline: Lifeline
    remove: tuple[Path, ...]

    async def finish(self) -> None:
        """After the process stopped: close our ends and remove the temporary paths."""
        with contextlib.suppress(OSError):
            self.stderr.close()
        for path in self.remove:
            shutil.rmtree(path, ignore_errors=True)
        await self.lifeline.finish()

    async def abandon(self) -> None:
        kill_process(self.process)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.process.wait(), 5)
        await self.finish()


def own_home_env() -> dict[str, str]:
    """On Linux, Chrome's config and cache folders (``Crash Reports``, dconf's cache) inside
    handrail's data directory (find.py ``chrome_home_dir``), made when missing."""
    if sys.platform == "darwin":
        return {}
    home = chrome_home_dir()
    env = {"XDG_CONFIG_HOME": str(home / "config"), "XDG_CACHE_HOME": str(home / "cache")}
    for path in env.values():
        with contextlib.suppress(OSError):
            Path(path).mkdir(parents=True, exist_ok=True, mode=0o700)
    return env


async def start_chrome(executable: str, profile: Path, options: LaunchOptions) -> Launched:
    port_file = profile / "DevToolsActivePort"
    with contextlib.suppress(FileNotFoundError):
        port_file.unlink()
    # Anonymous (unlinked at once): read for error messages, never left behind in /tmp.
    stderr_log = tempfile.TemporaryFile(prefix="handrail-chrome-")  # noqa: SIM115
    # Chrome's own temporary files (its singleton socket folder, which it does not remove when
    # stopped by a signal) go to a folder of ours that goes with it.
    chrome_tmp = Path(tempfile.mkdtemp(prefix="handrail-chrome-"))
    remove = (*options.remove_on_exit, chrome_tmp)
    try:
        process = await asyncio.create_subprocess_exec(
            executable,
            *chrome_args(profile, options),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=stderr_log,
            start_new_session=True,
            env={**os.environ, "TMPDIR": str(chrome_tmp), **own_home_env()},
        )
    except OSError as exc:
        stderr_log.close()
        shutil.rmtree(chrome_tmp, ignore_errors=True)
        raise BrowserError(f"could not start {executable}: {exc}") from exc
    # Chrome leads its own process group (start_new_session): the reaper stops that group.
    launched = Launched(
        process=process,
        ws_url="",
        stderr=stderr_log,
        lifeline=Lifeline(process.pid, remove),
        remove=remove,
    )
    loop = asyncio.get_running_loop()
    deadline = loop.time() + options.timeout
    try:
        while loop.time() < deadline:
            found = read_devtools_active_port(profile)
            if found is not None:
                port, path = found
                launched.ws_url = f"ws://127.0.0.1:{port}{path}"
                return launched
            if process.returncode is not None:
                tail = _tail(stderr_log)
                cause = failure_cause(tail, returncode=process.returncode, profile=profile)
                hint = f" {cause}." if cause else ""
                raise BrowserError(
                    f"{executable} exited with code {process.returncode} before it was ready.{hint}\n{tail}"
                )
            await asyncio.sleep(0.05)
        raise BrowserError(
            f"{executable} did not open its DevTools port within {options.timeout:g} s.\n{_tail(stderr_log)}"
        )
    except BaseException:
        await launched.abandon()
        raise


def _tail(log_file: Any, lines: int = 8) -> str:
    try:
        log_file.seek(0)
        text = log_file.read().decode("utf-8", "replace").splitlines()
    except (OSError, ValueError):
        return ""
    useful = [line for line in text if "dbus" not in line.lower()]
    return "\n".join(useful[-lines:])


def kill_process(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)


async def stop_process(process: asyncio.subprocess.Process, grace: float = 5.0) -> None:
    """Stop the browser process we started (and only it, with its own process group)."""
    if process.returncode is None:
        try:
            await asyncio.wait_for(process.wait(), timeout=grace)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), timeout=grace)
            except TimeoutError:
                kill_process(process)
                await process.wait()
