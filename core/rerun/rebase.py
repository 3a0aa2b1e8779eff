"""``--rebase``: the recorded run's origin(s) mapped onto others (staging onto production,
the demo site onto a new port). Only scheme, host and port change; path, query and fragment
are kept."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from core.rerun.source import RerunError


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` in lower case, or None for a URL without a host."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return f"{parts.scheme}://{parts.netloc.lower()}"


@dataclass(frozen=True, slots=True)
class Rebase:
    pairs: tuple[tuple[str, str], ...] = ()
    """``(recorded origin, live origin)``."""

    def url(self, url: str) -> str:
        """``url`` on its live origin (unchanged when its origin is not rebased)."""
        origin = origin_of(url)
        for old, new in self.pairs:
            if origin == old:
                parts, target = urlsplit(url), urlsplit(new)
                return urlunsplit(
                    (target.scheme, target.netloc, parts.path, parts.query, parts.fragment)
                )
        return url

    def targets(self) -> tuple[str, ...]:
        return tuple(new for _old, new in self.pairs)


def parse_rebase(values: Sequence[str], recorded_origin: str | None) -> Rebase:
    """``--rebase NEW`` maps the recorded start origin onto ``NEW``; ``--rebase OLD=NEW``
    maps ``OLD`` (repeatable, for a run that crossed origins). Raises :class:`RerunError`."""
    pairs: list[tuple[str, str]] = []
    for value in values:
        old_text, sep, new_text = value.rpartition("=")
        if not sep:
            old_text, new_text = "", value
        new = origin_of(new_text)
        if new is None:
            raise RerunError(
                f"--rebase {value!r}: {new_text!r} is not an http(s) origin; give one such "
                "as http://127.0.0.1:8000 (or OLD=NEW to map one recorded origin)"
            )
        if old_text:
            old = origin_of(old_text)
            if old is None:
                raise RerunError(f"--rebase {value!r}: {old_text!r} is not an http(s) origin")
        elif recorded_origin is None:
            raise RerunError(
                f"--rebase {value!r}: the recorded run has no start URL to take the origin "
                "from; say which origin moves with --rebase OLD=NEW"
            )
        else:
            old = recorded_origin
        if any(o == old for o, _n in pairs):
            raise RerunError(f"--rebase maps {old} twice; give each recorded origin once")
        pairs.append((old, new))
    return Rebase(tuple(pairs))
