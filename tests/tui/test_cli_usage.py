"""What the command line says when the person got something wrong (the error first and
alone, with the usage of the command they typed), and how console mode reads and reports."""

from __future__ import annotations

import asyncio
import io
import os
from pathlib import Path

import pytest

from core.actions import Action
from core.run.events import ApprovalRequest, NoSupervisor, RunFinished
from tui.cli.command import handrail_command
from tui.cli.main import dispatch
from tui.console import ConsoleReporter, ConsoleSupervisor

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def no_display(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        (["--model", "foo:bar"], "foo"),
        (["--model", "openai:llama3.1"], "--base-url"),
    ],
)
def test_a_configuration_error_comes_before_the_headless_notice(
    options: list[str],
    problem: str,
    no_display: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert dispatch(["run", "a task", "--no-tui", *options]) == 2
    err = capsys.readouterr().err
    assert err.startswith("handrail: "), err
    assert problem in err.splitlines()[0]
    assert "headless" not in err  # nothing will run, so there is nothing to say about Chrome


@pytest.mark.parametrize(
    ("argv", "usage"),
    [
        (["run", "a task", "--bogus"], "usage: handrail run "),
        (["demo", "--theme", "nosuch"], "usage: handrail demo "),
        (["pool", "start", "--bogus"], "usage: handrail pool start "),
    ],
)
def test_a_wrong_option_shows_the_usage_of_the_command_typed(
    argv: list[str], usage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as ended:
        dispatch(argv)
    assert ended.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(usage), err
    assert "COMMAND ..." not in err


def test_serve_help_does_not_offer_console_mode(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, offered in ((["serve", "--help"], False), (["run", "--help"], True)):
        with pytest.raises(SystemExit):
            dispatch(argv)
        assert ("--no-tui" in capsys.readouterr().out) is offered, argv
    # Given anyway, it says what to use instead.
    assert dispatch(["serve", "a task", "--no-tui"]) == 2
    assert f"use `{handrail_command()} run --no-tui`" in capsys.readouterr().err


@pytest.mark.parametrize(("rounds", "said"), [(1, "after 1 round "), (2, "after 2 rounds ")])
def test_the_console_counts_rounds_in_words(rounds: int, said: str) -> None:
    out = io.StringIO()
    ConsoleReporter(out)(RunFinished("aborted", "", rounds, 130, "the run was interrupted"))
    assert f"aborted {said}(exit 130)" in out.getvalue()


def _request() -> ApprovalRequest:
    click = Action("click", {"index": 3}, reason="open the form")
    return ApprovalRequest(1, click, "http://127.0.0.1/", "Form", "every page-changing action asks")


@pytest.mark.parametrize(
    ("typed", "decision"),
    [("y\n", "approved"), ("n\nnot that one\n", "denied"), ("x\n", "abort"), ("q\n", "abort")],
)
def test_the_console_reads_the_persons_answer(typed: str, decision: str) -> None:
    asker = ConsoleSupervisor(interactive=True, inp=io.StringIO(typed), out=io.StringIO())
    assert asyncio.run(asker.approve(_request())).decision == decision


def test_a_closed_terminal_leaves_nobody_to_approve() -> None:
    asker = ConsoleSupervisor(interactive=True, inp=io.StringIO(""), out=io.StringIO())
    with pytest.raises(NoSupervisor, match="terminal closed"):
        asyncio.run(asker.approve(_request()))


def test_fleet_help_shows_the_model_every_other_command_defaults_to(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from core.model.spec import DEFAULT_SPEC

    with pytest.raises(SystemExit):
        dispatch(["fleet", "--help"])
    shown = capsys.readouterr().out
    assert f'model = "{DEFAULT_SPEC}"' in shown, shown
    # The comments of the example still line up.
    columns = {line.index("#") for line in shown.splitlines() if " # " in line and "=" in line}
    assert len(columns) == 1, shown


@pytest.mark.parametrize("where", ["checkout", "elsewhere", "on PATH"])
def test_the_summary_names_a_replay_command_that_runs_as_typed(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shlex
    import subprocess
    import sys

    from tui.cli.launch import summary_text

    venv_bin = str(Path(sys.executable).parent)
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p != venv_bin]
    if where == "on PATH":
        path.insert(0, venv_bin)
    monkeypatch.setenv("PATH", os.pathsep.join(path))
    cwd = ROOT if where == "checkout" else tmp_path
    monkeypatch.chdir(cwd)
    text = summary_text(
        outcome="finished: success", answer="", exit_code=0, audit_path=str(tmp_path / "a b.jsonl")
    )
    (line,) = [x for x in text.splitlines() if x.strip().startswith("replay:")]
    argv = shlex.split(line.split(":", 1)[1])
    assert argv[-2:] == ["replay", str(tmp_path / "a b.jsonl")]
    if where == "on PATH":
        assert argv[0] == "handrail"
    # The program as printed runs from that folder with that PATH (``--version`` for a check
    # that needs no terminal).
    env = {**os.environ, "PATH": os.pathsep.join(path)}
    done = subprocess.run(
        [*argv[:-2], "--version"], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, (argv, done.stderr)
    assert done.stdout.startswith("handrail ")


def test_a_console_approval_of_typing_says_each_thing_once() -> None:
    """What the reporter printed (the action, its text withheld as in the log) is not said
    again; the text is shown once, to the person, as ``Text:``; the field once."""
    typing = Action("type", {"index": 1, "text": "Lyon"}, reason="the destination")
    line = "[1]<input>Your name</input>"
    request = ApprovalRequest(
        1,
        typing,
        "http://127.0.0.1/form",
        "Form",
        "every page-changing action asks",
        element_line=line,
        details=(f"Field: {line}", "Text: Lyon"),
    )
    out = io.StringIO()
    asker = ConsoleSupervisor(interactive=True, inp=io.StringIO("y\n"), out=out)
    assert asyncio.run(asker.approve(request)).decision == "approved"
    shown = out.getvalue()
    assert shown.count("Lyon") == 1, shown
    assert shown.count(line) == 1, shown
    assert "Text: Lyon  (to you only" in shown
    assert "[x] abort" in shown and "[q]" not in shown
