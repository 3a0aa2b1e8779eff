"""What the person is told about "approve all of this kind" (A) is what the run does and
what the log records: a risky action asks every time, so A does not apply to it.

Whoever answers (the observatory, the console, a fleet), a decision that carries
``approve_kind_for_run`` on a risky request is recorded without it and pre-approves nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.guard.decision import ApprovalDecision
from tests.helpers.fake_anthropic import FakeAnthropic
from tests.helpers.hostile import Person, click, run_hostile
from tests.helpers.site_server import FixtureSite

# End to end: whole runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow

ALL_OF_KIND = ApprovalDecision("approved", approve_kind_for_run=True)


@pytest.mark.parametrize("mode", ["ask", "risky"])
async def test_approving_all_of_a_kind_on_a_risky_click_is_not_recorded_and_the_next_asks(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic, mode: str
) -> None:
    person = Person([ALL_OF_KIND, ALL_OF_KIND])
    run = await run_hostile(
        tmp_path,
        fake,
        site.url("/agent/two-orders.html"),
        [click("Place order for the lamp"), click("Place order for the chair")],
        person=person,
        approve=mode,
    )
    assert [r.risky for r in person.requests] == [True, True]  # the second still asked
    approvals = [r["approval"] for r in run.log_rounds() if r.get("action")]
    clicks = [a for a in approvals if a.get("by") == "person"]
    assert len(clicks) == 2
    assert not any(a.get("approve_kind_for_run") for a in clicks), clicks
    assert run.done("click") and all(d.result.ok for d in run.done("click"))
