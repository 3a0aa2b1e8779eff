#!/usr/bin/env bash
# Everything CI checks: lint, types (strict on core/), then the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
# Two workers, one test file each at a time: the tests mostly wait on Chromium and on
# subprocesses (a serial run used about 60% of one core for 22 minutes), and the files share
# nothing but the machine (each worker has its own browser and servers on free ports).
.venv/bin/python -m pytest -n 2 --dist loadfile "$@"
