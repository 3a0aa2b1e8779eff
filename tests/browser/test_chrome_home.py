"""The Chrome handrail starts writes nothing into the user's ~/.config or ~/.cache (issue
27, minor 9): its crash reports and dconf's cache go to handrail's own data directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.browser.find import chrome_home_dir
from tests.conftest import launch_browser

pytestmark = pytest.mark.slow


async def test_chrome_keeps_its_config_and_cache_in_handrails_data_dir(
    own_home: Path, tmp_path: Path
) -> None:
    browser = await launch_browser(tmp_path / "profile")
    try:
        await browser.new_tab()
    finally:
        await browser.close()
    # conftest points XDG_CONFIG_HOME and XDG_CACHE_HOME at own_home/config and own_home/cache.
    left = [p for base in ("config", "cache") for p in (own_home / base).rglob("*")]
    assert left == [], left
    assert chrome_home_dir().is_relative_to(own_home / "data" / "handrail")
    assert (chrome_home_dir() / "config").is_dir()
