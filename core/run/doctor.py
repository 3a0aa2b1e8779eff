"""``handrail doctor``: is everything a run needs here? Checks as data, nothing printed.

Each check returns a :class:`Check`: what was looked at, what was found, and for a warning
or a failure the fix a person can apply. A failure means a run as configured cannot
start; a warning means it can, but something may get in the way (offline, a small
terminal). The browser is probed for real: a throwaway headless Chrome is started with
the same flags a run uses, and the model's endpoint is asked the same pre-flight question
a run asks, under a short timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import ipaddress
import os
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import anthropic
import openai

from core.browser.browser import Browser
from core.browser.display import NO_DISPLAY, has_display
from core.browser.errors import BrowserError, ChromeNotFound
from core.browser.find import find_chrome, standard_profile_dirs
from core.browser.launch import LaunchOptions
from core.cdp import CDPError, HandshakeRefused
from core.model.anthropic_backend import AnthropicModel
from core.model.base import Model, ModelConfigError
from core.model.openai_backend import OpenAIModel
from core.model.spec import DEFAULT_SPEC, SPEC_FORMS, build_model, parse_spec

Status = Literal["ok", "warn", "fail"]

VERSION_TIMEOUT_S = 10.0
"""For ``chrome --version``; a wrapper script that hangs must not hang the doctor."""
LAUNCH_TIMEOUT_S = 30.0
"""Start, open a tab, evaluate, close: a cold start on a slow disk takes a few seconds."""
CONNECT_TIMEOUT_S = 30.0
"""Reaching a running browser; with --connect, Chrome may be waiting for the person to click
Allow in its remote-debugging prompt."""
MODEL_CHECK_TIMEOUT_S = 20.0
"""The backends' own pre-flight gives up after 10-15 s; this is the outer bound."""
MIN_COLUMNS, MIN_LINES = 80, 24

REQUIRED_PACKAGES: tuple[tuple[str, str, str | None], ...] = (
    # (distribution, minimum, first unsupported) - the same bounds as pyproject.toml's
    # dependencies (a test keeps the two in step).
    ("textual", "8.2", "9"),
    ("websockets", "15", None),
    ("anthropic", "0.60", None),
    ("openai", "1.40", None),
    ("structlog", "24", None),
    ("textual-serve", "1.1", "2"),
    ("textual-image", "0.12", "1"),
    ("pillow", "10", None),
    ("mcp", "2.3", "3"),
    ("opentelemetry-sdk", "1.30", "2"),
    ("opentelemetry-exporter-otlp-proto-http", "1.30", "2"),
)

INSTALL_FIX = "Run `bash scripts/bootstrap.sh` from the handrail folder, or `pip install -e .` in its virtual environment."
DEMO_NOTE = "`handrail demo` works without a key (it runs a bundled scripted plan)."


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the doctor's report."""

    name: str
    status: Status
    found: str
    """What was found, in words (a path, a version, an error message)."""
    fix: str | None = None
    """For ``warn`` and ``fail``: what to do about it."""


@dataclass(frozen=True, slots=True)
class Terminal:
    """The terminal the report goes to, as the caller measured it."""

    is_tty: bool
    columns: int
    lines: int


def ready(checks: Sequence[Check]) -> bool:
    """True when nothing failed: a run as configured has what it needs."""
    return all(c.status != "fail" for c in checks)


async def diagnose(
    *,
    env: Mapping[str, str],
    cdp_url: str | None,
    connect: bool,
    model_spec: str | None,
    base_url: str | None,
    audit_dir: Path,
    terminal: Terminal | None = None,
) -> list[Check]:
    """Every check, in report order. Never raises for what it finds; takes a few seconds
    (a headless Chrome is started and stopped; the model's endpoint is asked once).

    ``model_spec`` None means what a run would use: ``HANDRAIL_MODEL`` or the default.
    ``terminal`` None means the output is not a terminal (piped).
    """
    attach = bool(cdp_url or connect)
    checks = [check_python(), check_packages()]
    browser_checks, target_checks, model_checks = await asyncio.gather(
        # With --cdp-url/--connect a run never launches Chrome: a missing one is a warning.
        check_chrome(env, needed=not attach),
        check_targets(env, cdp_url=cdp_url, connect=connect),
        check_model(env, model_spec=model_spec, base_url=base_url),
    )
    checks += browser_checks + target_checks + model_checks
    checks.append(check_audit_dir(audit_dir))
    checks += check_terminal(terminal, env)
    return checks


# -- Python and packages ---------------------------------------------------------------


def check_python(version: tuple[int, int, int] | None = None) -> Check:
    major, minor, micro = version or sys.version_info[:3]
    found = f"{major}.{minor}.{micro} ({sys.executable})"
    if (major, minor) >= (3, 11):
        return Check("python", "ok", found)
    return Check(
        "python",
        "fail",
        found,
        "handrail needs Python 3.11 or newer: install it (Debian/Ubuntu: `apt-get install "
        "python3`), then make the virtual environment with it: `python3 -m venv .venv`.",
    )


def check_packages() -> Check:
    found: list[str] = []
    problems: list[str] = []
    for name, minimum, below in REQUIRED_PACKAGES:
        try:
            version = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found.append(f"{name} missing")
            problems.append(f"{name} is not installed")
            continue
        found.append(f"{name} {version}")
        if _version_key(version) < _version_key(minimum):
            problems.append(f"{name} {version} is older than {minimum}")
        elif below is not None and _version_key(version) >= _version_key(below):
            problems.append(f"{name} {version} is newer than handrail supports (< {below})")
    if not problems:
        return Check("packages", "ok", ", ".join(found))
    return Check("packages", "fail", "; ".join(problems), INSTALL_FIX)


def _version_key(version: str) -> tuple[int, ...]:
    """Leading numeric parts: ``"8.2.1rc1"`` → ``(8, 2, 1)``; enough for our bounds."""
    parts: list[int] = []
    for piece in version.split("."):
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        parts.append(int(digits))
        if len(digits) != len(piece):
            break
    return tuple(parts)


# -- the browser -----------------------------------------------------------------------

CHROME_INSTALL_FIX = (
    "Install Chromium (Debian/Ubuntu: `sudo apt-get install chromium`; macOS: install Google "
    "Chrome), or set CHROME_PATH to a Chrome/Chromium executable, or attach to a running "
    "browser with --cdp-url URL or --connect."
)


async def check_chrome(env: Mapping[str, str], *, needed: bool = True) -> list[Check]:
    """Chrome found (path, version), and it starts headless with a throwaway profile:
    launch, open a tab, evaluate ``1+1``, close. The launch goes over CDP, so it also
    proves CDP works. With ``needed`` False (the run attaches elsewhere) a failure here is
    a warning."""
    bad: Status = "fail" if needed else "warn"
    try:
        path = find_chrome(env)
    except ChromeNotFound as exc:
        return [Check("chrome", bad, _first_sentence(exc), CHROME_INSTALL_FIX)]
    version = await chrome_version(path)
    if version is None:
        found = Check(
            "chrome",
            "warn",
            f"{path} (it did not tell its version within {VERSION_TIMEOUT_S:g} s)",
            "Check that it runs: `" + path + " --version`; or set CHROME_PATH to another "
            "Chrome/Chromium.",
        )
    else:
        found = Check("chrome", "ok", f"{path} — {version}")
    launched = await _check_launch(path, bad)
    if any(check.status != "ok" for check in launched):
        return [found, *launched]
    return [found, *launched, await check_headed(path, env, bad)]


async def check_headed(path: str, env: Mapping[str, str], bad: Status = "fail") -> Check:
    """Where a display is expected, a run launches Chrome with a window: start one with a
    throwaway profile, and stop it. Without a display, say that runs will be headless.
    Chrome gets this process's environment (as a run's does); ``env`` says whether a
    display is expected."""
    if not has_display(env):
        return Check(
            "display",
            "warn",
            f"{NO_DISPLAY}: runs launch Chrome headless, so a hand-over (password, CAPTCHA, "
            "payment) has no window to act in",
            "Run where a display is available (a desktop session, or ssh -X) to act in the "
            "browser yourself; --headless chooses headless and silences the run's notice.",
        )
    where = env.get("WAYLAND_DISPLAY") or env.get("DISPLAY") or "this desktop"
    with tempfile.TemporaryDirectory(
        prefix="handrail-doctor-", ignore_cleanup_errors=True
    ) as profile:
        options = LaunchOptions(
            executable=path, profile_dir=Path(profile), headless=False, timeout=LAUNCH_TIMEOUT_S
        )
        try:
            browser = await asyncio.wait_for(Browser.launch(options), LAUNCH_TIMEOUT_S + 10)
        except (BrowserError, CDPError, TimeoutError) as exc:
            what = _first_sentence(exc) if str(exc) else f"no answer in {LAUNCH_TIMEOUT_S:g} s"
            return Check(
                "chrome starts headed",
                bad,
                f"the display {where} is set, but Chrome could not open a window on it: {what}",
                "Check that the display answers (`xdpyinfo`; over SSH, X forwarding and "
                "xauth), or unset DISPLAY/WAYLAND_DISPLAY so runs go headless, or pass "
                "--headless.",
            )
        with contextlib.suppress(CDPError, OSError):
            await browser.close()
    return Check("chrome starts headed", "ok", f"a window on {where}, opened and closed")


async def chrome_version(path: str) -> str | None:
    """What ``path --version`` prints on its first line, or None (error or timeout)."""
    try:
        process = await asyncio.create_subprocess_exec(
            path,
            "--version",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        return None
    try:
        out, _ = await asyncio.wait_for(process.communicate(), VERSION_TIMEOUT_S)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        return None
    lines = out.decode(errors="replace").strip().splitlines()
    return lines[0].strip() if process.returncode == 0 and lines else None


async def _check_launch(path: str, bad: Status) -> list[Check]:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(
        prefix="handrail-doctor-", ignore_cleanup_errors=True
    ) as profile:
        options = LaunchOptions(
            executable=path,
            profile_dir=Path(profile),
            headless=True,
            timeout=LAUNCH_TIMEOUT_S,
        )
        try:
            # The launch's own deadline comes first and stops the process it started.
            browser = await asyncio.wait_for(Browser.launch(options), LAUNCH_TIMEOUT_S + 10)
        except (BrowserError, TimeoutError) as exc:
            what = str(exc) or f"no answer within {LAUNCH_TIMEOUT_S:g} s"
            return [
                Check(
                    "chrome starts",
                    bad,
                    f"{path} could not start headless with a fresh profile: {what}",
                    "Run it by hand to see why: `"
                    + path
                    + " --headless --dump-dom about:blank`; or set CHROME_PATH to another "
                    "Chrome/Chromium, or attach to a running browser with --cdp-url URL.",
                )
            ]
        except CDPError as exc:
            return [_cdp_failed(path, exc, bad)]
        try:
            tab = await browser.new_tab()
            result = await tab.send(
                "Runtime.evaluate", {"expression": "1+1", "returnByValue": True}, timeout=10
            )
            value = result.get("result", {}).get("value")
            product = (await browser.connection.send("Browser.getVersion", timeout=10)).get(
                "product", "?"
            )
        except CDPError as exc:
            return [
                Check("chrome starts", "ok", f"{path} started headless"),
                _cdp_failed(path, exc, bad),
            ]
        finally:
            with contextlib.suppress(CDPError, OSError):
                await browser.close()
    elapsed = time.monotonic() - started
    started_check = Check(
        "chrome starts",
        "ok",
        f"headless, throwaway profile: launched, opened a tab and closed in {elapsed:.1f} s",
    )
    if value != 2:
        return [
            started_check,
            Check(
                "cdp",
                bad,
                f"{product} answered, but evaluating 1+1 in a tab gave {value!r}",
                "This Chrome does not run page scripts as expected; set CHROME_PATH to another "
                "Chrome/Chromium.",
            ),
        ]
    return [started_check, Check("cdp", "ok", f"{product} answered; 1+1 evaluated to 2 in a tab")]


def _cdp_failed(path: str, exc: Exception, bad: Status) -> Check:
    return Check(
        "cdp",
        bad,
        f"{path} started, but its DevTools protocol did not answer: {exc}",
        "Another program may be holding the browser; close other Chromes started with "
        "--remote-debugging-port, or set CHROME_PATH to another Chrome/Chromium.",
    )


async def check_targets(
    env: Mapping[str, str], *, cdp_url: str | None, connect: bool
) -> list[Check]:
    """The browsers a run would attach to (``--cdp-url``, ``--connect``), when given."""
    checks: list[Check] = []
    if cdp_url and connect:
        checks.append(
            Check(
                "browser choice",
                "fail",
                "both --cdp-url and --connect were given",
                "A run attaches to one browser: keep either --cdp-url URL or --connect.",
            )
        )
    if cdp_url:
        checks.append(await check_cdp_url(cdp_url))
    if connect:
        checks.append(await check_connect(env))
    return checks


async def check_cdp_url(cdp_url: str, *, timeout: float = CONNECT_TIMEOUT_S) -> Check:
    """Connect to ``--cdp-url``, see what we may use, disconnect (opening no tab)."""
    try:
        browser = await asyncio.wait_for(Browser.connect(cdp_url), timeout)
    except (BrowserError, CDPError, TimeoutError) as exc:
        return Check(
            "--cdp-url",
            "fail",
            _unreachable(cdp_url, exc, timeout),
            _refused_fix(exc)
            or "Start the browser with remote debugging on, e.g. `chromium "
            "--remote-debugging-port=9222 --user-data-dir=/tmp/handrail-remote` (add "
            "--remote-debugging-address=0.0.0.0 only on a trusted network), and pass "
            "--cdp-url http://HOST:9222; or drop --cdp-url to let handrail launch its own.",
        )
    return Check("--cdp-url", "ok", await _describe_access(browser, cdp_url))


async def check_connect(env: Mapping[str, str], *, timeout: float = CONNECT_TIMEOUT_S) -> Check:
    """Find the person's own Chrome (chrome://inspect's switch), connect, disconnect."""
    profiles = standard_profile_dirs(env)
    try:
        browser = await asyncio.wait_for(Browser.connect_local(profiles), timeout)
    except (BrowserError, CDPError, TimeoutError) as exc:
        return Check(
            "--connect",
            "fail",
            _first_sentence(exc) or _unreachable("your Chrome", exc, timeout),
            _refused_fix(exc)
            or "Start Chrome, open chrome://inspect/#remote-debugging and turn remote debugging "
            "on; keep Chrome open and run `handrail doctor --connect` again. Chrome then asks "
            "whether to allow the connection: click Allow.",
        )
    return Check("--connect", "ok", await _describe_access(browser, "your Chrome"))


async def _describe_access(browser: Browser, where: str) -> str:
    try:
        version = await browser.connection.send("Browser.getVersion", timeout=10)
        pages = sum(1 for info in browser.targets.values() if info.get("type") == "page")
        product = version.get("product", "a browser")
    except CDPError:
        product, pages = "a browser", 0
    finally:
        with contextlib.suppress(CDPError, OSError):
            await browser.close()
    tabs = f"{pages} tab{'s' if pages != 1 else ''} open"
    return (
        f"{product} at {where} ({browser.ws_url}); {tabs}, none of them handrail's: a run "
        "works only in tabs it opens"
    )


def _unreachable(where: str, exc: BaseException, timeout: float) -> str:
    if isinstance(exc, TimeoutError) and not str(exc):
        return f"no answer from {where} within {timeout:g} s"
    return str(exc)


def _first_sentence(exc: BaseException) -> str:
    """What an error found, without the advice that follows it (the fix says that)."""
    return str(exc).split(". ", 1)[0]


def _refused_fix(exc: BaseException) -> str | None:
    cause = exc.__cause__
    if isinstance(cause, HandshakeRefused) and cause.status == 403:
        return (
            "Chrome asks you to allow each debugging client; the prompt was denied or "
            "dismissed. Run again and click Allow in Chrome's dialog; if no dialog appears, "
            "turn remote debugging off and on at chrome://inspect/#remote-debugging."
        )
    return None


# -- the model -------------------------------------------------------------------------


async def check_model(
    env: Mapping[str, str],
    *,
    model_spec: str | None,
    base_url: str | None,
    timeout: float = MODEL_CHECK_TIMEOUT_S,
) -> list[Check]:
    """The model a run would use is configured (key present) and its endpoint answers.

    An endpoint that cannot be reached is a warning when it is on another machine (you may
    be offline; the run checks again when it starts) and a failure on this one (the server
    is not running). A rejected key or an unknown model is a failure.
    """
    spec = model_spec or env.get("HANDRAIL_MODEL") or DEFAULT_SPEC
    source = (
        "--model" if model_spec else "HANDRAIL_MODEL" if env.get("HANDRAIL_MODEL") else "default"
    )
    try:
        model = build_model(spec, base_url=base_url, env=env)
    except ModelConfigError as exc:
        if _needs_anthropic_key(spec, env):
            found = f"{spec} ({source}) needs a key, and ANTHROPIC_API_KEY is not set"
        else:
            found = f"{spec} ({source}): {exc}"
        return [Check("model", "fail", found, _config_fix(spec))]
    configured = Check("model", "ok", f"{model.label} ({source}){_key_source(model, env)}")
    try:
        endpoint = await _check_endpoint(model, timeout)
    finally:
        if isinstance(model, AnthropicModel | OpenAIModel):
            await model.aclose()
    return [configured, *endpoint]


def _needs_anthropic_key(spec: str, env: Mapping[str, str]) -> bool:
    try:
        kind, _ = parse_spec(spec)
    except ModelConfigError:
        return False
    return kind == "anthropic" and not (
        env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN")
    )


def _config_fix(spec: str) -> str:
    try:
        kind, _ = parse_spec(spec)
    except ModelConfigError:
        return f"Use one of these with --model (or HANDRAIL_MODEL):\n{SPEC_FORMS}"
    if kind == "anthropic":
        return (
            "Set your key from https://console.anthropic.com: `export ANTHROPIC_API_KEY=...`, "
            f"or use a local model: --model openai:MODEL --base-url URL. {DEMO_NOTE}"
        )
    if kind == "openai":
        return (
            "Give the server's URL: --base-url http://localhost:11434/v1 (Ollama) or "
            f"http://localhost:8000/v1 (vLLM), or set OPENAI_BASE_URL. {DEMO_NOTE}"
        )
    return "Give the path of an existing plan file: --model scripted:PATH.jsonl."


def _key_source(model: Model, env: Mapping[str, str]) -> str:
    if isinstance(model, AnthropicModel):
        key = "ANTHROPIC_API_KEY" if env.get("ANTHROPIC_API_KEY") else "ANTHROPIC_AUTH_TOKEN"
        return f", key from {key}"
    if isinstance(model, OpenAIModel):
        return ", key from OPENAI_API_KEY" if env.get("OPENAI_API_KEY") else ", no key (local)"
    return ", no key needed"


async def _check_endpoint(model: Model, timeout: float) -> list[Check]:
    if not isinstance(model, AnthropicModel | OpenAIModel):
        return []  # a scripted plan was validated when it was read
    base = model.base_url
    try:
        await asyncio.wait_for(model.check(), timeout)
    except TimeoutError:
        return [_unreachable_endpoint(model, base, f"no answer within {timeout:g} s")]
    except ModelConfigError as exc:
        cause = exc.__cause__
        if isinstance(cause, anthropic.APIConnectionError | openai.APIConnectionError):
            return [_unreachable_endpoint(model, base, str(exc))]
        return [Check("model endpoint", "fail", str(exc), _rejected_fix(model))]
    checks = [Check("model endpoint", "ok", f"{base} answered the pre-flight for {model.model_id}")]
    if isinstance(model, OpenAIModel):
        checks += [
            Check("model endpoint", "warn", "looks like Ollama", note) for note in model.notes
        ]
    return checks


def _unreachable_endpoint(model: AnthropicModel | OpenAIModel, base: str, what: str) -> Check:
    local = _is_loopback(base)
    if isinstance(model, OpenAIModel):
        fix = (
            "Start the server (`ollama serve`, `vllm serve MODEL`) and check --base-url or "
            "OPENAI_BASE_URL (it usually ends in /v1)."
        )
    else:
        fix = (
            "Check the network (a proxy? HTTPS_PROXY is honoured), or ANTHROPIC_BASE_URL if "
            f"you set it. Offline, {DEMO_NOTE}"
        )
    if local:
        return Check("model endpoint", "fail", f"{base} does not answer: {what}", fix)
    return Check(
        "model endpoint",
        "warn",
        f"{base} could not be reached (offline?): {what}",
        fix + " A run checks again when it starts.",
    )


def _rejected_fix(model: AnthropicModel | OpenAIModel) -> str:
    if isinstance(model, AnthropicModel):
        return (
            "Check ANTHROPIC_API_KEY (a key from https://console.anthropic.com) and the model "
            f"id in --model anthropic:ID. {DEMO_NOTE}"
        )
    return (
        "Check OPENAI_API_KEY and the model id in --model openai:ID (the server lists its models)."
    )


def _is_loopback(url: str) -> bool:
    host = urllib.parse.urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# -- the audit folder ------------------------------------------------------------------


def check_audit_dir(audit_dir: Path) -> Check:
    """The audit folder can be written (or created). Leaves nothing behind."""
    fix = (
        "Choose a folder you can write to with --audit-dir DIR (e.g. --audit-dir "
        "~/handrail-logs), or fix the permissions of this one."
    )
    where = audit_dir.expanduser()
    existing = where
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return Check("audit folder", "fail", f"{where}: {existing} is a file, not a folder", fix)
    try:
        handle, probe = tempfile.mkstemp(prefix=".handrail-doctor-", dir=existing)
        os.close(handle)
        os.unlink(probe)
    except OSError as exc:
        return Check("audit folder", "fail", f"{existing} is not writable: {exc}", fix)
    if existing == where:
        return Check("audit folder", "ok", f"{where} is writable")
    return Check("audit folder", "ok", f"{where} will be created (in {existing}, writable)")


# -- the terminal ----------------------------------------------------------------------


def check_terminal(terminal: Terminal | None, env: Mapping[str, str]) -> list[Check]:
    """Size and colours of the terminal the observatory would use. Never fails."""
    if terminal is None or not terminal.is_tty:
        size = Check(
            "terminal",
            "warn",
            "not a terminal (output is piped or redirected)",
            "The observatory needs a terminal; in scripts and CI use `handrail run --no-tui`.",
        )
    elif terminal.columns < MIN_COLUMNS or terminal.lines < MIN_LINES:
        size = Check(
            "terminal",
            "warn",
            f"{terminal.columns}x{terminal.lines}, smaller than {MIN_COLUMNS}x{MIN_LINES}",
            "Enlarge the window (at least 80 columns by 24 lines) so the observatory's panes fit.",
        )
    else:
        size = Check("terminal", "ok", f"{terminal.columns}x{terminal.lines}")
    return [size, _check_colours(env)]


def _check_colours(env: Mapping[str, str]) -> Check:
    term = env.get("TERM", "")
    colorterm = env.get("COLORTERM", "").lower()
    if env.get("NO_COLOR"):
        return Check("colours", "ok", "off: NO_COLOR is set (marks and text stay readable)")
    if colorterm in ("truecolor", "24bit"):
        return Check("colours", "ok", f"24-bit (COLORTERM={colorterm})")
    if term.endswith("256color"):
        return Check("colours", "ok", f"256 (TERM={term})")
    if not term or term == "dumb":
        return Check(
            "colours",
            "warn",
            f"none (TERM={term or 'unset'})",
            "Run in a terminal emulator that sets TERM (e.g. xterm-256color); set "
            "COLORTERM=truecolor if it supports 24-bit colour.",
        )
    return Check(
        "colours",
        "warn",
        f"basic only (TERM={term}); themes are approximated",
        "If your terminal does more, say so: `export TERM=xterm-256color` or "
        "`export COLORTERM=truecolor`.",
    )
