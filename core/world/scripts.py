"""The one loader of handrail's page scripts: every ``.js`` file sits beside the Python that
loads it, and is read from there through :func:`script` (one file) or :func:`parts` (a
script cut into stage files, joined in a fixed order).

A stage file declares top-level names (functions, ``const``s) that the later stages use; the
caller wraps the joined text in its own closure, so nothing leaks into the page's world.
Files are read once per process (the cache), as the scripts are installed in every tab.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path


@functools.cache
def script(path: Path) -> str:
    """The text of one page script, without its surrounding white space."""
    return path.read_text(encoding="utf-8").strip()


def parts(folder: Path, names: Sequence[str]) -> str:
    """``folder/NAME.js`` for each of ``names``, in that order, joined by new lines."""
    return "\n".join(script(folder / f"{name}.js") for name in names)


def beside(module_file: str, name: str) -> Path:
    """The path of ``name`` beside a module (pass the module's ``__file__``)."""
    return Path(module_file).with_name(name)
