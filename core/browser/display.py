"""Whether a launched Chrome can open a window here (a run without one goes headless)."""

from __future__ import annotations

import sys
from collections.abc import Mapping

NO_DISPLAY = "there is no display (DISPLAY and WAYLAND_DISPLAY are unset)"
"""Why a run that did not ask for ``--headless`` is headless anyway."""


def has_display(env: Mapping[str, str]) -> bool:
    """True on macOS and Windows; elsewhere when ``DISPLAY`` or ``WAYLAND_DISPLAY`` is set
    (whether that display answers is for ``handrail doctor`` to find out)."""
    if sys.platform == "darwin" or sys.platform.startswith("win"):
        return True
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))
