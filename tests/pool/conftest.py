"""What the pool tests share: a pool name of each test's own."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

import pytest

from core.pool import pool
from tui.cli.main import dispatch

_names = itertools.count(1)


@pytest.fixture
def name() -> Iterator[str]:
    """A pool name of this test's own (short: Chrome's socket path lives under it), stopped
    after the test whatever happened."""
    pool_name = f"p{os.getpid() % 1000}-{next(_names)}"
    yield pool_name
    if (pool.pool_dir(pool_name) / "pool.sqlite3").exists():
        dispatch(["pool", "stop", "--force", "--name", pool_name])
