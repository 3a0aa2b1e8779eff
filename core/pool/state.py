"""A pool's state: one SQLite database (WAL) per pool, shared by every process that uses it.

Slots are ``idle`` (a blank background tab), ``running`` (a run owns it), ``completed``
(its run ended; the page stays as the run left it) or ``lost`` (its browser endpoint stopped
answering: nothing is claimed there until ``pool clear`` gives it a tab again). A pool over
a grid has slots on several endpoints; each slot records its own. Every claim and release is one
``BEGIN IMMEDIATE`` transaction: SQLite lets one writer in at a time, so two processes
never claim the same slot. The browser is not touched here (see :mod:`core.pool.pool`).
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from core.audit.key import data_dir
from core.cdp import shown_endpoint
from core.pool import owner

SlotState = Literal["idle", "running", "completed", "lost"]
PoolKind = Literal["launch", "cdp_url", "connect", "grid"]

DEFAULT_NAME = "default"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
DB_FILE = "pool.sqlite3"

_POOL_TABLE = """CREATE TABLE IF NOT EXISTS pool (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    source TEXT,
    browser_pid INTEGER,
    browser_started INTEGER,
    profile TEXT,
    tmp_dir TEXT,
    context_id TEXT,
    headless INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL
)"""
_SLOTS_TABLE = """CREATE TABLE IF NOT EXISTS slots (
    slot INTEGER PRIMARY KEY,
    target_id TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('idle', 'running', 'completed', 'lost')),
    run_id TEXT,
    task TEXT,
    pid INTEGER,
    pid_started INTEGER,
    claimed_at REAL,
    finished_at REAL,
    url TEXT NOT NULL DEFAULT 'about:blank',
    title TEXT NOT NULL DEFAULT '',
    audit_path TEXT,
    dirty INTEGER NOT NULL DEFAULT 0,
    context_id TEXT,
    endpoint TEXT,
    lost_reason TEXT
)"""
_SCHEMA = f"{_POOL_TABLE};\n{_SLOTS_TABLE};\n"


class PoolError(Exception):
    """A pool command cannot be done; the message says what to do instead."""


class PoolMissing(PoolError):
    """No pool of that name has been started."""


class PoolFull(PoolError):
    """Every slot is running: nothing was claimed and nothing was touched (exit code 4)."""


class SlotRunning(PoolFull):
    """The slot asked for with ``--resume-slot`` is running: a run owns it, so nothing was
    claimed and nothing was touched (exit code 4, as for a full pool)."""


def check_name(name: str) -> str:
    if not _NAME.match(name):
        raise PoolError(
            f"pool name {name!r} is not usable: use 1 to 40 letters, digits, '.', '_' or '-'"
        )
    return name


def pools_dir() -> Path:
    """Where pools live: ``pools/`` in handrail's data directory (``$HANDRAIL_DATA_DIR``)."""
    return data_dir() / "pools"


def pool_dir(name: str) -> Path:
    return pools_dir() / check_name(name)


@dataclass(frozen=True, slots=True)
class PoolInfo:
    """The pool's browser: how to reach it and whether it is ours to stop."""

    name: str
    kind: PoolKind
    endpoint: str
    """The browser's DevTools websocket URL."""
    source: str | None = None
    """What the person gave (``--cdp-url``), for messages."""
    browser_pid: int | None = None
    browser_started: int | None = None
    profile: str | None = None
    tmp_dir: str | None = None
    context_id: str | None = None
    """In an adopted browser: the browser context the slots live in (the person's tabs
    are in another one)."""
    headless: bool = False
    created_at: float = 0.0


@dataclass(frozen=True, slots=True)
class SlotInfo:
    """One row of ``pool status``; also what a pool screen polls."""

    slot: int
    target_id: str
    state: SlotState
    run_id: str | None
    task: str | None
    pid: int | None
    claimed_at: float | None
    finished_at: float | None
    url: str
    title: str
    audit_path: str | None
    dirty: bool = False
    context_id: str | None = None
    """The browser context the slot's tab lives in: its own, made fresh when the slot is
    (re)claimed, or its run's (a second tab of one run shares the run's)."""
    endpoint: str = ""
    """The DevTools endpoint of the browser the slot's tab is in (a grid has several)."""
    lost_reason: str | None = None

    def public(self) -> dict[str, object]:
        """The slot as ``pool status --json`` prints it."""
        return {
            "slot": self.slot,
            "state": self.state,
            "run_id": self.run_id,
            "task": self.task,
            "url": self.url,
            "title": self.title,
            "pid": self.pid,
            "claimed_at": self.claimed_at,
            "finished_at": self.finished_at,
            "audit_path": self.audit_path,
            "target_id": self.target_id,
            "endpoint": shown_endpoint(self.endpoint),
            "lost_reason": self.lost_reason,
        }


@dataclass(frozen=True, slots=True)
class Claim:
    """A slot a run now owns. ``dirty``: it held a completed run's page, so it gets a new
    tab in a new browser context (:func:`core.pool.pool.renew`) before the run uses it."""

    slot: int
    target_id: str
    dirty: bool
    context_id: str | None = None
    resumed: bool = False
    """Claimed with ``--resume-slot``: the page is kept as the last run left it."""
    endpoint: str = ""
    """The browser the slot's tab is in."""


def _claim_of(row: sqlite3.Row, *, dirty: bool, resumed: bool = False) -> Claim:
    return Claim(
        slot=row["slot"],
        target_id=row["target_id"],
        dirty=dirty,
        context_id=_context_of(row),
        resumed=resumed,
        endpoint=row["endpoint"] or "",
    )


def _free_slot(db: sqlite3.Connection, endpoint: str | None) -> sqlite3.Row | None:
    """The slot a new claim takes (see :meth:`PoolState.claim`), or None.

    The endpoint with the most free slots; on a tie, the one claimed from least recently,
    so that runs started one after another spread over the browsers too."""
    every: list[sqlite3.Row] = db.execute("SELECT * FROM slots ORDER BY slot").fetchall()
    rows = [r for r in every if r["state"] in ("idle", "completed")]
    if endpoint is not None:
        rows = [r for r in rows if (r["endpoint"] or "") == endpoint]
    if not rows:
        return None
    free: dict[str, int] = {}
    for r in rows:
        free[r["endpoint"] or ""] = free.get(r["endpoint"] or "", 0) + 1
    last: dict[str, float] = {}
    for r in every:
        where = r["endpoint"] or ""
        last[where] = max(last.get(where, 0.0), r["claimed_at"] or 0.0)
    chosen = max(free, key=lambda e: (free[e], -last.get(e, 0.0)))
    mine = [r for r in rows if (r["endpoint"] or "") == chosen]
    idle = [r for r in mine if r["state"] == "idle"]
    if idle:
        return idle[0]
    # A slot is completed only once its run has ended (all of the run's slots at once, or
    # its process died): the owner of every completed slot has ended, even when its
    # process lives on to run others (a fleet).
    return min(mine, key=lambda r: (r["finished_at"] or 0.0, r["slot"]))


def _context_of(row: sqlite3.Row) -> str | None:
    """A slot row's browser context (None in a database from before contexts per slot)."""
    return str(row["context_id"]) if row["context_id"] else None


def full_message(slots: Sequence[SlotInfo]) -> str:
    """``pool full: 12 of 12 slots running (oldest since 10:42, run 7f3a…)``."""
    running = [s for s in slots if s.state == "running"]
    oldest = min(running, key=lambda s: s.claimed_at or 0.0, default=None)
    text = f"pool full: {len(running)} of {len(slots)} slots running"
    if oldest is not None:
        since = time.strftime("%H:%M", time.localtime(oldest.claimed_at or 0.0))
        text += f" (oldest since {since}, run {(oldest.run_id or '?')[:4]}…)"
    return text


class PoolState:
    """The database of one pool. Open with :meth:`open` or :meth:`create`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # isolation_level=None: we write BEGIN IMMEDIATE ourselves.
        self._db = sqlite3.connect(path, timeout=30.0, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA busy_timeout=30000")

    @classmethod
    def open(cls, name: str) -> PoolState:
        """The state of pool ``name``; raises :class:`PoolMissing` if it was never started."""
        path = pool_dir(name) / DB_FILE
        if not path.is_file():
            raise PoolMissing(
                f"there is no pool named {name!r}; start it with `handrail pool start --name {name}`"
            )
        state = cls(path)
        state._upgrade()
        if state.info_or_none() is None:
            state.close()
            raise PoolMissing(
                f"the pool {name!r} was not started completely; run `handrail pool stop "
                f"--name {name} --force`, then start it again"
            )
        return state

    def _upgrade(self) -> None:
        """A pool started by an earlier handrail has no browser context per slot: its slots
        get one when they are next claimed (a NULL context is renewed like a dirty slot)."""
        with self._write() as db:
            columns = {r["name"] for r in db.execute("PRAGMA table_info(slots)")}
            if columns and "context_id" not in columns:
                db.execute("ALTER TABLE slots ADD COLUMN context_id TEXT")
            if columns and "endpoint" not in columns:
                # From before grids: one endpoint, the pool's; no slot can be lost, so the
                # state's CHECK is rebuilt with 'lost' in it.
                db.execute("ALTER TABLE slots RENAME TO slots_old")
                db.execute(_SLOTS_TABLE)
                keep = ", ".join(sorted(columns))
                db.execute(f"INSERT INTO slots ({keep}) SELECT {keep} FROM slots_old")
                db.execute("DROP TABLE slots_old")
                db.execute("UPDATE slots SET endpoint = (SELECT endpoint FROM pool WHERE id = 1)")

    @classmethod
    def create(
        cls, info: PoolInfo, tabs: Sequence[tuple[str, str | None] | tuple[str, str | None, str]]
    ) -> PoolState:
        """Record a freshly started pool: every slot idle, one per ``(target id, browser
        context id[, endpoint])`` of ``tabs``, in that order (no endpoint: the pool's)."""
        folder = pool_dir(info.name)
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        state = cls(folder / DB_FILE)
        state._db.executescript(_SCHEMA)
        with state._write() as db:
            db.execute("DELETE FROM pool")
            db.execute("DELETE FROM slots")
            db.execute(
                "INSERT INTO pool (id, name, kind, endpoint, source, browser_pid, "
                "browser_started, profile, tmp_dir, context_id, headless, created_at) "
                "VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    info.name,
                    info.kind,
                    info.endpoint,
                    info.source,
                    info.browser_pid,
                    info.browser_started,
                    info.profile,
                    info.tmp_dir,
                    info.context_id,
                    int(info.headless),
                    info.created_at or time.time(),
                ),
            )
            db.executemany(
                "INSERT INTO slots (slot, target_id, context_id, endpoint, state) "
                "VALUES (?, ?, ?, ?, 'idle')",
                [
                    (n, tab[0], tab[1], tab[2] if len(tab) > 2 else info.endpoint)
                    for n, tab in enumerate(tabs, start=1)
                ],
            )
        return state

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken at once (``BEGIN IMMEDIATE``): other writers wait."""
        db = self._db
        if db.in_transaction:
            raise RuntimeError("pool state transactions do not nest")
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    # -- reading ---------------------------------------------------------------------

    def info_or_none(self) -> PoolInfo | None:
        try:
            row = self._db.execute("SELECT * FROM pool WHERE id = 1").fetchone()
        except sqlite3.OperationalError:
            return None
        if row is None:
            return None
        return PoolInfo(
            name=row["name"],
            kind=row["kind"],
            endpoint=row["endpoint"],
            source=row["source"],
            browser_pid=row["browser_pid"],
            browser_started=row["browser_started"],
            profile=row["profile"],
            tmp_dir=row["tmp_dir"],
            context_id=row["context_id"],
            headless=bool(row["headless"]),
            created_at=row["created_at"],
        )

    def info(self) -> PoolInfo:
        info = self.info_or_none()
        if info is None:
            raise PoolMissing(f"the pool database {self.path} is empty")
        return info

    def slots(self) -> list[SlotInfo]:
        """Every slot, by number, after marking the slots of dead owners completed."""
        self.reap()
        return self._read_slots(self._db)

    @staticmethod
    def _read_slots(db: sqlite3.Connection) -> list[SlotInfo]:
        rows = db.execute("SELECT * FROM slots ORDER BY slot").fetchall()
        return [
            SlotInfo(
                slot=row["slot"],
                target_id=row["target_id"],
                state=row["state"],
                run_id=row["run_id"],
                task=row["task"],
                pid=row["pid"],
                claimed_at=row["claimed_at"],
                finished_at=row["finished_at"],
                url=row["url"],
                title=row["title"],
                audit_path=row["audit_path"],
                dirty=bool(row["dirty"]),
                context_id=_context_of(row),
                endpoint=row["endpoint"] or "",
                lost_reason=row["lost_reason"],
            )
            for row in rows
        ]

    def endpoints(self) -> list[str]:
        """The browsers the pool's slots are in, in the order of their first slot."""
        rows = self._db.execute("SELECT endpoint FROM slots ORDER BY slot").fetchall()
        return list(dict.fromkeys(str(r["endpoint"] or "") for r in rows))

    # -- writing ---------------------------------------------------------------------

    def reap(self) -> list[int]:
        """Mark ``completed`` every running slot whose owner process has ended (its page is
        kept). Returns the slot numbers."""
        with self._write() as db:
            return self._reap(db)

    @staticmethod
    def _reap(db: sqlite3.Connection) -> list[int]:
        rows = db.execute(
            "SELECT slot, pid, pid_started FROM slots WHERE state = 'running'"
        ).fetchall()
        dead = [r["slot"] for r in rows if not owner.alive(r["pid"], r["pid_started"])]
        now = time.time()
        db.executemany(
            "UPDATE slots SET state = 'completed', finished_at = ? WHERE slot = ?",
            [(now, slot) for slot in dead],
        )
        return dead

    def claim(
        self,
        run_id: str,
        *,
        task: str = "",
        audit_path: str | None = None,
        pid: int | None = None,
        pid_started: int | None = None,
        resume: int | None = None,
        endpoint: str | None = None,
    ) -> Claim:
        """Give run ``run_id`` a slot: on the endpoint with the most free slots (idle or
        completed; a one-browser pool has one), an idle one first (lowest number), else the
        oldest completed one whose owner has ended; never a running or lost one. With
        ``endpoint`` (a run's second tab, which must be in the run's browser), only there.
        Raises :class:`PoolFull` (and changes nothing) when every usable slot is running.

        With ``resume``: exactly that slot, if it is ``completed`` (its owner has ended), and
        it is not renewed: the run goes on from the page as the last run left it. Raises
        :class:`SlotRunning` (exit 4) when a run owns it, :class:`PoolError` when it is idle
        or does not exist; nothing is changed then."""
        if pid is None:
            pid, pid_started = owner.me()
        with self._write() as db:
            self._reap(db)
            if resume is not None:
                kept = self._resumable(db, resume)
                db.execute(
                    "UPDATE slots SET state = 'running', run_id = ?, task = ?, pid = ?, "
                    "pid_started = ?, claimed_at = ?, finished_at = NULL, audit_path = ?, "
                    "dirty = 0 WHERE slot = ?",
                    (run_id, task, pid, pid_started, time.time(), audit_path, resume),
                )
                return _claim_of(kept, dirty=False, resumed=True)
            row = _free_slot(db, endpoint)
            if row is None:
                raise PoolFull(full_message(self._read_slots(db)))
            dirty = row["state"] == "completed" or bool(row["dirty"])
            db.execute(
                "UPDATE slots SET state = 'running', run_id = ?, task = ?, pid = ?, "
                "pid_started = ?, claimed_at = ?, finished_at = NULL, audit_path = ?, "
                "dirty = ? WHERE slot = ?",
                (run_id, task, pid, pid_started, time.time(), audit_path, int(dirty), row["slot"]),
            )
            return _claim_of(row, dirty=dirty)

    def lose(self, endpoint: str, reason: str) -> list[int]:
        """``endpoint`` stopped answering: every slot of it that is not running becomes
        ``lost`` (a running one is its run's; the run marks it with :meth:`finish`).
        Returns the slots marked."""
        with self._write() as db:
            rows = db.execute(
                "SELECT slot FROM slots WHERE endpoint = ? AND state IN ('idle', 'completed')",
                (endpoint,),
            ).fetchall()
            db.execute(
                "UPDATE slots SET state = 'lost', lost_reason = ?, finished_at = ? "
                "WHERE endpoint = ? AND state IN ('idle', 'completed')",
                (reason, time.time(), endpoint),
            )
            return [r["slot"] for r in rows]

    @staticmethod
    def _resumable(db: sqlite3.Connection, slot: int) -> sqlite3.Row:
        """Slot ``slot``'s row if a run may resume it (it is ``completed``); else why not."""
        row: sqlite3.Row | None = db.execute(
            "SELECT * FROM slots WHERE slot = ?", (slot,)
        ).fetchone()
        if row is None:
            count = db.execute("SELECT COUNT(*) FROM slots").fetchone()[0]
            raise PoolError(
                f"there is no slot {slot} to resume: the pool's slots are 1 to {count} "
                "(see `handrail pool status`)"
            )
        if row["state"] == "lost":
            raise PoolError(
                f"slot {slot} is lost: its browser stopped answering ({row['lost_reason']}); "
                f"there is no page to resume. `handrail pool clear {slot}` gives it a new tab "
                "once that browser is back"
            )
        if row["state"] == "idle":
            raise PoolError(
                f"slot {slot} is idle: nothing to resume; use --pool without --resume-slot"
            )
        if row["state"] == "running":
            since = time.strftime("%H:%M", time.localtime(row["claimed_at"] or 0.0))
            raise SlotRunning(
                f"slot {slot} is running (run {row['run_id'] or '?'}, pid {row['pid']}, since "
                f"{since}): a running slot is never taken over; wait for that run to end, "
                "then resume it"
            )
        return row

    def renewed(self, slot: int, target_id: str, context_id: str | None) -> None:
        """Slot ``slot`` has a new tab, ``target_id``, in ``context_id``: nothing of its
        last run's context is left to it."""
        with self._write() as db:
            db.execute(
                "UPDATE slots SET target_id = ?, context_id = ?, dirty = 0, "
                "url = 'about:blank', title = '' WHERE slot = ?",
                (target_id, context_id, slot),
            )

    def context_users(self, context_id: str) -> list[int]:
        """The slots whose tab lives in browser context ``context_id``."""
        rows = self._db.execute(
            "SELECT slot FROM slots WHERE context_id = ? ORDER BY slot", (context_id,)
        ).fetchall()
        return [r["slot"] for r in rows]

    def contexts(self) -> list[str]:
        """Every browser context a slot lives in (``pool stop`` disposes them)."""
        rows = self._db.execute(
            "SELECT DISTINCT context_id FROM slots WHERE context_id IS NOT NULL"
        ).fetchall()
        return [r["context_id"] for r in rows]

    def set_audit_path(self, run_id: str, audit_path: str) -> None:
        with self._write() as db:
            db.execute(
                "UPDATE slots SET audit_path = ? WHERE run_id = ? AND state = 'running'",
                (audit_path, run_id),
            )

    def note_page(self, slot: int, url: str, title: str) -> None:
        """Record where the slot's page is (for ``pool status``; already scrubbed)."""
        with self._write() as db:
            db.execute("UPDATE slots SET url = ?, title = ? WHERE slot = ?", (url, title, slot))

    def finish(self, run_id: str, *, lost: str | None = None) -> list[int]:
        """Run ``run_id`` ended: its running slots become ``completed``, pages kept; or,
        with ``lost`` (why), ``lost``: the browser they were in no longer answers."""
        with self._write() as db:
            rows = db.execute(
                "SELECT slot FROM slots WHERE run_id = ? AND state = 'running'", (run_id,)
            ).fetchall()
            db.execute(
                "UPDATE slots SET state = ?, lost_reason = ?, finished_at = ? "
                "WHERE run_id = ? AND state = 'running'",
                ("lost" if lost else "completed", lost, time.time(), run_id),
            )
            return [r["slot"] for r in rows]

    def clear(self, slot: int, target_id: str, context_id: str | None) -> None:
        """Slot ``slot`` was cleared by the person: idle again, with tab ``target_id`` in a
        fresh ``context_id``."""
        with self._write() as db:
            db.execute(
                "UPDATE slots SET state = 'idle', target_id = ?, run_id = NULL, task = NULL, "
                "pid = NULL, pid_started = NULL, claimed_at = NULL, finished_at = NULL, "
                "url = 'about:blank', title = '', audit_path = NULL, dirty = 0, context_id = ?, "
                "lost_reason = NULL WHERE slot = ?",
                (target_id, context_id, slot),
            )
