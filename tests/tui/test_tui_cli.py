"""The command line as a person meets it: --version, help for every option, --theme checked
at the command line, the summary printed after the run."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from tui.cli.command import handrail_command
from tui.cli.launch import summary_text
from tui.cli.main import build_parser, dispatch
from tui.observatory import ObservatoryApp

ROOT = Path(__file__).resolve().parents[2]


def _parsers(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    found = [(parser.prog, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found.extend(_parsers(sub))
    return found


def test_every_option_of_every_subcommand_has_a_help_line() -> None:
    missing = [
        f"{prog} {'/'.join(action.option_strings) or action.dest}"
        for prog, parser in _parsers(build_parser())
        for action in parser._actions
        if not isinstance(action, argparse._SubParsersAction)
        and (not action.help or action.help == argparse.SUPPRESS)
    ]
    # serve accepts --no-tui only to say what to use instead: not offered in its help.
    assert missing == ["handrail serve --no-tui"]


def test_serve_takes_every_option_run_takes() -> None:
    """``serve`` passes its options on to the run it starts: an option added to ``run``
    alone broke every ``handrail serve`` (settings read ``args.pool``)."""
    parsers = dict(_parsers(build_parser()))
    run = {o for a in parsers["handrail run"]._actions for o in a.option_strings}
    serve = {o for a in parsers["handrail serve"]._actions for o in a.option_strings}
    assert run - serve == set()


def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        dispatch(["--version"])
    assert stopped.value.code == 0
    from importlib.metadata import version

    assert capsys.readouterr().out.strip() == f"handrail {version('handrail')}"


@pytest.mark.parametrize("command", [["run", "a task"], ["replay", "x.jsonl"], ["demo"]])
def test_an_unknown_theme_is_a_usage_error_listing_what_t_offers(
    command: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    user_themes = tmp_path / "handrail" / "themes"
    user_themes.mkdir(parents=True)
    (user_themes / "mine.toml").write_text('name = "mine"\n[colors]\nprimary = "#123456"\n')
    with pytest.raises(SystemExit) as stopped:
        dispatch([*command, "--theme", "nosuch"])
    assert stopped.value.code == 2
    error = capsys.readouterr().err
    listed = error.split("choose one of: ", 1)[1].strip().split(", ")
    offered = ObservatoryApp(config_dir=tmp_path / "handrail", persist_theme=False)
    assert listed == sorted(offered.available_themes)
    assert "mine" in listed and "dracula" in listed


def test_a_theme_t_offers_is_accepted(capsys: pytest.CaptureFixture[str]) -> None:
    # Reaches the command itself: replay of a missing file, exit 2 for that reason.
    assert dispatch(["replay", "no-such.jsonl", "--theme", "dracula"]) == 2
    assert "theme" not in capsys.readouterr().err


def test_run_help_documents_the_scripted_plan_format() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tui.cli.main", "run", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    for key in ('"tool"', '"input"', '"target"', '"reason"', '"on_deny"', "// or #"):
        assert key in done.stdout, key
    readme = (ROOT / "README.md").read_text()
    for key in ('"target"', '"on_deny"'):
        assert key in readme, key


def test_the_summary_names_outcome_answer_code_log_and_replay_command() -> None:
    text = summary_text(
        outcome="success",
        answer="Opens at 9.\nCloses at 5.",
        exit_code=0,
        audit_path="logs/a run.jsonl",
    )
    assert text.splitlines() == [
        "handrail: success (exit code 0)",
        "  answer:    Opens at 9.",
        "             Closes at 5.",
        "  audit log: logs/a run.jsonl",
        f"  replay:    {handrail_command()} replay 'logs/a run.jsonl'",
    ]


def test_replay_of_a_directory_says_it_is_a_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert dispatch(["replay", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert "is a directory, not an audit log" in error and "no such file" not in error


def test_replay_of_a_missing_file_says_it_does_not_exist(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert dispatch(["replay", str(tmp_path / "gone.jsonl")]) == 2
    assert "gone.jsonl does not exist" in capsys.readouterr().err


def test_verify_of_an_empty_file_is_not_a_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.touch()
    assert dispatch(["verify", str(empty)]) == 2
    out = capsys.readouterr().out
    assert "NOT A LOG" in out and "empty" in out and "OK" not in out
