"""``handrail fleet TASKS.toml``: several runs, each in its own pool slot, read from one file.

The file holds defaults at the top and one ``[[task]]`` table per run::

    model = "anthropic:claude-sonnet-5-5"
    approve = "ask"
    allow_domain = ["shop.example"]

    [[task]]
    task = "find the cheapest kettle"
    start_url = "https://shop.example/kettles"

    [[task]]
    task = "fill in the contact form"
    start_url = "https://shop.example/contact"
    approve = "risky"
    secrets = ["EMAIL=SHOP_EMAIL"]

A key nobody knows is an error naming the key and its line: a misspelt ``alow_domain``
silently ignored would let a run roam. Paths (a scripted plan, ``audit_dir``,
``secrets_file``) are read relative to the file's folder.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from core.guard.allowlist import NetworkMode
from core.guard.policy import ApproveMode
from core.guard.rules import BUILTIN, Budget, parse_duration
from core.model.prices import PriceError, price_of
from core.run.netlog import HarContent
from core.run.session import ConfigError, RunSettings
from core.secrets import Secrets


class FleetError(ConfigError):
    """The tasks file cannot be used; the message names the file, the line and the fix."""


_STR = "a string"
_INT = "a whole number"
_FLOAT = "a number"
_BOOL = "true or false"
_LIST = "a list of strings"
_DURATION = "a duration (90s, 15m, 1.5h) or a number of seconds"

TASK_KEYS: Mapping[str, str] = {
    "task": _STR,
    "start_url": _STR,
    "model": _STR,
    "base_url": _STR,
    "approve": _STR,
    "max_rounds": _INT,
    "allow_domain": _LIST,
    "network": _STR,
    "allow_js": _BOOL,
    "secrets": _LIST,
    "secrets_file": _STR,
    "audit_dir": _STR,
    "action_timeout": _FLOAT,
    "screenshots": _BOOL,
    "har": _BOOL,
    "har_content": _STR,
    "policy": _STR,
    "max_tokens": _INT,
    "max_cost": _FLOAT,
    "max_time": _DURATION,
}
"""Every key a ``[[task]]`` table may hold, with the kind of value it takes."""

FLEET_KEYS: Mapping[str, str] = {
    "fleet_max_tokens": _INT,
    "fleet_max_cost": _FLOAT,
    "fleet_max_time": _DURATION,
}
"""Keys only the top of the file may hold: the budget of the whole fleet, spent by all its
runs together (each run's own ``max_*`` still holds too)."""

DEFAULT_KEYS: Mapping[str, str] = {
    **{k: v for k, v in TASK_KEYS.items() if k != "task"},
    **FLEET_KEYS,
}
"""The keys the top of the file may set: every task's defaults (all but the task text) and
the fleet's own budget."""

APPROVE_MODES = ("ask", "risky", "none")


@dataclass(frozen=True, slots=True)
class Fleet:
    """The runs a tasks file describes, in file order, each claiming a slot of ``pool``."""

    path: Path
    pool: str
    runs: tuple[RunSettings, ...]
    budget: Budget = field(default_factory=Budget)
    """The whole fleet's limits (``fleet_max_*``); each run's own are in its settings."""


def load_fleet(path: Path, *, pool: str, default_model: str) -> Fleet:
    """Read and check a tasks file. Raises :class:`FleetError` naming the file, the key and
    the line of the first problem (an unknown key, a value of the wrong kind, no task)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise FleetError(f"{path}: cannot read the tasks file: {exc}") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise FleetError(f"{path}: not valid TOML: {exc}") from exc
    lines = _Lines(path, text)
    tasks = data.get("task")
    if not isinstance(tasks, list) or not tasks:
        raise FleetError(
            f'{path}: no [[task]] table; add one per run, each with task = "what to do"'
        )
    defaults = {k: v for k, v in data.items() if k != "task"}
    _check_keys(defaults, DEFAULT_KEYS, lines, section=0, where="at the top (the defaults)")
    fleet_budget = Budget(
        defaults.pop("fleet_max_tokens", None),
        _number(defaults.pop("fleet_max_cost", None)),
        _seconds(defaults.pop("fleet_max_time", None)),
    )
    folder = path.resolve().parent
    runs = []
    for number, table in enumerate(tasks, 1):
        if not isinstance(table, dict):
            raise FleetError(f"{path}: task must be [[task]] tables, one per run")
        _check_keys(table, TASK_KEYS, lines, section=number, where=f"in [[task]] {number}")
        merged = {**defaults, **table}
        if not isinstance(merged.get("task"), str) or not merged["task"].strip():
            raise FleetError(
                f"{path} line {lines.section_line(number)}: [[task]] {number} has no task; "
                'add task = "what to do"'
            )
        runs.append(_settings(merged, folder, default_model, lines, number))
    return Fleet(path=path, pool=pool, runs=tuple(runs), budget=fleet_budget)


def _policy_spec(value: object, folder: Path) -> str | None:
    """A built-in policy's name as it is; a file relative to the tasks file's folder."""
    if not isinstance(value, str):
        return None
    return value if value in BUILTIN else str(folder / Path(value).expanduser())


def check_fleet_prices(fleet: Fleet, env: Mapping[str, str]) -> None:
    """With ``fleet_max_cost``, every run's model must have a price (a scripted plan costs
    nothing). Raises :class:`FleetError` naming the task and the model."""
    if fleet.budget.max_cost is None:
        return
    for number, settings in enumerate(fleet.runs, 1):
        kind, _, model_id = settings.model_spec.partition(":")
        if kind == "scripted":
            continue
        try:
            price_of(kind, model_id, env)
        except PriceError as exc:
            raise FleetError(f"{fleet.path}: [[task]] {number}: fleet_max_cost {exc}") from exc


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _seconds(value: object) -> float | None:
    if isinstance(value, str):
        return parse_duration(value)
    return _number(value)


def _check_keys(
    table: Mapping[str, Any], known: Mapping[str, str], lines: _Lines, *, section: int, where: str
) -> None:
    for key, value in table.items():
        line = lines.key_line(section, key)
        if key not in known:
            raise FleetError(
                f"{lines.path} line {line}: unknown key {key!r} {where}; the known keys are "
                f"{', '.join(known)}"
            )
        kind = known[key]
        if not _is_kind(value, kind):
            raise FleetError(
                f"{lines.path} line {line}: {key} must be {kind} (got {value!r}) {where}"
            )


def _is_kind(value: object, kind: str) -> bool:
    if kind == _STR:
        return isinstance(value, str)
    if kind == _BOOL:
        return isinstance(value, bool)
    if kind == _INT:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == _FLOAT:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == _DURATION:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value > 0
        try:
            return isinstance(value, str) and parse_duration(value) > 0
        except ValueError:
            return False
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _settings(
    merged: Mapping[str, Any], folder: Path, default_model: str, lines: _Lines, number: int
) -> RunSettings:
    approve = merged.get("approve", "ask")
    if approve not in APPROVE_MODES:
        raise FleetError(
            f"{lines.path} line {lines.key_line(number, 'approve')}: approve must be one of "
            f"{', '.join(APPROVE_MODES)} (got {approve!r})"
        )
    har_content = merged.get("har_content", "omit")
    if har_content not in ("omit", "embed"):
        raise FleetError(
            f"{lines.path} line {lines.key_line(number, 'har_content')}: har_content must be "
            f"omit or embed (got {har_content!r})"
        )
    model = merged.get("model", default_model)
    if model.startswith("scripted:"):
        model = "scripted:" + str(folder / model.removeprefix("scripted:"))
    secrets_file = merged.get("secrets_file")
    return RunSettings(
        task=merged["task"],
        start_url=merged.get("start_url"),
        model_spec=model,
        base_url=merged.get("base_url"),
        approve=cast(ApproveMode, approve),
        max_rounds=merged.get("max_rounds", 30),
        headless=True,
        allow_domains=tuple(merged.get("allow_domain", ())),
        network=cast("NetworkMode | None", merged.get("network")),
        allow_js=merged.get("allow_js", False),
        secrets=tuple(merged.get("secrets", ())),
        secrets_file=folder / secrets_file if secrets_file else None,
        audit_dir=folder / merged.get("audit_dir", "audit_logs"),
        action_timeout=float(merged.get("action_timeout", 45.0)),
        screenshots=merged.get("screenshots", True),
        har=bool(merged.get("har", False) or har_content == "embed"),
        har_content=cast("HarContent", har_content),
        policy=_policy_spec(merged.get("policy"), folder),
        max_tokens=merged.get("max_tokens"),
        max_cost=_number(merged.get("max_cost")),
        max_time=_seconds(merged.get("max_time")),
    )


class _Lines:
    """Where a key is written: tomllib gives values, not lines, and a message without the
    line leaves the person hunting through a long file."""

    _HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?")

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self._lines: Sequence[str] = text.splitlines()

    def _sections(self) -> list[tuple[int, int, str]]:
        """(section number, 1-based line, header) for the top (0) and each [[task]]."""
        found = [(0, 0, "")]
        tasks = 0
        for index, line in enumerate(self._lines, 1):
            header = self._HEADER.match(line)
            if header:
                if line.lstrip().startswith("[[") and header.group(1) == "task":
                    tasks += 1
                    found.append((tasks, index, "task"))
                else:
                    found.append((-1, index, header.group(1)))
        return found

    def section_line(self, section: int) -> int:
        for number, line, _header in self._sections():
            if number == section:
                return line
        return 1

    def key_line(self, section: int, key: str) -> int:
        """The line where ``key`` is set in that section (a table header counts), else the
        section's own line."""
        pattern = re.compile(rf"^\s*(['\"]?){re.escape(key)}\1\s*[=.]")
        sections = self._sections()
        for position, (number, start, _header) in enumerate(sections):
            if number != section:
                continue
            end = (
                sections[position + 1][1] if position + 1 < len(sections) else len(self._lines) + 1
            )
            for index in range(start + 1 if start else 1, end):
                if pattern.match(self._lines[index - 1]):
                    return index
        for number, line, header in sections:
            if number == -1 and (header == key or header.startswith(f"{key}.")):
                return line
        return max(self.section_line(section), 1)


class FleetSecrets(Secrets):
    """Every fleet run's secrets, for the one operational log the fleet's process writes.

    The operational log is process-wide: configured with one run's secrets, it would write
    another run's secret values (and the text it withheld) unscrubbed. Each member is a
    run's own ``Secrets``, shared with its agent, so text a run withholds later is scrubbed
    here too."""

    def __init__(self) -> None:
        super().__init__()
        self.members: list[Secrets] = []

    def add(self, secrets: Secrets) -> None:
        self.members.append(secrets)

    def __bool__(self) -> bool:
        return any(self.members)

    def scrub(self, text: str) -> str:
        for member in self.members:
            text = member.scrub(text)
        return text

    def scrub_json(self, obj: Any) -> Any:
        for member in self.members:
            obj = member.scrub_json(obj)
        return obj
