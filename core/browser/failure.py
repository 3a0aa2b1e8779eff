"""Why a Chrome we launched stopped before it was ready, read from what it wrote.

Chrome says why on stderr (its own error lines). The person needs that cause and the fix,
not a guess: a Chrome with no display to open a window on used to be reported as "the
profile may be in use by another Chrome".
"""

from __future__ import annotations

import re
from pathlib import Path

_PREFIX = re.compile(r"^\[[0-9:/.]+:[A-Z]+:[^\]]*\]\s*")
"""Chrome's ``[pid:tid:date/time:LEVEL:file.cc:line]`` in front of each message."""

_CAUSES: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        ("Missing X server or $DISPLAY", "cannot open display", "Failed to connect to Wayland"),
        "Chrome found no display to open its window on; run headless (--headless), or where "
        "a display is available",
    ),
    (
        ("ProcessSingleton", "SingletonLock", "profile appears to be in use"),
        "the profile {profile} is in use by another Chrome; close that Chrome, or choose "
        "another profile with --profile DIR",
    ),
    (
        ("Running as root without --no-sandbox",),
        "Chrome refuses to run as root with its sandbox on; run handrail as an ordinary user",
    ),
    (
        ("No usable sandbox", "setuid sandbox", "Failed to move to new namespace"),
        "Chrome's sandbox cannot start here (a container without user namespaces?); run "
        "where it can, or as root (handrail then turns Chrome's sandbox off)",
    ),
)


def failure_cause(log_text: str, *, returncode: int | None, profile: Path) -> str | None:
    """The cause of a failed start, with its fix and Chrome's own words
    (``Chrome found no display…; Chrome said: "Missing X server or $DISPLAY"``), or None
    when Chrome's output names no cause we know."""
    lines = [_PREFIX.sub("", line).strip() for line in log_text.splitlines()]
    for needles, cause in _CAUSES:
        said = next((line for line in lines for n in needles if n in line), None)
        if said is not None:
            return f'{cause.format(profile=profile)}. Chrome said: "{said[:200]}"'
    if returncode == 0:
        # A Chrome that hands its start to one already running on this profile exits 0.
        return (
            f"Chrome exited at once: the profile {profile} may be open in another Chrome; "
            "close it, or choose another profile with --profile DIR"
        )
    return None
