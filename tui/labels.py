"""How the observatory words a state and an elapsed time.

Plain Python, shared by the header (part of the first frame, which loads before the rest
of the observatory) and the rounds' views.
"""

from __future__ import annotations

STATE_LABELS: dict[str, str] = {
    "starting": "starting",
    "thinking": "thinking",
    "awaiting_approval": "waiting for approval",
    "acting": "acting",
    "paused": "paused for a human",
    "finished": "finished",
}


def elapsed_text(seconds: float) -> str:
    """``mm:ss``, or ``h:mm:ss`` from an hour on."""
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"
