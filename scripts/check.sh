#!/usr/bin/env bash
# Everything CI checks: lint, types (strict on core/ and tui/), the import contracts, the JS
# check and the size goals, then the whole test suite. Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
# The layers of docs/architecture.md (pyproject.toml [tool.importlinter]).
.venv/bin/lint-imports
# The page scripts: TypeScript's check of core/**/*.js (// @ts-check, JSDoc types).
bash scripts/js_check.sh
# The size goals: no .py or .js file over 900 lines, no JS function over 200.
node scripts/sizes.mjs
# Two workers, one test file each at a time: the tests mostly wait on Chromium and on
# subprocesses (a serial run used about 60% of one core for 22 minutes), and the files share
# nothing but the machine (each worker has its own browser and servers on free ports).
.venv/bin/python -m pytest -n 2 --dist loadfile "$@"
