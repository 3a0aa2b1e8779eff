"""The ``handrail`` command line.

Exit codes: 0 the model finished with success; 1 finished unsuccessfully, gave up or hit
the round limit; 2 usage or configuration error; 3 stopped for a human in a
non-interactive run; 4 the tab pool is full (or the slot to resume is running);
5 a budget stopped the run; 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from tui.cli.attach import add_attach_parser, run_attach
from tui.cli.command import handrail_command
from tui.cli.diff import add_diff_parser, run_diff
from tui.cli.export import add_export_parser, run_export
from tui.cli.mcp import add_mcp_parser, run_mcp
from tui.cli.permissions import add_permissions_parser, run_permissions_command
from tui.cli.policy import add_policy_parser, run_policy_command
from tui.cli.pool import add_pool_parser, run_fleet, run_pool
from tui.cli.run_options import (
    add_audit_dir_option,
    add_budget_options,
    add_run_options,
    add_theme_option,
    model_spec_from_args,
    settings_from_args,
)
from tui.exit_codes import EXIT_INTERRUPTED, EXIT_USAGE
from tui.signals import ending, signal_name

if TYPE_CHECKING:
    from core.rerun.rerun import Rerun
    from core.run.events import Event, EventSink, RunFinished, Supervisor
    from core.run.session import PhaseSink, RunSettings


EPILOG_VERIFY = """\
exit codes:
  0  intact and sealed: every record's chain link and seal hold, run_end closes the run
  1  edited, forged, reordered, dropped, re-hashed or appended: the first bad line is named
  2  not a log: empty, binary, a directory, missing; or an unusable --key file
  3  chain intact, seal not checked: no key for this log (pass --key FILE), or an old
     (schema 1) log written before records were sealed
  4  incomplete: no run_end, or a torn last line; the complete records before it verify

Anyone with the key can forge a log it seals: keep it as private as the logs' honesty
matters, and give it only to auditors.
"""

EPILOG_RUN = """\
approval modes (built-in policies: `handrail policy show NAME`):
  ask    every page-changing action waits for you (default)
  risky  only risky ones wait: new hosts, commitments (buy, send, delete...), sensitive
         fields, run_js
  none   nothing waits (trusted scripted runs); hand-overs and --allow-domain still hold
  --policy FILE: your own rules (`handrail policy --help`); no policy lowers the
  hand-overs for passwords, CAPTCHAs and payments, the network guard or secrets' scopes

models:
  anthropic:MODEL_ID     Claude (default; key from ANTHROPIC_API_KEY)
  openai:MODEL_ID        an OpenAI-compatible server (Ollama, vLLM) with --base-url URL
  scripted:PLAN.jsonl    replay a plan file (demos, tests); never presented as a model

exit codes: 0 success, 1 unsuccessful / gave up / round limit, 2 usage or configuration
error, 3 stopped for a person in a non-interactive run, 4 tab pool full (--pool), 5 a
budget stopped the run (--max-tokens, --max-cost, --max-time), 130 interrupted

scripted plans (--model scripted:PLAN.jsonl), one JSON object per line, in order:
  {"tool": "click", "target": "Book now", "reason": "open the form"}
  {"tool": "type", "input": {"index": 12, "text": "Ada"}}
  {"tool": "click", "target": "Pay", "on_deny": "ask"}
  tool     one of the model's tools (click, type, select_option, navigate, ..., finish)
  input    its arguments; "target" names the element by its visible text instead of
           input.index (looked up in the page state when the step runs)
  reason   shown in the approval; default "Step N of the scripted plan"
  on_deny  what to do when you deny this step: "ask" (default: pause and explain),
           "skip" (go on with the next step), "finish" (end, unsuccessfully), or one
           alternative step as an object {"tool": ..., "target": ...}
  Blank lines and lines starting with // or # are ignored. When the plan runs out it
  finishes unsuccessfully.

examples:
  handrail run "find the opening hours of the town library" --start-url https://example.org
  handrail run "fill in the contact form" --model openai:llama3.1 --base-url http://localhost:11434/v1
  handrail run "check my order status" --connect --approve risky
"""

EPILOG_RERUN = """\
how a step is found again: a candidate must have the recorded tag and role, and scores
  +50 same accessible name (or +30 x similarity when it is at least 0.6 alike),
  +/-20 same or other name= / href path, +/-8 same or other type, placeholder, target,
  options, +15 on the recorded page (path), +20 same text line before it, -30 in another
  frame. It fits when the best scores 60 or more and no other is within 15 points of it.

when a step no longer fits: with --model, that round goes to the model (told the recorded
  step, why it does not fit and the closest elements); the recorded steps resume when one
  fits again (a later step that fits on its own recorded page means the model did the ones
  before it). Without --model the rerun stops there: exit 1, naming the recorded round.

typed text is reused; <secret:NAME> needs that secret configured now (--secret); text the
  log keeps as «redacted» is never guessed. Recorded approvals are never reused.

which logs: only one sealed by this installation's key (handrail verify says "sealed");
  --trust-log repeats another, but never takes its start page or allowlist. Before anything
  loads, the start page and the hosts the run may visit are shown; a start page taken from
  the log (not --start-url, not --rebase) is asked at a terminal and refused without one.

examples:
  handrail rerun audit_logs/2026-12-01T09-00-00_book-a-train.jsonl --rebase http://127.0.0.1:8000
  handrail rerun staging.jsonl --rebase https://staging.example=https://shop.example --model anthropic:claude-sonnet-5-5
"""


class CommandParser(argparse.ArgumentParser):
    """A parser that refuses an argument it does not know itself, with its own usage: ``run
    --bogus`` shows ``run``'s usage, not the top level's (argparse's own parser hands unknown
    arguments up to the top). ``commands``: the subcommands' parsers, by name."""

    commands: dict[str, argparse.ArgumentParser]

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras

    def command(self, name: str | None) -> argparse.ArgumentParser:
        """The parser of subcommand ``name`` (this one when there is none)."""
        commands: dict[str, argparse.ArgumentParser] = getattr(self, "commands", {})
        return commands.get(name or "", self)


def build_parser() -> CommandParser:
    from core.audit.key import DATA_DIR_ENV
    from tui.web.serve import add_serve_parser

    parser = CommandParser(
        prog="handrail",
        description="A supervised LLM browser agent: a model plans, handrail drives Chrome, you approve.",
    )
    parser.add_argument(
        "--version", action=_VersionAction, nargs=0, help="print the version and exit"
    )
    # Its parsers are CommandParsers too (argparse makes them of the parent's class); typed as
    # plain ones for the modules that add their own (serve, pool).
    sub = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(dest="command", metavar="COMMAND"),
    )
    parser.commands = sub.choices

    run = sub.add_parser(
        "run",
        help="run a task in the browser, under your supervision",
        description="Run a task. The observatory shows every round and asks before the page changes.",
        epilog=EPILOG_RUN,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_run_arguments(run, console=True)
    # serve takes run's arguments, but has no console mode to offer.
    served = argparse.ArgumentParser(prog="handrail serve")
    _add_run_arguments(served, console=False)
    add_serve_parser(sub, served)

    rerun = sub.add_parser(
        "rerun",
        help="repeat a recorded run on the live site, asking a model only where it changed",
        description=(
            "Repeats the run recorded in LOG: each step's target is found again by what it "
            "was (tag, role, name, attributes, the text before it, its frame), never by its "
            "index. Every page-changing step still asks as --approve says; hand-overs and "
            "--allow-domain hold as in a live run. A step that no longer fits goes to --model, "
            "or stops the rerun (exit 1) naming it."
        ),
        epilog=EPILOG_RERUN,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rerun.add_argument("log", type=Path, help="the recorded run's audit log (.jsonl)")
    rerun.add_argument(
        "--rebase",
        action="append",
        default=[],
        metavar="[OLD=]ORIGIN",
        help="repeat on ORIGIN instead of the recorded start origin (or map OLD; repeatable)",
    )
    rerun.add_argument(
        "--start-url",
        metavar="URL",
        help="open URL first instead of the recorded start page (given so, it is not asked)",
    )
    rerun.add_argument(
        "--trust-log",
        action="store_true",
        help=(
            "repeat a log this installation did not seal (chain only, another installation's); "
            "its start URL and allowlist are still not used"
        ),
    )
    add_run_options(
        rerun,
        max_rounds=None,
        model_help="model for the steps that no longer fit (default: none: stop there)",
    )

    replay = sub.add_parser("replay", help="step through an audit log in the observatory")
    replay.add_argument("log", type=Path, help="an audit log (.jsonl)")
    replay.add_argument("--follow", action="store_true", help="keep reading as a live run appends")
    replay.add_argument(
        "--against",
        type=Path,
        metavar="B.jsonl",
        help="compare with another run (as `handrail diff`): its aligned step beside each "
        "round, the rounds that differ marked ≠, ] and [ to go from one to the next",
    )
    add_theme_option(replay)

    verify = sub.add_parser(
        "verify",
        help="check that an audit log is whole, unedited and sealed",
        description=(
            "Checks every record's hash-chain link and seal (a MAC under this installation's "
            "key), and that run_end closes the run. Names the first bad line."
        ),
        epilog=EPILOG_VERIFY,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verify.add_argument("log", type=Path, help="an audit log (.jsonl)")
    verify.add_argument(
        "--key",
        type=Path,
        metavar="FILE",
        help="check the seals with this key (from `handrail key export` where the log was "
        "written) instead of this installation's",
    )

    key = sub.add_parser(
        "key",
        help="the audit key that seals this installation's logs",
        description=(
            "Each installation seals its audit logs with its own key (32 random bytes, "
            f"mode 0600, in $XDG_DATA_HOME/handrail or ~/.local/share/handrail; "
            f"${DATA_DIR_ENV} overrides the folder)."
        ),
    )
    key_sub = key.add_subparsers(dest="key_command", metavar="ACTION", required=True)
    key_sub.add_parser(
        "export",
        help="print the key (hex) for an auditor: with it, `handrail verify --key FILE` "
        "checks this installation's logs anywhere",
    )

    demo = sub.add_parser(
        "demo",
        help="watch handrail book a train on a bundled local site (no API key needed)",
        description=(
            "Starts a small booking site on 127.0.0.1 and runs a fixed task on it. With "
            "ANTHROPIC_API_KEY set it uses Claude; without, a bundled scripted plan (said so "
            "in the header). Every page-changing action asks you; it stops at the payment page."
        ),
    )
    demo.add_argument(
        "--model",
        default=None,
        metavar="SPEC",
        help="model to use (default: Claude with ANTHROPIC_API_KEY, else the bundled plan)",
    )
    demo_approval = demo.add_mutually_exclusive_group()
    demo_approval.add_argument(
        "--approve",
        choices=("ask", "risky", "none"),
        default=None,
        help="what waits for approval (default: ask)",
    )
    demo_approval.add_argument(
        "--policy",
        metavar="FILE",
        default=None,
        help="an approval policy file (see `handrail policy --help`); "
        "docs/examples/demo-policy.toml asks only for the booking",
    )
    add_budget_options(demo)
    demo.add_argument("--no-tui", action="store_true", help="console mode for scripts and CI")
    demo.add_argument(
        "--headless",
        action="store_true",
        help="no browser window (default when there is no display)",
    )
    demo.add_argument("--headed", action="store_true", help="force a browser window")
    demo.add_argument(
        "--site-only",
        action="store_true",
        help="only serve the booking site, print its URL and run until Ctrl-C",
    )
    demo.add_argument(
        "--port", type=int, default=0, metavar="N", help="port for the site (default: any free)"
    )
    add_audit_dir_option(demo, "where run logs go")
    add_theme_option(demo)

    doctor = sub.add_parser("doctor", help="check that everything a run needs is here")
    doctor.add_argument(
        "--cdp-url", metavar="URL", help="check attaching to this browser instead of a launch"
    )
    doctor.add_argument(
        "--connect", action="store_true", help="check attaching to your own running Chrome"
    )
    doctor.add_argument(
        "--model", default=None, metavar="SPEC", help="check this model (see handrail run --help)"
    )
    doctor.add_argument("--base-url", metavar="URL", help="endpoint for an openai: model")
    add_audit_dir_option(doctor, "check that run logs can be written here")
    add_pool_parser(sub)
    add_policy_parser(sub)
    add_permissions_parser(sub)
    add_mcp_parser(sub)
    add_attach_parser(sub)
    add_diff_parser(sub)
    add_export_parser(sub)
    return parser


def _add_run_arguments(p: argparse.ArgumentParser, *, console: bool) -> None:
    """``run``'s task and options (``serve`` takes them too; ``console``: see
    :func:`add_run_options`)."""
    p.add_argument("task", help="what handrail should do, in plain words")
    p.add_argument("--start-url", metavar="URL", help="page to open first (your step: not gated)")
    add_run_options(p, max_rounds=30, model_help="model to use (see below)", console=console)
    p.add_argument(
        "--allow-js", action="store_true", help="offer run_js to the model (always asks)"
    )
    p.add_argument(
        "--upload-dir", type=Path, metavar="DIR", help="folder upload_file may take files from"
    )


class _VersionAction(argparse.Action):
    """``--version``, reading the installed version only when asked (``--help`` stays fast)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        print(f"{parser.prog} {_version()}")
        parser.exit()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("handrail")
    except PackageNotFoundError:
        return "(not installed: run from a checkout)"


def check_theme(parser: argparse.ArgumentParser, name: str | None) -> None:
    """``--theme NAME`` must be one the observatory offers (``t``): else exit 2 naming them."""
    if name is None:
        return
    from tui.config import default_config_dir
    from tui.themes import offered_themes, theme_folders

    offered = offered_themes(theme_folders(default_config_dir()))
    if name not in offered:
        parser.error(f"--theme {name!r} is not a theme; choose one of: {', '.join(offered)}")


def _interrupt(signum: int, _frame: object) -> None:
    # Only where no event loop handles the signal itself (before a command's loop starts,
    # or a command without one): the loops turn it into their own way of stopping.
    ending(signum)
    raise KeyboardInterrupt(signal_name(signum))


def main(argv: Sequence[str] | None = None) -> int:
    """The ``handrail`` command: returns its exit code.

    A closed terminal (SIGHUP) or a polite kill (SIGTERM, SIGINT) ends a run as Ctrl-C does:
    the run is cancelled, its log gets ``run_end``, the browser is stopped, and the summary
    names the log (tui/signals.py). A hard kill is left to the browser's reaper
    (core/browser/reaper.py).
    """
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupt)
    return dispatch(argv)


def dispatch(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the command (``main`` without the process-wide signal set-up)."""
    given = list(sys.argv[1:] if argv is None else argv)
    from tui.web.serve import is_attach, is_fleet

    if is_attach(given):
        # A live run's observatory: none of the run options (nor run's task) apply.
        from tui.web.serve import run_serve_attach

        return run_serve_attach(given)
    if is_fleet(given):
        # A fleet's observatory: its runs' options are in its tasks file.
        from tui.web.serve import run_serve_fleet

        return run_serve_fleet(given)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    check_theme(parser.command(args.command), getattr(args, "theme", None))
    if getattr(args, "resume_slot", None) is not None and not args.pool:
        parser.error("--resume-slot N resumes a slot of a tab pool: add --pool NAME")
    try:
        if args.command == "run":
            return _run(args)
        if args.command == "verify":
            return _verify(args.log, args.key)
        if args.command == "key":
            return _key_export()
        if args.command == "replay":
            return _replay(args)
        if args.command == "rerun":
            return _rerun(args)
        if args.command == "demo":
            from tui.cli.demo import run_demo

            return run_demo(args)
        if args.command == "serve":
            from tui.web.serve import run_serve

            return run_serve(args, sys.argv[1:] if argv is None else argv)
        if args.command == "pool":
            return run_pool(args)
        if args.command == "fleet":
            return run_fleet(args)
        if args.command == "policy":
            return run_policy_command(args)
        if args.command == "permissions":
            return run_permissions_command(args)
        if args.command == "mcp":
            return run_mcp(args)
        if args.command == "attach":
            return run_attach(args)
        if args.command == "diff":
            return run_diff(args)
        if args.command == "export":
            return run_export(args)
        if args.command == "doctor":
            from tui.cli.doctor import run_doctor

            return run_doctor(args)
    except KeyboardInterrupt:
        with contextlib.suppress(OSError, ValueError):
            print("\nhandrail: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    parser.error(f"unknown command {args.command}")
    return EXIT_USAGE


def _run(args: argparse.Namespace) -> int:
    from tui.cli.launch import (
        NO_DISPLAY,
        has_display,
        headless_notice,
        run_console,
        run_observatory,
    )

    # No display: headless, and said so (a launched Chrome would fail with its raw stderr).
    chosen_headless = not (
        args.headless or args.cdp_url or args.connect or args.pool or has_display()
    )
    if chosen_headless:
        args.headless = True
    if args.no_tui:
        return run_console(
            settings_from_args(args, interactive_default="ask"),
            notice=headless_notice() if chosen_headless else None,
        )
    from core.model.spec import spec_label
    from core.run.phases import first_phase

    return run_observatory(
        lambda: settings_from_args(args, interactive_default="ask"),
        task=args.task,
        theme=args.theme,
        model=spec_label(model_spec_from_args(args), base_url=args.base_url, env=os.environ),
        phase=first_phase(cdp_url=args.cdp_url, connect=args.connect, pool=args.pool),
        headless_cause=NO_DISPLAY if chosen_headless else None,
    )


def _rerun(args: argparse.Namespace) -> int:
    from core.rerun.rerun import NO_MODEL, Rerun, run_rerun
    from core.run.events import RunStarted
    from core.run.session import ConfigError
    from core.visible import visible
    from tui.cli.launch import (
        NO_DISPLAY,
        has_display,
        headless_notice,
        run_console,
        run_observatory,
    )

    try:
        rerun = Rerun.load(args.log, args.rebase, trust_log=args.trust_log)
    except ConfigError as exc:
        print(visible(f"handrail rerun: {exc}"), file=sys.stderr)
        return EXIT_USAGE
    if not rerun.recorded.sealed_here:
        print(
            f"handrail rerun: trusting {visible(str(args.log))} as you asked (--trust-log), "
            f"though its seal was not checked here ({rerun.recorded.seal}): its steps and the "
            "text they type are repeated as recorded; its start URL and allowlist are not used.",
            file=sys.stderr,
        )
    chosen_headless = not (
        args.headless or args.cdp_url or args.connect or args.pool or has_display()
    )
    if chosen_headless:
        args.headless = True
    args.task = rerun.recorded.task
    start_url, args.start_url = args.start_url, None
    base = settings_from_args(args, interactive_default="ask", model_spec=args.model or NO_MODEL)
    try:
        settings = rerun.settings(
            base, start_url=start_url, allow_domains=args.allow_domain, max_rounds=args.max_rounds
        )
    except ConfigError as exc:
        print(visible(f"handrail rerun: {exc}"), file=sys.stderr)
        return EXIT_USAGE
    if not _where_confirmed(rerun, settings, given_start=start_url is not None):
        return EXIT_USAGE

    async def runner(
        settings: RunSettings,
        *,
        supervisor: Supervisor,
        sinks: Sequence[EventSink],
        on_phase: PhaseSink | None = None,
    ) -> RunFinished:
        def remember(event: Event) -> None:
            if isinstance(event, RunStarted) and event.audit_path:
                logs.append(Path(event.audit_path))

        finished, _plan = await run_rerun(
            rerun, settings, supervisor=supervisor, sinks=[*sinks, remember], on_phase=on_phase
        )
        return finished

    logs: list[Path] = []
    if args.no_tui:
        code = run_console(
            settings,
            runner=runner,
            notice=headless_notice() if chosen_headless else None,
            check_model=settings.model_spec != NO_MODEL,
        )
    else:
        from core.run.phases import first_phase

        code = run_observatory(
            lambda: settings,
            task=settings.task,
            theme=args.theme,
            phase=first_phase(
                cdp_url=settings.cdp_url, connect=settings.connect, pool=settings.pool
            ),
            headless_cause=NO_DISPLAY if chosen_headless else None,
            runner=runner,
        )
    if logs:
        _print_diff(args.log, logs[0])
    return code


def _print_diff(source: Path, rerun_log: Path) -> None:
    """The rerun against the run it repeats, as `handrail diff` would say it (on stderr)."""
    from core.audit import read_log
    from core.rerun.diff import diff_runs, steps_of, summary_lines
    from core.visible import visible

    try:
        diff = diff_runs(steps_of(read_log(source).records), steps_of(read_log(rerun_log).records))
    except (OSError, ValueError) as exc:
        print(
            visible(f"handrail rerun: no comparison with the recorded run ({exc})"), file=sys.stderr
        )
        return
    print(
        visible(f"against the recorded run (handrail diff {source} {rerun_log}):"), file=sys.stderr
    )
    for line in summary_lines(diff):
        print(visible(f"  {line}"), file=sys.stderr)


def _where_confirmed(rerun: Rerun, settings: RunSettings, *, given_start: bool) -> bool:
    """Show where a rerun will start and may go before anything loads; when the start page
    comes from the log itself (not --start-url, not --rebase), ask the person at a terminal,
    and refuse without one. A forged or mistaken log must not pick the first page silently."""
    from core.visible import visible

    start = visible(settings.start_url or "(the recorded steps' first page)")
    hosts = ", ".join(visible(h) for h in settings.allow_domains) or (
        "any host (the recorded run had no --allow-domain)"
    )
    print(f"handrail rerun: starts at {start}; may visit: {hosts}", file=sys.stderr)
    if given_start or rerun.start_rebased:
        return True
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        print(
            "handrail rerun: that start page comes from the log; confirm it by giving it "
            "(--start-url URL, or --rebase ORIGIN), or run in a terminal to be asked",
            file=sys.stderr,
        )
        return False
    print("Open it? [y/N] ", end="", file=sys.stderr, flush=True)
    try:
        answer = sys.stdin.readline()
    except (OSError, KeyboardInterrupt):
        answer = ""
    if answer.strip().lower() in ("y", "yes"):
        return True
    print("handrail rerun: not started", file=sys.stderr)
    return False


def _verify(path: Path, key_file: Path | None) -> int:
    from core.audit import AuditKeyError, key_from_file, verify

    key = None
    if key_file is not None:
        try:
            key = key_from_file(key_file)
        except (OSError, AuditKeyError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            print(f"handrail verify: cannot use --key {key_file}: {reason}", file=sys.stderr)
            return EXIT_USAGE
    report = verify(path, key) if key is not None else verify(path)
    print(f"{path}: {report.summary()}")
    for note in report.notes:
        print(f"  note: {note}")
    return report.exit_code


def _key_export() -> int:
    from core.audit import AuditKeyError, installation_key

    try:
        key = installation_key()
    except (OSError, AuditKeyError) as exc:
        print(f"handrail key export: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(key.hex())
    print(
        f"handrail: this is the audit key in {key.source} (key id {key.key_id}). Whoever has "
        f"it can check this installation's logs with `{handrail_command()} verify --key FILE`, "
        "and can "
        "also forge them: give it to auditors only.",
        file=sys.stderr,
    )
    return 0


def _replay(args: argparse.Namespace) -> int:
    if not args.log.is_file():
        what = (
            "is a directory, not an audit log (give one of its .jsonl files)"
            if args.log.is_dir()
            else "is not a regular file"
            if args.log.exists()
            else "does not exist"
        )
        print(f"handrail replay: {args.log} {what}", file=sys.stderr)
        return EXIT_USAGE
    from tui.screens.replay import run_replay

    return run_replay(args.log, follow=args.follow, theme=args.theme, against=args.against)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
