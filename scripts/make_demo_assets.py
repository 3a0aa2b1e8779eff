"""Regenerate the README's screenshot and the committed sample audit log from a real demo.

Runs `handrail demo`'s scripted plan in the real observatory (Textual's headless pilot),
real headless Chromium and the bundled Rail & Co site, approving each action as a person
would with `a`, and declining to pay at the payment hand-over with `x`. Writes:

- docs/run-screen.svg          the run screen with an approval request open
- audit_logs/sample-demo.jsonl the run's audit log, sealed with the demo key and verified
- audit_logs/sample-demo.key   that key, public on purpose (created when missing): it lets
                               anyone check the sample's seal with
                               `handrail verify --key audit_logs/sample-demo.key ...`;
                               it proves nothing about any other log

    .venv/bin/python scripts/make_demo_assets.py
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import sys
import tempfile
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.audit import key_from_file, read_log, verify  # noqa: E402
from core.audit.key import DATA_DIR_ENV, KEY_FILE  # noqa: E402
from core.demo import DEMO_TASK, start_demo_site  # noqa: E402
from core.demo.plan import write_demo_plan  # noqa: E402
from core.run.events import EventSink, RunFinished, Supervisor  # noqa: E402
from core.run.session import RunSettings, prepare, run_session  # noqa: E402
from tui.app import HandrailApp  # noqa: E402
from tui.screens.approval import ApprovalScreen  # noqa: E402
from tui.screens.human_pause import HumanPauseScreen  # noqa: E402

SCREENSHOT_AT_APPROVAL = 14  # the seat map: a busy, telling moment
SIZE = (150, 44)
DEMO_KEY = ROOT / "audit_logs" / "sample-demo.key"


def use_demo_key(data_dir: Path) -> None:
    """Seal this process's logs with the committed demo key, not the installation's."""
    if not DEMO_KEY.exists():
        DEMO_KEY.write_text(secrets.token_bytes(32).hex() + "\n")
    data_dir.mkdir(mode=0o700)
    key = data_dir / KEY_FILE
    key.write_bytes(key_from_file(DEMO_KEY).secret)
    key.chmod(0o600)
    os.environ[DATA_DIR_ENV] = str(data_dir)


async def main() -> int:
    site = start_demo_site()
    work = Path(tempfile.mkdtemp(prefix="handrail-assets-"))
    try:
        use_demo_key(work / "data")
        plan = write_demo_plan(work / "rail-and-co-plan.jsonl", date.today())
        settings = RunSettings(
            task=DEMO_TASK,
            start_url=site.url,
            model_spec=f"scripted:{plan}",
            approve="ask",
            max_rounds=40,
            headless=True,
            profile=work / "profile",
            allow_domains=("127.0.0.1",),
            audit_dir=work / "logs",
        )

        async def start(sink: EventSink, supervisor: Supervisor) -> RunFinished:
            prepared = await prepare(settings)
            return await run_session(
                settings, supervisor=supervisor, sinks=[sink], prepared=prepared
            )

        app = HandrailApp(start, theme="dark", config_dir=work / "config", persist_theme=False)
        approvals = 0
        paused = False
        async with app.run_test(size=SIZE) as pilot:
            while app.exit_code is None:
                await pilot.pause(0.05)
                screen = app.screen
                if isinstance(screen, ApprovalScreen):
                    approvals += 1
                    if approvals == SCREENSHOT_AT_APPROVAL:
                        await pilot.pause(0.3)
                        app.save_screenshot(filename="run-screen.svg", path=str(ROOT / "docs"))
                    await pilot.press("a")
                    await pilot.pause(0.05)
                elif isinstance(screen, HumanPauseScreen):
                    paused = True
                    print(f"hand-over: {screen.request.kind}: {screen.request.detail}")
                    await pilot.press("x")
        (log,) = (work / "logs").glob("*.jsonl")
        records = read_log(log).records
        if not paused or records[-1].get("outcome") != "aborted":
            print(f"the demo did not end at the payment hand-over: {records[-1]}", file=sys.stderr)
            return 1
        report = verify(log, key_from_file(DEMO_KEY))
        if report.status != "sealed":
            print(f"the log does not verify as sealed: {report.summary()}", file=sys.stderr)
            return 1
        target = ROOT / "audit_logs" / "sample-demo.jsonl"
        shutil.copyfile(log, target)
        rounds = sum(1 for r in records if r["type"] == "round")
        print(f"{target.relative_to(ROOT)}: {rounds} rounds, {approvals} approvals, sealed")
        print(f"docs/run-screen.svg: approval {SCREENSHOT_AT_APPROVAL}")
        return 0
    finally:
        site.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
