"""``handrail demo``: the whole job on a bundled booking site, with no key and no network.

Starts the Rail & Co site on 127.0.0.1, launches Chromium (headed when there is a display)
with a fresh profile, and runs the fixed demo task under supervision. With
``ANTHROPIC_API_KEY`` set it uses Claude (or ``--model``); without one it replays the
bundled scripted plan, and the header says "scripted plan", never a model name.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from core.demo import DEMO_TASK, start_demo_site
from core.demo.plan import write_demo_plan
from core.model.spec import DEFAULT_SPEC, spec_label
from core.run.phases import first_phase
from tui.cli.launch import NO_DISPLAY, has_display
from tui.cli.run_options import audit_dir_of

if TYPE_CHECKING:
    from core.run.session import RunSettings


PLAN_NAME = "rail-and-co-plan.jsonl"
"""The bundled plan's file name in the demo's work folder (the header shows it)."""


def demo_spec(args: argparse.Namespace, *, plan: Path) -> str:
    """The demo's ``--model`` spec: ``--model``, else Claude when ANTHROPIC_API_KEY is set,
    else the bundled plan at ``plan`` (written by :func:`demo_settings`)."""
    if args.model:
        return str(args.model)
    if os.environ.get("ANTHROPIC_API_KEY"):
        return DEFAULT_SPEC
    return f"scripted:{plan}"


def demo_settings(args: argparse.Namespace, *, site_url: str, work: Path) -> RunSettings:
    """The demo run's settings: model from --model, the key, or the bundled plan."""
    from core.run.session import RunSettings

    plan = work / PLAN_NAME
    spec = demo_spec(args, plan=plan)
    if spec == f"scripted:{plan}":
        write_demo_plan(plan, date.today())
    headless = bool(args.headless) or (not args.headed and not has_display())
    return RunSettings(
        task=DEMO_TASK,
        start_url=site_url,
        model_spec=spec,
        approve=args.approve or "ask",
        policy=getattr(args, "policy", None),
        max_rounds=40,
        max_tokens=getattr(args, "max_tokens", None),
        max_cost=getattr(args, "max_cost", None),
        max_time=getattr(args, "max_time", None),
        headless=headless,
        profile=work / "chrome-profile",
        allow_domains=("127.0.0.1",),
        audit_dir=audit_dir_of(args),
        console_log=bool(args.no_tui),
        pool=args.pool,
    )


def serve_site_only(port: int) -> int:
    """``handrail demo --site-only``: serve the booking site, print its URL, run until
    Ctrl-C, SIGTERM or a closed terminal (then exit 0). A recorded demo run can be repeated
    against it with ``handrail rerun LOG --rebase URL``.

    The ending signals are blocked before the server thread starts (so it inherits the
    mask) and then waited for: however early or late one arrives, and however many, it
    is taken here, never raised as KeyboardInterrupt in the middle of the start or stop.
    """
    ending = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    signal.pthread_sigmask(signal.SIG_BLOCK, ending)
    try:
        site = start_demo_site(port=port)
    except OSError as exc:
        print(f"handrail demo: cannot serve on port {port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    try:
        print(f"Rail & Co is at {site.url} (Ctrl-C to stop)", flush=True)
        signal.sigwait(ending)
        print("\nhandrail demo: the site stopped", file=sys.stderr)
    finally:
        site.stop()
    return 0


def run_demo(args: argparse.Namespace) -> int:
    from tui.cli.launch import headless_notice, run_console, run_observatory

    if args.site_only:
        return serve_site_only(args.port)
    site = start_demo_site(port=args.port)
    work = Path(tempfile.mkdtemp(prefix="handrail-demo-"))

    def settings() -> RunSettings:
        # The work folder is ours alone: the browser's reaper removes it even if we are killed.
        return replace(demo_settings(args, site_url=site.url, work=work), remove_on_exit=(work,))

    chosen_headless = not args.headless and not args.headed and not has_display()
    try:
        if args.no_tui:
            return run_console(settings(), notice=headless_notice() if chosen_headless else None)
        return run_observatory(
            settings,
            task=DEMO_TASK,
            theme=args.theme,
            model=spec_label(demo_spec(args, plan=work / PLAN_NAME), base_url=None, env=os.environ),
            phase=first_phase(cdp_url=None, connect=False, pool=args.pool),
            headless_cause=NO_DISPLAY if chosen_headless else None,
        )
    finally:
        site.stop()
        shutil.rmtree(work, ignore_errors=True)
