"""handrail's headless core, one folder per layer (lowest first): the wire and the shared
vocabulary at the top of this folder (:mod:`core.cdp`, :mod:`core.result`,
:mod:`core.actions`, :mod:`core.keys`, :mod:`core.visible`, :mod:`core.secrets`), then
``browser``, ``world``, ``eyes``, ``hands``, ``guard``, ``model``, ``audit``, ``pool``,
``run``, and ``rerun`` and ``demo`` on top. A module imports only from its own layer or
below; the import-linter contract in pyproject.toml holds that, and docs/architecture.md
("Layers") draws it.

Nothing in this package imports a terminal UI; the TUI is one consumer of its events.
"""

import sys


def _structlog_without_rich() -> None:
    """Import structlog with rich kept out of its sight.

    structlog's ``dev`` module, which ``import structlog`` always loads, imports rich (and
    pygments through it) when it can, to draw tracebacks on a console: about 0.2 s of CPU
    at every start, all of it before the first model request. handrail renders exceptions
    itself (``format_exc_info``, then scrubbed: core/run/oplog.py), so that work buys
    nothing. Where rich is already loaded (the observatory imports it with Textual) it is
    left as it is; nothing else imports rich in the window, as no thread has started yet.
    """
    if "structlog" in sys.modules or "rich" in sys.modules:
        return
    sys.modules["rich"] = None  # type: ignore[assignment]  # None: "not installed"
    try:
        import structlog  # noqa: F401
    finally:
        del sys.modules["rich"]


_structlog_without_rich()
