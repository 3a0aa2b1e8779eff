"""Fixtures of the hostile corpus: the site and the attacker, emptied for every test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.site_server import FixtureSite


@pytest.fixture
def attacker(other_site: FixtureSite) -> Iterator[FixtureSite]:
    """The attacker's server, emptied; reach it through :func:`attacker_origin`."""
    other_site.clear()
    yield other_site


@pytest.fixture(autouse=True)
def _fresh_site(site: FixtureSite) -> None:
    site.clear()
