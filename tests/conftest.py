"""Shared fixtures: the fixture site on two loopback origins and real headless Chromium."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from core.audit.key import DATA_DIR_ENV
from core.browser.browser import Browser
from core.browser.find import find_chrome
from core.browser.launch import LaunchOptions
from core.hands import Page
from tests.helpers.fake_anthropic import FakeAnthropic
from tests.helpers.site_server import SITE_ROOT, FixtureSite


def pytest_configure(config: pytest.Config) -> None:
    if not (SITE_ROOT / "node_modules" / ".gallery" / "cm6.js").is_file():
        raise pytest.UsageError(
            "tests/site/node_modules is missing: run `bash scripts/bootstrap.sh --dev` "
            "(it installs the fixture pages' libraries from npm and bundles the gallery)"
        )


# Where a user's own data lives; a test sees none of it (see own_home).
HOME_VARS = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME")


def _point_home_at(patch: pytest.MonkeyPatch, home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    patch.setenv("HOME", str(home))
    for var in HOME_VARS:
        patch.setenv(var, str(home / var.removeprefix("XDG_").removesuffix("_HOME").lower()))


@pytest.fixture(scope="session", autouse=True)
def audit_key_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every test (and every handrail it starts) seals logs with a key in a temporary data
    directory, never the real ~/.local/share/handrail; and the session's own processes (the
    shared browsers and servers) run with a temporary HOME, so nothing they write lands in
    the user's."""
    path = tmp_path_factory.mktemp("handrail-data")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(DATA_DIR_ENV, str(path))
        for name in [v for v in os.environ if v.startswith("OTEL_")]:
            patch.delenv(name)  # a developer's collector never hears of a test's run
        _point_home_at(patch, tmp_path_factory.mktemp("session-home"))
        yield path


@pytest.fixture(autouse=True)
def own_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test gets its own empty HOME (and XDG_* folders inside it): a browser a test
    launches, a profile by default (~/.local/share/handrail/chrome-profile), a config or a
    theme it saves all stay there. So the suite passes, and changes nothing, even when the
    user's own handrail profile is held by a running Chrome."""
    home = tmp_path_factory.mktemp("home")
    _point_home_at(monkeypatch, home)
    return home


@pytest.fixture(scope="session")
def site() -> Iterator[FixtureSite]:
    """The "site" origin: http://127.0.0.1:PORT serving tests/site."""
    server = FixtureSite("127.0.0.1")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def other_site() -> Iterator[FixtureSite]:
    """A second origin ("attacker"/cross-origin) serving the same files on another port."""
    server = FixtureSite("127.0.0.1")
    yield server
    server.stop()


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """A fake Anthropic Messages API on loopback, with the real SDK pointed at it through
    ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY (as the SDK reads them). Test modules that want a
    bare server without the environment define their own ``fake``."""
    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", server.api_key or "")
        yield server


@pytest.fixture(scope="session")
def chrome_path() -> str:
    return find_chrome()


@pytest.fixture
def profile_dir(tmp_path: Path) -> Path:
    return tmp_path / "profile"


def browsers_under(root: Path) -> list[int]:
    """Process ids of browsers whose profile (``--user-data-dir``) lies under ``root``."""
    proc = Path("/proc")
    if not proc.is_dir():
        return []
    needle = str(root).encode()
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(a.startswith(b"--user-data-dir=") and needle in a for a in args):
            found.append(int(entry.name))
    return found


def kill_browsers_under(root: Path) -> list[int]:
    """Kill the browsers :func:`browsers_under` finds (a test that SIGKILLed handrail must
    clean up the browser it left); returns their ids."""
    pids = browsers_under(root)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return pids


@pytest.fixture(scope="session", autouse=True)
def no_browser_outlives_the_tests(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Fails the run if a browser started with a profile under this session's temporary
    folder is still running once every other fixture is torn down (and kills it)."""
    root = tmp_path_factory.getbasetemp()
    yield
    deadline = time.monotonic() + 5.0
    while browsers_under(root) and time.monotonic() < deadline:
        time.sleep(0.1)  # a browser closed a moment ago may still be exiting
    left = kill_browsers_under(root)
    if left:
        pytest.fail(f"{len(left)} browser process(es) started by the tests outlived them: {left}")


async def launch_browser(profile: Path, **kw: object) -> Browser:
    """A headless browser of our own, for tests that need one to themselves (faults)."""
    return await Browser.launch(LaunchOptions(profile_dir=profile, headless=True, **kw))  # type: ignore[arg-type]


@pytest.fixture(scope="session")
async def browser(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Browser]:
    """One headless Chromium shared by the session; tests open their own tabs in it."""
    profile = tmp_path_factory.mktemp("chrome-profile")
    b = await launch_browser(profile, downloads_dir=tmp_path_factory.mktemp("downloads"))
    yield b
    await b.close()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
async def tab(browser: Browser) -> AsyncIterator[object]:
    """A fresh tab of ours, current in ``browser``, closed after the test."""
    t = await browser.new_tab()
    yield t
    if not t.closed:
        await browser.close_tab(t)


@pytest.fixture
async def page(browser: Browser, tab: object) -> AsyncIterator[Page]:
    """The hands on ``tab`` (the current tab), with a 15 s action timeout."""
    hands = Page(browser, action_timeout=15)
    yield hands
    hands.close()


os.environ.setdefault("HANDRAIL_TESTING", "1")
