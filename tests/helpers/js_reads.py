"""Every member name handrail's page scripts read (``x.name`` in core/**/*.js): the names a
page can shadow on a form by naming a control after them (DOM clobbering).

    .venv/bin/python -m tests.helpers.js_reads     # prints them, one per line

tests/hands/test_clobbered.py names a control of its fixture form after each, so a new read
in a page script is clobbered by the test the day it is written.
"""

from __future__ import annotations

import re
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "core"
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_STRING = re.compile(r"`(?:\\.|[^`\\])*`|\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'")
_MEMBER = re.compile(r"(?<=[\w$)\]])\??\.([A-Za-z_$][\w$]*)")


GLOBALS = ("__handrail", "__handrailPage", "__handrailBadge", "__handrailMask")
"""What the Python side reads off our world's global object (an element with that id or
name is a named property of ``window``, in our world too)."""


def member_names(root: Path = CORE) -> list[str]:
    """The member names read in the page scripts under ``root``, and :data:`GLOBALS`, sorted."""
    names: set[str] = set(GLOBALS)
    for path in sorted(root.rglob("*.js")):
        code = _STRING.sub('""', _COMMENT.sub("", path.read_text(encoding="utf-8")))
        names.update(_MEMBER.findall(code))
    return sorted(names)


if __name__ == "__main__":
    print("\n".join(member_names()))
