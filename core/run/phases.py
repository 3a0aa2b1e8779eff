"""What a run says it is doing outside its rounds (``core.run.session.PhaseSink`` texts).

A module of its own, with no imports, so the observatory shows the first phase at once,
before ``core.run.session`` (seconds of imports) has loaded.
"""

from __future__ import annotations

STARTING_CHROME = "starting Chrome…"
CHECKING = "checking…"
"""Before attaching to a browser: the settings and the model are checked first."""


def launches_browser(*, cdp_url: str | None, connect: bool, pool: str | None) -> bool:
    """Whether a run with these settings launches its own Chrome (rather than attaching)."""
    return not (cdp_url or connect or pool)


def first_phase(*, cdp_url: str | None, connect: bool, pool: str | None) -> str:
    """The first thing a run with these settings says it does."""
    return (
        STARTING_CHROME
        if launches_browser(cdp_url=cdp_url, connect=connect, pool=pool)
        else CHECKING
    )
