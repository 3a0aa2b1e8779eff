"""A scripted plan: a JSONL file of tool calls replayed in order. Not a model.

Each line is one call, ``{"tool": "click", "input": {"index": 12}}``, optionally with
``"reason"``. Instead of an index a line may name its target by text,
``{"tool": "click", "target": "Book now"}``: the text is looked up in the digest of the
latest ``<browser_state>`` and the call gets that element's index, so the plan survives
layout changes and takes the same path through gates, hands and log as a model's reply.
Blank lines and lines starting with ``//`` or ``#`` are ignored. When the plan runs out
it calls ``finish`` with ``success: false``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.actions import Action, parse_call
from core.model.base import ModelConfigError, ModelError, ModelReply

if TYPE_CHECKING:
    from anthropic.types import MessageParam, ToolParam

PLAN_ENDED_ANSWER = "scripted plan ended"

# [12]<button type=submit>Book now</button>, optionally prefixed by * (new) or ~ (off-screen);
# anything after the closing tag (a state note) is not part of the name.
_ELEMENT = re.compile(
    r"""^\s*(?P<marks>[*~]*)\s*\[(?P<index>\d+)\]
    <(?P<tag>[A-Za-z][\w-]*)(?P<attrs>(?:[^>"]|"[^"]*")*)>
    (?P<name>.*?)
    (?:</(?P=tag)>.*)?$""",
    re.VERBOSE,
)
_STATE = re.compile(r"<browser_state>(.*?)(?:</browser_state>|\Z)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class PlanStep:
    line: int
    tool: str
    input: dict[str, Any]
    reason: str | None = None
    target: str | None = None


@dataclass(frozen=True, slots=True)
class DigestElement:
    index: int
    tag: str
    attrs: str
    name: str
    offscreen: bool = False
    line: str = field(default="", compare=False)


def load_plan(path: Path) -> tuple[PlanStep, ...]:
    """Read and validate a plan file. Raises :class:`ModelConfigError` naming the bad line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ModelConfigError(f"Cannot read the scripted plan {path}: {err.strerror}.") from err
    steps: list[PlanStep] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith(("//", "#")):
            continue
        steps.append(_parse_step(path, number, stripped))
    return tuple(steps)


def _parse_step(path: Path, number: int, text: str) -> PlanStep:
    def bad(message: str) -> ModelConfigError:
        return ModelConfigError(f"{path}:{number}: {message}")

    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise bad(
            f"not JSON ({err.msg}). Each line is one object like "
            '{"tool": "click", "target": "Book now"}.'
        ) from err
    if not isinstance(data, dict):
        raise bad('each line must be a JSON object like {"tool": "click", "input": {...}}.')
    unknown = set(data) - {"tool", "input", "target", "reason"}
    if unknown:
        raise bad(f"unknown keys {sorted(unknown)}; a line has tool, input, target, reason.")
    tool, arguments = data.get("tool"), data.get("input", {})
    target, reason = data.get("target"), data.get("reason")
    if not isinstance(arguments, dict):
        raise bad('"input" must be an object.')
    if target is not None and (not isinstance(target, str) or not target.strip()):
        raise bad('"target" must be the text of the element to act on.')
    if target is not None and "index" in arguments:
        raise bad('give either "target" or input.index, not both.')
    if reason is not None and not isinstance(reason, str):
        raise bad('"reason" must be a string.')
    # Validate now, so a broken plan stops before the browser starts.
    trial = {**arguments, "reason": reason or "check"}
    if target is not None:
        trial["index"] = 0
    checked = parse_call(tool, trial, allow_js=True)
    if not isinstance(checked, Action):
        raise bad(checked.message.removesuffix(" This call was not run."))
    assert isinstance(tool, str)
    return PlanStep(number, tool, dict(arguments), reason, target)


def parse_digest(state: str) -> list[DigestElement]:
    """The interactive elements of a ``<browser_state>`` digest, in reading order."""
    found: list[DigestElement] = []
    for line in state.splitlines():
        match = _ELEMENT.match(line)
        if match:
            found.append(
                DigestElement(
                    index=int(match["index"]),
                    tag=match["tag"],
                    attrs=match["attrs"].strip(),
                    name=match["name"].strip(),
                    offscreen="~" in match["marks"],
                    line=line.strip(),
                )
            )
    return found


def resolve_target(target: str, elements: Sequence[DigestElement]) -> DigestElement | None:
    """The element a plan's target text means, case-insensitively.

    Preference: the accessible name equals the text; then the name contains it; then an
    attribute contains it. Within a tier, an element in the viewport, then reading order.
    """
    want = _norm(target)
    tiers: tuple[list[DigestElement], list[DigestElement], list[DigestElement]] = ([], [], [])
    for element in elements:
        name = _norm(element.name)
        if name == want:
            tiers[0].append(element)
        elif want in name:
            tiers[1].append(element)
        elif want in _norm(element.attrs):
            tiers[2].append(element)
    for tier in tiers:
        if tier:
            return min(tier, key=lambda e: e.offscreen)  # min is stable: first wins
    return None


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def latest_browser_state(messages: Sequence[MessageParam]) -> str | None:
    """The text of the last ``<browser_state>`` in the last user message, if any."""
    for message in reversed(messages):
        msg: Mapping[str, Any] = message
        if msg.get("role") != "user":
            continue
        texts = list(_texts(msg.get("content")))
        for text in reversed(texts):
            states = _STATE.findall(text)
            if states:
                return str(states[-1])
        return None
    return None


def _texts(content: Any) -> Sequence[str]:
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    for block in content or ():
        if block.get("type") == "text":
            out.append(block.get("text", ""))
        elif block.get("type") == "tool_result":
            out.extend(_texts(block.get("content", "")))
    return out


class ScriptedPlan:
    """Replays a plan file. Its label says "scripted plan"; it never claims to be a model."""

    vision = False

    def __init__(self, path: Path | str) -> None:
        """Loads and validates the plan; raises :class:`ModelConfigError`."""
        self.path = Path(path)
        self.label = f"scripted plan: {self.path.name}"
        self.steps = load_plan(self.path)
        self._next = 0

    async def check(self) -> None:
        """The plan was read and validated when this object was made."""

    async def reply(
        self, *, system: str, messages: Sequence[MessageParam], tools: Sequence[ToolParam]
    ) -> ModelReply:
        """The next step as a tool_use; ``finish`` (unsuccessful) when the plan ran out.

        Raises :class:`ModelError` when a step's target text is not in the latest digest.
        """
        number = self._next + 1
        if self._next >= len(self.steps):
            self._next += 1
            block = _tool_use(
                number,
                "finish",
                {"success": False, "answer": PLAN_ENDED_ANSWER},
                "The scripted plan has no more steps.",
            )
            return ModelReply(content=(block,), stop_reason="tool_use")
        step = self.steps[self._next]
        self._next += 1
        arguments = dict(step.input)
        if step.target is not None:
            arguments["index"] = self._resolve(step, messages)
        reason = step.reason or f"Step {number} of the scripted plan."
        block = _tool_use(number, step.tool, arguments, reason)
        return ModelReply(content=(block,), stop_reason="tool_use")

    def _resolve(self, step: PlanStep, messages: Sequence[MessageParam]) -> int:
        assert step.target is not None
        where = f"{self.path.name}:{step.line}"
        state = latest_browser_state(messages)
        if state is None:
            raise ModelError(
                f"Scripted plan {where} targets {step.target!r}, but the latest message has no "
                "<browser_state> to look it up in."
            )
        elements = parse_digest(state)
        element = resolve_target(step.target, elements)
        if element is None:
            names = ", ".join(repr(e.name) for e in elements[:15] if e.name)
            raise ModelError(
                f"Scripted plan {where}: no element matching {step.target!r} on the page "
                f"({len(elements)} interactive elements"
                + (f", e.g. {names}" if names else "")
                + "). The page may not be the one the plan expects; fix the plan's target."
            )
        return element.index


def _tool_use(number: int, tool: str, arguments: dict[str, Any], reason: str) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": f"toolu_plan_{number:03d}",
        "name": tool,
        "input": {**arguments, "reason": reason},
    }
