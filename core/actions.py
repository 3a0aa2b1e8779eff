"""The tools offered to the model, their JSON schemas, and parsing replies into actions.

The tool set is the same for every backend: Anthropic tool definitions here, converted by
the OpenAI-compatible backend. A reply is parsed into at most one :class:`Action`; every
tool call that is not run gets a :class:`ParseError` whose message is written for the
model (what was wrong, what to do instead) and goes back as an ``is_error`` tool result.
Nothing is coerced, guessed or silently dropped.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # Types only: importing anthropic.types costs about two seconds at start-up, which
    # every consumer of core.run.events (replay, verify) would otherwise pay.
    from anthropic.types import ToolParam, ToolResultBlockParam


@dataclass(frozen=True, slots=True)
class Action:
    """One parsed tool call. ``params`` excludes ``reason``; ``tool_use_id`` links it to the reply."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    tool_use_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "params": dict(self.params), "reason": self.reason}


# --- the tool set -----------------------------------------------------------------------

_INDEX_DOC = (
    "The element's index: the number N in `[N]` at the start of its line in the latest "
    "<browser_state> digest. Indices from older digests may no longer exist."
)
_SECRET_DOC = (
    "May contain `<secret:NAME>` placeholders; handrail replaces them with the real value "
    "at the last moment, so never ask for or guess the value itself."
)

_REASON: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "description": "One sentence: why this step, now. Shown to the person who approves it.",
}


@dataclass(frozen=True, slots=True)
class _Tool:
    name: str
    purpose: str
    """Completes 'to ... use NAME' in error messages."""
    description: str
    properties: dict[str, dict[str, Any]]
    required: tuple[str, ...]
    defaults: dict[str, Any] = field(default_factory=dict)
    """Documented defaults filled into the parsed params, so the log shows what ran."""

    def definition(self) -> ToolParam:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": {
                "type": "object",
                "properties": {**self.properties, "reason": _REASON},
                "required": [*self.required, "reason"],
                "additionalProperties": False,
            },
        }

    def takes(self) -> str:
        names = [*self.properties, "reason"]
        return ", ".join(names)


_TAB = {
    "type": "integer",
    "minimum": 0,
    "description": "The tab's number as listed in <browser_state>.",
}

_TOOLS: tuple[_Tool, ...] = (
    _Tool(
        "navigate",
        "open a URL",
        "Open a URL in the current tab. Use a full URL including https://. "
        "Prefer clicking links on the page when one leads where you need to go.",
        {"url": {"type": "string", "minLength": 1, "description": "The absolute URL to open."}},
        ("url",),
    ),
    _Tool(
        "click",
        "click an element",
        "Click an interactive element of the digest by its index (links, buttons, checkboxes, "
        "radio buttons, tabs, menu items). Elements marked `~` are outside the viewport; "
        "click scrolls to them first. Clicking a button that submits, sends, buys, books, posts "
        "or deletes is a commitment: do it only when the task explicitly asks for it. "
        "count=2 double-clicks (a file list that opens a file on double-click); "
        "button=right opens the page's context menu, read in the next digest.",
        {
            "index": {"type": "integer", "minimum": 0, "description": _INDEX_DOC},
            "count": {
                "type": "integer",
                "enum": [1, 2],
                "description": "1 clicks (default), 2 double-clicks.",
            },
            "button": {
                "type": "string",
                "enum": ["left", "right"],
                "description": "The mouse button: left (default), or right for a context menu.",
            },
        },
        ("index",),
    ),
    _Tool(
        "hover",
        "move the pointer onto an element",
        "Move the mouse pointer onto an element by its index, without clicking: for menus "
        "that open on hover and for tooltips. The result says what appeared (a submenu, a "
        "tooltip); its items are in the next digest, marked `*`. Hovering commits to "
        "nothing, but the page may react to it.",
        {"index": {"type": "integer", "minimum": 0, "description": _INDEX_DOC}},
        ("index",),
    ),
    _Tool(
        "type",
        "enter text into a field",
        "Type text into a text field, text area or editable element by its index. "
        "By default the field is cleared first and nothing is submitted. Set submit=true "
        "(press Enter afterwards) only when the task asks to submit, send or search. "
        + _SECRET_DOC,
        {
            "index": {"type": "integer", "minimum": 0, "description": _INDEX_DOC},
            "text": {"type": "string", "description": "The text to type. " + _SECRET_DOC},
            "clear": {
                "type": "boolean",
                "description": "Clear the field before typing (default true).",
            },
            "submit": {
                "type": "boolean",
                "description": "Press Enter after typing (default false). Only when the "
                "task asks to submit.",
            },
        },
        ("index", "text"),
        {"clear": True, "submit": False},
    ),
    _Tool(
        "press_key",
        "press keys",
        "Press a key or key combination in the focused element, e.g. `Enter`, `Escape`, "
        "`Tab`, `ArrowDown`, `Control+A`, `Shift+Tab`. Pressing Enter in a form may submit it: "
        "only when the task asks for it.",
        {
            "keys": {
                "type": "string",
                "minLength": 1,
                "description": "Key names joined with `+` for combinations, e.g. `Control+A`.",
            }
        },
        ("keys",),
    ),
    _Tool(
        "select_option",
        "choose an option of a <select>",
        "Choose an option of a <select> element by its index in the digest.",
        {
            "index": {"type": "integer", "minimum": 0, "description": _INDEX_DOC},
            "option": {
                "type": "string",
                "description": "The option's visible text (or its value).",
            },
        },
        ("index", "option"),
    ),
    _Tool(
        "drag",
        "drag an element or drop a file",
        "Drag with the mouse: press on element `index`, move, release on element `to` (a "
        "sortable list's item onto another's place, a card onto a board's column), or move "
        "by `dx`/`dy` CSS pixels instead of `to` (a slider's handle: the result says its new "
        "value, so a second drag can correct it). With `path` instead of `index`, drops that "
        "file from the upload folder onto `to` (a file drop zone). Both ends must be visible "
        "at once. Gated like a click, on both ends: do not drop onto buttons that commit.",
        {
            "index": {
                "type": "integer",
                "minimum": 0,
                "description": "The element to drag (what is pressed). " + _INDEX_DOC,
            },
            "to": {
                "type": "integer",
                "minimum": 0,
                "description": "The element to drop onto (released at its centre). " + _INDEX_DOC,
            },
            "dx": {
                "type": "number",
                "minimum": -4000,
                "maximum": 4000,
                "description": "Instead of `to`: how far to move right (negative: left), "
                "in CSS pixels.",
            },
            "dy": {
                "type": "number",
                "minimum": -4000,
                "maximum": 4000,
                "description": "Instead of `to`: how far to move down (negative: up), in "
                "CSS pixels.",
            },
            "path": {
                "type": "string",
                "minLength": 1,
                "description": "Instead of `index`: a file to drop, relative to the upload "
                "folder (only files the person made available).",
            },
        },
        (),
    ),
    _Tool(
        "click_at",
        "click a point of the last screenshot",
        "Click the point (x, y) of the latest screenshot, in that image's pixels: only for "
        "what has no index in the digest (a canvas, a map, an unnamed icon). Take a "
        "screenshot first. handrail names what is at that point and checks it as it checks "
        "a click on that element; prefer `click` whenever the digest lists the element.",
        {
            "x": {
                "type": "number",
                "minimum": 0,
                "description": "Pixels from the screenshot's left edge.",
            },
            "y": {
                "type": "number",
                "minimum": 0,
                "description": "Pixels from the screenshot's top edge.",
            },
        },
        ("x", "y"),
    ),
    _Tool(
        "scroll",
        "scroll",
        "Scroll to see more. Forms: `direction` up or down (with optional `pages`) scrolls "
        "the page by viewport heights. `index` of a scrolling area (a digest line such as "
        "`[12]<div scrollable>Flights</div> (3 more below: scroll{index: 12})`) scrolls that "
        "area's content toward where it has more (down first), or the way `direction` says "
        "(up, down, left or right), by `pages` of the area's visible size; the next digest "
        "shows what came into view. `index` of any other element scrolls it into view.",
        {
            "direction": {
                "type": "string",
                "enum": ["up", "down", "left", "right"],
                "description": "Which way: up or down for the page; with `index`, also left "
                "or right within a scrolling area.",
            },
            "pages": {
                "type": "number",
                "minimum": 0.25,
                "maximum": 10,
                "description": "How far: viewport heights for the page, or, with `index`, "
                "visible sizes of the scrolling area (default 1).",
            },
            "index": {
                "type": "integer",
                "minimum": 0,
                "description": "A scrolling area to scroll its content, or any other element "
                "to scroll into view. " + _INDEX_DOC,
            },
        },
        (),
    ),
    _Tool(
        "go_back",
        "go back to the previous page",
        "Go back to the previous page in this tab's history.",
        {},
        (),
    ),
    _Tool(
        "wait",
        "wait",
        "Wait for the page to finish loading or updating, then observe again.",
        {
            "seconds": {
                "type": "number",
                "minimum": 0,
                "maximum": 30,
                "description": "How long to wait, 0 to 30 seconds.",
            }
        },
        ("seconds",),
    ),
    _Tool(
        "switch_tab",
        "switch to another tab",
        "Switch to another open tab by its number in the tabs list of <browser_state>.",
        {"tab": _TAB},
        ("tab",),
    ),
    _Tool(
        "close_tab",
        "close a tab",
        "Close one of the open tabs by its number in the tabs list of <browser_state> (a tab "
        "a link opened that you are done with). The last tab cannot be closed; when the "
        "current tab closes, the one before it becomes current.",
        {"tab": _TAB},
        ("tab",),
    ),
    _Tool(
        "find_text",
        "find text on the page",
        "Find where a text appears on the whole page, beyond what the digest lists: each "
        "match is given as the element that holds it ([N]) or the text line it is in, and "
        "whether it is in view, above or below. Changes nothing.",
        {
            "text": {
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "description": "The text to look for (case and spacing are ignored).",
            }
        },
        ("text",),
    ),
    _Tool(
        "upload_file",
        "upload a file",
        "Attach a file to a file input by its index. Only files the person made available "
        "can be uploaded.",
        {
            "index": {"type": "integer", "minimum": 0, "description": _INDEX_DOC},
            "path": {
                "type": "string",
                "minLength": 1,
                "description": "The file's path, relative to the upload folder.",
            },
        },
        ("index", "path"),
    ),
    _Tool(
        "screenshot",
        "look at the page",
        "Take a screenshot of the viewport, when the digest is not enough to understand "
        "the page's layout or an image's content.",
        {},
        (),
    ),
    _Tool(
        "ask_human",
        "ask the person",
        "Stop and ask the person: for logins, one-time codes, CAPTCHAs, payment details, "
        "unclear choices, and anything you should not decide yourself. The person can act "
        "in the browser before the run continues.",
        {
            "question": {
                "type": "string",
                "minLength": 1,
                "description": "What you need from the person, in one or two sentences.",
            }
        },
        ("question",),
    ),
    _Tool(
        "finish",
        "end the task",
        "End the task: success=true when it is done, false when it cannot be done. "
        "The answer is what the person reads: the result, or why it failed.",
        {
            "success": {"type": "boolean", "description": "Whether the task was done."},
            "answer": {
                "type": "string",
                "description": "The result for the person, or why the task could not be done.",
            },
        },
        ("success", "answer"),
    ),
    _Tool(
        "run_js",
        "run JavaScript in the page",
        "Run a JavaScript expression or function body in the page and get its JSON-serialisable "
        "result. Use it only when no other tool can do the job.",
        {"code": {"type": "string", "minLength": 1, "description": "The JavaScript to run."}},
        ("code",),
    ),
)

_BY_NAME: dict[str, _Tool] = {t.name: t for t in _TOOLS}

TOOL_NAMES: tuple[str, ...] = tuple(t.name for t in _TOOLS)
"""Every tool name, ``run_js`` last."""

PAGE_CHANGING: frozenset[str] = frozenset(
    {
        "navigate",
        "click",
        "hover",
        "drag",
        "click_at",
        "type",
        "select_option",
        "press_key",
        "go_back",
        "run_js",
        "switch_tab",
        "close_tab",
        "upload_file",
    }
)
"""Tools that can change the page or the browser's state (gated by approval)."""

NO_TOOL_CALL_REMINDER = (
    "Your reply had no tool call, so nothing happened. Every reply must call exactly one "
    "tool: the next step of the task, or `finish` when the task is done or cannot be done."
)


def tool_names(*, allow_js: bool) -> tuple[str, ...]:
    return TOOL_NAMES if allow_js else tuple(n for n in TOOL_NAMES if n != "run_js")


def tool_definitions(*, allow_js: bool) -> list[ToolParam]:
    """The tools for one run, as Anthropic tool definitions (fresh dicts on every call)."""
    return [_BY_NAME[name].definition() for name in tool_names(allow_js=allow_js)]


# --- parsing ----------------------------------------------------------------------------

ONE_ACTION_PER_ROUND = (
    "Only one action per round: this call was not run. Call it again next round if it is "
    "still needed after you see the result of the first call."
)


@dataclass(frozen=True, slots=True)
class ParseError:
    """A tool call that was not run. ``message`` is written for the model."""

    tool_use_id: str | None
    message: str

    def tool_result(self) -> ToolResultBlockParam:
        """The ``is_error`` tool_result block for this call (needs a ``tool_use_id``)."""
        return {
            "type": "tool_result",
            "tool_use_id": self.tool_use_id or "",
            "content": self.message,
            "is_error": True,
        }


@dataclass(frozen=True, slots=True)
class ParsedReply:
    action: Action | None
    """The first tool call, when valid; None when there was none or it was invalid."""
    errors: tuple[ParseError, ...]
    """One per tool_use id that must get an ``is_error`` tool_result."""
    text: str
    """The model's text blocks, joined by blank lines."""
    no_tool_call: bool
    """The reply had no tool_use at all: send :data:`NO_TOOL_CALL_REMINDER`."""


def parse_reply(content: Sequence[Mapping[str, Any]], *, allow_js: bool) -> ParsedReply:
    """Parse a reply's content blocks (Anthropic shape) into at most one action.

    The first tool_use decides: it becomes the action when valid, an error when not.
    Every further tool_use gets an error saying only one action runs per round.
    """
    texts: list[str] = []
    calls: list[Mapping[str, Any]] = []
    for block in content:
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if isinstance(text, str) and text.strip():
                texts.append(text.strip())
        elif kind == "tool_use":
            calls.append(block)
    text = "\n\n".join(texts)
    if not calls:
        return ParsedReply(action=None, errors=(), text=text, no_tool_call=True)

    first, *rest = calls
    errors: list[ParseError] = []
    checked = parse_call(
        first.get("name"), first.get("input"), allow_js=allow_js, tool_use_id=_id(first)
    )
    action: Action | None = None
    if isinstance(checked, Action):
        action = checked
    else:
        errors.append(checked)
    errors.extend(ParseError(_id(call), ONE_ACTION_PER_ROUND) for call in rest)
    return ParsedReply(action=action, errors=tuple(errors), text=text, no_tool_call=False)


def parse_call(
    name: object, arguments: object, *, allow_js: bool, tool_use_id: str | None = None
) -> Action | ParseError:
    """Validate one tool call against the tool set; also for params a person edited.

    Returns the action (documented defaults filled in, ``reason`` split off) or the error.
    """

    def fail(message: str) -> ParseError:
        return ParseError(tool_use_id, message + " This call was not run.")

    valid = ", ".join(tool_names(allow_js=allow_js))
    if not isinstance(name, str) or name not in _BY_NAME:
        shown = name if isinstance(name, str) else json.dumps(name)
        close = difflib.get_close_matches(str(shown), tool_names(allow_js=allow_js), n=1)
        hint = f" Did you mean `{close[0]}`?" if close else ""
        return fail(f"There is no tool `{shown}`.{hint} The tools are: {valid}.")
    if name == "run_js" and not allow_js:
        return fail(
            "run_js is not available in this run: the person did not allow JavaScript. "
            f"Use the other tools instead: {valid}."
        )
    tool = _BY_NAME[name]
    if not isinstance(arguments, Mapping):
        return fail(
            f"The arguments of {name} must be a JSON object with {tool.takes()}; "
            f"got {_show(arguments)}."
        )

    for key in arguments:
        if key == "reason" or key in tool.properties:
            continue
        offered = tool_names(allow_js=allow_js)
        owners = [t for t in _TOOLS if key in t.properties and t.name in offered]
        if owners:
            other = owners[0]
            return fail(
                f"{name} takes {tool.takes()}; `{key}` belongs to {other.name}: "
                f"to {other.purpose}, use {other.name}."
            )
        return fail(f"`{key}` is not a parameter of {name}; {name} takes {tool.takes()}.")

    missing = [key for key in (*tool.required, "reason") if key not in arguments]
    if missing:
        listed = ", ".join(f"`{key}`" for key in missing)
        return fail(f"{name} is missing {listed}; {name} takes {tool.takes()}.")

    params: dict[str, Any] = {}
    for key, value in arguments.items():
        schema = _REASON if key == "reason" else tool.properties[key]
        checked = _check_value(name, key, value, schema)
        if isinstance(checked, str):
            return fail(checked)
        params[key] = checked[0]

    reason = params.pop("reason")
    if name == "scroll":
        problem = _scroll_form(params)
        if problem:
            return fail(problem)
        if "direction" in params:
            params.setdefault("pages", 1)
    if name == "drag":
        problem = _drag_form(params)
        if problem:
            return fail(problem)
    for key, default in tool.defaults.items():
        params.setdefault(key, default)
    return Action(name=name, params=params, reason=reason, tool_use_id=tool_use_id)


def _scroll_form(params: Mapping[str, Any]) -> str | None:
    """What is wrong with a scroll call's combination of parameters, or None."""
    if "index" in params:
        return None
    if "direction" not in params:
        return (
            "scroll needs `direction` (up or down, with optional `pages`) to scroll the page, "
            "or `index` to scroll a scrolling area or bring an element into view."
            + (" `pages` alone is not enough." if "pages" in params else " You gave neither.")
        )
    if params["direction"] in ("left", "right"):
        return (
            f"scroll {params['direction']} moves a scrolling area sideways: give its `index` "
            "too. The page itself scrolls up or down."
        )
    return None


def _drag_form(params: Mapping[str, Any]) -> str | None:
    """What is wrong with a drag call's combination of parameters, or None: one source
    (``index`` or ``path``) and one destination (``to``, or ``dx`` and ``dy``)."""
    if ("index" in params) == ("path" in params):
        return (
            "drag needs what to drag: `index` (an element of the digest) or `path` (a file "
            "from the upload folder), " + ("not both." if "index" in params else "and got neither.")
        )
    offset = "dx" in params or "dy" in params
    if "to" in params and offset:
        return "drag goes either onto an element (`to`) or by an offset (`dx`, `dy`), not both."
    if "to" not in params and not offset:
        return "drag needs where to: `to` (the element to drop onto) or `dx` and `dy`."
    if offset and "path" in params:
        return "a file is dropped onto an element: give `to`, not `dx`/`dy`."
    if offset and not ("dx" in params and "dy" in params):
        return "drag by an offset needs both `dx` and `dy` (0 for no movement that way)."
    if "index" in params and params.get("to") == params["index"]:
        return "drag's `to` is the element it starts on: drop it onto another element."
    return None


def _check_value(tool: str, key: str, value: object, schema: Mapping[str, Any]) -> tuple[Any] | str:
    """``(value,)`` when it fits the schema, otherwise an error message for the model."""
    kind = schema["type"]
    where = f"{tool}.{key}"
    if value is None:
        return (
            f"{where} is null. Leave out an optional parameter you do not use; "
            f"a required one needs a {kind}."
        )
    if kind == "integer":
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            hint = ""
            if isinstance(value, str) and value.strip().lstrip("-").isdigit():
                hint = f" Send it as a number without quotes: {value.strip()}."
            return f"{where} must be an integer, got {_show(value)}.{hint}"
    elif kind == "number":
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            return f"{where} must be a number, got {_show(value)}."
    elif kind == "boolean":
        if not isinstance(value, bool):
            return f"{where} must be true or false (a JSON boolean), got {_show(value)}."
    elif kind == "string" and not isinstance(value, str):
        return f"{where} must be a string, got {_show(value)}."

    if "enum" in schema and value not in schema["enum"]:
        allowed = " or ".join(json.dumps(v) for v in schema["enum"])
        return f"{where} must be {allowed}, got {_show(value)}."
    if isinstance(value, str) and len(value.strip()) < schema.get("minLength", 0):
        return f"{where} must not be empty."
    if isinstance(value, int | float) and not isinstance(value, bool):
        low, high = schema.get("minimum"), schema.get("maximum")
        if (low is not None and value < low) or (high is not None and value > high):
            bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
            return f"{where} must be {bounds}, got {value}."
    return (value,)


def _id(block: Mapping[str, Any]) -> str | None:
    value = block.get("id")
    return value if isinstance(value, str) else None


def _show(value: object) -> str:
    """A short description of a wrong value: its JSON and its JSON type."""
    kinds = {str: "string", bool: "boolean", int: "integer", float: "number"}
    kind = "object" if isinstance(value, Mapping) else kinds.get(type(value), "")
    if isinstance(value, list | tuple):
        kind = "array"
    if value is None:
        kind = "null"
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > 80:
        text = text[:77] + "..."
    return f"the {kind} {text}" if kind and kind != "null" else text
