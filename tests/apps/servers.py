"""Start the real applications on loopback, each in a process of its own, and stop them by PID.

    with django_admin(tmp_dir) as app:      # the travel agency's Django admin
        app.url, app.username, app.password, app.orm("print(Trip.objects.count())")
    with datasette(tmp_dir) as app:         # Datasette over a seeded sqlite file
        app.url, app.db_path, app.json("/agency/flights.json?price__gt=300")

Everything an app writes stays in ``tmp_dir`` (its database, its log, its HOME). Usable
without pytest (the bench starts the same apps).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import sqlite3
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 60.0
USERNAME = "admin"
PASSWORD = "handrail-travel-1"


@dataclass(frozen=True)
class Server:
    """A running app process: where it answers and where it keeps its log."""

    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


@dataclass(frozen=True)
class DjangoApp:
    """The travel agency's admin at ``url`` (``/admin/``), signed in as ``username``."""

    url: str
    username: str
    password: str
    session_cookie: tuple[str, str]
    """(name, value) of a signed-in session, for tests that start past the sign-in form."""
    db_path: Path
    server: Server
    env: dict[str, str]

    def admin(self, path: str = "") -> str:
        """The absolute URL of ``/admin/<path>``."""
        return f"{self.url}/admin/{path}"

    def orm(self, code: str) -> Any:
        """Run ``code`` in ``manage.py shell`` (the models ``Trip``, ``Traveller`` and
        ``User``, and ``Q``, imported) and return the JSON value it prints on its last line."""
        prelude = (
            "import json\n"
            "from django.contrib.auth.models import User\n"
            "from django.db.models import Q\n"
            "from tests.apps.travel.models import Traveller, Trip\n"
        )
        out = subprocess.run(
            [sys.executable, "-m", "django", "shell", "-c", prelude + code],
            env=self.env,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if out.returncode != 0:
            raise RuntimeError(f"manage.py shell failed:\n{out.stderr[-3000:]}")
        return json.loads(out.stdout.strip().splitlines()[-1])


@dataclass(frozen=True)
class DatasetteApp:
    """Datasette at ``url`` serving ``db_path`` as the database ``agency``."""

    url: str
    db_path: Path
    server: Server

    def json(self, path_and_query: str) -> Any:
        """Datasette's JSON API: GET ``path_and_query`` (a ``.json`` path) on this app."""
        with urllib.request.urlopen(self.url + path_and_query, timeout=30) as reply:
            return json.load(reply)

    def query(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """Rows of ``sql`` read straight from the sqlite file."""
        with contextlib.closing(sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True)) as db:
            return list(db.execute(sql, params))


def _private_env(tmp_dir: Path, **extra: str) -> dict[str, str]:
    """The parent's environment with HOME (and XDG folders) inside ``tmp_dir`` and the
    repository importable (the apps live in the ``tests`` package)."""
    home = tmp_dir / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update(HOME=str(home), PYTHONPATH=str(REPO), PYTHONDONTWRITEBYTECODE="1")
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        env[var] = str(home / var.removeprefix("XDG_").removesuffix("_HOME").lower())
    env.update(extra)
    return env


def _read_port(process: subprocess.Popen[bytes], log: Path) -> int:
    """The port the process prints on its first line of output."""
    assert process.stdout is not None
    deadline = time.monotonic() + START_TIMEOUT_S
    line = b""
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        ready, _, _ = select.select([process.stdout], [], [], max(left, 0))
        if not ready:
            raise RuntimeError(f"the app printed no port within {START_TIMEOUT_S:.0f} s")
        chunk = os.read(process.stdout.fileno(), 64)
        if not chunk:
            process.wait(timeout=10)
            raise RuntimeError(
                f"the app exited ({process.returncode}) before it listened:\n"
                + log.read_text(errors="replace")[-3000:]
            )
        line += chunk
    return int(line)


@contextlib.contextmanager
def _served(args: list[str], env: dict[str, str], log: Path, ready_path: str) -> Iterator[Server]:
    """Run ``python -m tests.apps.serve ARGS``, wait until ``ready_path`` answers 200, yield
    the server; stop it by its PID afterwards (terminate, then kill after 10 s)."""
    with log.open("ab") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.apps.serve", *args],
            env=env,
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err,
        )
    try:
        url = f"http://127.0.0.1:{_read_port(process, log)}"
        # The port is already listening: this request waits in its backlog until served.
        with urllib.request.urlopen(url + ready_path, timeout=START_TIMEOUT_S) as reply:
            if reply.status != 200:
                raise RuntimeError(f"{url}{ready_path} answered {reply.status}")
        yield Server(url, process, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


@contextlib.contextmanager
def django_admin(tmp_dir: Path) -> Iterator[DjangoApp]:
    """The travel agency: migrated into ``tmp_dir/travel.sqlite3``, seeded
    (:mod:`tests.apps.travel.seed`), with a superuser, served on a free loopback port."""
    tmp_dir.mkdir(parents=True, exist_ok=True)
    env = _private_env(
        tmp_dir, TRAVEL_DIR=str(tmp_dir), DJANGO_SETTINGS_MODULE="tests.apps.travel.settings"
    )
    seeded = subprocess.run(
        [sys.executable, "-m", "tests.apps.travel.seed", USERNAME, PASSWORD],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if seeded.returncode != 0:
        raise RuntimeError(f"seeding the travel agency failed:\n{seeded.stderr[-3000:]}")
    session_key = json.loads(seeded.stdout.strip().splitlines()[-1])["session_key"]
    with _served(["django"], env, tmp_dir / "django.log", "/admin/login/") as server:
        yield DjangoApp(
            url=server.url,
            username=USERNAME,
            password=PASSWORD,
            session_cookie=("travel_session", session_key),
            db_path=tmp_dir / "travel.sqlite3",
            server=server,
            env=env,
        )


# id, origin, destination, price (EUR), departs, seats left
FLIGHTS = (
    (1, "Lisbon", "Kyoto", 812, "2027-04-01", 4),
    (2, "Lisbon", "Nairobi", 455, "2027-05-19", 12),
    (3, "Porto", "Reykjavik", 199, "2027-01-08", 0),
    (4, "Porto", "Quito", 640, "2027-06-10", 7),
    (5, "Madrid", "Valparaiso", 930, "2027-07-03", 2),
    (6, "Madrid", "Tromso", 245, "2027-01-22", 9),
    (7, "Faro", "Lisbon", 59, "2027-03-13", 31),
    (8, "Faro", "Madrid", 89, "2027-02-02", 18),
    (9, "Lisbon", "Oslo", 301, "2027-02-14", 5),
    (10, "Porto", "Bergen", 300, "2027-02-20", 3),
)


def seed_agency_db(path: Path) -> None:
    """The sqlite file Datasette serves: one table ``flights`` (see :data:`FLIGHTS`)."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute(
            "create table flights (id integer primary key, origin text not null,"
            " destination text not null, price integer not null, departs text not null,"
            " seats integer not null)"
        )
        db.executemany("insert into flights values (?, ?, ?, ?, ?, ?)", FLIGHTS)
        db.commit()


@contextlib.contextmanager
def datasette(tmp_dir: Path) -> Iterator[DatasetteApp]:
    """Datasette serving a seeded ``tmp_dir/agency.db`` (immutable) on a free loopback port."""
    tmp_dir.mkdir(parents=True, exist_ok=True)
    db_path = tmp_dir / "agency.db"
    seed_agency_db(db_path)
    env = _private_env(tmp_dir)
    with _served(["datasette", str(db_path)], env, tmp_dir / "datasette.log", "/") as server:
        yield DatasetteApp(url=server.url, db_path=db_path, server=server)


def _main() -> None:
    """``python -m tests.apps.servers django|datasette DIR``: serve one app until Ctrl-C."""
    app, folder = sys.argv[1], Path(sys.argv[2])
    starter = {"django": django_admin, "datasette": datasette}[app]
    with starter(folder) as running:
        print(f"{app} is at {running.url} (Ctrl-C to stop)", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            running.server.process.wait()


if __name__ == "__main__":
    _main()
