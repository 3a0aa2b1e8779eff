"""Model backends behind one small protocol: Anthropic (default), OpenAI-compatible, scripted.

The SDK behind a backend is imported only when that backend is used (``anthropic`` alone
costs seconds of CPU): this package loads its modules on first attribute access.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.model.anthropic_backend import AnthropicModel
    from core.model.base import (
        DEFAULT_MAX_TOKENS,
        Model,
        ModelConfigError,
        ModelError,
        ModelReply,
        image_block,
    )
    from core.model.openai_backend import OpenAIModel
    from core.model.scripted import ScriptedPlan
    from core.model.spec import DEFAULT_ANTHROPIC_MODEL, DEFAULT_SPEC, build_model, parse_spec

_HOME = {
    "AnthropicModel": "core.model.anthropic_backend",
    "DEFAULT_MAX_TOKENS": "core.model.base",
    "Model": "core.model.base",
    "ModelConfigError": "core.model.base",
    "ModelError": "core.model.base",
    "ModelReply": "core.model.base",
    "image_block": "core.model.base",
    "OpenAIModel": "core.model.openai_backend",
    "ScriptedPlan": "core.model.scripted",
    "DEFAULT_ANTHROPIC_MODEL": "core.model.spec",
    "DEFAULT_SPEC": "core.model.spec",
    "build_model": "core.model.spec",
    "parse_spec": "core.model.spec",
}

__all__ = [
    "DEFAULT_ANTHROPIC_MODEL",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_SPEC",
    "AnthropicModel",
    "Model",
    "ModelConfigError",
    "ModelError",
    "ModelReply",
    "OpenAIModel",
    "ScriptedPlan",
    "build_model",
    "image_block",
    "parse_spec",
]


def __getattr__(name: str) -> object:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
