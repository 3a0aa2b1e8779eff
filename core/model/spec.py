"""``--model`` specs: parse one and build its backend, before any browser starts."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from core.model.base import Model, ModelConfigError

DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-5-5"
DEFAULT_SPEC = f"anthropic:{DEFAULT_ANTHROPIC_MODEL}"

SPEC_FORMS = (
    f"  anthropic:MODEL_ID     Claude, e.g. {DEFAULT_SPEC} (key from ANTHROPIC_API_KEY)\n"
    "  openai:MODEL_ID        an OpenAI-compatible server (Ollama, vLLM...) with --base-url URL\n"
    "  scripted:PLAN.jsonl    replay a plan file, no model"
)


def parse_spec(spec: str) -> tuple[str, str]:
    """``(kind, value)`` for a spec; raises :class:`ModelConfigError` with the valid forms."""
    kind, sep, value = spec.strip().partition(":")
    kind = kind.strip().lower()
    value = value.strip()
    if not sep or kind not in ("anthropic", "openai", "scripted"):
        raise ModelConfigError(f"--model {spec!r} is not a model spec. Use one of:\n{SPEC_FORMS}")
    if not value:
        what = "a plan file" if kind == "scripted" else "a model id"
        raise ModelConfigError(
            f"--model {spec!r} needs {what} after '{kind}:'. Use one of:\n{SPEC_FORMS}"
        )
    return kind, value


def build_model(
    spec: str,
    *,
    base_url: str | None,
    env: Mapping[str, str],
    vision: bool | None = None,
) -> Model:
    """The backend for a ``--model`` spec. Raises :class:`ModelConfigError` (CLI exit 2).

    ``base_url`` is ``--base-url``; ``env`` is the environment to read keys and endpoints
    from (``os.environ`` in the CLI). ``vision`` overrides whether screenshots reach the
    model as images (default: on for Claude, off for OpenAI-compatible servers, where most
    local models take none). Call ``await model.check()`` afterwards for the network
    pre-flight.
    """
    kind, value = parse_spec(spec)
    # Each backend's SDK is imported here, when it is used: never both, never at start-up.
    if kind == "anthropic":
        from core.model.anthropic_backend import AnthropicModel

        model = AnthropicModel.from_env(value, env, base_url=base_url)
        if vision is not None:
            model.vision = vision
        return model
    if kind == "openai":
        url = base_url or env.get("OPENAI_BASE_URL")
        if not url:
            raise ModelConfigError(
                f"--model {spec} needs the server's URL: --base-url URL or OPENAI_BASE_URL, "
                "e.g. http://localhost:11434/v1 for Ollama or http://localhost:8000/v1 for vLLM."
            )
        from core.model.openai_backend import OpenAIModel

        return OpenAIModel(
            value, base_url=url, api_key=env.get("OPENAI_API_KEY") or None, vision=bool(vision)
        )
    if base_url:
        raise ModelConfigError("--base-url is for openai: models; a scripted plan has no server.")
    path = Path(value).expanduser()
    if not path.is_file():
        raise ModelConfigError(f"Scripted plan {value!r} not found (looked in {path.resolve()}).")
    from core.model.scripted import ScriptedPlan

    return ScriptedPlan(path)
