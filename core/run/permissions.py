"""What the person allowed on a site "from now on" (``s`` in the approval), kept between runs.

Each permission is one kind of action (``click``, ``type``…) on one host, with the day it
was given. A run appends them to its approval policy as rules after the policy's own
(:meth:`core.guard.rules.Policy.with_remembered`), each matching only actions with no risk
class: a remembered permission never covers a commitment, a form submission, a new host,
a secret, an upload or run_js. The record of an action one let through names it ("your
permission since 2026-12-03").

They live in handrail's data folder, one file per browser identity, so a ``--profile`` or
a pool keeps its own: ``permissions/default.json`` (handrail's own profile),
``permissions/profile-<hash>.json``, ``permissions/pool-<name>.json``,
``permissions/browser-<hash>.json`` (``--cdp-url``/``--connect``). The folder is 0700 and
each file 0600, replaced whole (written beside and renamed); a file that cannot be read,
or an entry that is not a permission, counts as none (and the next write drops it).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from core.actions import PAGE_CHANGING
from core.audit.key import data_dir
from core.guard.rules import Rule
from core.secrets import SecretsError, parse_scope

FOLDER = "permissions"
FILE_LIMIT = 1_000_000
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_HOST = re.compile(r"^[a-z0-9.-]{1,253}$|^\[?[0-9a-f:.]{2,45}\]?$")


@dataclass(frozen=True, slots=True)
class Permission:
    host: str
    action: str
    since: str
    """The day it was given (``2026-12-03``)."""

    def rule(self) -> Rule:
        """The policy rule it stands for: this action on this host, when nothing is risky."""
        return Rule(
            index=0,
            text=f'host = "{self.host}", action = "{self.action}", risk = "none", decide = "allow"',
            decide="allow",
            hosts=(parse_scope(self.host),),
            actions=frozenset({self.action}),
            risks=frozenset({"none"}),
            remembered=self.since,
        )

    def to_json(self) -> dict[str, str]:
        return {"host": self.host, "action": self.action, "since": self.since}


def store_name(
    *,
    pool: str | None,
    profile: Path | None,
    cdp_url: str | None,
    connect: bool,
) -> str:
    """The file a run's permissions live in: one per browser identity."""
    if pool:
        # A pool's name is the person's text: only a plain one goes into a file name as it is.
        return f"pool-{pool}" if _PLAIN.fullmatch(pool) else f"pool-{_digest(pool)}"
    if cdp_url or connect:
        return f"browser-{_digest(cdp_url or 'connect')}"
    if profile is not None:
        return f"profile-{_digest(str(profile.expanduser().resolve()))}"
    return "default"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class PermissionStore:
    """One browser identity's remembered permissions."""

    def __init__(self, name: str, folder: Path | None = None) -> None:
        self.name = name
        self.folder = folder if folder is not None else data_dir() / FOLDER
        self.path = self.folder / f"{name}.json"

    def load(self) -> list[Permission]:
        """Every readable permission, oldest first (none when the file is missing or bad)."""
        try:
            with self.path.open("rb") as f:
                raw = f.read(FILE_LIMIT + 1)
        except OSError:
            return []
        if len(raw) > FILE_LIMIT:
            return []
        try:
            data = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return []
        items = data.get("permissions") if isinstance(data, dict) else None
        out: list[Permission] = []
        for item in items if isinstance(items, list) else []:
            found = _permission(item)
            if found is not None and found not in out:
                out.append(found)
        return out

    def rules(self) -> list[Rule]:
        return [p.rule() for p in self.load()]

    def add(self, host: str, action: str, today: date | None = None) -> Permission | None:
        """Remember ``action`` on ``host`` from now on; returns it (None: not a permission
        anyone may keep, such as run_js or a host that is not one)."""
        since = (today or date.today()).isoformat()
        found = _permission({"host": host, "action": action, "since": since})
        if found is None:
            return None
        kept = self.load()
        for old in kept:
            if (old.host, old.action) == (found.host, found.action):
                return old
        self._write([*kept, found])
        return found

    def revoke(self, host: str, action: str | None = None) -> list[Permission]:
        """Forget the permissions on ``host`` (only ``action``'s, when given); returns them."""
        kept = self.load()
        host = host.strip().lower()
        gone = [p for p in kept if p.host == host and (action is None or p.action == action)]
        if gone:
            self._write([p for p in kept if p not in gone])
        return gone

    def clear(self) -> list[Permission]:
        kept = self.load()
        if kept:
            self._write([])
        return kept

    def _write(self, permissions: list[Permission]) -> None:
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            os.chmod(self.folder, 0o700)
        body = json.dumps(
            {"version": 1, "permissions": [p.to_json() for p in permissions]}, indent=1
        )
        fd, tmp = tempfile.mkstemp(prefix=f".{self.name}-", suffix=".tmp", dir=self.folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(body + "\n")
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


REMEMBERABLE = frozenset(PAGE_CHANGING - {"run_js", "upload_file", "navigate"})
"""What ``s`` may remember: actions on a page. Never run_js or an upload (they are risky
every time), nor navigate (a destination is not a kind of action on a site)."""


def _permission(item: Any) -> Permission | None:
    if not isinstance(item, dict):
        return None
    host, action, since = item.get("host"), item.get("action"), item.get("since")
    if not (isinstance(host, str) and isinstance(action, str) and isinstance(since, str)):
        return None
    host = host.strip().lower()
    if action not in REMEMBERABLE or not _HOST.match(host) or "*" in host:
        return None
    try:
        date.fromisoformat(since)
        parse_scope(host)
    except (ValueError, SecretsError):
        return None
    return Permission(host, action, since)
