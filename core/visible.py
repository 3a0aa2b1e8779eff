"""Text from a page or a model, made safe to print on the person's terminal.

A terminal obeys the bytes it is sent: ``ESC ] 52 ; c ; … BEL`` writes to the clipboard,
``ESC [ 2 J`` clears the screen, an OSC 8 hides a link behind other text, and a bidi override
(U+202E) shows text in an order other than the one it has. Page and model text is data, so
before console mode prints it, or the operational log writes it, every control character is
replaced by a visible stand-in:

- C0 controls (except newline and tab) and DEL: their Unicode control pictures, so ESC shows
  as ``␛`` and an OSC 52 reads ``␛]52;c;…␇``;
- C1 controls (U+0080–U+009F, which some terminals also obey, e.g. U+009B as CSI):
  ``⟨U+009B⟩``;
- bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069): ``⟨U+202E⟩``.

Everything else, line breaks and tabs included, is kept as it is.
"""

from __future__ import annotations

from typing import Any

_BIDI = frozenset(range(0x202A, 0x202F)) | frozenset(range(0x2066, 0x206A))


def _stand_in(code: int) -> str:
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    return f"⟨U+{code:04X}⟩"


def _unsafe(code: int) -> bool:
    if code < 0x20:
        return code not in (0x09, 0x0A)
    return code == 0x7F or 0x80 <= code <= 0x9F or code in _BIDI


_TABLE = {code: _stand_in(code) for code in range(0xA0) if _unsafe(code)}
_TABLE.update({code: _stand_in(code) for code in _BIDI})


def visible(text: str) -> str:
    """``text`` with every terminal control character shown as a visible stand-in."""
    return text.translate(_TABLE)


def visible_json(value: Any) -> Any:
    """:func:`visible` applied to every string inside ``value`` (dicts, lists, tuples)."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, dict):
        return {visible_json(k): visible_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [visible_json(v) for v in value]
    return value
