"""Which pictures the observatory draws: chosen from the terminal's environment, without
writing a single question to the terminal (whose answer Textual would read as keys)."""

from __future__ import annotations

import os
import sys

import pytest

from tests.helpers.pty_terminal import Terminal
from tui.widgets.graphics import choose

_PROBE = """
from tui.widgets import graphics
drawn = graphics.image_widget()
from textual_image import widget
kinds = {widget.TGPImage: "kitty", widget.SixelImage: "sixel", widget.HalfcellImage: "halfcell"}
print("DRAWN", kinds.get(drawn), flush=True)
"""

QUESTIONS = (b"\x1b[c", b"\x1b[16t", b"\x1b_G")
"""textual-image's questions: device attributes (Sixel), cell size, a Kitty graphics query."""


def _in_a_terminal(env: dict[str, str]) -> bytes:
    """Everything the probe writes to a 24x80 pseudo-terminal that never answers."""
    term = Terminal([sys.executable, "-c", _PROBE], dict(os.environ) | env, size=(24, 80))
    try:
        seen = term.read_to_end(timeout=60)
        term.proc.wait(timeout=60)
    finally:
        term.close()
    return seen


@pytest.mark.parametrize(
    ("env", "drawn"),
    [
        ({"TERM": "xterm-256color", "TERM_PROGRAM": "", "KITTY_WINDOW_ID": ""}, b"halfcell"),
        ({"TERM": "xterm-kitty", "KITTY_WINDOW_ID": "1"}, b"kitty"),
        ({"TERM": "xterm-256color", "TERM_PROGRAM": "WezTerm"}, b"sixel"),
    ],
)
def test_the_picture_kind_comes_from_the_environment_and_the_terminal_is_never_asked(
    env: dict[str, str], drawn: bytes
) -> None:
    seen = _in_a_terminal(env | {"TMUX": "", "HANDRAIL_GRAPHICS": "", "KONSOLE_VERSION": ""})
    assert b"DRAWN " + drawn in seen, seen[-800:]
    for question in QUESTIONS:
        assert question not in seen


def test_inside_tmux_pictures_are_half_blocks_whatever_the_outer_terminal() -> None:
    outer_kitty = {"TERM": "tmux-256color", "KITTY_WINDOW_ID": "3", "TMUX": "/tmp/tmux-1/default"}
    assert choose(outer_kitty, tty=True) == "halfcell"


def test_the_person_can_name_the_pictures_their_terminal_draws() -> None:
    assert choose({"TERM": "xterm-256color", "HANDRAIL_GRAPHICS": "sixel"}, tty=True) == "sixel"


def test_without_a_terminal_pictures_are_half_blocks() -> None:
    assert choose({"TERM": "xterm-kitty", "KITTY_WINDOW_ID": "1"}, tty=False) == "halfcell"
