"""core/ is a library without a terminal: importing any of it must not load textual or tui.

(rich is loaded anyway: structlog's console renderer imports it whenever it is installed.)
"""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import core

ROOT = Path(__file__).resolve().parent.parent


def core_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages(core.__path__, "core."))


def test_core_never_imports_the_ui() -> None:
    modules = core_modules()
    assert "core.run.agent" in modules and "core.hands" in modules
    script = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'tui'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "", f"core pulled in: {out.stdout.strip()}"


def test_the_import_contracts_hold() -> None:
    """pyproject.toml's import-linter contracts: the layers, core without the UI, no circles.
    Cheap (about 2 s without its cache), so it runs with the tests as well as in check.sh."""
    lint_imports = Path(sys.executable).with_name("lint-imports")
    out = subprocess.run(
        [str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stdout[out.stdout.find("Broken contracts") :] or out.stderr


def test_every_name_of_the_audit_package_is_what_it_says_whichever_comes_first() -> None:
    """core.audit loads its names on first use; importing a submodule must never leave a
    name (``verify``) bound to the module of the same name."""
    import core.audit

    script = (
        "import importlib, sys, types\n"
        "names = sys.argv[1:]\n"
        "for first in names:\n"
        "    for name in list(sys.modules):\n"
        "        if name == 'core.audit' or name.startswith('core.audit.'):\n"
        "            del sys.modules[name]\n"
        "    audit = importlib.import_module('core.audit')\n"
        "    getattr(audit, first)\n"
        "    bad = [n for n in names if isinstance(getattr(audit, n), types.ModuleType)]\n"
        "    assert not bad, (first, bad)\n"
    )
    subprocess.run(
        [sys.executable, "-c", script, *core.audit.__all__], cwd=ROOT, check=True, timeout=120
    )
