"""``handrail doctor`` on this machine: real Chromium, real SDKs against the fake servers."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.browser.browser import Browser
from core.browser.find import find_chrome
from core.run.doctor import (
    REQUIRED_PACKAGES,
    Check,
    Terminal,
    check_audit_dir,
    check_cdp_url,
    check_connect,
    check_headed,
    check_model,
    check_python,
    check_terminal,
    ready,
)
from tests.helpers.fake_anthropic import FakeAnthropic
from tests.helpers.fake_openai import FakeOpenAI
from tui.cli.doctor import render, run_doctor
from tui.cli.main import build_parser

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def fake_anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", fake.api_key or "")
        monkeypatch.delenv("HANDRAIL_MODEL", raising=False)
        yield fake


def doctor(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = run_doctor(build_parser().parse_args(["doctor", *argv]))
    return code, capsys.readouterr().out


def dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def by_name(checks: list[Check], name: str) -> Check:
    return next(c for c in checks if c.name == name)


# -- the whole report ------------------------------------------------------------------


def test_a_ready_machine_exits_0_and_names_chrome(
    fake_anthropic: FakeAnthropic, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = doctor(["--audit-dir", str(tmp_path / "logs")], capsys)
    assert code == 0, out
    line = next(line for line in out.splitlines() if line.startswith("✓ chrome "))
    assert find_chrome() in line
    assert re.search(r"(Chromium|Chrome) \d+\.\d+", line)
    for name in ("python", "packages", "chrome starts", "cdp", "model", "model endpoint"):
        assert re.search(rf"^✓ {name} ", out, re.M), out
    assert "✗" not in out and "Ready: everything a run needs is here" in out
    assert not (tmp_path / "logs").exists()  # checked, not created


def test_without_chromium_the_browser_check_fails_with_the_install_fix(
    tmp_path: Path,
    fake_anthropic: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Hide every place find_chrome looks: PATH, HOME and the fixed install locations (which
    # no PATH can hide, so they are emptied here rather than skipping where Chrome lives).
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.delenv("CHROME_PATH", raising=False)
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr("core.browser.find.CHROME_LOCATIONS", ())
    code, out = doctor(["--audit-dir", str(tmp_path / "a")], capsys)
    assert code == 1, out
    assert re.search(r"^✗ chrome +no Chrome or Chromium found", out, re.M), out
    assert "apt-get install chromium" in out and "CHROME_PATH" in out
    assert "Not ready: 1 problem (chrome)." in out


# -- the browser a run would attach to -----------------------------------------------------


async def test_cdp_url_at_a_running_browser_is_ok_and_opens_no_tab(browser: Browser) -> None:
    before = (await browser.connection.send("Target.getTargets"))["targetInfos"]
    port = browser.ws_url.split(":")[2].split("/")[0]
    for url in (browser.ws_url, f"http://127.0.0.1:{port}"):
        check = await check_cdp_url(url)
        assert check.status == "ok", check
        assert "Chrome/" in check.found and "tabs it opens" in check.found
    after = (await browser.connection.send("Target.getTargets"))["targetInfos"]
    assert {t["targetId"] for t in after} == {t["targetId"] for t in before}


async def test_cdp_url_at_a_dead_port_fails_clearly() -> None:
    check = await check_cdp_url(f"http://127.0.0.1:{dead_port()}")
    assert check.status == "fail"
    assert "no DevTools endpoint answered" in check.found
    assert check.fix and "--remote-debugging-port" in check.fix


async def test_connect_without_a_debuggable_chrome_explains_chrome_inspect(tmp_path: Path) -> None:
    check = await check_connect({"HOME": str(tmp_path)})
    assert check.status == "fail"
    assert "no running Chrome with remote debugging" in check.found
    assert check.fix and "chrome://inspect/#remote-debugging" in check.fix and "Allow" in check.fix


# -- the model -------------------------------------------------------------------------


async def test_no_key_says_how_to_set_it_and_that_the_demo_needs_none() -> None:
    checks = await check_model({}, model_spec=None, base_url=None)
    assert [c.status for c in checks] == ["fail"]
    assert "ANTHROPIC_API_KEY is not set" in checks[0].found
    assert checks[0].fix and "export ANTHROPIC_API_KEY=" in checks[0].fix
    assert "handrail demo` works without a key" in checks[0].fix
    text = render(checks)
    assert "✗ model" in text and "\n                   fix: Set your key" in text


async def test_a_scripted_plan_needs_no_key(tmp_path: Path) -> None:
    plan = tmp_path / "plan.jsonl"
    plan.write_text("# nothing to do\n")
    checks = await check_model({}, model_spec=f"scripted:{plan}", base_url=None)
    assert [(c.name, c.status) for c in checks] == [("model", "ok")]
    assert "no key needed" in checks[0].found


async def test_a_rejected_key_fails() -> None:
    with FakeAnthropic(api_key="the-right-key") as fake:
        env = {"ANTHROPIC_API_KEY": "a-wrong-key", "ANTHROPIC_BASE_URL": fake.url}
        checks = await check_model(env, model_spec=None, base_url=None)
    endpoint = by_name(checks, "model endpoint")
    assert endpoint.status == "fail" and "rejected the key" in endpoint.found
    assert endpoint.fix and "ANTHROPIC_API_KEY" in endpoint.fix


async def test_an_unknown_model_fails() -> None:
    with FakeAnthropic(models=["claude-known"]) as fake:
        env = {"ANTHROPIC_API_KEY": fake.api_key or "", "ANTHROPIC_BASE_URL": fake.url}
        checks = await check_model(env, model_spec="anthropic:claude-nope", base_url=None)
    endpoint = by_name(checks, "model endpoint")
    assert endpoint.status == "fail" and "Unknown model 'claude-nope'" in endpoint.found


async def test_a_local_server_that_is_not_running_fails() -> None:
    url = f"http://127.0.0.1:{dead_port()}/v1"
    checks = await check_model({}, model_spec="openai:llama3.1", base_url=url)
    endpoint = by_name(checks, "model endpoint")
    assert endpoint.status == "fail" and url in endpoint.found
    assert endpoint.fix and "ollama serve" in endpoint.fix


async def test_a_remote_endpoint_out_of_reach_is_only_a_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for proxy in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy"):
        monkeypatch.delenv(proxy, raising=False)  # a proxy would answer in its stead
    # 192.0.2.0/24 is reserved for documentation: nothing answers there.
    env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://192.0.2.1:9"}
    checks = await check_model(env, model_spec=None, base_url=None, timeout=3)
    endpoint = by_name(checks, "model endpoint")
    assert endpoint.status == "warn", endpoint
    assert endpoint.fix and "handrail demo` works without a key" in endpoint.fix
    assert ready(checks)


async def test_ollama_passes_with_its_context_warning() -> None:
    with FakeOpenAI(models=["llama3.1:latest"]) as fake:
        checks = await check_model({}, model_spec="openai:llama3.1", base_url=fake.base_url)
    assert [c.status for c in checks] == ["ok", "ok", "warn"]
    assert checks[2].fix and "4096" in checks[2].fix
    assert ready(checks)


# -- the audit folder ------------------------------------------------------------------


def test_an_audit_dir_under_a_file_fails_with_the_fix(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    check = check_audit_dir(tmp_path / "file" / "logs")
    assert check.status == "fail" and "is a file, not a folder" in check.found
    assert check.fix and "--audit-dir" in check.fix


def test_an_audit_dir_is_probed_and_left_as_it_was(tmp_path: Path) -> None:
    assert check_audit_dir(tmp_path).status == "ok"
    assert check_audit_dir(tmp_path / "new" / "logs").status == "ok"
    assert list(tmp_path.iterdir()) == []


# -- the rest --------------------------------------------------------------------------


def test_an_old_python_fails() -> None:
    check = check_python((3, 10, 12))
    assert check.status == "fail" and check.fix and "3.11" in check.fix


def test_the_terminal_only_ever_warns() -> None:
    small = check_terminal(Terminal(is_tty=True, columns=60, lines=20), {"TERM": "dumb"})
    assert [c.status for c in small] == ["warn", "warn"]
    assert "60x20" in small[0].found and small[0].fix and "80" in small[0].fix
    piped = check_terminal(None, {"TERM": "xterm-256color"})
    assert (
        [c.status for c in piped] == ["warn", "ok"] and piped[0].fix and "--no-tui" in piped[0].fix
    )
    fine = check_terminal(Terminal(True, 120, 40), {"COLORTERM": "truecolor", "NO_COLOR": "1"})
    assert [c.status for c in fine] == ["ok", "ok"] and "NO_COLOR" in fine[1].found


def test_the_report_reads_without_colour_or_unicode() -> None:
    checks = [
        Check("python", "ok", "3.11.7"),
        Check("chrome", "fail", "none found", "install it"),
        Check("colours", "warn", "none", "set TERM"),
    ]
    plain = render(checks)
    assert "\033[" not in plain
    assert "✓ python " in plain and "✗ chrome " in plain and "! colours " in plain
    assert "Not ready: 1 problem (chrome)." in plain
    assert "\033[31m✗\033[0m chrome" in render(checks, colour=True)
    ascii_only = render(checks, unicode=False)
    ascii_only.encode("ascii")
    assert "x chrome " in ascii_only


def test_required_packages_match_pyproject() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    declared = sorted(pyproject["project"]["dependencies"])
    ours = sorted(
        f"{name}>={low}" + (f",<{high}" if high else "") for name, low, high in REQUIRED_PACKAGES
    )
    assert ours == declared


def test_core_doctor_does_not_load_textual() -> None:
    # rich may come in through structlog's console renderer; textual must not.
    code = "import sys, core.run.doctor; assert 'textual' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, timeout=60)


# -- the display a headed run needs --------------------------------------------------------


async def test_without_a_display_doctor_says_runs_will_be_headless(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    check = await check_headed(find_chrome(), {})
    assert (check.name, check.status) == ("display", "warn")
    assert "no display" in check.found and "headless" in check.found


async def test_a_display_that_does_not_answer_fails_the_headed_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A display number no X server listens on: what a stale DISPLAY over SSH looks like.
    monkeypatch.setenv("DISPLAY", ":97")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    check = await check_headed(find_chrome(), {"DISPLAY": ":97"})
    assert (check.name, check.status) == ("chrome starts headed", "fail")
    assert ":97" in check.found
    assert "xdpyinfo" in (check.fix or "") and "--headless" in (check.fix or "")
