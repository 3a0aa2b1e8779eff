"""The person's TUI settings, kept in ``$XDG_CONFIG_HOME/handrail/config.toml``.

Only the keys the TUI owns are written (``theme``); other keys and comments in the
file are kept as they are, so other parts of handrail can share the file.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

CONFIG_FILE = "config.toml"
THEMES_FOLDER = "themes"


def default_config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/handrail``, or ``~/.config/handrail`` when the variable is unset."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "handrail"


@dataclass(frozen=True, slots=True)
class TuiConfig:
    theme: str | None = None
    problem: str | None = None
    """Why the file could not be read, for one notification; the defaults are used then."""


def load_config(folder: Path) -> TuiConfig:
    """Read the TUI's keys; a missing file is not a problem, a broken one is reported."""
    path = folder / CONFIG_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return TuiConfig()
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return TuiConfig(problem=f"{path}: ignored, cannot read it ({exc})")
    theme = data.get("theme")
    if theme is not None and not isinstance(theme, str):
        return TuiConfig(problem=f"{path}: theme must be a string, not {theme!r}")
    return TuiConfig(theme=theme)


_TABLE = re.compile(r"^\s*\[")
_THEME_KEY = re.compile(r"^\s*theme\s*=")


def save_theme(folder: Path, name: str) -> None:
    """Remember ``name`` as the theme, replacing only the top-level ``theme =`` line.

    Written to a temporary file and renamed, so a crash never leaves half a file.
    Raises ``OSError`` when the folder cannot be written.
    """
    path = folder / CONFIG_FILE
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = []
    entry = f'theme = "{name}"'
    top_end = next((i for i, line in enumerate(lines) if _TABLE.match(line)), len(lines))
    for i in range(top_end):
        if _THEME_KEY.match(lines[i]):
            lines[i] = entry
            break
    else:
        lines.insert(top_end, entry)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def config_policy(folder: Path) -> str | None:
    """``FILE#policy`` when the config file has a ``[policy]`` table (an approval policy,
    as in a policy file: core/guard/rules.py), for runs given neither ``--approve`` nor
    ``--policy``; None otherwise. A broken file is left for the run's check to report."""
    path = folder / CONFIG_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if not re.search(r"^\s*\[\[?\s*policy\s*[.\]]", text, re.MULTILINE):
        return None
    return f"{path}#policy"
