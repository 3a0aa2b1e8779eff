"""Remembered permissions as stored: one file per browser identity, only this user's, and a
file that was tampered with or hand-edited never widens what is allowed."""

from __future__ import annotations

import json
import os
import stat
from datetime import date
from pathlib import Path

import pytest

from core.guard.rules import Subject, builtin_policy
from core.run.permissions import PermissionStore, store_name
from tui.cli.main import dispatch


@pytest.fixture
def store(tmp_path: Path) -> PermissionStore:
    return PermissionStore("default", tmp_path / "permissions")


def test_a_permission_is_kept_private_and_read_back(store: PermissionStore) -> None:
    given = store.add("Rail.Example", "click", date(2026, 12, 3))
    assert given is not None and given.host == "rail.example"
    assert store.add("rail.example", "click") == given  # once, with its first date
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(store.folder).st_mode) == 0o700
    (again,) = PermissionStore("default", store.folder).load()
    assert again.since == "2026-12-03"


@pytest.mark.parametrize(
    "entry",
    [
        {"host": "*.example", "action": "click", "since": "2026-12-03"},  # a glob widens
        {"host": "rail.example", "action": "run_js", "since": "2026-12-03"},  # always asks
        {"host": "rail.example", "action": "upload_file", "since": "2026-12-03"},
        {"host": "rail.example", "action": "navigate", "since": "2026-12-03"},
        {"host": "rail.example/../x", "action": "click", "since": "2026-12-03"},
        {"host": "rail.example\x1b]0;pwned\x07", "action": "click", "since": "2026-12-03"},
        {"host": "rail.example", "action": "click", "since": "yesterday"},
        {"host": "", "action": "click", "since": "2026-12-03"},
        ["rail.example", "click"],
    ],
)
def test_an_entry_that_is_not_a_permission_counts_as_none(
    store: PermissionStore, entry: object
) -> None:
    store.folder.mkdir(parents=True)
    store.path.write_text(json.dumps({"version": 1, "permissions": [entry]}))
    assert store.load() == []


@pytest.mark.parametrize("text", ["{", "[]", '{"permissions": 3}', "\xff\xfe"])
def test_a_broken_file_counts_as_none(store: PermissionStore, text: str) -> None:
    store.folder.mkdir(parents=True)
    store.path.write_text(text, errors="surrogateescape")
    assert store.load() == []
    assert store.add("rail.example", "type") is not None  # and the next write mends it


def test_a_remembered_permission_never_covers_a_risky_action(store: PermissionStore) -> None:
    store.add("rail.example", "click")
    policy = builtin_policy("ask").with_remembered(store.rules())
    page = "https://rail.example/search"
    plain = policy.decide(Subject("click", {}, page))
    assert plain.decide == "allow" and plain.ref.remembered is not None
    for risk in ("commitment", "form_submit", "new_host"):
        assert policy.decide(Subject("click", {}, page, frozenset({risk}))).decide == "ask"
    assert policy.decide(Subject("type", {}, page)).decide == "ask"  # another kind
    assert policy.decide(Subject("click", {}, "https://evil.example/")).decide == "ask"
    assert policy.decide(Subject("click", {}, "https://rail.example.evil.example/")).decide == "ask"


def test_each_browser_identity_keeps_its_own(tmp_path: Path) -> None:
    names = {
        store_name(pool=None, profile=None, cdp_url=None, connect=False),
        store_name(pool=None, profile=tmp_path / "a", cdp_url=None, connect=False),
        store_name(pool=None, profile=tmp_path / "b", cdp_url=None, connect=False),
        store_name(pool="mine", profile=None, cdp_url=None, connect=False),
        store_name(pool=None, profile=None, cdp_url="http://127.0.0.1:9222", connect=False),
        store_name(pool=None, profile=None, cdp_url=None, connect=True),
    }
    assert len(names) == 6
    odd = store_name(pool="../../etc", profile=None, cdp_url=None, connect=False)
    assert "/" not in odd and ".." not in odd


def test_the_command_lists_revokes_and_clears(capsys: pytest.CaptureFixture[str]) -> None:
    # HOME and XDG_DATA_HOME are this test's own (tests/conftest.py).
    store = PermissionStore(store_name(pool="p1", profile=None, cdp_url=None, connect=False))
    store.add("rail.example", "click")
    store.add("rail.example", "type")
    store.add("shop.example", "click")
    assert dispatch(["permissions", "--pool", "p1", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert len(listed["permissions"]) == 3
    assert dispatch(["permissions", "revoke", "rail.example", "type", "--pool", "p1"]) == 0
    assert "revoked: type on rail.example" in capsys.readouterr().out
    assert dispatch(["permissions", "revoke", "nowhere.example", "--pool", "p1"]) == 2
    capsys.readouterr()
    assert dispatch(["permissions", "clear", "--pool", "p1"]) == 0
    assert "cleared 2 permissions" in capsys.readouterr().out
    assert store.load() == []
    # Another identity's were never touched.
    assert dispatch(["permissions", "list"]) == 0
    assert "No permissions remembered" in capsys.readouterr().out
