"""A scripted plan: a JSONL file of tool calls replayed in order. Not a model.

Each line is one call, ``{"tool": "click", "input": {"index": 12}}``, optionally with
``"reason"``. Instead of an index a line may name its target by text,
``{"tool": "click", "target": "Book now"}``: the text is looked up in the digest of the
latest ``<browser_state>`` and the call gets that element's index, so the plan survives
layout changes and takes the same path through gates, hands and log as a model's reply.
A drag names its destination the same way, ``"to_target"`` (it becomes ``input.to``).
Blank lines and lines starting with ``//`` or ``#`` are ignored. When the plan runs out
it calls ``finish`` with ``success: false``.

A line may say what happens when the person denies it, ``"on_deny"``:

- ``"ask"`` (the default): the next reply is ``ask_human`` naming the denied step, so the
  run pauses with a clear message; on resume the plan goes on with its next step;
- ``"skip"``: go on with the next step;
- ``"finish"``: ``finish`` unsuccessfully, saying which step was denied;
- an object, one alternative step (``tool``/``input``/``target``/``reason``), run instead.

A denial is read from the step's tool result (it begins with
:data:`core.result.DENIED_BY_PERSON`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.actions import Action, parse_call
from core.model.base import ModelConfigError, ModelError, ModelReply
from core.result import DENIED_BY_PERSON

if TYPE_CHECKING:
    from anthropic.types import MessageParam, ToolParam

PLAN_ENDED_ANSWER = "scripted plan ended"

# [12]<button type=submit>Book now</button>, optionally prefixed by * (new) or ~ (off-screen);
# anything after the closing tag (a state note) is not part of the name.
ELEMENT_LINE = re.compile(
    r"""^\s*(?P<marks>[*~]*)\s*\[(?P<index>\d+)\]
    <(?P<tag>[A-Za-z][\w-]*)(?P<attrs>(?:[^>"]|"[^"]*")*)>
    (?P<name>.*?)
    (?:</(?P=tag)>.*)?$""",
    re.VERBOSE,
)
# A table row is one line, its cells joined by " | ": an element may start any cell.
CELL_SEPARATOR = " | "


def element_matches(line: str) -> list[re.Match[str]]:
    """The element lines in one digest line: the line itself, or each cell of a table row
    that starts with an element."""
    whole = ELEMENT_LINE.match(line)
    if CELL_SEPARATOR not in line:
        return [whole] if whole else []
    found = [m for m in map(ELEMENT_LINE.match, line.split(CELL_SEPARATOR)) if m]
    if whole and not (found and found[0]["index"] == whole["index"]):
        found.insert(0, whole)
    return found


_STATE = re.compile(r"<browser_state>(.*?)(?:</browser_state>|\Z)", re.DOTALL)


ON_DENY_WORDS = ("ask", "skip", "finish")


@dataclass(frozen=True, slots=True)
class PlanStep:
    line: int
    tool: str
    input: dict[str, Any]
    reason: str | None = None
    target: str | None = None
    on_deny: str | PlanStep = "ask"
    """One of :data:`ON_DENY_WORDS`, or the alternative step to run instead."""
    to_target: str | None = None
    """A drag's destination by its text (becomes ``input.to``)."""

    def describe(self) -> str:
        """``click "Book now"`` / ``type [12]``: the step as a person recognises it."""
        if self.target is not None:
            return f"{self.tool} {self.target!r}"
        index = self.input.get("index")
        return f"{self.tool} [{index}]" if index is not None else self.tool


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
    return _step_from(data, number, bad, nested=False)


def _step_from(
    data: dict[str, Any], number: int, bad: Callable[[str], ModelConfigError], *, nested: bool
) -> PlanStep:
    keys = {"tool", "input", "target", "to_target", "reason"} | (set() if nested else {"on_deny"})
    unknown = set(data) - keys
    if unknown:
        where = "an on_deny step" if nested else "a line"
        raise bad(f"unknown keys {sorted(unknown)}; {where} has {', '.join(sorted(keys))}.")
    on_deny: str | PlanStep = "ask"
    if "on_deny" in data:
        choice = data["on_deny"]
        if isinstance(choice, dict):
            on_deny = _step_from(choice, number, bad, nested=True)
        elif choice in ON_DENY_WORDS:
            on_deny = choice
        else:
            raise bad(
                f'"on_deny" must be "ask", "skip", "finish" or one step as an object '
                f"(got {choice!r})."
            )
    tool, arguments = data.get("tool"), data.get("input", {})
    target, reason = data.get("target"), data.get("reason")
    if not isinstance(arguments, dict):
        raise bad('"input" must be an object.')
    if target is not None and (not isinstance(target, str) or not target.strip()):
        raise bad('"target" must be the text of the element to act on.')
    if target is not None and "index" in arguments:
        raise bad('give either "target" or input.index, not both.')
    to_target = data.get("to_target")
    if to_target is not None and (not isinstance(to_target, str) or not to_target.strip()):
        raise bad('"to_target" must be the text of the element to drag onto.')
    if to_target is not None and "to" in arguments:
        raise bad('give either "to_target" or input.to, not both.')
    if reason is not None and not isinstance(reason, str):
        raise bad('"reason" must be a string.')
    # Validate now, so a broken plan stops before the browser starts.
    trial = {**arguments, "reason": reason or "check"}
    if target is not None:
        trial["index"] = 0
    if to_target is not None:
        trial["to"] = 1
    checked = parse_call(tool, trial, allow_js=True)
    if not isinstance(checked, Action):
        raise bad(checked.message.removesuffix(" This call was not run."))
    assert isinstance(tool, str)
    return PlanStep(number, tool, dict(arguments), reason, target, on_deny, to_target)


def parse_digest(state: str) -> list[DigestElement]:
    """The interactive elements of a ``<browser_state>`` digest, in reading order."""
    found: list[DigestElement] = []
    for line in state.splitlines():
        for match in element_matches(line):
            found.append(
                DigestElement(
                    index=int(match["index"]),
                    tag=match["tag"],
                    attrs=match["attrs"].strip(),
                    name=match["name"].strip(),
                    offscreen="~" in match["marks"],
                    line=match.string.strip(),
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
        texts = list(block_texts(msg.get("content")))
        for text in reversed(texts):
            states = _STATE.findall(text)
            if states:
                return str(states[-1])
        return None
    return None


def block_texts(content: Any) -> Sequence[str]:
    """The text of a message's content: a string, or its text blocks and tool results."""
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    for block in content or ():
        if block.get("type") == "text":
            out.append(block.get("text", ""))
        elif block.get("type") == "tool_result":
            out.extend(block_texts(block.get("content", "")))
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
        self._calls = 0
        self._last: tuple[str, PlanStep] | None = None
        """The tool_use id and step of the last call, to see whether it was denied."""

    async def check(self) -> None:
        """The plan was read and validated when this object was made."""

    async def reply(
        self,
        *,
        system: str,
        messages: Sequence[MessageParam],
        tools: Sequence[ToolParam],
        on_text: Callable[[str], None] | None = None,
    ) -> ModelReply:
        """The next step as a tool_use; ``finish`` (unsuccessful) when the plan ran out.

        Raises :class:`ModelError` when a step's target text is not in the latest digest.
        """
        denied = self._denied_step(messages)
        if denied is not None and denied.on_deny != "skip":
            return self._after_denial(denied, messages)
        number = self._next + 1
        if self._next >= len(self.steps):
            self._next += 1
            return self._call(
                "finish",
                {"success": False, "answer": PLAN_ENDED_ANSWER},
                "The scripted plan has no more steps.",
            )
        step = self.steps[self._next]
        self._next += 1
        return self._run_step(step, number, messages)

    def _run_step(
        self, step: PlanStep, number: int, messages: Sequence[MessageParam]
    ) -> ModelReply:
        arguments = dict(step.input)
        if step.target is not None:
            arguments["index"] = self._resolve(step, messages, step.target)
        if step.to_target is not None:
            arguments["to"] = self._resolve(step, messages, step.to_target)
        reason = step.reason or f"Step {number} of the scripted plan."
        return self._call(step.tool, arguments, reason, step)

    def _call(
        self, tool: str, arguments: dict[str, Any], reason: str, step: PlanStep | None = None
    ) -> ModelReply:
        self._calls += 1
        block = _tool_use(self._calls, tool, arguments, reason)
        self._last = (block["id"], step) if step is not None else None
        return ModelReply(content=(block,), stop_reason="tool_use")

    def _denied_step(self, messages: Sequence[MessageParam]) -> PlanStep | None:
        """The step the last call ran, when its result says the person denied it."""
        if self._last is None:
            return None
        tool_use_id, step = self._last
        if not messages:
            return None
        last: Mapping[str, Any] = messages[-1]
        content = last.get("content")
        if last.get("role") != "user" or isinstance(content, str):
            return None
        for block in content or ():
            if block.get("type") == "tool_result" and block.get("tool_use_id") == tool_use_id:
                # "Failed (error): the person denied this action (...)" (format_result);
                # only the first line is the agent's verdict, later ones may quote the page.
                lines = "\n".join(block_texts(block.get("content", ""))).strip().splitlines()
                verdict = lines[0].partition(": ")[2] if lines else ""
                return step if verdict.startswith(DENIED_BY_PERSON) else None
        return None

    def _after_denial(self, step: PlanStep, messages: Sequence[MessageParam]) -> ModelReply:
        where = f"step {step.line} ({step.describe()})"
        if isinstance(step.on_deny, PlanStep):
            alternative = step.on_deny
            reason = alternative.reason or f"You denied {where}; the plan's alternative."
            return self._run_step(replace(alternative, reason=reason), step.line, messages)
        if step.on_deny == "finish":
            return self._call(
                "finish",
                {
                    "success": False,
                    "answer": f"The scripted plan stopped: you denied {where}, and the plan "
                    "has no other way to go on.",
                },
                f"You denied {where}; the plan ends there.",
            )
        return self._call(
            "ask_human",
            {
                "question": f"You denied {where}, and the scripted plan has no other way. "
                "Do that step yourself in the browser and resume to go on with the plan's "
                "next step, or abort the run."
            },
            f"You denied {where}; the plan cannot go on without it.",
        )

    def _resolve(self, step: PlanStep, messages: Sequence[MessageParam], target: str) -> int:
        where = f"{self.path.name}:{step.line}"
        state = latest_browser_state(messages)
        if state is None:
            raise ModelError(
                f"Scripted plan {where} targets {target!r}, but the latest message has no "
                "<browser_state> to look it up in."
            )
        elements = parse_digest(state)
        element = resolve_target(target, elements)
        if element is None:
            names = ", ".join(repr(e.name) for e in elements[:15] if e.name)
            raise ModelError(
                f"Scripted plan {where}: no element matching {target!r} on the page "
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
