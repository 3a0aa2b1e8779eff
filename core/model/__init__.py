"""Model backends behind one small protocol: Anthropic (default), OpenAI-compatible, scripted."""

from core.model.anthropic_backend import DEFAULT_ANTHROPIC_MODEL, AnthropicModel
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
from core.model.spec import DEFAULT_SPEC, build_model, parse_spec

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
