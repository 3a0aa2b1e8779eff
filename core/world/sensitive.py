"""Which form fields are sensitive (password, one-time code, payment card), by meaning.

The words and patterns are data (``core/world/sensitive.json``); the judgement is one pure
JavaScript function (``core/world/sensitive.js``) of an element and those words, run in our
isolated world by the hands just before typing (and available to the digest's detectors).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from core.world.scripts import script

_HERE = Path(__file__).parent

SensitiveKind = str
"""``"password"``, ``"one-time code"`` or ``"card"``."""


@functools.cache
def words() -> dict[str, Any]:
    """core/world/sensitive.json: autocomplete tokens, phrases by kind and language, group shapes."""
    data: dict[str, Any] = json.loads((_HERE / "sensitive.json").read_text(encoding="utf-8"))
    return data


@functools.cache
def judge_source() -> str:
    """A JavaScript expression: ``function (el) -> {kind, why} | null`` with the words bound."""
    judge = script(_HERE / "sensitive.js")
    bound = json.dumps(words(), ensure_ascii=False)
    return f"((judge, words) => (el) => judge(el, words))(\n{judge},\n{bound})"
