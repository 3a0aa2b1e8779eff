"""The options of a run, shared by ``run``, ``rerun`` and ``serve``, and the settings they
make: one definition, so their help cannot drift.

Imported by :mod:`tui.cli.main` (which builds the parsers) and :mod:`tui.web.serve` (which
checks a run's settings before serving it); it imports neither of them. Nothing here loads
core until the settings are made (``handrail --help`` stays fast).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from core.guard.policy import ApproveMode
    from core.run.netlog import HarContent
    from core.run.session import RunSettings


def add_run_options(
    p: argparse.ArgumentParser, *, max_rounds: int | None, model_help: str, console: bool = True
) -> None:
    """The options ``run`` and ``rerun`` share (``serve`` copies ``run``'s). ``console``:
    offer ``--no-tui`` in the help (``serve`` accepts it only to say what to use instead)."""
    p.add_argument("--model", default=None, metavar="SPEC", help=model_help)
    p.add_argument(
        "--base-url", metavar="URL", help="endpoint for openai: models (or OPENAI_BASE_URL)"
    )
    approval = p.add_mutually_exclusive_group()
    approval.add_argument(
        "--approve",
        choices=("ask", "risky", "none"),
        default=None,
        help="what waits for approval (default: ask); each is a built-in policy",
    )
    approval.add_argument(
        "--policy",
        metavar="FILE",
        default=None,
        help="an approval policy file (TOML; see `handrail policy --help`): its rules allow, "
        "ask, deny or hand over; it cannot lower the hand-overs for passwords, CAPTCHAs and "
        "payments, the network guard or secrets' scopes",
    )
    p.add_argument(
        "--max-rounds",
        type=int,
        default=max_rounds,
        metavar="N",
        help=f"stop after N rounds (default: {max_rounds or 'the recorded steps plus 10'})",
    )
    add_budget_options(p)
    p.add_argument(
        "--no-tui",
        action="store_true",
        help="console mode for scripts and CI" if console else argparse.SUPPRESS,
    )
    add_browser_options(p)
    p.add_argument(
        "--allow-domain",
        action="append",
        default=[],
        metavar="HOST",
        help="only these hosts (globs, HOST:PORT, [::1]; repeatable)",
    )
    p.add_argument(
        "--network",
        choices=("strict", "documents"),
        help="what --allow-domain guards: strict = every request (default with a secret), "
        "documents = page and frame loads only (default otherwise)",
    )
    p.add_argument(
        "--secret",
        action="append",
        default=[],
        metavar="NAME=ENVVAR[@HOSTS]",
        help="a secret the model sees only as <secret:NAME>",
    )
    p.add_argument("--secrets-file", type=Path, metavar="FILE", help="a TOML file of secrets")
    add_audit_dir_option(p, "where run logs go")
    add_theme_option(p)
    p.add_argument(
        "--otlp",
        metavar="URL",
        help="send the run's OpenTelemetry spans to this OTLP/HTTP collector as it runs "
        "(default: $OTEL_EXPORTER_OTLP_ENDPOINT when set; `handrail export --help`)",
    )
    p.add_argument(
        "--har",
        action="store_true",
        help="also write the requests the pages made, with their headers, as HAR 1.2 "
        "(network.har in the run folder; run_end keeps its sha256, so verify covers it)",
    )
    p.add_argument(
        "--har-content",
        choices=("omit", "embed"),
        default=None,
        help="bodies in network.har: omit (default) or embed (implies --har; secrets "
        "scrubbed; nothing sent or received during a hand-over)",
    )
    p.add_argument(
        "--no-screenshots",
        action="store_true",
        help="do not save each round's screenshot (a small JPEG) in the run folder",
    )
    p.add_argument(
        "--action-timeout",
        type=float,
        default=45.0,
        metavar="SECONDS",
        help="limit for one action (default: 45)",
    )


def add_budget_options(p: argparse.ArgumentParser) -> None:
    """The "budget" group: limits with a hard stop (exit 5), over a policy's ``[budget]``."""
    g = p.add_argument_group(
        "budget",
        "a hard stop before the model call that would cross a limit: outcome budget, exit 5",
    )
    g.add_argument(
        "--max-tokens", type=_positive_int, metavar="N", help="tokens the model may use in all"
    )
    g.add_argument(
        "--max-cost",
        type=_positive_float,
        metavar="USD",
        help="US dollars the model may cost, priced from core/model/prices.toml "
        "(a model not in it is an error naming it)",
    )
    g.add_argument(
        "--max-time", type=_duration, metavar="DURATION", help="wall-clock time (90s, 15m, 1.5h)"
    )


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text.lstrip("$"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of US dollars") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError("must be a positive number of US dollars")
    return value


def _duration(text: str) -> float:
    from core.guard.rules import parse_duration

    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("max_time ")) from None


def add_browser_options(p: argparse.ArgumentParser) -> None:
    """The "browser" group: launch headless, or attach (``--cdp-url``, ``--connect``)."""
    g = p.add_argument_group("browser")
    g.add_argument("--headless", action="store_true", help="launch Chrome without a window")
    g.add_argument(
        "--cdp-url",
        metavar="URL",
        help="attach to a running browser (http://host:port or ws://...)",
    )
    g.add_argument(
        "--connect",
        action="store_true",
        help="attach to your own Chrome (enable it at chrome://inspect/#remote-debugging)",
    )
    g.add_argument(
        "--profile",
        type=Path,
        metavar="DIR",
        help="profile folder for the launched Chrome (default: handrail's own)",
    )


def add_audit_dir_option(p: argparse.ArgumentParser, what: str) -> None:
    """``--audit-dir DIR`` (default: :func:`default_audit_dir`); ``what`` says what the
    folder is for. Read it as ``audit_dir_of(args)``."""
    p.add_argument(
        "--audit-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help=f"{what} (default: audit_logs/ in a checkout of handrail, else "
        "$XDG_DATA_HOME/handrail/audit_logs, i.e. ~/.local/share/handrail/audit_logs)",
    )


def default_audit_dir() -> Path:
    """``audit_logs`` (beside the current folder, as in a checkout, which has one) when
    handrail runs from a checkout of its source; otherwise ``audit_logs`` in handrail's
    data folder, not wherever the command happens to be started (an MCP client or a
    launcher starts it in any folder)."""
    from core.audit.key import data_dir

    source = Path(__file__).resolve().parents[2]
    if (source / "pyproject.toml").is_file() and (source / "audit_logs").is_dir():
        return Path("audit_logs")
    return data_dir() / "audit_logs"


def audit_dir_of(args: argparse.Namespace) -> Path:
    given: Path | None = getattr(args, "audit_dir", None)
    return given if given is not None else default_audit_dir()


def add_theme_option(p: argparse.ArgumentParser) -> None:
    """``--theme NAME``; the name is checked after parsing (``main.check_theme``)."""
    p.add_argument(
        "--theme",
        default=None,
        metavar="NAME",
        help="observatory theme (default: the one you last picked with t, else dark); "
        "an unknown name is an error that lists them",
    )


def settings_from_args(
    args: argparse.Namespace, *, interactive_default: str, model_spec: str | None = None
) -> RunSettings:
    """The run's settings from parsed ``run``/``rerun``/``serve`` arguments. ``model_spec``
    overrides :func:`model_spec_from_args`; ``interactive_default`` is the approval mode when
    ``--approve`` is not given. Options only ``run`` has (``--allow-js``, ``--upload-dir``,
    ``--resume-slot``) default to off when absent."""
    from core.run.session import RunSettings

    return RunSettings(
        task=args.task,
        start_url=args.start_url,
        model_spec=model_spec or model_spec_from_args(args),
        base_url=args.base_url,
        approve=cast("ApproveMode", args.approve or interactive_default),
        policy=getattr(args, "policy", None) or (None if args.approve else _config_policy()),
        max_rounds=args.max_rounds,
        max_tokens=getattr(args, "max_tokens", None),
        max_cost=getattr(args, "max_cost", None),
        max_time=getattr(args, "max_time", None),
        headless=args.headless,
        cdp_url=args.cdp_url,
        connect=args.connect,
        pool=args.pool,
        resume_slot=getattr(args, "resume_slot", None),
        profile=args.profile,
        allow_domains=tuple(args.allow_domain),
        network=args.network,
        allow_js=getattr(args, "allow_js", False),
        secrets=tuple(args.secret),
        secrets_file=args.secrets_file,
        audit_dir=audit_dir_of(args),
        upload_dir=getattr(args, "upload_dir", None),
        action_timeout=args.action_timeout,
        console_log=args.no_tui,
        screenshots=not args.no_screenshots,
        har=bool(getattr(args, "har", False) or getattr(args, "har_content", None) == "embed"),
        har_content=cast("HarContent", getattr(args, "har_content", None) or "omit"),
        otlp=getattr(args, "otlp", None)
        or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or None,
    )


def model_spec_from_args(args: argparse.Namespace) -> str:
    """``--model``, else ``HANDRAIL_MODEL``, else Claude."""
    from core.model.spec import DEFAULT_SPEC

    return str(args.model or os.environ.get("HANDRAIL_MODEL") or DEFAULT_SPEC)


def _config_policy() -> str | None:
    """The config file's ``[policy]`` (when it has one): the policy of a run given neither
    ``--approve`` nor ``--policy``."""
    from tui.config import config_policy, default_config_dir

    return config_policy(default_config_dir())
