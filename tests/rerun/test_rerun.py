"""``handrail rerun``: a recorded run repeated on a live site, through the real agent loop,
gates, hands and log, in real Chromium; the model path uses the real SDK against the fake
Messages API (which counts requests).

The parcel fixture sites (tests/site/rerun/) share their paths, so a rerun rebased from the
original onto a variant sees the same pages, changed: a renamed button, fields moved (and
re-indexed), a new interstitial page; and a sign-in page for secrets.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from core.audit import read_log, verify
from core.demo import DemoSite, start_demo_site
from core.guard.decision import ApprovalDecision
from core.rerun.rerun import EXTRA_ROUNDS, NO_MODEL, Rerun, run_rerun
from core.run.events import ApprovalRequest, HumanRequest, HumanResponse, RunFinished, Supervisor
from core.run.session import RunSettings, run_session
from tests.helpers.fake_anthropic import FakeAnthropic, MessageReply, tool_use_block
from tests.helpers.site_server import SITE_ROOT, FixtureSite
from tui.cli.demo import demo_settings
from tui.cli.main import build_parser
from tui.console import ConsoleSupervisor

# End to end: whole actions or runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PARCELS = SITE_ROOT / "rerun"
MODEL = "anthropic:claude-sonnet-5-5"
PARCEL_PLAN = [
    {"tool": "navigate", "input": {"url": "{origin}/start.html"}},
    {"tool": "type", "target": "Recipient", "input": {"text": "Ada Lovelace"}},
    {"tool": "type", "target": "City", "input": {"text": "Lyon"}},
    {"tool": "click", "target": "Continue to delivery"},
    {"tool": "select_option", "target": "Speed", "input": {"option": "Express"}},
    {"tool": "click", "target": "Place order"},
    {"tool": "finish", "input": {"success": True, "answer": "The parcel is ordered."}},
]
SIGN_IN_PLAN = [
    {"tool": "type", "target": "Email", "input": {"text": "ada@example.org"}},
    {"tool": "type", "target": "Password", "input": {"text": "<secret:PW>"}},
    {"tool": "click", "target": "Sign in"},
    {"tool": "finish", "input": {"success": True, "answer": "Signed in."}},
]
PASSWORD = "correct-horse-7"


@dataclass
class Person:
    """Approves every action and hands every page back at once; remembers what it saw."""

    asked: list[ApprovalRequest] = field(default_factory=list)
    handed: list[HumanRequest] = field(default_factory=list)

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        self.asked.append(request)
        return ApprovalDecision("approved")

    async def human(self, request: HumanRequest) -> HumanResponse:
        self.handed.append(request)
        return "resume"


def settings_for(tmp: Path, name: str, **kw: Any) -> RunSettings:
    base: dict[str, Any] = {
        "task": "Send a parcel to Ada Lovelace in Lyon, express.",
        "approve": "none",
        "headless": True,
        "profile": tmp / f"profile-{name}",
        "audit_dir": tmp / f"logs-{name}",
        "allow_domains": ("127.0.0.1",),
        "screenshots": False,
    }
    base.update(kw)
    return RunSettings(**base)


def record(tmp: Path, site: FixtureSite, plan: list[dict[str, Any]], **kw: Any) -> Path:
    """Run ``plan`` (a scripted plan) on ``site`` and return its audit log."""
    plan_file = tmp / "plan.jsonl"
    lines = "".join(json.dumps(step) + "\n" for step in plan)
    plan_file.write_text(lines.replace("{origin}", site.origin))
    settings = settings_for(
        tmp, "recorded", start_url=site.url("/start.html"), model_spec=f"scripted:{plan_file}", **kw
    )
    finished = asyncio.run(run_session(settings, supervisor=Person()))
    assert finished.outcome == "success", finished.reason
    (log,) = (tmp / "logs-recorded").glob("*.jsonl")
    return log


def rerun_on(
    tmp: Path,
    log: Path,
    origin: str,
    *,
    model: str = MODEL,
    person: Supervisor | None = None,
    **kw: Any,
) -> RunFinished:
    rerun = Rerun.load(log, [origin])
    settings = rerun.settings(settings_for(tmp, "rerun", model_spec=model, **kw))

    async def go() -> RunFinished:
        finished, _plan = await run_rerun(rerun, settings, supervisor=person or Person())
        return finished

    return asyncio.run(go())


def rerun_log(tmp: Path) -> list[dict[str, Any]]:
    (log,) = (tmp / "logs-rerun").glob("*.jsonl")
    assert verify(log).ok, verify(log).summary()
    return read_log(log).records


def rounds(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r["type"] == "round"]


def click_named(name: str) -> Any:
    """A fake model that clicks the element named ``name`` in the state it is sent."""

    def respond(body: dict[str, Any]) -> Any:
        text = json.dumps(body["messages"][-1], ensure_ascii=False)
        # (The name ends at its closing tag, or with its line.)
        found = re.findall(r"\[(\d+)\]<\w+[^>]*>" + re.escape(name) + r'(?:<|\\n|")', text)
        assert found, f"{name!r} is not in the state sent to the model"
        call = {"index": int(found[-1]), "reason": f"{name} does what the step meant."}
        return MessageReply([tool_use_block("click", call, "toolu_fake_click")], "tool_use")

    return respond


@pytest.fixture(scope="module")
def parcel_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The parcel order, recorded once on the original site."""
    tmp = tmp_path_factory.mktemp("parcel-recording")
    site = FixtureSite(root=PARCELS / "original")
    try:
        return record(tmp, site, PARCEL_PLAN)
    finally:
        site.stop()


@pytest.fixture
def variant(request: pytest.FixtureRequest) -> Iterator[FixtureSite]:
    site = FixtureSite(root=PARCELS / request.param)
    yield site
    site.stop()


def ordered(site: FixtureSite) -> dict[str, list[str]]:
    (post,) = site.posts("/order")
    return post.form


# -- the demo, repeated on a fresh site ---------------------------------------------------------


@pytest.fixture
def demo_sites() -> Iterator[tuple[DemoSite, DemoSite]]:
    first, second = start_demo_site(), start_demo_site()
    yield first, second
    first.stop()
    second.stop()


def test_the_demo_rerun_reaches_the_same_hand_over_without_the_model(
    tmp_path: Path,
    demo_sites: tuple[DemoSite, DemoSite],
    fake: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    recorded_site, fresh_site = demo_sites
    args = build_parser().parse_args(
        ["demo", "--headless", "--approve", "none", "--no-tui", "--audit-dir", str(tmp_path / "d")]
    )
    with monkeypatch.context() as m:
        m.delenv("ANTHROPIC_API_KEY")  # the demo's own scripted plan, not the fake model
        settings = demo_settings(args, site_url=recorded_site.url, work=tmp_path)
    first = asyncio.run(run_session(settings, supervisor=ConsoleSupervisor(interactive=False)))
    assert (first.outcome, first.exit_code) == ("human_needed", 3)
    (log,) = (tmp_path / "d").glob("*.jsonl")

    nobody = ConsoleSupervisor(interactive=False)
    finished = rerun_on(tmp_path, log, fresh_site.url, person=nobody, allow_domains=())

    assert (finished.outcome, finished.exit_code) == ("human_needed", 3)
    assert "payment" in finished.reason and fresh_site.url.rstrip("/") in finished.reason
    assert fake.message_bodies == []
    (was,), (now,) = recorded_site.state()["bookings"], fresh_site.state()["bookings"]
    assert now["passenger"] == was["passenger"]
    assert now["journey_id"] == was["journey_id"]
    assert now["status"] == "details_given"
    records = rerun_log(tmp_path)
    source = read_log(log).records
    assert records[0]["rerun_of"]["run_id"] == source[0]["run_id"]
    assert records[0]["rerun_of"]["head"] == _last_line_hash(log)
    assert {r["decided_by"] for r in rounds(records) if r.get("action")} == {"replayed"}


def _last_line_hash(log: Path) -> str:
    import hashlib

    last = log.read_bytes().rstrip(b"\n").split(b"\n")[-1]
    return hashlib.sha256(last).hexdigest()


# -- changed sites: the model only for the broken step ------------------------------------------


@pytest.mark.parametrize(
    ("variant", "broken", "fix"),
    [
        ("renamed", 1, "Next: delivery options"),
        ("moved", 0, None),
        ("interstitial", 1, "I understand"),
    ],
    indirect=["variant"],
)
def test_a_changed_site_asks_the_model_only_for_the_broken_step(
    tmp_path: Path,
    parcel_log: Path,
    variant: FixtureSite,
    broken: int,
    fix: str | None,
    fake: FakeAnthropic,
) -> None:
    if fix is not None:
        fake.respond_with(click_named(fix))
    finished = rerun_on(tmp_path, parcel_log, variant.origin)
    assert (finished.outcome, finished.exit_code) == ("success", 0), finished.reason
    assert len(fake.message_bodies) == broken
    form = ordered(variant)
    assert (form["recipient"], form["city"], form["speed"]) == (
        ["Ada Lovelace"],
        ["Lyon"],
        ["Express"],
    )
    decided = [r["decided_by"] for r in rounds(rerun_log(tmp_path))]
    assert decided.count("model") == broken
    assert decided.count("replayed") == len(PARCEL_PLAN) - (
        1 if fix == "Next: delivery options" else 0
    )


def test_after_the_model_the_recorded_steps_resume_and_say_which_it_did(
    tmp_path: Path, parcel_log: Path, fake: FakeAnthropic
) -> None:
    site = FixtureSite(root=PARCELS / "renamed")
    try:
        fake.respond_with(click_named("Next: delivery options"))
        finished = rerun_on(tmp_path, parcel_log, site.origin)
    finally:
        site.stop()
    assert finished.exit_code == 0
    (body,) = fake.message_bodies
    told = json.dumps(body["messages"][-1], ensure_ascii=False)
    assert "Continue to delivery" in told and "Next: delivery options" in told
    # The API wants the last call's tool_result first in the turn; the note follows it.
    kinds = [block["type"] for block in body["messages"][-1]["content"]]
    assert kinds[0] == "tool_result"
    assert body["messages"][-1]["content"][1]["text"].startswith("<rerun_note>")
    records = rounds(rerun_log(tmp_path))
    source = [r["round"] for r in rounds(read_log(parcel_log).records)]
    assert [(r["decided_by"], r["source_round"]) for r in records] == [
        ("replayed", source[0]),
        ("replayed", source[1]),
        ("replayed", source[2]),
        ("model", source[3]),  # the renamed button: the model clicked it
        ("replayed", source[4]),  # the recorded steps take over again on the next page
        ("replayed", source[5]),
        ("replayed", source[6]),
    ]
    assert f"The model did what recorded round(s) {source[3]} did" in records[4]["action"]["reason"]


@pytest.mark.parametrize(
    ("variant", "step", "what"),
    [
        ("renamed", 3, "no <button> named 'Continue to delivery'"),
        ("interstitial", 4, "no <select> named 'Speed'"),
    ],
    indirect=["variant"],
)
def test_without_a_model_a_broken_step_stops_with_exit_1_naming_it(
    tmp_path: Path, parcel_log: Path, variant: FixtureSite, step: int, what: str
) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tui.cli.main",
            "rerun",
            str(parcel_log),
            "--rebase",
            variant.origin,
            "--no-tui",
            "--approve",
            "none",
            "--headless",
            "--no-screenshots",
            "--audit-dir",
            str(tmp_path / "logs"),
            "--profile",
            str(tmp_path / "profile"),
        ],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 1, out[-3000:]
    recorded = rounds(read_log(parcel_log).records)[step]
    assert "replayed: Recorded round" in done.stdout  # the console says who decided
    assert f"The rerun stopped at recorded round {recorded['round']} " in out
    assert what in out
    assert not variant.posts("/order")  # nothing past the broken step was done


# -- asking, as in a live run -----------------------------------------------------------------


def test_in_ask_mode_every_replayed_page_changing_step_asks(
    tmp_path: Path, parcel_log: Path
) -> None:
    site = FixtureSite(root=PARCELS / "original")
    person = Person()
    try:
        finished = rerun_on(
            tmp_path, parcel_log, site.origin, model=NO_MODEL, approve="ask", person=person
        )
    finally:
        site.stop()
    assert finished.exit_code == 0, finished.reason
    recorded = rounds(read_log(parcel_log).records)
    asked = [(r.action.name, r.action.reason) for r in person.asked]
    # Every step but finish changes the page: each asked, none was let through on the
    # strength of the recorded approval.
    assert [name for name, _ in asked] == [r["action"]["name"] for r in recorded[:-1]]
    assert all(reason.startswith("Repeating round ") for _, reason in asked)
    # The approval says whose reason it is: the recording's, no model was asked.
    assert {r.reason_by for r in person.asked} == {"recorded"}
    recorded_url = recorded[0]["action"]["params"]["url"]
    assert f"recorded URL {recorded_url}, rebased onto {site.url('/start.html')}" in asked[0][1]
    assert all(r["approval"]["by"] == "person" for r in rounds(rerun_log(tmp_path))[:-1])


# -- secrets ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sign_in_log(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A sign-in recorded with the secret PW, typed as <secret:PW> on 127.0.0.1."""
    tmp = tmp_path_factory.mktemp("sign-in-recording")
    site = FixtureSite(root=PARCELS / "login")
    with pytest.MonkeyPatch.context() as m:
        m.setenv("HANDRAIL_TEST_PW", PASSWORD)
        try:
            log = record(tmp, site, SIGN_IN_PLAN, secrets=("PW=HANDRAIL_TEST_PW@127.0.0.1",))
            (post,) = site.posts("/signed-in")
            assert post.form["password"] == [PASSWORD]
            yield log
        finally:
            site.stop()


def test_a_secret_step_stops_when_the_secret_is_not_configured(
    tmp_path: Path, sign_in_log: Path
) -> None:
    site = FixtureSite(root=PARCELS / "login")
    try:
        finished = rerun_on(tmp_path, sign_in_log, site.origin, model=NO_MODEL)
        assert not site.posts("/signed-in")
    finally:
        site.stop()
    assert finished.exit_code == 1
    password_round = rounds(read_log(sign_in_log).records)[1]["round"]
    assert f"recorded round {password_round} " in finished.answer
    assert "no secret PW is configured now; pass --secret PW=ENVVAR" in finished.answer


@pytest.mark.parametrize(("host", "fills"), [("127.0.0.1", True), ("127.0.0.2", False)])
def test_a_secret_step_fills_only_on_the_secrets_host(
    tmp_path: Path, sign_in_log: Path, monkeypatch: pytest.MonkeyPatch, host: str, fills: bool
) -> None:
    monkeypatch.setenv("HANDRAIL_TEST_PW", PASSWORD)
    site = FixtureSite(host, root=PARCELS / "login")
    try:
        finished = rerun_on(
            tmp_path,
            sign_in_log,
            site.origin,
            model=NO_MODEL,
            secrets=("PW=HANDRAIL_TEST_PW@127.0.0.1",),
        )
        posts = site.posts("/signed-in")
    finally:
        site.stop()
    if fills:
        assert finished.exit_code == 0, finished.reason
        assert posts[0].form["password"] == [PASSWORD]
    else:
        assert finished.exit_code == 1
        assert "<secret:PW> may not be used on '127.0.0.2'" in finished.answer
        assert not posts
    (log,) = (tmp_path / "logs-rerun").glob("*.jsonl")
    assert PASSWORD not in log.read_text()


# -- the observatory ------------------------------------------------------------------------


async def test_the_observatory_marks_each_round_and_shows_the_recorded_step_beside_it(
    tmp_path: Path, parcel_log: Path, fake: FakeAnthropic
) -> None:
    from tests.helpers.tui_driver import wait_until
    from tui.app import HandrailApp

    fake.respond_with(click_named("Next: delivery options"))
    site = FixtureSite(root=PARCELS / "renamed")
    rerun = Rerun.load(parcel_log, [site.origin])
    settings = rerun.settings(settings_for(tmp_path, "rerun", model_spec=MODEL))

    async def start(sink: Any, supervisor: Any) -> RunFinished:
        finished, _plan = await run_rerun(rerun, settings, supervisor=supervisor, sinks=[sink])
        return finished

    app = HandrailApp(start, config_dir=tmp_path / "config", persist_theme=False)
    try:
        async with app.run_test(size=(160, 44)) as pilot:
            await wait_until(
                pilot,
                lambda: app.run_screen is not None and app.run_screen.run_view.finished is not None,
                timeout=90,
            )
            screen = app.run_screen
            assert screen is not None
            labels = [
                screen.timeline.source.row(i).label for i in range(len(screen.timeline.source))
            ]
            assert [label.split(" · ")[0] for label in labels] == [
                "replayed", "replayed", "replayed", "model", "replayed", "replayed", "replayed"
            ]  # fmt: skip
            screen.timeline.focus()
            await pilot.press("home", "down", "down", "down")  # the fourth round
            await pilot.pause()
            shown = screen.panes.pane("model").plain
            recorded = rounds(read_log(parcel_log).records)[3]
            assert f"recorded round {recorded['round']} (model now)" in shown
            assert "Continue to delivery" in shown  # the recorded target...
            assert "Next: delivery options" in screen.panes.pane("digest").plain  # ...and now
    finally:
        site.stop()


async def test_replaying_a_rerun_log_shows_the_recorded_rounds_from_its_source(
    tmp_path: Path, parcel_log: Path
) -> None:
    from tests.helpers.tui_driver import wait_until
    from tui.screens.replay import ReplayApp

    site = FixtureSite(root=PARCELS / "moved")
    try:
        rerun = Rerun.load(parcel_log, [site.origin])
        settings = rerun.settings(settings_for(tmp_path, "rerun", model_spec=NO_MODEL))
        finished, _plan = await run_rerun(rerun, settings, supervisor=Person())
    finally:
        site.stop()
    assert finished.exit_code == 0
    (log,) = (tmp_path / "logs-rerun").glob("*.jsonl")
    app = ReplayApp(log, config_dir=tmp_path / "config", persist_theme=False)
    async with app.run_test(size=(160, 44)) as pilot:
        await wait_until(
            pilot, lambda: app.replay_screen is not None and app.replay_screen.scan_done
        )
        screen = app.replay_screen
        assert screen is not None
        rows = [screen.rows.row(i) for i in range(len(screen.rows))]
        assert sum(row.label.startswith("replayed · ") for row in rows) == len(PARCEL_PLAN)
        screen.timeline.focus()
        await pilot.press("home", "down", "down")  # run_start, then the second round
        await pilot.pause()
        recorded = rounds(read_log(parcel_log).records)[1]
        shown = screen.panes.pane("model").plain
        assert f"recorded round {recorded['round']} (replayed now)" in shown
        assert recorded["element"].lstrip("*~") in shown


# -- finding a target again: the rules, on digests ------------------------------------------


def _state(url: str, *lines: str) -> str:
    return "\n".join(["<browser_state>", f"URL: {url}", "Title: t", "", *lines, "</browser_state>"])


RECORDED = _state(
    "http://shop.test/cart",
    "Blue mug",
    "[4]<button type=button>Remove</button>",
    "Red mug",
    "[5]<button type=button>Remove</button>",
    "[6]<button type=submit>Check out</button>",
)


def _fit(index: int, *lines: str, url: str = "http://shop.test/cart") -> Any:
    from core.rerun import Rebase, find_target, read_digest, recorded_entry

    line = next(e.element.line for e in read_digest(RECORDED).entries if e.element.index == index)
    recorded = recorded_entry(line, RECORDED)
    assert recorded is not None
    return find_target(
        recorded, "http://shop.test/cart", read_digest(_state(url, *lines)), Rebase()
    )


def test_twins_are_told_apart_by_the_text_before_them_even_when_reordered() -> None:
    fit = _fit(
        5,
        "Red mug",
        "[40]<button type=button>Remove</button>",
        "Blue mug",
        "[41]<button type=button>Remove</button>",
    )
    assert fit.found is not None and fit.found.element.index == 40


def test_a_new_twin_of_the_target_makes_the_step_not_fit() -> None:
    fit = _fit(
        6,
        "[50]<button type=submit>Check out</button>",
        "Sponsored",
        "[51]<button type=submit>Check out</button>",
    )
    assert fit.found is None and "2 elements fit equally well" in fit.why


def test_the_same_name_in_a_frame_or_on_another_page_does_not_fit() -> None:
    framed = _fit(6, 'frame "Offers" (ads.test):', "  [60]<button type=submit>Check out</button>")
    assert framed.found is None
    elsewhere = _fit(6, "[61]<a href=/x>Check out</a>", url="http://shop.test/other")
    assert elsewhere.found is None and "no <button> named 'Check out'" in elsewhere.why


def test_a_step_recorded_with_a_role_beside_its_tag_fits_the_role_shown_as_the_tag() -> None:
    from core.rerun import Rebase, find_target, read_digest, recorded_entry

    # Recorded before a line showed the role as its tag: `<div role=gridcell>`.
    recorded_state = _state(
        "http://shop.test/grid",
        "[7]<div role=gridcell>Lyon</div> | [8]<div role=gridcell>40",
        "[9]<div role=gridcell>Paris</div> | [10]<div role=gridcell>55",
    )
    recorded = recorded_entry("[9]<div role=gridcell>Paris</div>", recorded_state)
    assert recorded is not None
    live = _state(
        "http://shop.test/grid",
        "[20]<gridcell>Paris | [21]<gridcell>55",
        "[22]<gridcell>Lyon | [23]<gridcell>40",
        "[24]<div role=presentation>Paris</div>",
        "[25]<input role=gridcell>Paris",
    )
    fit = find_target(recorded, "http://shop.test/grid", read_digest(live), Rebase())
    assert fit.found is not None and fit.found.element.index == 20, fit.why


def test_the_roles_a_line_shows_as_its_tag_are_the_same_for_the_eyes_and_the_rerun() -> None:
    from core.rerun.match import TAG_ROLES

    script = (Path(__file__).parents[2] / "core" / "eyes" / "describe.js").read_text()
    listed = re.search(r"const TAG_ROLES = new Set\(\[(.*?)\]\);", script, re.DOTALL)
    assert listed is not None
    assert set(re.findall(r'"([a-z]+)"', listed[1])) == TAG_ROLES


# -- the demo site on its own ---------------------------------------------------------------


def test_demo_site_only_serves_the_site_until_ctrl_c(tmp_path: Path) -> None:
    import signal
    import urllib.request

    proc = subprocess.Popen(
        [sys.executable, "-m", "tui.cli.main", "demo", "--site-only"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert url, line
        with urllib.request.urlopen(url.group(0) + "api/state", timeout=10) as answer:
            assert json.loads(answer.read())["bookings"] == []
        # Ctrl-C pressed twice, as an impatient person does: still a clean stop.
        proc.send_signal(signal.SIGINT)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0
        assert proc.stderr is not None
        assert "Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def test_redacted_text_is_never_guessed_even_with_a_secret_configured() -> None:
    from core.rerun import RecordedPlan, RecordedRun, RecordedStep
    from core.secrets import Secret, Secrets

    page = _state(
        "http://shop.test/login",
        "[1]<input type=email name=user>Email</input>",
        "[2]<input type=password name=password>Password</input>",
    )
    step = RecordedStep(
        round=3,
        url="http://shop.test/login",
        observation=page,
        name="type",
        params={"index": 2, "text": "«redacted»"},
        reason="the password",
        element="[2]<input type=password name=password>Password</input>",
        result={"ok": True, "message": "typed"},
    )
    recorded = RecordedRun(
        path=Path("recorded.jsonl"),
        run_id="r1",
        head="0" * 64,
        task="sign in",
        start_url=None,
        allow_domains=(),
        max_rounds=30,
        steps=(step,),
        skipped=(),
        ending="success",
    )
    plan = RecordedPlan(recorded, secrets=Secrets([Secret("PW", "hunter2-x", ("shop.test",))]))
    reply = await plan.reply(system="", messages=[{"role": "user", "content": page}], tools=[])
    (call,) = [b for b in reply.content if b["type"] == "tool_use"]
    assert (call["name"], call["input"]["success"]) == ("finish", False)
    assert "recorded round 3" in call["input"]["answer"]
    assert "a rerun never guesses it" in call["input"]["answer"]
    assert reply.origin is not None and reply.origin.decided_by == "stopped"


# -- in a tab pool ------------------------------------------------------------------------------


@pytest.fixture
def pool_name() -> Iterator[str]:
    """A pool of this test's own, stopped after it whatever happened."""
    from core.pool import pool
    from tui.cli.main import dispatch

    name = f"rr{os.getpid() % 1000}"
    yield name
    if (pool.pool_dir(name) / "pool.sqlite3").exists():
        dispatch(["pool", "stop", "--force", "--name", name])


def test_a_rerun_runs_in_a_slot_of_a_tab_pool(
    tmp_path: Path, parcel_log: Path, pool_name: str
) -> None:
    from core.pool import pool
    from tui.cli.main import dispatch

    assert dispatch(["pool", "start", "--headless", "--slots", "1", "--name", pool_name]) == 0
    site = FixtureSite(root=PARCELS / "original")
    try:
        code = dispatch(
            [
                "rerun",
                str(parcel_log),
                "--rebase",
                site.origin,
                "--no-tui",
                "--approve",
                "none",
                "--pool",
                pool_name,
                "--audit-dir",
                str(tmp_path / "logs-rerun"),
            ]
        )
        form = ordered(site)
    finally:
        site.stop()
    assert code == 0
    assert form["speed"] == ["Express"]
    records = rerun_log(tmp_path)
    (slot,) = pool.status(pool_name).slots
    assert (slot.state, slot.run_id) == ("completed", records[0]["run_id"])


def test_an_edited_log_is_refused_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tui.cli.main import dispatch

    forged = tmp_path / "forged.jsonl"
    text = (ROOT / "audit_logs" / "sample-demo.jsonl").read_text(encoding="utf-8")
    forged.write_text(text.replace('"text":"Lyon"', '"text":"Lille"', 1), encoding="utf-8")
    assert dispatch(["rerun", str(forged), "--no-tui", "--audit-dir", str(tmp_path / "logs")]) == 2
    said = capsys.readouterr().err
    assert "does not verify" in said and "was edited after it was written" in said
    assert not (tmp_path / "logs").exists()  # no log, no browser: nothing ran


# -- a question that belonged to a denial (issue 27) -------------------------------------------


@dataclass
class DeniesExpressOnce(Person):
    """Denies the first choice of express delivery; approves everything else."""

    denied: int = 0

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        self.asked.append(request)
        if request.action.name == "select_option" and not self.denied:
            self.denied += 1
            return ApprovalDecision("denied", note="not express")
        return ApprovalDecision("approved")


def test_the_question_asked_about_a_denial_is_not_asked_again_when_nothing_is_denied(
    tmp_path: Path,
) -> None:
    site = FixtureSite(root=PARCELS / "original")
    try:
        plan = [
            *PARCEL_PLAN[:4],
            {"tool": "select_option", "target": "Speed", "input": {"option": "Express"}},
            {"tool": "select_option", "target": "Speed", "input": {"option": "Standard"}},
            *PARCEL_PLAN[5:],
        ]
        plan_file = tmp_path / "plan.jsonl"
        plan_file.write_text(
            "".join(json.dumps(s) + "\n" for s in plan).replace("{origin}", site.origin)
        )
        settings = settings_for(
            tmp_path,
            "recorded",
            approve="ask",
            start_url=site.url("/start.html"),
            model_spec=f"scripted:{plan_file}",
        )
        person = DeniesExpressOnce()
        finished = asyncio.run(run_session(settings, supervisor=person))
        assert finished.outcome == "success", finished.reason
        # The scripted plan asked the person about the denial ("You denied step 5 …").
        assert person.denied == 1 and [h.kind for h in person.handed] == ["ask_human"]
        (log,) = (tmp_path / "logs-recorded").glob("*.jsonl")

        again = Person()
        finished = rerun_on(tmp_path, log, site.origin, model=NO_MODEL, person=again)
        assert finished.outcome == "success", finished.reason
        assert again.handed == []  # nothing was denied: nothing to ask about
        names = [r["action"]["name"] for r in rounds(rerun_log(tmp_path)) if r.get("action")]
        assert "ask_human" not in names, names
        assert site.posts("/order")[-1].form["speed"] == ["Standard"]
    finally:
        site.stop()


def test_the_round_limit_defaults_to_the_recorded_steps_plus_ten() -> None:
    """What ``rerun --help`` says, and so what the header's "round 1 of N" shows, even when
    the recorded run was allowed more rounds (the sample demo: 40, for 18 steps)."""
    sample = ROOT / "audit_logs" / "sample-demo.jsonl"
    rerun = Rerun.load(sample, ["http://127.0.0.1:9"], trust_log=True)
    assert rerun.recorded.max_rounds > len(rerun.recorded.steps) + EXTRA_ROUNDS
    settings = rerun.settings(RunSettings(task="again"), start_url=None, allow_domains=[])
    assert settings.max_rounds == len(rerun.recorded.steps) + EXTRA_ROUNDS
    assert "the recorded steps plus 10" in " ".join(
        build_parser().command("rerun").format_help().split()
    )
