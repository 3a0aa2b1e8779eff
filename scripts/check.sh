#!/usr/bin/env bash
# Everything CI checks: lint, types (strict on core/), then the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
.venv/bin/python -m pytest "$@"
