"""Key names and combinations → the parameters of CDP ``Input.dispatchKeyEvent``.

A combination is written the way people write shortcuts: ``Enter``, ``Control+A``,
``Shift+Tab``, ``Meta+K``, ``Control+Shift+ArrowLeft``, ``F5``, ``a``, ``+`` or
``Control++``. Modifier and key names are case-insensitive and accept the usual aliases
(``Ctrl``, ``Cmd``, ``Option``, ``Esc``, ``Up``, ``Return``...).

:func:`parse_keys` turns the text into a :class:`KeyCombo`, and :func:`key_events` into the
ordered list of ``Input.dispatchKeyEvent`` parameter dicts: modifiers pressed, the key
pressed and released, modifiers released. A combination that holds Control, Alt or Meta
never types its character (``Control+A`` selects, it does not insert "a"): the key goes
down as ``rawKeyDown`` without ``text``. Shift alone changes the character (``Shift+a``
types "A").

The layout is US English; characters outside it are typed as text by the caller
(``Input.insertText``), not as key presses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# CDP's modifiers bitmask.
ALT = 1
CONTROL = 2
META = 4
SHIFT = 8


class KeySpecError(ValueError):
    """The key text names no key we know. The message is written for the model."""


@dataclass(frozen=True, slots=True)
class Key:
    """One physical key: DOM ``key`` and ``code``, Windows virtual key code, typed text."""

    key: str
    code: str
    key_code: int
    text: str = ""
    location: int = 0
    shifted_key: str | None = None
    """What ``key`` (and the typed text) becomes with Shift held, for printable keys."""


@dataclass(frozen=True, slots=True)
class KeyCombo:
    """Modifiers held (bitmask) while ``key`` is pressed; ``key`` may itself be a modifier."""

    modifiers: int
    key: Key
    spec: str
    """The combination as normalised, e.g. ``Control+Shift+A``."""

    @property
    def types_text(self) -> bool:
        """Whether the key press inserts a character into a focused field."""
        return bool(self.key.text) and not self.modifiers & (CONTROL | ALT | META)


_MODIFIER_KEYS: dict[int, Key] = {
    SHIFT: Key("Shift", "ShiftLeft", 16, location=1),
    CONTROL: Key("Control", "ControlLeft", 17, location=1),
    ALT: Key("Alt", "AltLeft", 18, location=1),
    META: Key("Meta", "MetaLeft", 91, location=1),
}
# Pressed in this order, released in reverse (the order people's fingers use).
# Keys that move the focus or leave a field (lowercase specs): allowed even when a password,
# code or card field has the focus, since they type nothing into it.
MOVING_KEYS = frozenset(
    {"tab", "shift+tab", "escape", "enter", "return", "arrowup", "arrowdown", "pageup", "pagedown"}
)

_MODIFIER_ORDER = (CONTROL, ALT, META, SHIFT)
_MODIFIER_NAMES = {SHIFT: "Shift", CONTROL: "Control", ALT: "Alt", META: "Meta"}

_MODIFIER_ALIASES: dict[str, int] = {
    "shift": SHIFT,
    "control": CONTROL,
    "ctrl": CONTROL,
    "ctl": CONTROL,
    "alt": ALT,
    "option": ALT,
    "opt": ALT,
    "meta": META,
    "cmd": META,
    "command": META,
    "super": META,
    "win": META,
    "windows": META,
}

_NAMED: dict[str, Key] = {
    "enter": Key("Enter", "Enter", 13, text="\r"),
    "tab": Key("Tab", "Tab", 9),
    "backspace": Key("Backspace", "Backspace", 8),
    "delete": Key("Delete", "Delete", 46),
    "escape": Key("Escape", "Escape", 27),
    "insert": Key("Insert", "Insert", 45),
    "home": Key("Home", "Home", 36),
    "end": Key("End", "End", 35),
    "pageup": Key("PageUp", "PageUp", 33),
    "pagedown": Key("PageDown", "PageDown", 34),
    "arrowleft": Key("ArrowLeft", "ArrowLeft", 37),
    "arrowup": Key("ArrowUp", "ArrowUp", 38),
    "arrowright": Key("ArrowRight", "ArrowRight", 39),
    "arrowdown": Key("ArrowDown", "ArrowDown", 40),
    "space": Key(" ", "Space", 32, text=" "),
    "contextmenu": Key("ContextMenu", "ContextMenu", 93),
    "capslock": Key("CapsLock", "CapsLock", 20),
    "pause": Key("Pause", "Pause", 19),
    "printscreen": Key("PrintScreen", "PrintScreen", 44),
    "scrolllock": Key("ScrollLock", "ScrollLock", 145),
    "numlock": Key("NumLock", "NumLock", 144),
}
for _n in range(1, 25):
    _NAMED[f"f{_n}"] = Key(f"F{_n}", f"F{_n}", 111 + _n)

_ALIASES: dict[str, str] = {
    "return": "enter",
    "esc": "escape",
    "del": "delete",
    "ins": "insert",
    "left": "arrowleft",
    "up": "arrowup",
    "right": "arrowright",
    "down": "arrowdown",
    "pgup": "pageup",
    "pgdn": "pagedown",
    "pgdown": "pagedown",
    "spacebar": "space",
    "menu": "contextmenu",
    "bksp": "backspace",
}

# US layout printable keys: unshifted char → (code, virtual key code, shifted char).
_PRINTABLE: dict[str, tuple[str, int, str]] = {
    "`": ("Backquote", 192, "~"),
    "-": ("Minus", 189, "_"),
    "=": ("Equal", 187, "+"),
    "[": ("BracketLeft", 219, "{"),
    "]": ("BracketRight", 221, "}"),
    "\\": ("Backslash", 220, "|"),
    ";": ("Semicolon", 186, ":"),
    "'": ("Quote", 222, '"'),
    ",": ("Comma", 188, "<"),
    ".": ("Period", 190, ">"),
    "/": ("Slash", 191, "?"),
    "0": ("Digit0", 48, ")"),
    "1": ("Digit1", 49, "!"),
    "2": ("Digit2", 50, "@"),
    "3": ("Digit3", 51, "#"),
    "4": ("Digit4", 52, "$"),
    "5": ("Digit5", 53, "%"),
    "6": ("Digit6", 54, "^"),
    "7": ("Digit7", 55, "&"),
    "8": ("Digit8", 56, "*"),
    "9": ("Digit9", 57, "("),
}
for _c in "abcdefghijklmnopqrstuvwxyz":
    _PRINTABLE[_c] = (f"Key{_c.upper()}", ord(_c.upper()), _c.upper())
_SHIFTED_TO_BASE = {shifted: base for base, (_, _, shifted) in _PRINTABLE.items()}


def _char_key(char: str) -> tuple[Key, bool]:
    """The key for a printable character and whether Shift is needed to produce it."""
    if char in _PRINTABLE:
        code, vk, shifted = _PRINTABLE[char]
        return Key(char, code, vk, text=char, shifted_key=shifted), False
    base = _SHIFTED_TO_BASE[char]
    code, vk, shifted = _PRINTABLE[base]
    return Key(base, code, vk, text=base, shifted_key=shifted), True


def _known_names() -> str:
    return (
        "Enter, Tab, Escape, Backspace, Delete, Space, ArrowUp/Down/Left/Right, Home, End, "
        "PageUp, PageDown, F1-F24, a letter, digit or punctuation character"
    )


def _parse_key(name: str, whole: str) -> tuple[Key, int]:
    """A key name → (key, modifiers it implies: Shift for "A" or "!")."""
    lowered = name.lower()
    if lowered in _MODIFIER_ALIASES:
        bit = _MODIFIER_ALIASES[lowered]
        return _MODIFIER_KEYS[bit], bit
    lowered = _ALIASES.get(lowered, lowered)
    if lowered in _NAMED:
        return _NAMED[lowered], 0
    if len(name) == 1:
        if name.isalpha() and name.isascii() and name.isupper():
            key, _ = _char_key(name.lower())
            # A capital letter on its own types the capital, as a person would with Shift.
            return key, SHIFT
        if name in _PRINTABLE or name in _SHIFTED_TO_BASE:
            key, needs_shift = _char_key(name)
            return key, SHIFT if needs_shift else 0
    raise KeySpecError(
        f"unknown key {name!r} in {whole!r}. Use one of: {_known_names()}; "
        "combine with Control, Shift, Alt or Meta using '+', e.g. 'Control+A' or 'Shift+Tab'. "
        "To enter text, use the type tool instead."
    )


def parse_keys(spec: str) -> KeyCombo:
    """Parse one combination such as ``Control+Shift+K``. Raises :class:`KeySpecError`."""
    text = spec.strip()
    if not text:
        raise KeySpecError(
            "no key given: name a key such as 'Enter' or a combination such as 'Control+A'"
        )
    # "+" is both the separator and a key: "+" and "Control++" mean the plus key.
    if text == "+":
        parts = ["+"]
    elif text.endswith("++"):
        parts = [*text[:-2].split("+"), "+"]
    else:
        parts = text.split("+")
    parts = [p.strip() for p in parts]
    if any(not p for p in parts):
        raise KeySpecError(
            f"malformed key combination {spec!r}: write modifiers and one key joined by '+', "
            "e.g. 'Control+A'"
        )
    *modifier_names, key_name = parts
    modifiers = 0
    for name in modifier_names:
        bit = _MODIFIER_ALIASES.get(name.lower())
        if bit is None:
            raise KeySpecError(
                f"{name!r} in {spec!r} is not a modifier: only the last part of a combination is "
                "the key; modifiers are Control, Shift, Alt and Meta (one key per press_key call)"
            )
        modifiers |= bit
    key, implied = _parse_key(key_name, spec)
    # A capital letter inside a shortcut ("Control+A") names the key, not Shift+A.
    if implied == SHIFT and key_name.isalpha() and modifiers & (CONTROL | ALT | META):
        implied = 0
    if key.key in ("Shift", "Control", "Alt", "Meta"):
        implied = 0
    modifiers |= implied
    shown_modifiers = modifiers
    if implied == SHIFT and not key_name.isalpha():
        # "!" is written as itself, not as "Shift+1".
        shown_modifiers &= ~SHIFT
    names = [_MODIFIER_NAMES[bit] for bit in _MODIFIER_ORDER if shown_modifiers & bit]
    if key.key not in names:
        names.append(_display_name(key, modifiers, implied_shift=implied == SHIFT))
    return KeyCombo(modifiers=modifiers, key=key, spec="+".join(names))


def _display_name(key: Key, modifiers: int, *, implied_shift: bool) -> str:
    if key.key == " ":
        return "Space"
    if len(key.key) == 1:
        if key.key.isalpha():
            # "a" alone is lower case; in a shortcut the key is written in capitals.
            return key.key.upper() if modifiers else key.key
        if implied_shift and key.shifted_key:
            return key.shifted_key
    return key.key


def _event(
    kind: str, key: Key, modifiers: int, *, with_text: bool, commands: list[str] | None = None
) -> dict[str, Any]:
    shifted = bool(modifiers & SHIFT) and key.shifted_key is not None
    dom_key = key.shifted_key if shifted and key.shifted_key is not None else key.key
    params: dict[str, Any] = {
        "type": kind,
        "key": dom_key,
        "code": key.code,
        "windowsVirtualKeyCode": key.key_code,
        "nativeVirtualKeyCode": key.key_code,
        "modifiers": modifiers,
    }
    if key.location:
        params["location"] = key.location
    if with_text:
        text = dom_key if key.shifted_key is not None else key.text
        params["text"] = text
        params["unmodifiedText"] = text
    if commands:
        params["commands"] = commands
    return params


# Editing shortcuts that macOS Chrome handles in the browser process (its menus), so a key
# event sent over CDP does not trigger them unless the editing command is named.
_MAC_COMMANDS: dict[tuple[int, str], str] = {
    (META, "KeyA"): "selectAll",
    (META, "KeyC"): "copy",
    (META, "KeyX"): "cut",
    (META, "KeyV"): "paste",
    (META, "KeyZ"): "undo",
    (META | SHIFT, "KeyZ"): "redo",
}


def key_events(combo: KeyCombo, *, mac: bool = False) -> list[dict[str, Any]]:
    """The ``Input.dispatchKeyEvent`` parameter dicts for one press of ``combo``, in order.

    ``mac``: the browser runs on macOS, where editing shortcuts (Meta+A...) need their
    editing command named explicitly.
    """
    events: list[dict[str, Any]] = []
    held = 0
    for bit in _MODIFIER_ORDER:
        if combo.modifiers & bit and _MODIFIER_KEYS[bit].key != combo.key.key:
            held |= bit
            events.append(_event("rawKeyDown", _MODIFIER_KEYS[bit], held, with_text=False))
    commands = None
    if mac:
        command = _MAC_COMMANDS.get((combo.modifiers, combo.key.code))
        commands = [command] if command else None
    typed = combo.types_text
    events.append(
        _event(
            "keyDown" if typed else "rawKeyDown",
            combo.key,
            combo.modifiers,
            with_text=typed,
            commands=commands,
        )
    )
    events.append(_event("keyUp", combo.key, combo.modifiers, with_text=False))
    for bit in reversed(_MODIFIER_ORDER):
        if held & bit:
            held &= ~bit
            events.append(_event("keyUp", _MODIFIER_KEYS[bit], held, with_text=False))
    return events


def char_events(char: str) -> list[dict[str, Any]] | None:
    """Key events that type one character on a US layout, or None when no key types it
    (the caller inserts such characters as text)."""
    if char == "\n":
        return key_events(parse_keys("Enter"))
    if char == " ":
        return key_events(parse_keys("Space"))
    if char == "\t":
        return None
    if char in _PRINTABLE or char in _SHIFTED_TO_BASE:
        key, needs_shift = _char_key(char)
        return key_events(KeyCombo(SHIFT if needs_shift else 0, key, char))
    return None


def pastes(combo: KeyCombo) -> bool:
    """Whether the combination pastes the clipboard into the focused field: Control+V or
    Meta+V (with Shift too: "paste as plain text"), or Shift+Insert."""
    if combo.key.code == "KeyV":
        return bool(combo.modifiers & (CONTROL | META))
    return combo.key.code == "Insert" and bool(combo.modifiers & SHIFT)
