"""Browser settings the network guard needs and DevTools cannot set: written into the
profile of a browser handrail launches, before it starts.

Speculation rules (``<script type=speculationrules>``) make the *browser* fetch pages
ahead of a click: a prefetch, or a prefetch ahead of a prerender. Those requests are made
outside any tab's DevTools ``Fetch``, so the network guard never sees them (measured with
Chromium 156: a same-origin URL that redirects to another host reaches that host).
Handrail therefore switches them off where it can: in the launch flags (the prerender
features) and in the profile's "Preload pages" preference, which also stops speculation
rules prefetches (no flag does).

WebRTC is the other channel outside ``Fetch``: a peer connection sends STUN and TURN
(UDP, and TCP) from the browser process to any host a page names, ICE credentials
included. In ``--network strict`` the profile's WebRTC IP handling policy forbids UDP that
does not go through a proxy (:func:`restrict_webrtc`); core/browser/browser.py adds the proxy
that refuses every host outside the allowlist, which is what TCP TURN then must use.

A browser handrail connects to keeps its own settings; README says so.
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

WEBRTC_PROXIED_ONLY = "disable_non_proxied_udp"
"""Chrome's ``webrtc.ip_handling_policy`` value: no UDP at all (a proxy carries none),
TCP only through the proxy."""


def disable_preloading(profile: Path) -> None:
    """Set "Preload pages: off" in ``profile``'s preferences (created when missing; other
    preferences are kept). A file Chrome wrote that is not JSON is left alone and logged."""
    _set_pref(profile, "net", "network_prediction_options", NETWORK_PREDICTION_NEVER)


def restrict_webrtc(profile: Path) -> bool:
    """Set ``profile``'s WebRTC IP handling policy to proxied TCP only (see the module doc).
    False when the preferences could not be written (the caller must not claim it)."""
    return _set_pref(profile, "webrtc", "ip_handling_policy", WEBRTC_PROXIED_ONLY)


def _set_pref(profile: Path, section: str, key: str, value: Any) -> bool:
    prefs_file = profile / "Default" / "Preferences"
    prefs: dict[str, Any] = {}
    if prefs_file.exists():
        try:
            loaded = json.loads(prefs_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            log.warning("preloading.prefs_unreadable", file=str(prefs_file), error=str(exc))
            return False
        if not isinstance(loaded, dict):
            return False
        prefs = loaded
    group = prefs.setdefault(section, {})
    if not isinstance(group, dict):
        return False
    if group.get(key) == value:
        return True
    group[key] = value
    prefs_file.parent.mkdir(parents=True, exist_ok=True)
    prefs_file.write_text(json.dumps(prefs), encoding="utf-8")
    return True
