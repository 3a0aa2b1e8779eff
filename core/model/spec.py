"""``--model`` specs: parse one and build its backend, before any browser starts."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from core.model.base import Model, ModelConfigError
from core.model.defaults import ANTHROPIC_KEY_HELP

# Re-exported (`as`): core.model and its callers still name it from here.
from core.model.defaults import DEFAULT_ANTHROPIC_MODEL as DEFAULT_ANTHROPIC_MODEL

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


def spec_label(spec: str, *, base_url: str | None, env: Mapping[str, str]) -> str:
    """The label (``Model.label``) the backend built from ``spec`` will show, known without
    building it (no SDK loads): the observatory shows it from its first frame. A spec that
    does not parse is returned as given (:func:`precheck` says what is wrong with it)."""
    try:
        kind, value = parse_spec(spec)
    except ModelConfigError:
        return spec
    if kind == "anthropic":
        url = base_url or env.get("ANTHROPIC_BASE_URL")
        return f"anthropic:{value} @ {url}" if url else f"anthropic:{value}"
    if kind == "openai":
        return f"openai:{value} @ {base_url or env.get('OPENAI_BASE_URL') or '?'}"
    return f"scripted plan: {Path(value).expanduser().name}"


def precheck(spec: str, *, base_url: str | None, env: Mapping[str, str]) -> None:
    """What can be wrong with a spec without loading its SDK or asking the network: the
    form, a missing key or endpoint, a missing plan file. Raises :class:`ModelConfigError`.
    Cheap, so callers run it before they start anything (a browser)."""
    kind, value = parse_spec(spec)
    if kind == "anthropic":
        if not (env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN")):
            raise ModelConfigError(
                f"No Anthropic API key: ANTHROPIC_API_KEY is not set. {ANTHROPIC_KEY_HELP}"
            )
    elif kind == "openai":
        if not (base_url or env.get("OPENAI_BASE_URL")):
            raise ModelConfigError(
                f"--model {spec} needs the server's URL: --base-url URL or OPENAI_BASE_URL, "
                "e.g. http://localhost:11434/v1 for Ollama or http://localhost:8000/v1 for vLLM."
            )
    else:
        if base_url:
            raise ModelConfigError(
                "--base-url is for openai: models; a scripted plan has no server."
            )
        path = Path(value).expanduser()
        if not path.is_file():
            raise ModelConfigError(
                f"Scripted plan {value!r} not found (looked in {path.resolve()})."
            )


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
    precheck(spec, base_url=base_url, env=env)
    kind, value = parse_spec(spec)
    # Each backend's SDK is imported here, when it is used: never both, never at start-up.
    if kind == "anthropic":
        from core.model.anthropic_backend import AnthropicModel

        model = AnthropicModel.from_env(value, env, base_url=base_url)
        if vision is not None:
            model.vision = vision
        return model
    if kind == "openai":
        from core.model.openai_backend import OpenAIModel

        url = base_url or env.get("OPENAI_BASE_URL")
        assert url is not None  # precheck
        return OpenAIModel(
            value, base_url=url, api_key=env.get("OPENAI_API_KEY") or None, vision=bool(vision)
        )
    from core.model.scripted import ScriptedPlan

    return ScriptedPlan(Path(value).expanduser())
