"""Which Chrome: the executable (CHROME_PATH, PATH, the usual install places), handrail's own
profile and the person's everyday ones, and the CDP URL of a browser that is already running
(a ``DevToolsActivePort`` file, ``http://host:port`` or ``ws://...``)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.browser.errors import BrowserError, ChromeNotFound

CHROME_NAMES = (
    "google-chrome",
    "google-chrome-stable",
    "chromium",
    "chromium-browser",
    "chrome",
    "google-chrome-beta",
    "google-chrome-unstable",
)

# Places outside the usual PATH (folders on PATH are searched by name first).
CHROME_LOCATIONS = (
    "/opt/google/chrome/chrome",
    "/snap/bin/chromium",
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
    "/Applications/Google Chrome Canary.app/Contents/MacOS/Google Chrome Canary",
)


def find_chrome(env: Mapping[str, str] | None = None) -> str:
    """Path of a Chrome/Chromium executable: ``CHROME_PATH``, then the usual names on
    ``PATH``, then the usual install locations on Linux and macOS.

    Raises :class:`ChromeNotFound` with installation advice.
    """
    env = os.environ if env is None else env
    explicit = env.get("CHROME_PATH")
    if explicit:
        if os.path.isfile(explicit) and os.access(explicit, os.X_OK):
            return explicit
        raise ChromeNotFound(f"CHROME_PATH is set to {explicit!r}, which is not an executable file")
    path_var = env.get("PATH", os.defpath)
    for name in CHROME_NAMES:
        found = shutil.which(name, path=path_var)
        if found:
            return found
    home = env.get("HOME", "")
    for location in (
        *CHROME_LOCATIONS,
        f"{home}/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    ):
        if os.path.isfile(location) and os.access(location, os.X_OK):
            return location
    raise ChromeNotFound(
        "no Chrome or Chromium found (looked at CHROME_PATH, PATH and the usual install places). "
        "Install one (Debian/Ubuntu: `sudo apt-get install chromium`), set CHROME_PATH to its "
        "executable, or attach to a running browser with --cdp-url or --connect."
    )


def default_profile_dir(env: Mapping[str, str] | None = None) -> Path:
    """handrail's own browser profile, under the user's data directory."""
    env = os.environ if env is None else env
    home = Path(env.get("HOME", str(Path.home())))
    if sys.platform == "darwin":
        base = home / "Library" / "Application Support"
    else:
        base = Path(env.get("XDG_DATA_HOME") or home / ".local" / "share")
    return base / "handrail" / "chrome-profile"


def chrome_home_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where the Chrome handrail starts keeps what it writes outside its profile (its crash
    reports, dconf's cache): handrail's own data directory, not the user's ~/.config and
    ~/.cache."""
    return default_profile_dir(env).parent / "chrome-home"


def standard_profile_dirs(env: Mapping[str, str] | None = None) -> list[Path]:
    """Where the person's everyday Chrome keeps its profile (for ``--connect``)."""
    env = os.environ if env is None else env
    home = Path(env.get("HOME", str(Path.home())))
    if sys.platform == "darwin":
        support = home / "Library" / "Application Support"
        names = ["Google/Chrome", "Google/Chrome Beta", "Google/Chrome Canary", "Chromium"]
        return [support / n for n in names]
    config = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    names = ["google-chrome", "google-chrome-beta", "google-chrome-unstable", "chromium"]
    return [config / n for n in names]


def read_devtools_active_port(profile: Path) -> tuple[int, str] | None:
    """``(port, browser websocket path)`` from a profile's DevToolsActivePort, if present."""
    try:
        lines = (profile / "DevToolsActivePort").read_text().splitlines()
        port = int(lines[0].strip())
        path = lines[1].strip() if len(lines) > 1 else ""
    except (OSError, ValueError, IndexError):
        return None
    return port, path


def _http_get_json(url: str, timeout: float) -> Any:
    # Loopback and explicit endpoints must not go through a proxy taken from the environment.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=timeout) as response:
        return json.loads(response.read().decode())


async def resolve_cdp_url(cdp_url: str, *, timeout: float = 10.0) -> str:
    """Turn ``--cdp-url`` into a browser websocket URL (``http(s)://`` asks ``/json/version``)."""
    parsed = urllib.parse.urlparse(cdp_url)
    if parsed.scheme in ("ws", "wss"):
        return cdp_url
    if parsed.scheme not in ("http", "https"):
        raise BrowserError(
            f"--cdp-url must start with http://, https://, ws:// or wss:// (got {cdp_url!r})"
        )
    version_url = urllib.parse.urljoin(cdp_url.rstrip("/") + "/", "json/version")
    try:
        info = await asyncio.to_thread(_http_get_json, version_url, timeout)
    except urllib.error.HTTPError as exc:
        raise BrowserError(
            f"{version_url} answered HTTP {exc.code}; this endpoint does not publish /json/version. "
            "Pass the browser's ws:// URL to --cdp-url instead"
        ) from exc
    except (OSError, ValueError) as exc:
        raise BrowserError(f"no DevTools endpoint answered at {version_url}: {exc}") from exc
    ws_url = info.get("webSocketDebuggerUrl") if isinstance(info, dict) else None
    if not isinstance(ws_url, str):
        raise BrowserError(f"{version_url} did not name a webSocketDebuggerUrl")
    # Chrome answers with its own idea of its host name; keep the host the person gave us.
    ws = urllib.parse.urlparse(ws_url)
    scheme = "wss" if parsed.scheme == "https" else "ws"
    return urllib.parse.urlunparse(ws._replace(scheme=scheme, netloc=parsed.netloc))
