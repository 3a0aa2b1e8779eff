"""Key names and combinations become the CDP key events a real keyboard would send."""

from __future__ import annotations

import pytest

from core.keys import (
    ALT,
    CONTROL,
    META,
    SHIFT,
    KeySpecError,
    char_events,
    key_events,
    parse_keys,
)


def test_enter_types_a_carriage_return() -> None:
    events = key_events(parse_keys("Enter"))
    assert [e["type"] for e in events] == ["keyDown", "keyUp"]
    assert events[0]["key"] == "Enter" and events[0]["code"] == "Enter"
    assert events[0]["windowsVirtualKeyCode"] == 13 and events[0]["text"] == "\r"


def test_control_a_does_not_type_its_letter() -> None:
    combo = parse_keys("Control+A")
    assert combo.modifiers == CONTROL and not combo.types_text
    events = key_events(combo)
    assert [(e["type"], e["key"]) for e in events] == [
        ("rawKeyDown", "Control"),
        ("rawKeyDown", "a"),
        ("keyUp", "a"),
        ("keyUp", "Control"),
    ]
    assert all("text" not in e for e in events)
    assert events[1]["code"] == "KeyA" and events[1]["windowsVirtualKeyCode"] == 65
    assert events[1]["modifiers"] == CONTROL


def test_modifier_bits_follow_cdp() -> None:
    assert (ALT, CONTROL, META, SHIFT) == (1, 2, 4, 8)
    assert parse_keys("Control+Shift+Alt+Meta+K").modifiers == 15


def test_modifier_state_builds_up_and_down() -> None:
    events = key_events(parse_keys("Control+Shift+Z"))
    assert [(e["type"], e["key"], e["modifiers"]) for e in events] == [
        ("rawKeyDown", "Control", CONTROL),
        ("rawKeyDown", "Shift", CONTROL | SHIFT),
        ("rawKeyDown", "Z", CONTROL | SHIFT),
        ("keyUp", "Z", CONTROL | SHIFT),
        ("keyUp", "Shift", CONTROL),
        ("keyUp", "Control", 0),
    ]


def test_shift_tab_is_a_tab_with_shift() -> None:
    events = key_events(parse_keys("Shift+Tab"))
    tab = events[1]
    assert tab["key"] == "Tab" and tab["windowsVirtualKeyCode"] == 9 and tab["modifiers"] == SHIFT
    assert "text" not in tab


def test_meta_k_and_aliases() -> None:
    assert parse_keys("Meta+K") == parse_keys("cmd+k")
    assert parse_keys("Ctrl+a").spec == "Control+A"
    assert parse_keys("esc").spec == "Escape"
    assert parse_keys("Return").spec == "Enter"
    assert parse_keys("up").key.key == "ArrowUp"


@pytest.mark.parametrize(
    ("name", "key", "code", "vk"),
    [
        ("Escape", "Escape", "Escape", 27),
        ("Backspace", "Backspace", "Backspace", 8),
        ("Delete", "Delete", "Delete", 46),
        ("ArrowLeft", "ArrowLeft", "ArrowLeft", 37),
        ("ArrowDown", "ArrowDown", "ArrowDown", 40),
        ("PageDown", "PageDown", "PageDown", 34),
        ("Home", "Home", "Home", 36),
        ("F1", "F1", "F1", 112),
        ("F12", "F12", "F12", 123),
        ("Space", " ", "Space", 32),
    ],
)
def test_named_keys(name: str, key: str, code: str, vk: int) -> None:
    down = key_events(parse_keys(name))[0]
    assert (down["key"], down["code"], down["windowsVirtualKeyCode"]) == (key, code, vk)


def test_shift_changes_the_character() -> None:
    events = key_events(parse_keys("Shift+1"))
    assert events[1]["key"] == "!" and events[1]["text"] == "!" and events[1]["code"] == "Digit1"


def test_punctuation_needs_its_shift() -> None:
    combo = parse_keys("?")
    assert combo.modifiers == SHIFT and combo.spec == "?"
    down = key_events(combo)[1]
    assert down["code"] == "Slash" and down["text"] == "?"


def test_plus_is_a_key_too() -> None:
    assert parse_keys("+").key.code == "Equal"
    combo = parse_keys("Control++")
    assert combo.modifiers & CONTROL and combo.key.code == "Equal"


def test_lone_capital_letter_types_the_capital() -> None:
    combo = parse_keys("A")
    assert combo.types_text and combo.modifiers == SHIFT
    assert key_events(combo)[1]["text"] == "A"


def test_unknown_key_is_explained() -> None:
    with pytest.raises(KeySpecError) as err:
        parse_keys("Control+Banana")
    assert "unknown key 'Banana'" in str(err.value) and "type tool" in str(err.value)


def test_a_key_in_modifier_position_is_explained() -> None:
    with pytest.raises(KeySpecError) as err:
        parse_keys("A+B")
    assert "not a modifier" in str(err.value)


@pytest.mark.parametrize("spec", ["", "   ", "Control+", "+Control+A"])
def test_malformed_combinations_are_refused(spec: str) -> None:
    with pytest.raises(KeySpecError):
        parse_keys(spec)


def test_mac_editing_shortcuts_name_their_command() -> None:
    events = key_events(parse_keys("Meta+A"), mac=True)
    assert events[1]["commands"] == ["selectAll"]
    assert "commands" not in key_events(parse_keys("Meta+A"))[1]


def test_char_events_cover_a_us_keyboard() -> None:
    assert [e["text"] for e in char_events("a") or [] if "text" in e] == ["a"]
    upper = char_events("Q") or []
    assert upper[0]["key"] == "Shift" and upper[1]["text"] == "Q"
    assert char_events("é") is None and char_events("😀") is None
    newline = char_events("\n") or []
    assert newline[0]["key"] == "Enter"
