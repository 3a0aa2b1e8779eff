"""Chrome's speculative loading, switched off in the browsers handrail launches.

Speculation rules (``<script type=speculationrules>``) make the *browser* fetch pages
ahead of a click: a prefetch, or a prefetch ahead of a prerender. Those requests are made
outside any tab's DevTools ``Fetch``, so the network guard never sees them (measured with
Chromium 156: a same-origin URL that redirects to another host reaches that host).
Handrail therefore switches them off where it can: in the launch flags (the prerender
features) and in the profile's "Preload pages" preference, which also stops speculation
rules prefetches (no flag does). A browser handrail connects to keeps its own settings;
README says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import structlog

log = structlog.get_logger("handrail.preloading")

PRERENDER_FEATURES = ("Prerender2", "Prerender2FallbackPrefetchSpecRules")
"""Feature names for ``--disable-features``: prerendering, and its prefetch ahead."""

NETWORK_PREDICTION_NEVER = 2
"""Chrome's ``net.network_prediction_options`` value for "Preload pages: off"."""


def disable_preloading(profile: Path) -> None:
    """Set "Preload pages: off" in ``profile``'s preferences (created when missing; other
    preferences are kept). A file Chrome wrote that is not JSON is left alone and logged."""
    prefs_file = profile / "Default" / "Preferences"
    prefs: dict[str, Any] = {}
    if prefs_file.exists():
        try:
            loaded = json.loads(prefs_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            log.warning("preloading.prefs_unreadable", file=str(prefs_file), error=str(exc))
            return
        if not isinstance(loaded, dict):
            return
        prefs = loaded
    net = prefs.setdefault("net", {})
    if (
        not isinstance(net, dict)
        or net.get("network_prediction_options") == NETWORK_PREDICTION_NEVER
    ):
        return
    net["network_prediction_options"] = NETWORK_PREDICTION_NEVER
    prefs_file.parent.mkdir(parents=True, exist_ok=True)
    prefs_file.write_text(json.dumps(prefs), encoding="utf-8")
