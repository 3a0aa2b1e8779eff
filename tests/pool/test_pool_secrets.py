"""A secret typed into a GET form is in the page's URL (and, echoed, in its title): the pool's
database and `pool status` keep the slot's page without it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.pool import pool
from tests.helpers.site_server import FixtureSite
from tui.cli.main import dispatch

# End to end: whole runs in a pool's real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow

SECRETS = {
    "plain": "trk-7Hq2Zp9w",
    "needs-quoting": "p@ss word&x=1",
}


@pytest.fixture
def name() -> Iterator[str]:
    pool_name = f"ps{abs(hash(object())) % 10_000}"
    yield pool_name
    if (pool.pool_dir(pool_name) / "pool.sqlite3").exists():
        dispatch(["pool", "stop", "--force", "--name", pool_name])


@pytest.mark.parametrize("value", SECRETS.values(), ids=SECRETS.keys())
def test_a_secret_typed_into_a_get_form_stays_out_of_the_pool(
    name: str,
    site: FixtureSite,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    value: str,
) -> None:
    from urllib.parse import quote, quote_plus

    assert dispatch(["pool", "start", "--headless", "--slots", "1", "--name", name]) == 0
    monkeypatch.setenv("PARCEL_CODE", value)
    plan = tmp_path / "plan.jsonl"
    steps = [
        {
            "tool": "type",
            "target": "Tracking code",
            "input": {"text": "<secret:CODE>", "submit": True},
        },
        {"tool": "finish", "input": {"success": True, "answer": "found"}},
    ]
    plan.write_text("".join(json.dumps(step) + "\n" for step in steps))
    code = dispatch(
        [
            "run", "find my parcel", "--no-tui", "--approve", "none", "--pool", name,
            "--model", f"scripted:{plan}", "--audit-dir", str(tmp_path / "logs"),
            "--start-url", site.url("/pool/get_form.html"), "--secret", "CODE=PARCEL_CODE",
        ]
    )  # fmt: skip
    assert code == 0
    assert any(
        r.path == "/pool/get_form.html" and r.query.get("code") == [value] for r in site.received
    )
    capsys.readouterr()
    assert dispatch(["pool", "status", "--name", name]) == 0
    assert dispatch(["pool", "status", "--name", name, "--json"]) == 0
    printed = capsys.readouterr().out
    (slot,) = pool.status(name).slots
    stored = (pool.pool_dir(name) / "pool.sqlite3").read_bytes()
    for form in {value, quote(value, safe=""), quote(value), quote_plus(value)}:
        assert form not in slot.url and form not in slot.title
        assert form not in printed
        assert form.encode() not in stored
    assert (
        slot.url.endswith("/pool/get_form.html?code=%C2%ABredacted%C2%BB") or "redacted" in slot.url
    )
