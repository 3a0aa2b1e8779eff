"""Every signal ends every command cleanly: SIGTERM (a polite kill), SIGHUP (the terminal
closed) and SIGINT (``kill -INT``), sent to the real ``handrail`` process. No traceback, the
log sealed (``handrail verify`` exits 0), the summary naming the log, Chrome gone, exit 130.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.agent_run import MODEL, act
from tests.helpers.fake_anthropic import FakeAnthropic
from tests.helpers.pty_terminal import ANSI, ROOT, Terminal
from tests.helpers.site_server import FixtureSite
from tests.helpers.waiting import until

# End to end: real handrail processes, most with a real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow

SIGNALS = [signal.SIGTERM, signal.SIGHUP, signal.SIGINT]
HANDRAIL = [sys.executable, "-m", "tui.cli.main"]
LEGEND = b"a/y approve"
"""The approval's key legend: the run is waiting for the person."""


def _env(tmp_path: Path) -> dict[str, str]:
    return dict(os.environ) | {"TERM": "xterm-256color", "XDG_CONFIG_HOME": str(tmp_path / "cfg")}


def _children(pid: int) -> list[tuple[int, str]]:
    """(pid, command name) of the processes whose parent is ``pid``."""
    found: list[tuple[int, str]] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == pid:
            found.append((int(entry), stat[stat.index("(") + 1 : stat.rindex(")")]))
    return found


def _chrome_of(pid: int) -> int:
    """The Chromium that handrail ``pid`` launched, read from the process tree."""
    chrome = [child for child, name in _children(pid) if "chrom" in name]
    assert len(chrome) == 1, _children(pid)
    return chrome[0]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _shown(term: Terminal) -> str:
    return ANSI.sub(b"", term.seen).decode(errors="replace")


def _send(term: Terminal, sig: signal.Signals) -> None:
    term.proc.send_signal(sig)
    if sig == signal.SIGHUP:
        # A terminal that hangs up sends SIGCONT after SIGHUP to the foreground group.
        term.proc.send_signal(signal.SIGCONT)


def _assert_clean_end(shown: str, code: int, sig: signal.Signals, env: dict[str, str]) -> Path:
    """Exit 130, no traceback, and a summary naming a log that verifies as sealed: the log."""
    assert code == 130, (sig.name, shown[-2000:])
    assert "Traceback" not in shown, shown[-3000:]
    assert "that handles pid" not in shown, shown[-2000:]  # Chrome reaped in the loop
    assert "still stopping" not in shown, shown[-2000:]  # it ended by itself, not by deadline
    lines = [line.strip() for line in shown.splitlines() if "audit log:" in line]
    assert lines, shown[-2000:]
    log = lines[-1].split("audit log:", 1)[1].strip()
    verified = subprocess.run(
        [*HANDRAIL, "verify", log], cwd=ROOT, env=env, capture_output=True, check=False
    )
    assert verified.returncode == 0, verified.stdout.decode()
    return Path(log)


def _last_round_result(log: Path) -> dict[str, object]:
    rounds = [r for r in map(json.loads, log.read_text().splitlines()) if r["type"] == "round"]
    result: dict[str, object] = rounds[-1]["result"]
    return result


@pytest.fixture
def waiting_term(tmp_path: Path, site: FixtureSite, fake: FakeAnthropic) -> Iterator[Terminal]:
    """``handrail run`` in the observatory on a pseudo-terminal, its model the fake Messages
    API, stopped at the approval of its first click."""
    fake.add(act("click", "Send message"))
    term = Terminal(
        [
            *HANDRAIL,
            "run",
            "Send the contact form",
            "--headless",
            "--model",
            MODEL,
            "--start-url",
            site.url("/agent/react-form.html"),
            "--audit-dir",
            str(tmp_path / "logs"),
        ],
        _env(tmp_path),
    )
    try:
        yield term
    finally:
        term.close()


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_signal_aborts_a_live_run_at_its_approval(
    sig: signal.Signals, tmp_path: Path, waiting_term: Terminal, site: FixtureSite
) -> None:
    site.clear()
    term = waiting_term
    term.read_until(LEGEND, timeout=120)
    chrome = _chrome_of(term.proc.pid)
    _send(term, sig)
    code = term.wait(timeout=60)
    log = _assert_clean_end(_shown(term), code, sig, _env(tmp_path))
    assert f"handrail: aborted by {sig.name} (exit code 130)" in _shown(term)
    # The click waited for approval: the log says it did not run (not that its effect is
    # unknown).
    result = _last_round_result(log)
    assert result["outcome"] == "error", result
    assert result["message"] == "not run: the run ended while this action waited for approval"
    until(lambda: not _alive(chrome), 30, "Chrome to be gone")
    assert site.posts("/agent/submit") == []  # the click waiting for approval never ran


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_signal_aborts_the_demo(sig: signal.Signals, tmp_path: Path) -> None:
    env = _env(tmp_path)
    env.pop("ANTHROPIC_API_KEY", None)  # the bundled plan
    term = Terminal([*HANDRAIL, "demo", "--headless", "--audit-dir", str(tmp_path / "logs")], env)
    try:
        term.read_until(LEGEND, timeout=120)
        chrome = _chrome_of(term.proc.pid)
        _send(term, sig)
        code = term.wait(timeout=60)
    finally:
        term.close()
    _assert_clean_end(_shown(term), code, sig, env)
    until(lambda: not _alive(chrome), 30, "Chrome to be gone")


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_signal_aborts_a_console_run(
    sig: signal.Signals, tmp_path: Path, site: FixtureSite, fake: FakeAnthropic
) -> None:
    """``--no-tui`` at a terminal: the console asks on stdin; a signal ends the wait."""
    site.clear()
    fake.add(act("click", "Send message"))
    env = _env(tmp_path)
    term = Terminal(
        [
            *HANDRAIL,
            "run",
            "Send the contact form",
            "--no-tui",
            "--headless",
            "--model",
            MODEL,
            "--start-url",
            site.url("/agent/react-form.html"),
            "--audit-dir",
            str(tmp_path / "logs"),
        ],
        env,
    )
    try:
        term.read_until(b"[x] abort >", timeout=120)
        chrome = _chrome_of(term.proc.pid)
        _send(term, sig)
        code = term.wait(timeout=60)
    finally:
        term.close()
    _assert_clean_end(_shown(term), code, sig, env)
    until(lambda: not _alive(chrome), 30, "Chrome to be gone")
    assert site.posts("/agent/submit") == []


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_signal_ends_replay_follow(sig: signal.Signals, tmp_path: Path) -> None:
    log = ROOT / "audit_logs" / "sample-demo.jsonl"
    term = Terminal([*HANDRAIL, "replay", "--follow", str(log)], _env(tmp_path))
    try:
        term.read_until(b"following", timeout=120)
        _send(term, sig)
        code = term.wait(timeout=60)
    finally:
        term.close()
    shown = _shown(term)
    assert code == 130, shown[-1500:]
    assert "Traceback" not in shown and "Error" not in shown, shown[-3000:]


def test_replay_follow_goes_when_its_terminal_closes(tmp_path: Path) -> None:
    """The terminal itself goes away (its other end closed), then SIGHUP: writes to it fail
    from then on, and the follower must still leave rather than hang on them."""
    log = ROOT / "audit_logs" / "sample-demo.jsonl"
    term = Terminal([*HANDRAIL, "replay", "--follow", str(log)], _env(tmp_path))
    try:
        term.read_until(b"following", timeout=120)
        os.close(term.fd)
        term.fd = os.open(os.devnull, os.O_RDONLY)  # for close()
        term.proc.send_signal(signal.SIGHUP)
        term.proc.send_signal(signal.SIGCONT)
        assert term.proc.wait(timeout=60) == 130
    finally:
        term.close()


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_signal_stops_serve(sig: signal.Signals, tmp_path: Path, fake: FakeAnthropic) -> None:
    env = _env(tmp_path)
    proc = subprocess.Popen(
        [*HANDRAIL, "serve", "anything", "--headless", "--model", MODEL, "--port", "0"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        seen = b""
        while b"handrail serve: open" not in seen:
            line = proc.stdout.readline()
            assert line, seen.decode(errors="replace")
            seen += line
        proc.send_signal(sig)
        code = proc.wait(timeout=60)
        seen += proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    shown = seen.decode(errors="replace")
    assert code == 130, shown
    assert "Traceback" not in shown, shown
    assert "handrail serve: stopped" in shown


def _records(folder: Path) -> list[dict[str, object]]:
    found: list[dict[str, object]] = []
    for log in folder.glob("*.jsonl"):
        for line in log.read_text().splitlines():
            try:
                found.append(json.loads(line))
            except ValueError:
                continue
    return found


@pytest.fixture
def pool_name(tmp_path: Path) -> Iterator[str]:
    """A pool of two headless slots of this test's own, stopped after it."""
    name = f"sig{os.getpid() % 1000}"
    env = _env(tmp_path)
    started = subprocess.run(
        [*HANDRAIL, "pool", "start", "--headless", "--slots", "2", "--name", name],
        cwd=ROOT,
        env=env,
        capture_output=True,
        check=False,
    )
    assert started.returncode == 0, started.stderr.decode()
    try:
        yield name
    finally:
        subprocess.run(
            [*HANDRAIL, "pool", "stop", "--force", "--name", name],
            cwd=ROOT,
            env=env,
            capture_output=True,
            check=False,
        )


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_signal_aborts_every_run_of_a_fleet(
    sig: signal.Signals, tmp_path: Path, pool_name: str
) -> None:
    plan = tmp_path / "hold.jsonl"
    hold = {"tool": "wait", "input": {"seconds": 30}, "reason": "hold the slot"}
    plan.write_text("".join(json.dumps(hold) + "\n" for _ in range(4)))
    tasks = tmp_path / "TASKS.toml"
    tasks.write_text(
        f'model = "scripted:{plan}"\napprove = "none"\n\n'
        '[[task]]\ntask = "first"\n\n[[task]]\ntask = "second"\n'
    )
    logs = tmp_path / "audit_logs"  # beside the tasks file
    env = _env(tmp_path)
    term = Terminal([*HANDRAIL, "fleet", str(tasks), "--pool", pool_name], env)
    try:
        until(
            lambda: sum(r.get("type") == "intent" for r in _records(logs)) >= 2,
            120,
            lambda: f"both runs in their first round: {_shown(term)[-1500:]}",
        )
        term.read_some(0.1)
        _send(term, sig)
        code = term.wait(timeout=60)
    finally:
        term.close()
    shown = _shown(term)
    assert code == 130, shown[-2000:]
    assert "Traceback" not in shown and "still stopping" not in shown, shown[-3000:]
    ends = [r for r in _records(logs) if r.get("type") == "run_end"]
    assert [e["exit_code"] for e in ends] == [130, 130], ends
    for log in logs.glob("*.jsonl"):
        verified = subprocess.run(
            [*HANDRAIL, "verify", str(log)], cwd=ROOT, env=env, capture_output=True, check=False
        )
        assert verified.returncode == 0, verified.stdout.decode()
