"""The audit folder: a run's files are new, and nothing planted at their names sends a
write elsewhere.

The names (``<stamp>_<slug>.jsonl``, ``.log``, the run folder with ``downloads/`` and
``rounds/round-001.jpg``) are predictable, so anyone who can write in the audit folder can
plant a link, a hard link, a FIFO or a folder there before the run. Each test plants one and
checks what the person would notice: the file it points at unchanged, nothing written
outside the audit folder, and a clear error instead of a run.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
import structlog

from core.audit import AuditWriter
from core.run import oplog
from core.run.round_shots import RoundShots
from core.run.session import ConfigError, RunSettings, check_settings, open_run
from core.secrets import Secrets
from tests.helpers.site_server import FixtureSite
from tui.cli.launch import run_console

FIXED = datetime(2026, 12, 4, 10, 30, 0)
STEM = "2026-12-04T10-30-00_book-a-train"
"""The names a run of the task "Book a train" started at ``FIXED`` uses."""
VICTIM_TEXT = "someone else's file\n"


class FrozenClock:
    """Stands in for ``datetime`` in the writer, so a test knows the names a run will use."""

    @staticmethod
    def now() -> datetime:
        return FIXED


@pytest.fixture(autouse=True)
def quiet_oplog() -> Iterator[None]:
    yield
    oplog.configure(None, console=False)
    structlog.reset_defaults()


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    path = tmp_path / "logs"
    path.mkdir()
    return path


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file outside the audit folder that a planted link points at."""
    path = tmp_path / "victim.txt"
    path.write_text(VICTIM_TEXT)
    return path


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A folder outside the audit folder that a planted link points at."""
    path = tmp_path / "elsewhere"
    path.mkdir()
    return path


def settings_for(logs: Path) -> RunSettings:
    return RunSettings(task="Book a train", audit_dir=logs)


def refused(logs: Path) -> str:
    """The set-up's error for a run of ``settings_for(logs)``."""
    with pytest.raises(ConfigError) as caught:
        open_run(settings_for(logs), Secrets(), now=FIXED)
    return str(caught.value)


# --- the operational log ----------------------------------------------------------------


def test_a_link_at_the_operational_log_name_leaves_its_target_unchanged(
    logs: Path, victim: Path
) -> None:
    (logs / "run.log").symlink_to(victim)
    with pytest.raises(FileExistsError):
        oplog.configure(logs / "run.log", console=False)
        oplog.get_logger("agent").warning("written through the link")
    assert victim.read_text() == VICTIM_TEXT


def test_a_hard_link_at_the_operational_log_name_leaves_the_file_unchanged(
    logs: Path, victim: Path
) -> None:
    os.link(victim, logs / "run.log")
    with pytest.raises(FileExistsError):
        oplog.configure(logs / "run.log", console=False)
        oplog.get_logger("agent").warning("written through the hard link")
    assert victim.read_text() == VICTIM_TEXT


def test_a_fifo_at_the_operational_log_name_gets_nothing(logs: Path) -> None:
    fifo = logs / "run.log"
    os.mkfifo(fifo)
    # A reader holds the other end, so a writer that opened the FIFO would not block.
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        with pytest.raises(FileExistsError):
            oplog.configure(fifo, console=False)
            oplog.get_logger("agent").warning("written into the pipe")
        try:
            written = os.read(reader, 4096)
        except BlockingIOError:  # a writer still holds the pipe, but wrote nothing
            written = b""
        assert written == b""
    finally:
        os.close(reader)


def test_a_refused_operational_log_keeps_the_previous_one(logs: Path, victim: Path) -> None:
    oplog.configure(logs / "first.log", console=False)
    (logs / "second.log").symlink_to(victim)
    with pytest.raises(FileExistsError):
        oplog.configure(logs / "second.log", console=False)
    oplog.get_logger("agent").warning("still logged")
    assert "still logged" in (logs / "first.log").read_text()
    assert victim.read_text() == VICTIM_TEXT


def test_a_link_at_a_runs_log_name_is_refused_and_its_target_unchanged(
    logs: Path, victim: Path
) -> None:
    (logs / f"{STEM}.log").symlink_to(victim)
    message = refused(logs)
    assert f"the operational log {logs / STEM}.log is already there" in message
    assert "remove it, or give --audit-dir a folder only you can write to" in message
    assert victim.read_text() == VICTIM_TEXT


# --- the run folder ---------------------------------------------------------------------


def test_a_link_at_the_run_folder_name_is_refused(logs: Path, elsewhere: Path) -> None:
    (logs / STEM).symlink_to(elsewhere, target_is_directory=True)
    message = refused(logs)
    assert f"{logs / STEM} is already there, and a run's folder must be new" in message
    assert list(elsewhere.iterdir()) == []


def test_an_existing_run_folder_is_refused_and_nothing_is_left_behind(logs: Path) -> None:
    (logs / STEM).mkdir()
    message = refused(logs)
    assert "remove it, or give --audit-dir a folder only you can write to" in message
    assert [p.name for p in logs.iterdir()] == [STEM]  # no empty log, no .log
    assert list((logs / STEM).iterdir()) == []


def test_a_link_at_downloads_in_a_planted_run_folder_is_refused(
    logs: Path, elsewhere: Path
) -> None:
    (logs / STEM).mkdir()
    (logs / STEM / "downloads").symlink_to(elsewhere, target_is_directory=True)
    refused(logs)
    assert list(elsewhere.iterdir()) == []


def test_a_new_run_gets_its_own_closed_folder_and_log(logs: Path) -> None:
    writer = open_run(settings_for(logs), Secrets(), now=FIXED)
    writer.close()
    for folder in (logs / STEM, logs / STEM / "downloads"):
        mode = os.lstat(folder).st_mode
        assert stat.S_ISDIR(mode) and stat.S_IMODE(mode) & 0o077 == 0
    assert stat.S_IMODE(os.lstat(logs / f"{STEM}.log").st_mode) & 0o077 == 0


# --- each round's picture ---------------------------------------------------------------


def test_a_link_at_rounds_keeps_the_picture_out_of_where_it_points(
    logs: Path, elsewhere: Path
) -> None:
    (logs / "run").mkdir()
    (logs / "run" / "rounds").symlink_to(elsewhere, target_is_directory=True)
    ref = shots(logs).keep(1, b"picture")
    assert ref.file is None and ref.missing is not None and "a link" in ref.missing
    assert list(elsewhere.iterdir()) == []


def test_a_link_at_the_round_picture_leaves_its_target_unchanged(logs: Path, victim: Path) -> None:
    (logs / "run" / "rounds").mkdir(parents=True)
    (logs / "run" / "rounds" / "round-001.jpg").symlink_to(victim)
    ref = shots(logs).keep(1, b"picture")
    assert ref.file is None and ref.missing is not None and "already there" in ref.missing
    assert victim.read_text() == VICTIM_TEXT


def test_a_link_at_the_run_folder_keeps_the_picture_out_of_where_it_points(
    logs: Path, elsewhere: Path
) -> None:
    (logs / "run").symlink_to(elsewhere, target_is_directory=True)
    ref = shots(logs).keep(1, b"picture")
    assert ref.file is None
    assert list(elsewhere.iterdir()) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a folder to another user")
def test_a_rounds_folder_of_another_user_gets_no_picture(logs: Path) -> None:
    (logs / "run" / "rounds").mkdir(parents=True)
    os.chown(logs / "run" / "rounds", 65534, 65534)
    ref = shots(logs).keep(1, b"picture")
    assert ref.missing is not None and "belongs to another user" in ref.missing
    assert list((logs / "run" / "rounds").iterdir()) == []


def test_a_round_picture_is_a_new_file_of_the_run(logs: Path) -> None:
    ref = shots(logs).keep(7, b"picture")
    assert ref.file == "run/rounds/round-007.jpg"
    assert (logs / ref.file).read_bytes() == b"picture"


def shots(logs: Path) -> RoundShots:
    """Round pictures for the log ``logs/run.jsonl`` (``keep`` needs no browser)."""
    return RoundShots(None, logs / "run.jsonl")  # type: ignore[arg-type]


# --- the audit log and the folder's write test --------------------------------------------


def test_the_audit_writer_never_writes_through_a_link(logs: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty-victim.jsonl"
    empty.write_text("")
    (logs / "run.jsonl").symlink_to(empty)
    with pytest.raises(OSError, match="symbolic links"):
        AuditWriter(logs / "run.jsonl").write({"type": "note"})
    assert empty.read_text() == ""


def test_the_audit_folder_write_test_leaves_a_planted_links_target_unchanged(
    logs: Path, victim: Path
) -> None:
    (logs / f".handrail-write-test-{os.getpid()}").symlink_to(victim)
    check_settings(settings_for(logs), {}, with_model=False)
    assert victim.read_text() == VICTIM_TEXT


# --- whole runs ---------------------------------------------------------------------------


def finish_plan(tmp_path: Path) -> Path:
    path = tmp_path / "plan.jsonl"
    path.write_text('{"tool": "finish", "input": {"success": true, "answer": "done"}}\n')
    return path


def run_settings(tmp_path: Path, logs: Path, site: FixtureSite) -> RunSettings:
    return RunSettings(
        task="Book a train",
        start_url=site.url("/observe/send.html"),
        model_spec=f"scripted:{finish_plan(tmp_path)}",
        approve="none",
        headless=True,
        profile=tmp_path / "profile",
        audit_dir=logs,
    )


@pytest.mark.slow
def test_a_run_whose_folder_name_is_a_link_exits_2_with_one_line_and_writes_nothing_there(
    tmp_path: Path,
    logs: Path,
    elsewhere: Path,
    site: FixtureSite,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr("core.audit.writer.datetime", FrozenClock)
    (logs / STEM).symlink_to(elsewhere, target_is_directory=True)
    code = run_console(run_settings(tmp_path, logs, site))
    err = capsys.readouterr().err
    assert list(elsewhere.rglob("*")) == []  # no downloads/, no rounds/round-001.jpg
    assert code == 2
    assert err.startswith(f"handrail: {logs / STEM} is already there") and err.count("\n") == 1
    assert "Traceback" not in err


@pytest.mark.slow
def test_a_run_whose_log_name_is_a_link_leaves_its_target_unchanged(
    tmp_path: Path,
    logs: Path,
    victim: Path,
    site: FixtureSite,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr("core.audit.writer.datetime", FrozenClock)
    (logs / f"{STEM}.log").symlink_to(victim)
    code = run_console(run_settings(tmp_path, logs, site))
    assert victim.read_text() == VICTIM_TEXT
    assert code == 2
    assert "the operational log" in capsys.readouterr().err
