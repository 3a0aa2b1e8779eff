"""handrail's headless core, one folder per layer (lowest first): the wire and the shared
vocabulary at the top of this folder (:mod:`core.cdp`, :mod:`core.result`,
:mod:`core.actions`, :mod:`core.keys`, :mod:`core.visible`, :mod:`core.secrets`), then
``browser``, ``world``, ``eyes``, ``hands``, ``guard``, ``model``, ``audit``, ``pool``,
``run``, and ``rerun`` and ``demo`` on top. A module imports only from its own layer or
below; the import-linter contract in pyproject.toml holds that, and docs/architecture.md
("Layers") draws it.

Nothing in this package imports a terminal UI; the TUI is one consumer of its events.
"""
