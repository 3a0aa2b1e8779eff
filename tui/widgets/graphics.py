"""Which pictures the terminal draws, decided from its environment: handrail never asks it.

textual-image asks the terminal when its modules are imported (Sixel? Kitty graphics? the
cell size in pixels?) and waits up to 0.1 s for each answer, reading stdin itself. Asked
before the observatory starts, that put up to 0.3 s of waiting before the first frame on
every terminal that does not answer (many do not); asked once Textual runs, Textual's
input thread owns stdin and would read the answers as keys. So nothing is asked:

- the kind of picture comes from variables the terminal itself sets (:func:`choose`):
  Kitty graphics in kitty and Ghostty, Sixel in WezTerm, Konsole, foot, iTerm2 and mlterm,
  coloured half-blocks everywhere else (inside tmux or screen too, whatever the outer
  terminal: they pass neither through by default). ``HANDRAIL_GRAPHICS=kitty|sixel|halfcell``
  overrides the choice;
- the cell size in pixels comes from the kernel (``TIOCGWINSZ``, which the terminals that
  draw pictures fill in), else textual-serve's ``TEXTUAL_CELL_WIDTH``/``HEIGHT``, else
  10x20 (textual-image's own fallbacks, without its escape-sequence query);
- textual-image itself loads with the first picture (:func:`image_widget`), not at start-up.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable, Iterator, Mapping
from types import SimpleNamespace
from typing import TYPE_CHECKING, Literal, cast, get_args

if TYPE_CHECKING:
    from textual.widget import Widget

Graphics = Literal["kitty", "sixel", "halfcell"]
"""Kitty's graphics protocol, Sixel, or coloured half-block characters (any terminal)."""

OVERRIDE = "HANDRAIL_GRAPHICS"
"""The variable a person sets when the environment does not say what their terminal draws."""

_SIXEL_TERM_PROGRAMS = ("WezTerm", "iTerm.app")
_SIXEL_TERMS = ("wezterm", "foot", "foot-extra", "mlterm")


def choose(env: Mapping[str, str], *, tty: bool) -> Graphics:
    """The pictures to draw for a terminal with this environment. ``tty``: whether stdout
    is a terminal (else half-blocks: the web view, tests, a pipe)."""
    wanted = env.get(OVERRIDE, "").strip().lower()
    if wanted in get_args(Graphics):
        return cast(Graphics, wanted)
    term = env.get("TERM", "")
    program = env.get("TERM_PROGRAM", "")
    if not tty or env.get("TMUX") or term.startswith(("screen", "tmux")):
        return "halfcell"
    if env.get("KITTY_WINDOW_ID") or term in ("xterm-kitty", "xterm-ghostty"):
        return "kitty"
    if program == "ghostty":
        return "kitty"
    if program in _SIXEL_TERM_PROGRAMS or term in _SIXEL_TERMS or env.get("KONSOLE_VERSION"):
        return "sixel"
    return "halfcell"


ImageWidget = Callable[..., "Widget"]
"""A textual-image widget class: ``ImageWidget(pil_image, id=...)``."""

_loaded: dict[str, ImageWidget | None] = {}


def image_widget(env: Mapping[str, str] | None = None) -> ImageWidget | None:
    """textual-image's widget class for this terminal's pictures (loaded on the first call,
    without asking the terminal anything). None when textual-image cannot draw here: a
    pseudo-terminal nobody sized reports 0x0 cells, and textual-image divides by that;
    draw your own half-blocks then (``tui.widgets.target_crop.HalfBlocks``)."""
    import os

    stdout = sys.__stdout__
    kind = choose(os.environ if env is None else env, tty=bool(stdout and stdout.isatty()))
    if kind not in _loaded:
        _loaded[kind] = _load(kind)
    return _loaded[kind]


def _load(kind: Graphics) -> ImageWidget | None:
    # A terminal that does not answer made textual-image log a warning with a traceback
    # over the screen; its fallback size is fine, and nobody could act on it.
    logging.getLogger("textual_image").setLevel(logging.ERROR)
    from textual_image import _terminal

    asking = _terminal.capture_terminal_response
    # textual-image asks while its modules load (its Sixel and Kitty checks, and the cell
    # size when the kernel does not know it): every question now fails at once, unasked.
    _terminal.capture_terminal_response = _never_ask
    try:
        from textual_image import widget
    except ZeroDivisionError:
        return None
    finally:
        _terminal.capture_terminal_response = asking
    if kind == "kitty":
        return widget.TGPImage
    if kind == "sixel":
        return widget.SixelImage
    return widget.HalfcellImage


@contextlib.contextmanager
def _never_ask(
    start_marker: str, end_marker: str, timeout: float | None = None
) -> Iterator[SimpleNamespace]:
    from textual_image._terminal import TerminalError

    raise TerminalError("handrail decides from the environment (tui.widgets.graphics)")
    yield  # pragma: no cover  (a generator, for contextmanager)
