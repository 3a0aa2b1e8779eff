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
import sys
import tempfile
from dataclasses import replace
from datetime import date
from pathlib import Path

from core.demo import DEMO_TASK, start_demo_site
from core.demo.plan import write_demo_plan
from core.model.spec import DEFAULT_SPEC
from core.session import RunSettings


def has_display(env: dict[str, str] | os._Environ[str] | None = None) -> bool:
    env = os.environ if env is None else env
    if sys.platform == "darwin" or sys.platform.startswith("win"):
        return True
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def demo_settings(args: argparse.Namespace, *, site_url: str, work: Path) -> RunSettings:
    """The demo run's settings: model from --model, the key, or the bundled plan."""
    if args.model:
        spec = args.model
    elif os.environ.get("ANTHROPIC_API_KEY"):
        spec = DEFAULT_SPEC
    else:
        plan = write_demo_plan(work / "rail-and-co-plan.jsonl", date.today())
        spec = f"scripted:{plan}"
    headless = bool(args.headless) or (not args.headed and not has_display())
    return RunSettings(
        task=DEMO_TASK,
        start_url=site_url,
        model_spec=spec,
        approve=args.approve or "ask",
        max_rounds=40,
        headless=headless,
        profile=work / "chrome-profile",
        allow_domains=("127.0.0.1",),
        audit_dir=args.audit_dir,
        console_log=bool(args.no_tui),
        theme=args.theme,
    )


def run_demo(args: argparse.Namespace) -> int:
    from tui.cli import run_console, run_observatory

    site = start_demo_site()
    work = Path(tempfile.mkdtemp(prefix="handrail-demo-"))
    try:
        # The work folder is ours alone: the browser's reaper removes it even if we are killed.
        settings = replace(
            demo_settings(args, site_url=site.url, work=work), remove_on_exit=(work,)
        )
        if args.no_tui:
            return run_console(settings)
        return run_observatory(settings)
    finally:
        site.stop()
        shutil.rmtree(work, ignore_errors=True)
