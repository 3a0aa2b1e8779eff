"""How the person can run handrail again, typed as shown, from where they are.

A bootstrap puts handrail in ``.venv/bin``, not on ``PATH``: a summary that says
``handrail replay LOG`` then names a command the shell cannot find. Every command line
handrail prints for the person to type starts with :func:`handrail_command`.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path


def handrail_command() -> str:
    """``handrail`` when that is what ``PATH`` finds for this installation; else the path of
    this installation's launcher (relative to the current folder when it lies below it); else
    this interpreter running the command-line module."""
    launcher = Path(sys.executable).parent / "handrail"
    found = shutil.which("handrail")
    if not launcher.is_file():
        return "handrail" if found else f"{shlex.quote(sys.executable)} -m tui.cli.main"
    if found and os.path.samefile(found, launcher):
        return "handrail"
    try:
        shown = str(launcher.relative_to(Path.cwd()))
    except ValueError:
        shown = str(launcher)
    return shlex.quote(shown)


def typed_commands(text: str) -> str:
    """``text`` (a message from below the command line, which cannot know how handrail was
    installed) with each quoted command `` `handrail ...` `` made to run as typed here."""
    program = handrail_command()
    return text if program == "handrail" else text.replace("`handrail ", f"`{program} ")
