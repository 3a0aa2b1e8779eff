"""The default Claude model and the key advice, for both the spec parser and the backend.

No import at all: :mod:`core.model.spec` reads these at start-up (``handrail --help``) and
:mod:`core.model.anthropic_backend` (which loads the ``anthropic`` SDK) reads them too, so
neither has to import the other for them.
"""

from __future__ import annotations

DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-5-5"

ANTHROPIC_KEY_HELP = (
    "Set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) to your key from "
    "https://console.anthropic.com, or run without a model: --model scripted:PLAN.jsonl."
)
