"""``handrail mcp``: serve MCP over stdio, every tool call one supervised round
(core/mcp/). Nothing here imports the ``mcp`` SDK until the command runs."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, cast

from core.visible import visible
from tui.cli.run_options import add_audit_dir_option, add_browser_options, audit_dir_of
from tui.exit_codes import EXIT_INTERRUPTED, EXIT_USAGE

if TYPE_CHECKING:
    from core.guard.policy import ApproveMode
    from core.run.events import RunFinished
    from core.run.session import RunSettings
    from core.secrets import Secrets

DESCRIPTION = """\
Serves the Model Context Protocol over stdin/stdout, as MCP clients (Claude Code, Cursor,
Gemini CLI...) spawn their servers. The client takes the model's place: it gets handrail's
browser tools (and observe), and each call passes handrail's gate, hand-overs, secrets,
network guard and sealed audit log as a model's call does. One session is one run; it ends
when the client closes the session.

The person supervises from another terminal: `handrail attach` lists the live runs and
`handrail attach RUN` opens the observatory on one (the run id is printed on stderr at
start and given to the client in the session's instructions). Approvals and hand-overs are
asked there. A call that needs one while nobody is attached waits --approval-timeout for a
supervisor, then an approval is refused saying how to attach, and a hand-over ends the run.
With nobody to supervise, use --approve none or a --policy that allows what the client may
do, and --allow-domain to keep it on your sites.

With --http HOST:PORT it serves streamable HTTP at http://HOST:PORT/mcp instead, on
loopback only; each request needs `Authorization: Bearer TOKEN` (the token printed at
start, or kept in --token-file), and requests from another Host or from a web page are
refused. One session is one run: when the client ends it, the server exits.

  claude mcp add handrail -- handrail mcp --allow-domain example.org --headless
  handrail attach          (in another terminal, while the agent works)
"""


def add_mcp_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "mcp",
        help="serve MCP over stdio: any agent's browser calls, supervised and logged",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    approval = p.add_mutually_exclusive_group()
    approval.add_argument(
        "--approve",
        choices=("ask", "risky", "none"),
        default=None,
        help="what waits for approval (default: ask; with --demo, none); each is a built-in policy",
    )
    approval.add_argument(
        "--policy", metavar="FILE", help="an approval policy file (`handrail policy --help`)"
    )
    p.add_argument(
        "--approve-via",
        choices=("attach", "elicitation"),
        default="attach",
        help="who answers an approval: the supervisor at `handrail attach` (default), or the "
        "client's own user through MCP elicitation (the client application draws the "
        "question: that trusts the client, and the log says so); hand-overs always go to "
        "the supervisor",
    )
    p.add_argument(
        "--approval-timeout",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="how long a call that needs a person waits for a supervisor to attach, when "
        "none is: then an approval is refused and a hand-over ends the run (default: 120; "
        "once attached, the supervisor takes the time it needs)",
    )
    p.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio, on loopback only "
        "(127.0.0.1:8766, [::1]:0...); every request needs `Authorization: Bearer TOKEN`, "
        "the token printed at start (or kept in --token-file); one session, then it exits",
    )
    p.add_argument(
        "--token-file",
        type=Path,
        metavar="FILE",
        help="with --http: the token to require, kept in FILE (made, random and 0600, when "
        "missing; refused when others can read it), so a client's settings can name it",
    )
    p.add_argument("--start-url", metavar="URL", help="page to open first (not gated)")
    p.add_argument(
        "--demo",
        action="store_true",
        help="serve the bundled booking site (handrail demo's) on 127.0.0.1 and start there, "
        "allowed only that site; try it with docs/examples/mcp_client.py",
    )
    add_browser_options(p)
    p.add_argument("--pool", metavar="NAME", help="run in a slot of this tab pool")
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
        help="what --allow-domain guards (as for handrail run)",
    )
    p.add_argument(
        "--secret",
        action="append",
        default=[],
        metavar="NAME=ENVVAR[@HOSTS]",
        help="a secret the client sees only as <secret:NAME>",
    )
    p.add_argument("--secrets-file", type=Path, metavar="FILE", help="a TOML file of secrets")
    p.add_argument("--allow-js", action="store_true", help="offer run_js (it always asks)")
    p.add_argument(
        "--max-rounds",
        type=int,
        default=10_000,
        metavar="N",
        help="end the session's run after N calls (default: 10000)",
    )
    add_audit_dir_option(p, "where run logs go")


def run_mcp(args: argparse.Namespace) -> int:
    """Serve one session; the exit code is its run's (0 when the client closed it)."""
    from core.run.session import ConfigError, RunSettings, check_settings

    if not 0 <= args.approval_timeout <= 24 * 3600:
        print("handrail mcp: --approval-timeout must be 0 to 86400 seconds", file=sys.stderr)
        return EXIT_USAGE
    http: tuple[str, int] | None = None
    if args.http is not None:
        address = http_address(args.http)
        if isinstance(address, str):
            print(visible(f"handrail mcp: --http {address}"), file=sys.stderr)
            return EXIT_USAGE
        http = address
    elif args.token_file is not None:
        print("handrail mcp: --token-file goes with --http", file=sys.stderr)
        return EXIT_USAGE
    site = None
    if args.demo:
        if args.start_url or args.allow_domain:
            print(
                "handrail mcp: --demo starts on its own site and allows only it: drop "
                "--start-url and --allow-domain",
                file=sys.stderr,
            )
            return EXIT_USAGE
        from core.demo import start_demo_site

        site = start_demo_site()
        args.start_url = site.url
        args.allow_domain = [site.url.removeprefix("http://").rstrip("/")]
    default_approve: ApproveMode = "none" if args.demo and not args.policy else "ask"
    settings = RunSettings(
        task="the tool calls of an MCP client",
        start_url=args.start_url,
        model_spec="mcp:client",
        approve=cast("ApproveMode", args.approve) or default_approve,
        policy=args.policy,
        max_rounds=args.max_rounds,
        give_up_after=None,  # the client decides when to stop; a refusal ends nothing
        headless=args.headless,
        cdp_url=args.cdp_url,
        connect=args.connect,
        pool=args.pool,
        profile=args.profile,
        allow_domains=tuple(args.allow_domain),
        network=args.network,
        allow_js=args.allow_js,
        secrets=tuple(args.secret),
        secrets_file=args.secrets_file,
        audit_dir=audit_dir_of(args),
    )
    try:
        secrets = check_settings(settings, os.environ, with_model=False)
    except ConfigError as exc:
        print(visible(f"handrail mcp: {exc}"), file=sys.stderr)
        return EXIT_USAGE
    print(
        visible(
            f"handrail mcp: run {settings.run_id}; supervise it from another terminal with "
            f"`handrail attach {settings.run_id}`"
        ),
        file=sys.stderr,
        flush=True,
    )
    try:
        if http is None:
            from core.mcp.stdio import serve_stdio

            finished = asyncio.run(
                serve_stdio(
                    settings,
                    secrets,
                    approval_timeout=args.approval_timeout,
                    approve_via=args.approve_via,
                )
            )
        else:
            finished = _serve_http(args, settings, secrets, http)
    except OSError as exc:
        print(visible(f"handrail mcp: cannot listen on {args.http}: {exc}"), file=sys.stderr)
        return EXIT_USAGE
    except ConfigError as exc:
        print(visible(f"handrail mcp: {exc}"), file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    finally:
        if site is not None:
            site.stop()
    if finished is None:
        return 0
    print(visible(f"handrail mcp: {finished.outcome}: {finished.reason}"), file=sys.stderr)
    return finished.exit_code


def http_address(given: str) -> tuple[str, int] | str:
    """``HOST:PORT`` as (host, port) on loopback, or what is wrong with it."""
    from tui.web.serve import is_loopback

    host, sep, port = given.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        return f"{given}: give HOST:PORT (127.0.0.1:8766, [::1]:8766; port 0 picks a free one)"
    if not is_loopback(host):
        return (
            f"{given}: only a loopback address (127.0.0.1, ::1, localhost): the MCP client "
            "drives a browser with your logins"
        )
    return (host.strip("[]") if host != "localhost" else "127.0.0.1", int(port))


def _serve_http(
    args: argparse.Namespace, settings: RunSettings, secrets: Secrets, http: tuple[str, int]
) -> RunFinished | None:
    from core.mcp.http import TokenError, new_token, serve_http, token_from_file
    from core.run.session import ConfigError

    if args.token_file is not None:
        try:
            token = token_from_file(args.token_file)
        except TokenError as exc:
            raise ConfigError(str(exc)) from None
        where = f"the token in {args.token_file}"
    else:
        token = new_token()
        where = f"token {token}"

    def announce(url: str) -> None:
        print(
            visible(
                f"handrail mcp: serving MCP at {url}; send `Authorization: Bearer <token>` "
                f"({where}; printed once, the key until handrail mcp stops)"
            ),
            file=sys.stdout,  # with --http, stdout is the person's: as serve prints its URL
            flush=True,
        )

    def refused(line: str) -> None:
        print(visible(f"handrail mcp: {line}"), file=sys.stderr, flush=True)

    host, port = http
    return asyncio.run(
        serve_http(
            settings,
            secrets,
            host=host,
            port=port,
            token=token,
            approval_timeout=args.approval_timeout,
            approve_via=args.approve_via,
            announce=announce,
            refused=refused,
        )
    )
