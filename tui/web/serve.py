"""``handrail serve``: the observatory of one run, supervised from a web browser.

textual-serve (aiohttp) runs ``handrail run ...`` in a child process, started by the first
browser page, and relays its screen over a websocket. In front of it, :func:`guard` admits
only the person holding the token printed once at start:

- the URL's ``?token=`` is swapped for an HttpOnly, SameSite=Strict cookie and the browser
  is sent on to ``/`` (the token leaves the address bar and the page's own text; page
  scripts cannot read the cookie, and other sites' requests never carry it);
- every request without the token gets 403; there are no CORS headers, framing is denied,
  and no referrer is sent;
- the Host header must be the address we bound (a DNS-rebinding site has another Host), and
  a websocket upgrade or any request with an ``Origin`` must come from that same origin;
- one run per server, which outlives its page: a reload, a dropped connection or the URL
  opened again reattaches to it, the newest page taking over (:mod:`tui.web.session`); the
  token is valid until serve stops, and ending the run is an explicit act (``x`` in the page,
  or Ctrl-C here, recorded as who ended it);
- each refusal is one line on this terminal, and what the request chose (path, method,
  Origin) shows its control characters there instead of sending them: any page the person
  visits can make their browser ask for ``http://127.0.0.1:PORT/%1b]52;c;…``.

Binding anything but loopback needs ``--host`` (there is no other way to set it) and
prints a warning: whoever reaches the port with the URL can approve actions.
"""

from __future__ import annotations

import argparse
import ipaddress
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from core.visible import visible

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
_SERVE_ONLY = ("--host", "--port")
_SIGNAL_CAUSE = {"SIGINT": ": Ctrl-C on its terminal", "SIGHUP": ": its terminal closed"}


def add_serve_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], run: argparse.ArgumentParser
) -> None:
    """``handrail serve``: every option of ``run`` (copied from its parser) plus where to
    listen. Abbreviations are off so the serve-only options are exactly ``--host``/``--port``."""
    serve = sub.add_parser(
        "serve",
        parents=[run],
        add_help=False,  # the -h copied from run's parser prints this one's help
        allow_abbrev=False,
        help="run a task, supervised from a web browser instead of this terminal",
        description=(
            "Runs the observatory as a web page (textual-serve) and prints its URL, with a "
            "random token, once. Opening the URL starts the run; the page works as the "
            "terminal observatory does. The run outlives the page: reload it, or open the URL "
            "again after closing the tab or losing the connection, and you are back at the "
            "same run (a pending approval included); the newest page takes over from an "
            "older one. The run ends with x in the page or Ctrl-C here; after q in the page, "
            "serve exits with the run's exit code. Takes every `handrail run` option."
        ),
        epilog=(
            "The URL is the key until handrail serve stops: anyone who has it and can reach "
            "the port can watch and approve actions (a reload needs only the cookie it sets). "
            "Requests without the token get 403."
        ),
    )
    web = serve.add_argument_group("web view")
    web.add_argument(
        "--attach",
        metavar="RUN",
        help="serve the observatory of a live run instead of starting one (its id or the "
        "start of it; `handrail attach` lists them): takes no run options, and stopping "
        "serve leaves the run running (with --watch there: only watch)",
    )
    web.add_argument(
        "--fleet",
        metavar="TASKS.toml",
        help="serve a fleet's observatory instead (handrail fleet TASKS.toml: its pool screen "
        "and its one queue of approvals); takes --pool and --max-parallel, no run options; "
        "stopping serve ends the fleet's runs",
    )
    web.add_argument(
        "--host",
        default=DEFAULT_HOST,
        metavar="ADDR",
        help=f"address to listen on (default: {DEFAULT_HOST}; anything else warns)",
    )
    web.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        metavar="N",
        help=f"port to listen on (default: {DEFAULT_PORT}; 0 picks a free one)",
    )


def run_argv(serve_argv: Sequence[str]) -> list[str]:
    """The ``handrail run`` arguments inside ``handrail serve`` arguments: ``serve`` itself
    and the serve-only options (``--host X``, ``--port=X``) are removed, the rest kept in
    order (after ``--`` everything is the run's)."""
    args = list(serve_argv)
    if args and args[0] == "serve":
        args = args[1:]
    out: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            out.extend(args[i:])
            break
        if arg in _SERVE_ONLY:
            i += 2
            continue
        if arg.startswith(tuple(f"{name}=" for name in _SERVE_ONLY)):
            i += 1
            continue
        out.append(arg)
        i += 1
    return out


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind_warning(host: str) -> str | None:
    """What to tell the person who binds ``host`` (None for loopback)."""
    if is_loopback(host):
        return None
    return (
        f"warning: listening on {host}, not loopback. Anyone who can reach this port and has "
        "the URL can watch the run and approve its actions, and the connection is not encrypted."
    )


def say(text: str, out: TextIO | None = None) -> None:
    """Print one message of ``handrail serve`` (stderr unless ``out``), its control characters
    shown: refusals quote what a web page sent, and errors quote the run's settings."""
    print(visible(text), file=out or sys.stderr, flush=True)


def run_serve(args: argparse.Namespace, argv: Sequence[str]) -> int:
    """``handrail serve``: check the run's settings, then serve until Ctrl-C (exit 130)."""
    import asyncio  # here, not at the top: `handrail --help` builds this parser

    from tui.cli.command import handrail_command
    from tui.cli.run_options import settings_from_args
    from tui.exit_codes import EXIT_USAGE

    if args.no_tui:
        say(
            "handrail serve: --no-tui has no screen to serve; use "
            f"`{handrail_command()} run --no-tui`"
        )
        return EXIT_USAGE
    try:
        import tui.web.guard  # noqa: F401  (textual-serve, imported by _serve)
    except ImportError:
        say(
            "handrail serve: textual-serve is not installed; `pip install textual-serve` "
            "(scripts/bootstrap.sh installs it)"
        )
        return EXIT_USAGE
    from core.run.session import ConfigError, prepare

    settings = settings_from_args(args, interactive_default="ask")
    try:
        asyncio.run(prepare(settings))
    except ConfigError as exc:
        say(f"handrail serve: {exc}")
        return EXIT_USAGE
    argv = [sys.executable, "-m", "tui.cli.main", "run", *run_argv(argv)]
    return _serve(argv, args.host, args.port, f"handrail: {args.task}", ends_run=True)


def _serve(
    argv: list[str], host: str, port: int, title: str, *, ends_run: bool, what: str = "the run"
) -> int:
    """Serve the observatory ``argv`` starts until it exits or Ctrl-C (exit 130).
    ``ends_run``: stopping serve ends ``what`` (else it only leaves it)."""
    import asyncio
    import secrets

    from tui.exit_codes import EXIT_INTERRUPTED, EXIT_USAGE
    from tui.web.guard import GuardedServer, serve_forever

    warning = bind_warning(host)
    if warning is not None:
        say(f"handrail serve: {warning}")
    token = secrets.token_urlsafe(24)
    server = GuardedServer(
        argv,
        host=host,
        port=port,
        token=token,
        title=title,
        loopback=is_loopback(host),
        refused=lambda line: say(f"handrail serve: {line}"),
        told=lambda line: say(f"handrail serve: {line}"),
    )

    def announce(url: str) -> None:
        say(f"handrail serve: open {url}", sys.stdout)
        ctrl_c = f"ends {what}" if ends_run else "stops serving; the run goes on"
        say(
            f"  (the token in it is the key until handrail serve stops; Ctrl-C here {ctrl_c})",
            sys.stdout,
        )

    received: list[str] = []

    def stopped_by() -> str:
        name = received[0] if received else "SIGINT"
        return f"handrail serve was stopped ({name}{_SIGNAL_CAUSE.get(name, '')})"

    async def main() -> int:
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()

        def stop(sig: signal.Signals) -> None:
            received.append(sig.name)
            task.cancel()

        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(sig, stop, sig)
        return await serve_forever(server, announce=announce, stopped_by=stopped_by)

    try:
        code = asyncio.run(main())
    except OSError as exc:
        say(f"handrail serve: cannot listen on {host}:{port}: {exc}")
        return EXIT_USAGE
    except (KeyboardInterrupt, asyncio.CancelledError):
        if not ends_run:
            ended = "; the run goes on"
        elif server.run.started:
            ended = (
                "; the run was ended and its audit log closed"
                if what == "the run"
                else f"; {what} ended, their audit logs closed"
            )
        else:
            ended = ""
        say(f"handrail serve: stopped{ended}")
        return EXIT_INTERRUPTED
    if ends_run:
        say(
            f"handrail serve: {what} {'is' if what == 'the run' else 'are'} over (exit code {code})"
        )
    else:
        say(f"handrail serve: the observatory closed (exit code {code})")
    return code


def _serves_other(argv: Sequence[str], option: str) -> bool:
    """Whether ``argv`` is ``serve`` given ``option`` (before any ``--``): an observatory
    other than a new run's, which takes none of the run options."""
    args = list(argv)
    if args[:1] != ["serve"]:
        return False
    head = args[: args.index("--")] if "--" in args else args
    return any(a == option or a.startswith(f"{option}=") for a in head)


def _web_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """The parser of a ``serve`` that takes no run options: where to listen, and the theme."""
    parser = argparse.ArgumentParser(prog=prog, allow_abbrev=False, description=description)
    parser.add_argument("--host", default=DEFAULT_HOST, metavar="ADDR")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, metavar="N")
    parser.add_argument("--theme", metavar="NAME")
    return parser


def is_fleet(argv: Sequence[str]) -> bool:
    """``serve --fleet TASKS.toml``: a fleet's observatory, with no run options."""
    return _serves_other(argv, "--fleet")


def run_serve_fleet(argv: Sequence[str]) -> int:
    """``handrail serve --fleet TASKS.toml [--pool NAME] [--max-parallel N] [--host ADDR]
    [--port N] [--theme NAME]``: the fleet's observatory (its pool screen, its one queue of
    approvals) as a web page, behind serve's token, cookie and Host/Origin checks."""
    import os

    from core.model.spec import DEFAULT_SPEC
    from core.pool.pool import status
    from core.pool.state import DEFAULT_NAME, PoolError
    from core.run.fleet import load_fleet
    from core.run.session import ConfigError
    from tui.exit_codes import EXIT_USAGE

    parser = _web_parser(
        "handrail serve --fleet",
        "Serve a fleet's observatory (handrail fleet TASKS.toml) as a web page: its pool "
        "screen and its one queue of approvals, for a team to supervise from a browser. "
        "Stopping serve ends the fleet's runs.",
    )
    parser.add_argument("--fleet", required=True, type=Path, metavar="TASKS.toml")
    parser.add_argument("--pool", default=DEFAULT_NAME, metavar="NAME")
    parser.add_argument("--max-parallel", type=int, metavar="N")
    args, extra = parser.parse_known_args(list(argv)[1:])
    if extra:
        say(
            "handrail serve --fleet: the tasks file holds the runs' options; only --pool, "
            f"--max-parallel, --host, --port and --theme go here, not {' '.join(extra)}"
        )
        return EXIT_USAGE
    if args.max_parallel is not None and args.max_parallel < 1:
        say("handrail serve --fleet: --max-parallel must be at least 1")
        return EXIT_USAGE
    try:
        model = os.environ.get("HANDRAIL_MODEL") or DEFAULT_SPEC
        load_fleet(args.fleet, pool=args.pool, default_model=model)
        status(args.pool)
    except (ConfigError, PoolError) as exc:
        say(f"handrail serve: {exc}")
        return EXIT_USAGE
    fleet = [sys.executable, "-m", "tui.cli.main", "fleet", str(args.fleet.resolve())]
    fleet += ["--pool", args.pool]
    fleet += ["--max-parallel", str(args.max_parallel)] if args.max_parallel else []
    fleet += ["--theme", args.theme] if args.theme else []
    title = f"handrail fleet: {args.fleet.name}"
    return _serve(fleet, args.host, args.port, title, ends_run=True, what="the fleet's runs")


def is_attach(argv: Sequence[str]) -> bool:
    """``serve --attach RUN``: a live run's observatory, with no run options."""
    return _serves_other(argv, "--attach")


def run_serve_attach(argv: Sequence[str]) -> int:
    """``handrail serve --attach RUN [--host ADDR] [--port N] [--theme NAME]``."""
    import asyncio

    from core.run.live import LiveClient, LiveError, live_ids, match_run
    from tui.exit_codes import EXIT_USAGE

    parser = _web_parser(
        "handrail serve --attach",
        "Serve the observatory of a live run (handrail attach RUN) as a web page.",
    )
    parser.add_argument("--attach", required=True, metavar="RUN")
    parser.add_argument("--watch", action="store_true")
    args, extra = parser.parse_known_args(list(argv)[1:])
    if extra:
        say(
            "handrail serve --attach: the run is already running with its own options; "
            f"only --host, --port, --theme and --watch go here, not {' '.join(extra)}"
        )
        return EXIT_USAGE
    try:
        run_id = match_run(args.attach, live_ids())

        async def probe() -> str:
            client = await LiveClient.connect(run_id, watch=True, listing=True)
            client.close()
            return str(client.welcome.get("task", ""))

        task = asyncio.run(probe())
    except LiveError as exc:
        say(f"handrail serve: {exc}")
        return EXIT_USAGE
    attach = [sys.executable, "-m", "tui.cli.main", "attach", run_id]
    attach += ["--theme", args.theme] if args.theme else []
    attach += ["--watch"] if args.watch else []
    return _serve(attach, args.host, args.port, f"handrail: {task}", ends_run=False)
