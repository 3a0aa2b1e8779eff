"""Which logs a rerun may repeat, and what it takes from them.

A rerun drives the person's browser from a file. Anyone can write a file that verifies with
exit 3 (a chain-only log, one sealed under a key they made up, another installation's), so
such a log is refused unless the person says --trust-log, and even then it never chooses the
first page or widens the allowlist. A log sealed here still shows where it will start and
what it may visit before anything loads, and asks when the start page comes from the log.

No browser starts in these tests: every refusal happens before one would.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.actions import Action
from core.audit import AuditWriter
from core.audit.chain import encode, line_hash, split_seal
from core.audit.key import AuditKey
from core.audit.records import ApprovalRecord
from core.rerun.rerun import NO_MODEL, Rerun
from core.result import ActionResult
from core.run.events import (
    ActionDone,
    ActionParsed,
    ModelReplied,
    Observed,
    RoundStarted,
    RunFinished,
    RunStarted,
)
from core.run.recorder import AuditRecorder
from core.run.session import ConfigError, RunSettings
from tui.cli.main import dispatch

SITE = "http://127.0.0.1:8000"
ATTACKER = "http://127.0.0.9:8000"
MADE_UP_KEY = AuditKey(bytes(range(32)))


def recorded(
    path: Path,
    *,
    start_url: str = f"{SITE}/search",
    allow: tuple[str, ...] = ("127.0.0.1",),
    key: AuditKey | None = None,
) -> Path:
    """A one-step run's log: a click that ran, on ``start_url`` (sealed here by default)."""
    writer = AuditWriter(path, run_id="recorded", key=key)
    rec = AuditRecorder(writer)
    settings = {"start_url": start_url, "allow_domains": list(allow)}
    rec(RunStarted("recorded", "book a seat", "scripted plan", "launched", 5, settings))
    rec(RoundStarted(1, 5))
    rec(Observed(1, start_url, "Search", "[3]<button>Search</button>", (), 1.0, 0))
    click = Action("click", {"index": 3}, reason="search", tool_use_id="tu1")
    reply = ({"type": "tool_use", "id": "tu1", "name": "click", "input": {"index": 3}},)
    rec(ModelReplied(1, reply, {}, 1.0))
    rec(ActionParsed(1, click, element_line="[3]<button>Search</button>", target_name="Search"))
    rec(ActionDone(1, click, ActionResult.success("clicked"), ApprovalRecord.not_needed()))
    rec(RunFinished("success", "done", 1, 0))
    writer.close()
    return path


def chain_only(path: Path) -> Path:
    """``path`` rewritten as an old schema-1 log: every seal removed, the chain made whole
    again. It verifies (exit 3, chain only) though anyone could have written it."""
    head: str | None = None
    lines = []
    for raw in path.read_bytes().splitlines():
        parts = split_seal(raw)
        record = json.loads(parts[0] if parts else raw)
        for key in ("mac", "key_id", "seq", "prev"):
            record.pop(key, None)
        if record.get("type") == "run_start":
            record["schema"] = 1
        line = encode({"seq": len(lines), "prev": head, **record})
        lines.append(line)
        head = line_hash(line)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def base_settings(tmp_path: Path) -> RunSettings:
    return RunSettings(task="", model_spec=NO_MODEL, audit_dir=tmp_path / "logs")


def rerun_cli(tmp_path: Path, log: Path, *extra: str) -> int:
    logs = tmp_path / "logs"
    return dispatch(["rerun", str(log), "--no-tui", "--audit-dir", str(logs), *extra])


# --- logs that were not sealed here are refused ---------------------------------------------


@pytest.mark.parametrize("forgery", ["chain only", "made-up key", "another installation"])
def test_a_log_not_sealed_here_is_refused_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], forgery: str
) -> None:
    log = tmp_path / "forged.jsonl"
    if forgery == "chain only":
        chain_only(recorded(log, start_url=f"{ATTACKER}/phish"))
    elif forgery == "made-up key":
        recorded(log, start_url=f"{ATTACKER}/phish", key=MADE_UP_KEY)
    else:
        log = Path(__file__).parents[2] / "audit_logs" / "sample-demo.jsonl"
    assert rerun_cli(tmp_path, log, "--rebase", SITE) == 2
    said = capsys.readouterr().err
    assert "not sealed by this installation's key" in said
    assert "--trust-log" in said
    assert not (tmp_path / "logs").exists()  # no log of its own: nothing ran


def test_a_forged_log_trusted_by_flag_never_picks_the_start_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = recorded(tmp_path / "forged.jsonl", start_url=f"{ATTACKER}/phish", key=MADE_UP_KEY)
    assert rerun_cli(tmp_path, log, "--trust-log") == 2
    said = capsys.readouterr().err
    assert "trusting" in said and "seal not checked" in said
    assert "its start page is not used: give --start-url" in said
    assert ATTACKER not in said.split("trusting", 1)[0]
    assert not (tmp_path / "logs").exists()


@pytest.mark.parametrize("allow", [("127.0.0.9",), ("*",), ()])
def test_a_forged_log_never_widens_the_allowlist(tmp_path: Path, allow: tuple[str, ...]) -> None:
    log = chain_only(recorded(tmp_path / "forged.jsonl", allow=allow))
    rerun = Rerun.load(log, trust_log=True)
    settings = rerun.settings(base_settings(tmp_path), start_url=f"{SITE}/search")
    assert settings.allow_domains == ("127.0.0.1",)  # the start page's host, nothing of the log's
    assert settings.start_url == f"{SITE}/search"


def test_a_forged_log_rebased_onto_the_persons_origin_may_visit_only_that(
    tmp_path: Path,
) -> None:
    log = recorded(tmp_path / "forged.jsonl", allow=("127.0.0.9",), key=MADE_UP_KEY)
    rerun = Rerun.load(log, ["http://127.0.0.5:9000"], trust_log=True)
    settings = rerun.settings(base_settings(tmp_path))
    assert settings.start_url == "http://127.0.0.5:9000/search"
    assert settings.allow_domains == ("127.0.0.5",)


def test_a_forged_log_with_a_hostless_start_page_never_runs_unrestricted(tmp_path: Path) -> None:
    log = recorded(tmp_path / "forged.jsonl", key=MADE_UP_KEY)
    rerun = Rerun.load(log, trust_log=True)
    with pytest.raises(ConfigError, match="give --allow-domain"):
        rerun.settings(base_settings(tmp_path), start_url="javascript:alert(1)")


def test_a_forged_log_without_a_start_page_of_the_persons_is_a_config_error(
    tmp_path: Path,
) -> None:
    log = recorded(tmp_path / "forged.jsonl", key=MADE_UP_KEY)
    with pytest.raises(ConfigError, match="give --start-url"):
        Rerun.load(log, trust_log=True).settings(base_settings(tmp_path))


# --- a log sealed here: shown, and asked when the log picks the start page ------------------


def test_a_sealed_log_keeps_its_start_page_and_allowlist(tmp_path: Path) -> None:
    log = recorded(tmp_path / "run.jsonl", allow=("127.0.0.1", "pay.example"))
    settings = Rerun.load(log).settings(base_settings(tmp_path))
    assert settings.start_url == f"{SITE}/search"
    assert settings.allow_domains == ("127.0.0.1", "pay.example")


def test_without_a_terminal_a_start_page_from_the_log_is_refused_and_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    log = recorded(tmp_path / "run.jsonl")
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    assert rerun_cli(tmp_path, log) == 2
    said = capsys.readouterr().err
    assert f"starts at {SITE}/search; may visit: 127.0.0.1" in said
    assert "confirm it by giving it" in said
    assert not (tmp_path / "logs").exists()


class _Terminal:
    """A person at a terminal, answering the rerun's question."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.asked = False

    def isatty(self) -> bool:
        return True

    def readline(self) -> str:
        self.asked = True
        return self.answer


@pytest.mark.parametrize("answer", ["n\n", "\n", "yes please\n"])
def test_at_a_terminal_anything_but_yes_starts_nothing(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    answer: str,
) -> None:
    log = recorded(tmp_path / "run.jsonl")
    person = _Terminal(answer)
    monkeypatch.setattr("sys.stdin", person)
    monkeypatch.setattr("sys.stderr.isatty", lambda: True, raising=False)
    assert rerun_cli(tmp_path, log) == 2
    assert person.asked
    assert "not started" in capsys.readouterr().err
    assert not (tmp_path / "logs").exists()


def test_a_start_page_shown_in_the_log_is_escaped_before_it_reaches_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    log = recorded(tmp_path / "run.jsonl", start_url=f"{SITE}/\x1b]52;c;aGk=\x07\x1b[2J")
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    assert rerun_cli(tmp_path, log) == 2
    said = capsys.readouterr().err
    assert "\x1b" not in said and "\x07" not in said
