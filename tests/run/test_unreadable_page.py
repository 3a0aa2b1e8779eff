"""A page the eyes cannot read ends the run cleanly: a round whose error says so, and a
run_end, never a traceback (and nothing is asked of the model, which would have no page).

The walk's own failures on real pages are fixed where they are found (tests/eyes/
test_deep_pages.py); this holds the line for the next one: the digest is made to fail, as the
walk failed on 2,500 nested elements, and the run must still end as a record.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.eyes import snapshot as eyes
from core.world.errors import WorldError
from tests.helpers.fake_anthropic import FakeAnthropic
from tests.helpers.hostile import finish, run_hostile
from tests.helpers.site_server import FixtureSite

# End to end: whole runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    "failure",
    [
        WorldError("RangeError: Maximum call stack size exceeded"),
        TimeoutError("the page did not answer within 20 s"),
    ],
    ids=["walk-failed", "page-silent"],
)
async def test_a_digest_that_fails_ends_the_run_with_a_recorded_round(
    tmp_path: Path,
    site: FixtureSite,
    fake: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
    failure: Exception,
) -> None:
    async def failing(*_args: object, **_kw: object) -> eyes.Snapshot:
        raise failure

    monkeypatch.setattr("core.hands.facade.take_snapshot", failing)
    run = await run_hostile(
        tmp_path, fake, site.url("/agent/two-orders.html"), [finish(True, "never asked")]
    )
    assert (run.finished.outcome, run.finished.exit_code) == ("error", 1)
    assert run.finished.reason == f"the page could not be read: {failure}"
    [round_one] = run.log_rounds()
    assert round_one["action"] == {"error": run.finished.reason}
    assert round_one["result"]["ok"] is False
    assert run.log_records[-1]["type"] == "run_end"
    assert fake.message_bodies == []  # the model was never asked
