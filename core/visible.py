"""Text from a page or a model, made safe to print on the person's terminal.

A terminal obeys the bytes it is sent: ``ESC ] 52 ; c ; … BEL`` writes to the clipboard,
``ESC [ 2 J`` clears the screen, an OSC 8 hides a link behind other text, and a bidi override
(U+202E) shows text in an order other than the one it has. Page and model text is data, and
so is whatever a web page puts in a request to ``handrail serve``. Before console mode prints
it, the observatory draws it, ``serve`` logs a refused request or the operational log writes
it, every control character is replaced by a visible stand-in:

- C0 controls (except newline and tab) and DEL: their Unicode control pictures, so ESC shows
  as ``␛`` and an OSC 52 reads ``␛]52;c;…␇``;
- C1 controls (U+0080–U+009F, which some terminals also obey, e.g. U+009B as CSI):
  ``⟨U+009B⟩``;
- bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069): ``⟨U+202E⟩``.

Everything else, line breaks and tabs included, is kept as it is, unless the text must stay
on one line (a log line a request or a page could otherwise split into a forged second one):
then newline and tab show as ``␊`` and ``␉`` too.
"""

from __future__ import annotations

import re
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
_LINE_TABLE = {**_TABLE, 0x09: _stand_in(0x09), 0x0A: _stand_in(0x0A)}


def _any_of(table: dict[int, str]) -> re.Pattern[str]:
    return re.compile("[" + "".join(re.escape(chr(code)) for code in sorted(table)) + "]")


CONTROL = _any_of(_TABLE)
"""One character :func:`visible` replaces (newline and tab are not among them)."""
_LINE_CONTROL = _any_of(_LINE_TABLE)


def visible(text: str, *, one_line: bool = False, limit: int | None = None) -> str:
    """``text`` with every terminal control character shown as a visible stand-in.

    ``one_line``: newline and tab are shown too, so the result is exactly one line.
    ``limit``: at most that many characters of ``text`` are kept, then ``…`` and how many
    were cut (a request path can be 8 KB: the line must still fit on the screen).
    Applying it twice changes nothing more: the stand-ins are printable.
    """
    cut = ""
    if limit is not None and len(text) > limit:
        text, cut = text[:limit], f"… ({len(text) - limit} more characters)"
    # Most text has no control character at all; a megabyte reply is only searched.
    if (_LINE_CONTROL if one_line else CONTROL).search(text) is not None:
        text = text.translate(_LINE_TABLE if one_line else _TABLE)
    return text + cut


def visible_json(value: Any) -> Any:
    """:func:`visible` applied to every string inside ``value`` (dicts, lists, tuples)."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, dict):
        return {visible_json(k): visible_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [visible_json(v) for v in value]
    return value
