#!/usr/bin/env bash
# The JS check: TypeScript's compiler over every page script of core/, one group at a time
# (scripts/tsconfig/*.json). A group is the set of files joined into one closure, so they
# are checked as scripts sharing one scope; files that start with // @ts-check have their
# JSDoc types checked too, and every file is at least parsed, so a syntax error fails.
# TypeScript comes from tests/site/package.json (scripts/bootstrap.sh --dev installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
tsc=tests/site/node_modules/typescript/bin/tsc
if [[ ! -x $tsc && ! -f $tsc ]]; then
  echo "js_check: TypeScript is not installed; run: bash scripts/bootstrap.sh --dev" >&2
  exit 2
fi
status=0
for group in scripts/tsconfig/{eyes,hands,single,demo}.json; do
  if ! node "$tsc" -p "$group"; then
    echo "js_check: $group failed" >&2
    status=1
  fi
done
exit $status
