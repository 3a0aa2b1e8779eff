"""The eyes' page script: the ``.js`` stages of this folder, joined in :data:`EYES_PARTS`
order inside one closure that defines ``globalThis.__handrail`` (the index registry, the
walk, the API) once per world.

The world layer (core/world/) makes our isolated worlds but sits below the eyes and never
imports them, so this module hands it the script: importing it calls
:func:`core.world.contexts.use_page_script` with :func:`eyes_script`, and every world made
from then on, in any tab or frame, starts with it. :func:`install_at_document_start` also
has each new top-level document start with it, so a digest finds it compiled.
"""

from __future__ import annotations

import functools
from pathlib import Path

from core.cdp import CDPSession
from core.world.contexts import add_world_script, use_page_script
from core.world.scripts import parts
from core.world.sensitive import judge_source

EYES_PARTS = (
    "dom",
    "registry",
    "text",
    "visibility",
    "naming",
    "editors",
    "widgets",
    "scrolling",
    "listeners",
    "detectors",
    "lines",
    "beyond",
    "describe",
    "tables",
    "walk",
    "frames",
    "serialise",
    "api",
)
"""core/eyes/*.js in the order they are concatenated: each stage may use the names of the
parts before it at load time, and any part's names when called."""


@functools.cache
def eyes_script() -> str:
    """The eyes' page script: core/eyes/*.js in :data:`EYES_PARTS` order inside one closure
    that defines ``globalThis.__handrail`` once per world (evaluating it again is a no-op)."""
    # The detectors judge fields with the hands' own function (core/world/sensitive.js).
    judge = f"const judgeSensitive = {judge_source()};"
    body = "\n".join([judge, parts(Path(__file__).parent, EYES_PARTS)])
    return f'(() => {{\n"use strict";\nif (Object.prototype.hasOwnProperty.call(globalThis, "__handrail")) return;\n{body}\n}})();'


async def install_at_document_start(session: CDPSession) -> None:
    """Have every new top-level document of the tab behind ``session`` start with our world
    and the eyes' script in it, so the first digest after a load finds them ready instead of
    compiling the script then (measured on a 5,000-row table: 20 ms of a cold digest). The
    page sees nothing: the script runs in our isolated world, and in a frame's world it
    returns at once (frames get theirs when a digest first needs it). Page must be enabled
    on the session (Browser._attach does it before the attach hooks)."""
    source = f"if (globalThis.top === globalThis) {{\n{eyes_script()}\n}}"
    await add_world_script(session, source)


use_page_script(eyes_script)
