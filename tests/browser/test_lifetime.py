"""The person's machine is left as it was: edge inputs refused before a browser starts,
no control character from a page or a model on the terminal, and no Chrome, profile or
temporary file left behind however handrail ends (SIGTERM, SIGHUP, SIGKILL)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.browser.reaper import group_alive
from core.run.session import RunSettings, check_settings
from tests.helpers.fake_anthropic import FakeAnthropic
from tests.helpers.site_server import FixtureSite
from tests.helpers.waiting import until
from tui.cli.main import dispatch

# End to end: whole actions or runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


# -- edge inputs ------------------------------------------------------------------------


@pytest.fixture
def tripwire_chrome(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """CHROME_PATH pointing at a script that only leaves a mark: a run that gets as far as
    starting a browser leaves the mark, one refused in pre-flight does not."""
    mark = tmp_path / "a-browser-was-started"
    script = tmp_path / "chrome"
    script.write_text(f"#!/bin/sh\ntouch {mark}\nexit 1\n")
    script.chmod(0o755)
    monkeypatch.setenv("CHROME_PATH", str(script))
    return mark


@pytest.fixture
def plan(tmp_path: Path) -> Path:
    path = tmp_path / "plan.jsonl"
    path.write_text('{"tool": "finish", "input": {"success": true, "answer": "ok"}}\n')
    return path


def _big_file(tmp_path: Path) -> Path:
    path = tmp_path / "huge-secrets.toml"
    path.write_bytes(b"# " + b"x" * 2_000_000 + b"\n")
    return path


EDGE_CASES = {
    "url-without-host": (["--start-url", "http://"], "has no host"),
    "timeout-nan": (["--action-timeout", "nan"], "--action-timeout must be a positive number"),
    "timeout-negative": (["--action-timeout=-1"], "--action-timeout must be a positive number"),
    "timeout-infinite": (["--action-timeout", "inf"], "--action-timeout must be a positive number"),
    "timeout-zero": (["--action-timeout", "0"], "--action-timeout must be a positive number"),
    "secrets-file-device": (["--secrets-file", "/dev/zero"], "is not a regular file"),
    "secrets-file-folder": (["--secrets-file", "{tmp}"], "is not a regular file"),
    "secrets-file-huge": (["--secrets-file", "{big}"], "over the 1 MB limit"),
    # strict cannot be held in a browser we only connect to (its WebRTC and preload settings
    # are its own), whether it was asked for or follows from a secret.
    "connect-strict": (
        ["--cdp-url", "http://127.0.0.1:9", "--allow-domain", "example.org", "--network", "strict"],
        "--network strict cannot be held in a browser handrail connects to",
    ),
    "connect-secret": (
        ["--connect", "--allow-domain", "example.org", "--secret", "TOKEN=HOME"],
        "(the default when a secret is configured) cannot be held",
    ),
}


@pytest.mark.parametrize("case", sorted(EDGE_CASES))
def test_an_edge_input_exits_2_with_one_line_before_any_browser_starts(
    case: str,
    tmp_path: Path,
    plan: Path,
    tripwire_chrome: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    options, expected = EDGE_CASES[case]
    big = _big_file(tmp_path) if "{big}" in options else None
    options = [o.replace("{tmp}", str(tmp_path)).replace("{big}", str(big)) for o in options]
    code = dispatch(
        [
            "run",
            "look around",
            "--no-tui",
            "--headless",
            "--model",
            f"scripted:{plan}",
            "--audit-dir",
            str(tmp_path / "logs"),
            *options,
        ]
    )
    err = capsys.readouterr().err
    assert code == 2, err
    assert expected in err
    assert len(err.strip().splitlines()) == 1, err
    assert not tripwire_chrome.exists()


# -- the terminal is the person's ---------------------------------------------------------

ESCAPES = (
    "\x1b]52;c;aGFuZHJhaWw=\x07"  # OSC 52: write to the person's clipboard
    "\x1b[2J\x1b[H"  # clear the screen, cursor home
    "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\"  # a hidden hyperlink
    "\x9b31m"  # C1 CSI
    "\u202eevil\u202c"  # a bidi override
    "\rOVERWRITE"  # a carriage return that rewrites the line
)


def test_no_tui_output_shows_control_characters_and_never_sends_them(
    tmp_path: Path, site: FixtureSite
) -> None:
    with FakeAnthropic() as fake:
        fake.add_tool_use(
            "finish",
            {"success": True, "answer": "done " + ESCAPES, "reason": "said " + ESCAPES},
            text="thinking " + ESCAPES,
        )
        env = {
            **os.environ,
            "ANTHROPIC_BASE_URL": fake.url,
            "ANTHROPIC_API_KEY": fake.api_key or "",
            "PYTHONPATH": str(ROOT),
        }
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "tui.cli.main",
                "run",
                "read the page",
                "--no-tui",
                "--headless",
                "--model",
                "anthropic:claude-sonnet-4-5",
                "--start-url",
                site.url("/snapshot/long.html"),
                "--audit-dir",
                str(tmp_path / "logs"),
            ],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=120,
            check=False,
        )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output.decode(errors="replace")[-3000:]
    # The model's text did reach the console, shown for what it is ...
    text = done.stdout.decode()
    assert "␛]52;c;aGFuZHJhaWw=␇" in text
    assert "⟨U+202E⟩evil" in text
    # ... and no byte of it can drive the terminal.
    for byte in (b"\x1b", b"\x07", b"\r", "\u202e".encode(), "\x9b".encode()):
        assert byte not in output
    (oplog,) = (tmp_path / "logs").glob("*.log")
    assert "\x1b" not in oplog.read_text()


# -- the browser dies with handrail ------------------------------------------------------


@pytest.fixture
def wait_plan(tmp_path: Path) -> Path:
    """A plan that keeps the run busy in `wait` rounds until it is killed."""
    path = tmp_path / "waits.jsonl"
    step = {"tool": "wait", "input": {"seconds": 30}, "reason": "hold still"}
    path.write_text("\n".join(json.dumps(step) for _ in range(4)) + "\n")
    return path


def _records(log_dir: Path) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for log in log_dir.glob("*.jsonl"):
        for line in log.read_text().splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return out


def _chrome_group(parent: int) -> int | None:
    """The process group of the browser ``parent`` launched (Chrome leads its own group)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == parent and int(fields[2]) == int(entry) and "chrom" in comm:
            return int(entry)
    return None


@pytest.fixture
def own_tmp() -> Iterator[Path]:
    """A TMPDIR of the run's own, short (Chrome's singleton socket path must fit in 108
    bytes), so whatever the run leaves behind in it is seen."""
    tmp = Path(tempfile.mkdtemp(prefix="hr-", dir="/tmp"))
    yield tmp
    shutil.rmtree(tmp, ignore_errors=True)


@pytest.mark.parametrize(
    "sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL], ids=lambda s: s.name
)
def test_the_browser_and_its_temporary_files_go_when_handrail_is_killed(
    sig: signal.Signals, tmp_path: Path, wait_plan: Path, own_tmp: Path
) -> None:
    logs = tmp_path / "logs"
    env = {
        **os.environ,
        "TMPDIR": str(own_tmp),
        "PYTHONPATH": str(ROOT),
        "HOME": str(tmp_path / "home"),
    }
    env.pop("ANTHROPIC_API_KEY", None)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tui.cli.main",
            "demo",
            "--no-tui",
            "--headless",
            "--approve",
            "none",
            "--model",
            f"scripted:{wait_plan}",
            "--audit-dir",
            str(logs),
        ],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        # The run is in its first `wait` round: its intent is on record before the hands act.
        until(
            lambda: (
                proc.poll() is not None or any(r.get("type") == "intent" for r in _records(logs))
            ),
            90,
            "the first round",
        )
        assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else ""
        group = _chrome_group(proc.pid)
        assert group is not None, "the demo's Chrome was not found among handrail's children"
        assert list(own_tmp.iterdir()), "the demo's temporary profile should exist while it runs"
        proc.send_signal(sig)
        proc.wait(timeout=60)
        until(lambda: not group_alive(group), 60, "the browser to exit")
        until(
            lambda: not list(own_tmp.iterdir()),
            60,
            lambda: f"the temporary files to go: {list(own_tmp.rglob('*'))[:5]}",
        )
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    output = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
    if sig != signal.SIGKILL:
        # A polite ending is a clean one: the log says how the run ended.
        assert proc.returncode == 130, output[-2000:]
        end = _records(logs)[-1]
        assert end["type"] == "run_end" and end["exit_code"] == 130, end
        assert "Traceback" not in output


def test_a_browser_we_connect_to_runs_in_documents_mode_when_asked(tmp_path: Path) -> None:
    """The way out the refusal names works: documents mode passes every check."""
    settings = RunSettings(
        task="look around",
        cdp_url="http://127.0.0.1:9",
        allow_domains=("example.org",),
        secrets=("TOKEN=HOME",),
        network="documents",
        model_spec="scripted:" + str(tmp_path / "plan.jsonl"),
        audit_dir=tmp_path / "logs",
    )
    (tmp_path / "plan.jsonl").write_text('{"tool": "finish", "input": {"success": true}}\n')
    secrets = check_settings(settings, {"HOME": "a-token-value-of-some-length"})
    assert secrets.names() == ["TOKEN"]
