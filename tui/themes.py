"""Theme files: reading, validating and turning them into Textual themes.

A theme file is TOML (``themes/NAME.toml`` in the project, or in the user's
``$XDG_CONFIG_HOME/handrail/themes/``)::

    name = "dark"            # lowercase letters, digits and dashes
    dark = true              # optional, default true
    luminosity_spread = 0.15 # optional
    [colors]                 # Textual's base colours; primary is required
    primary = "#5AA9E6"
    ...
    [meaning]                # handrail's meaning colours (optional, defaults below)
    approved = "#7FC98F"
    ...
    [variables]              # optional extra Textual theme variables
    footer-key-foreground = "#5AA9E6"

A file is validated completely before anything is registered; a broken file is
reported as one problem and skipped, never half-registered.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from textual.color import Color, ColorParseError
from textual.theme import BUILTIN_THEMES, Theme

from tui.config import THEMES_FOLDER

DEFAULT_THEME = "dark"

COLOR_KEYS = (
    "primary",
    "secondary",
    "accent",
    "warning",
    "error",
    "success",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
)

MEANINGS: dict[str, str] = {
    "approved": "#4EBF71",
    "denied": "#E0A030",
    "error": "#E05561",
    "paused": "#B48EAD",
    "new-element": "#56B6C2",
    "offscreen": "#808890",
}
"""Meaning colours and their fallbacks. CSS and rendered text use ``$handrail-<meaning>``."""

_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
_TOP_KEYS = {"name", "dark", "luminosity_spread", "text_alpha", "colors", "meaning", "variables"}


def meaning_variable(meaning: str) -> str:
    """The CSS variable name of a meaning colour, e.g. ``handrail-denied``."""
    return f"handrail-{meaning}"


_OUTCOME_COLOURS = {
    "approved": "approved",
    "ok": "approved",
    "denied": "denied",
    "error": "error",
    "unknown": "error",
    "problem": "error",
    "paused": "paused",
}


def outcome_style(outcome: str) -> str:
    """The style of a round outcome's mark: its meaning colour, or dim for pending/skipped."""
    meaning = _OUTCOME_COLOURS.get(outcome)
    return f"${meaning_variable(meaning)}" if meaning else "dim"


def meaning_defaults() -> dict[str, str]:
    """Variables every theme gets unless it sets them (``App.get_theme_variable_defaults``)."""
    return {meaning_variable(key): value for key, value in MEANINGS.items()}


class ThemeFileError(ValueError):
    """A theme file that cannot be used; the message names the file and what to fix."""


@dataclass(frozen=True, slots=True)
class ThemeProblem:
    path: Path
    message: str


@dataclass(frozen=True, slots=True)
class LoadedThemes:
    themes: dict[str, Theme] = field(default_factory=dict)
    sources: dict[str, Path] = field(default_factory=dict)
    problems: tuple[ThemeProblem, ...] = ()


def builtin_themes_dir() -> Path:
    """The built-in themes: the project's top-level ``themes/``, which the wheel carries
    inside the ``tui`` package as ``tui/theme_files`` (in a checkout, a link to it)."""
    return Path(str(resources.files("tui").joinpath("theme_files")))


def _color(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ThemeFileError(f'{where} must be a colour string like "#1E7B34", not {value!r}')
    try:
        Color.parse(value)
    except ColorParseError:
        raise ThemeFileError(f"{where} = {value!r} is not a colour Textual understands") from None
    return value


def _table(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        raise ThemeFileError(f"[{key}] must be a table")
    return value


def parse_theme(data: Mapping[str, Any]) -> Theme:
    """Validate one theme's data (as read from TOML) and build the Textual ``Theme``.

    Raises ``ThemeFileError`` naming the first problem found.
    """
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise ThemeFileError(
            f"unknown keys {', '.join(unknown)}; allowed: {', '.join(sorted(_TOP_KEYS))}"
        )
    name = data.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ThemeFileError(
            f'name = {name!r}: give a name of lowercase letters, digits and dashes, e.g. "my-dark"'
        )
    dark = data.get("dark", True)
    if not isinstance(dark, bool):
        raise ThemeFileError(f"dark must be true or false, not {dark!r}")
    numbers: dict[str, float] = {}
    for key in ("luminosity_spread", "text_alpha"):
        if key in data:
            value = data[key]
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
                raise ThemeFileError(f"{key} must be a number between 0 and 1, not {value!r}")
            numbers[key] = float(value)

    colors = _table(data, "colors")
    unknown = sorted(set(colors) - set(COLOR_KEYS))
    if unknown:
        raise ThemeFileError(
            f"[colors] has unknown keys {', '.join(unknown)}; allowed: {', '.join(COLOR_KEYS)}"
        )
    if "primary" not in colors:
        raise ThemeFileError("[colors] needs at least primary")
    checked = {key: _color(value, f"colors.{key}") for key, value in colors.items()}

    meaning = _table(data, "meaning")
    unknown = sorted(set(meaning) - set(MEANINGS))
    if unknown:
        raise ThemeFileError(
            f"[meaning] has unknown keys {', '.join(unknown)}; allowed: {', '.join(MEANINGS)}"
        )
    variables = {
        meaning_variable(key): _color(value, f"meaning.{key}") for key, value in meaning.items()
    }

    extra = _table(data, "variables")
    for key, value in extra.items():
        if not isinstance(value, str):
            raise ThemeFileError(f"variables.{key} must be a string, not {value!r}")
        variables[str(key)] = value

    return Theme(name=name, dark=dark, variables=variables, **checked, **numbers)  # type: ignore[arg-type]


def load_theme_file(path: Path) -> Theme:
    """Read and validate one ``.toml`` theme file. Raises ``ThemeFileError``."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ThemeFileError(f"cannot read it: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ThemeFileError(f"not valid TOML: {exc}") from None
    theme = parse_theme(data)
    if theme.name != path.stem:
        raise ThemeFileError(f"name = {theme.name!r} does not match the file name {path.name!r}")
    return theme


def load_themes(folders: Iterable[Path]) -> LoadedThemes:
    """Load every ``*.toml`` in ``folders``; a later folder's theme replaces an earlier one
    of the same name (so a user's file can override a built-in). Missing folders are skipped."""
    themes: dict[str, Theme] = {}
    sources: dict[str, Path] = {}
    problems: list[ThemeProblem] = []
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.toml")):
            try:
                theme = load_theme_file(path)
            except ThemeFileError as exc:
                problems.append(ThemeProblem(path, str(exc)))
                continue
            themes[theme.name] = theme
            sources[theme.name] = path
    return LoadedThemes(themes, sources, tuple(problems))


def describe_problems(problems: Iterable[ThemeProblem]) -> str:
    """One notification's text for all broken theme files."""
    lines = [f"{problem.path}: {problem.message}" for problem in problems]
    return "Skipped broken theme file(s):\n" + "\n".join(lines)


def theme_folders(config_dir: Path) -> list[Path]:
    """Where themes load from, later folders winning: the project's, then the person's."""
    return [builtin_themes_dir(), config_dir / THEMES_FOLDER]


def offered_themes(folders: Iterable[Path]) -> list[str]:
    """Every theme name the observatory offers (``t``, ``--theme``): Textual's built-in
    themes and the valid files in ``folders``, sorted."""
    return sorted({*BUILTIN_THEMES, *load_themes(folders).themes})
