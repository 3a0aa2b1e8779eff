"""Text from outside reaches the person's terminal shown, never obeyed.

A model's answer, a page's title, a log from elsewhere: each may hold an OSC 52 (a write to the
clipboard), an ``ESC [ 2 J`` (a cleared screen), a C1 CSI (U+009B) or a bidi override
(U+202E). The observatory draws them and the summary prints them; what Textual would write to
the terminal (``terminal_text``) must carry none of them, and show ``␛]52;c;…`` instead.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual.content import Content, Span

from core.actions import Action
from core.result import ActionResult
from core.run.events import EventSink, RunFinished
from core.visible import visible
from tests.helpers.tui_driver import (
    BOOKING_DIGEST,
    RoundScript,
    UiTestDriver,
    still_clock,
    wait_until,
    write_driver_log,
)
from tui.app import HandrailApp
from tui.cli.launch import summary_of, summary_text
from tui.observatory import ObservatoryApp
from tui.screens.pool_screen import PoolRow, PoolScreen
from tui.screens.replay import ReplayApp
from tui.screens.run_screen import finish_text
from tui.widgets.panes import visible_content

ROOT = Path(__file__).resolve().parents[2]

OSC52 = "\x1b]52;c;aGFuZHJhaWw=\x07"
CLEAR = "\x1b[2J"
LINK = "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\"
C1_CSI = "\x9b2J"
BIDI = "\u202eexe.txt\u202c"
ATTACK = OSC52 + CLEAR + LINK + C1_CSI + BIDI + "\rOVER\b\b"
SHOWN = ("␛]52;c;aGFuZHJhaWw=", "␛[2J", "␛]8;;https://evil.example/", "⟨U+009B⟩2J", "⟨U+202E⟩exe")

_TEXTUAL_OWN = re.compile(r"\x1b\[[0-9;]*m|\x1b\[[0-9]+;[0-9]+H")
"""The sequences Textual itself writes for a screen: colours (SGR) and cursor moves (CUP)."""
_OBEYED = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What a terminal would act on rather than show (written out here, not taken from
core.visible, so the test does not trust the code it tests)."""


def terminal_text(app: Any) -> str:
    """What the app would write to a real terminal to draw its current screen: the full
    update ``App._display`` sends (a headless test has no driver that writes it)."""
    update = app.screen._compositor.render_full_update()
    return str(update.render_segments(app.console))


def obeyed(text: str) -> list[str]:
    """The characters of ``text`` a terminal would obey, Textual's own sequences aside."""
    return _OBEYED.findall(_TEXTUAL_OWN.sub("", text).replace("\n", ""))


def hostile_driver(*, ask: bool = False, human: bool = False) -> UiTestDriver:
    """One round where everything from outside carries ``ATTACK``: the task, the page's
    title, URL and digest, the model's prose, its reason and answer, a secret's name in a
    parameter, the target's name, and a result naming a downloaded file."""
    return UiTestDriver(
        task="Summarise the page " + ATTACK,
        rounds=[
            RoundScript(
                digest=BOOKING_DIGEST + "\nPage text " + ATTACK,
                url="http://127.0.0.1:8765/" + ATTACK,
                title="Title " + ATTACK,
                text="Prose " + ATTACK,
                action=Action(
                    "type",
                    {"index": 3, "text": f"<secret:PW{ATTACK}>"},
                    "Reason " + ATTACK,
                    "tu_1",
                ),
                element_line=f"[3]<a href=/>Home {ATTACK}</a>",
                ask=("asks because " + ATTACK) if ask else None,
                human="captcha" if human else None,
                human_detail="Detail " + ATTACK,
                result=ActionResult.success(f"Downloaded report{ATTACK}.pdf"),
            ),
        ],
    )


@dataclass
class AnsweringDriver(UiTestDriver):
    """The driver's run, finishing with ``answer`` (the model's final words)."""

    answer: str = ""

    def _finish(
        self, sink: EventSink, outcome: str, rounds: int, code: int, answer: str = ""
    ) -> RunFinished:
        return super()._finish(sink, outcome, rounds, code, self.answer)


def make_app(driver: UiTestDriver, tmp_path: Path) -> HandrailApp:
    return HandrailApp(driver, config_dir=tmp_path, clock=still_clock, persist_theme=False)


# -- the sanitiser's extensions -----------------------------------------------------------


def test_one_line_text_cannot_start_a_second_line() -> None:
    shown = visible("/x\nhandrail serve: open http://evil/\tq", one_line=True)
    assert shown == "/x␊handrail serve: open http://evil/␉q"
    assert visible("a\n\tb") == "a\n\tb"  # text meant to span lines keeps its breaks


def test_a_limit_cuts_the_text_and_says_how_much_was_cut() -> None:
    assert visible("/" + "a" * 500, limit=10) == "/aaaaaaaaa… (491 more characters)"
    assert visible("short", limit=10) == "short"


def test_showing_twice_shows_the_same() -> None:
    once = visible(ATTACK + "\u2066\x7f\x00")
    assert visible(once) == once and not obeyed(once)


def test_a_styled_body_keeps_its_styles_on_the_same_characters() -> None:
    body = Content.assemble(("\x1b[2J", "red"), " plain ", ("\x9bbold", "bold"))
    shown = visible_content(body)
    assert shown.plain == "␛[2J plain ⟨U+009B⟩bold"
    styled = {shown.plain[span.start : span.end]: span.style for span in shown.spans}
    assert styled == {"␛[2J": "red", "⟨U+009B⟩bold": "bold"}
    plain = Content.assemble(("safe", "red"))
    assert visible_content(plain) is plain
    assert visible_content(Content("x", [Span(0, 1, "b")])).spans == [Span(0, 1, "b")]


# -- the observatory ----------------------------------------------------------------------


async def test_the_observatory_shows_outside_text_and_never_sends_its_controls(
    tmp_path: Path,
) -> None:
    driver = hostile_driver()
    app = make_app(driver, tmp_path)
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_until(pilot, lambda: app.exit_code is not None)
        await pilot.pause()
        assert app.run_screen is not None
        panes = app.run_screen.panes
        screen = terminal_text(app)
        assert obeyed(screen) == []
        for fragment in ("␛]52;c;aGFuZHJhaWw=", "⟨U+202E⟩exe"):
            assert fragment in screen
        model, action = panes.pane("model").plain, panes.pane("action").plain
        for shown in SHOWN:
            assert shown in model and shown in action and shown in panes.pane("digest").plain
        assert "Downloaded report␛]52;c;" in panes.pane("result").plain
        # In JSON an ESC is already written \u001b; a C1 or a bidi override is not.
        assert "<secret:PW\\u001b]52;c;" in action and "\\u0007\\u001b[2J" in action
        assert "⟨U+009B⟩2J⟨U+202E⟩exe.txt⟨U+202C⟩\\rOVER" in action
        assert "Summarise the page ␛]52;c;" in str(app.run_screen.header.render())


async def test_the_timeline_row_shows_a_target_named_with_controls(tmp_path: Path) -> None:
    driver = hostile_driver()
    app = make_app(driver, tmp_path)
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_until(pilot, lambda: app.exit_code is not None)
        await pilot.pause()
        assert app.run_screen is not None
        timeline = app.run_screen.timeline
        rows = [timeline.render_line(y).text for y in range(timeline.size.height)]
        (row,) = [row for row in rows if "Home" in row]
        assert "Home ␛]52" in row and obeyed(row) == []


async def test_a_replayed_log_from_elsewhere_shows_its_broken_lines_escaped(
    tmp_path: Path,
) -> None:
    log = await write_driver_log(tmp_path / "run.jsonl")
    lines = log.read_bytes().splitlines(keepends=True)
    junk = ("not json " + ATTACK + "\n").encode()
    log.write_bytes(b"".join([*lines[:2], junk, *lines[2:]]))
    app = ReplayApp(log, config_dir=tmp_path / "config", persist_theme=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(
            pilot, lambda: app.replay_screen is not None and app.replay_screen.scan_done
        )
        screen = app.replay_screen
        assert screen is not None
        (problem,) = [i for i, e in enumerate(screen.rows.entries) if e.kind == "problem"]
        screen.select_row(problem)
        await wait_until(pilot, lambda: "not json" in screen.panes.pane("digest").plain)
        await pilot.pause()
        assert "not json ␛]52;c;aGFuZHJhaWw=" in screen.panes.pane("digest").plain
        assert obeyed(terminal_text(app)) == []


async def test_the_approval_screen_never_sends_outside_controls(tmp_path: Path) -> None:
    driver = hostile_driver(ask=True)
    app = make_app(driver, tmp_path)
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_until(pilot, lambda: bool(app.screen.query("#approval-target")))
        await pilot.pause()
        assert obeyed(terminal_text(app)) == []


async def test_the_hand_over_screen_never_sends_outside_controls(tmp_path: Path) -> None:
    driver = hostile_driver(human=True)
    app = make_app(driver, tmp_path)
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "human")
        await wait_until(pilot, lambda: bool(app.screen.query("#human-detail")))
        await pilot.pause()
        assert obeyed(terminal_text(app)) == []


def test_the_run_finished_notice_shows_the_models_answer_and_reason_never_obeyed() -> None:
    # The toast the run screen shows when the run ends (RunScreen._finished).
    text = finish_text(
        RunFinished("failure", "Found it " + ATTACK, 3, 1, reason="Because " + CLEAR)
    )
    assert "Found it ␛]52;c;aGFuZHJhaWw=␇␛[2J" in text and "Because ␛[2J" in text
    assert obeyed(text) == []


async def test_the_notice_the_observatory_shows_at_the_end_never_sends_controls(
    tmp_path: Path,
) -> None:
    app = make_app(AnsweringDriver(rounds=[], answer="Found it " + ATTACK), tmp_path)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: app.exit_code is not None)
        await wait_until(pilot, lambda: any("Found it" in n.message for n in app._notifications))
        (message,) = [n.message for n in app._notifications if "Found it" in n.message]
    assert "Found it ␛]52;c;aGFuZHJhaWw=" in message and obeyed(message) == []


class HostilePool(ObservatoryApp):
    """The pool screen with a slot whose task, page URL and title carry controls."""

    CSS_PATH = str(ROOT / "tui" / "observatory.tcss")

    def on_mount(self) -> None:
        rows = [
            PoolRow("1", "completed", "3f2a9c01", "Order " + ATTACK, "2/30", "",
                    "http://shop.example/" + ATTACK, key="3f2a9c01"),
        ]  # fmt: skip
        self.push_screen(PoolScreen(lambda: ("pool " + OSC52, rows), hint=""))


async def test_the_pool_screen_shows_a_slots_page_and_task_never_obeyed(tmp_path: Path) -> None:
    app = HostilePool(config_dir=tmp_path, persist_theme=False)
    async with app.run_test(size=(200, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, PoolScreen) and app.screen.rows)
        await pilot.pause()
        screen = terminal_text(app)
    assert "Order ␛]52;c;" in screen and obeyed(screen) == []


# -- what is printed once the screen has closed -------------------------------------------


async def test_the_summary_shows_the_models_answer_and_never_sends_its_controls(
    tmp_path: Path,
) -> None:
    app = make_app(AnsweringDriver(rounds=[], answer="Found it " + ATTACK), tmp_path)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: app.exit_code is not None)
    summary = summary_of(app, 0)
    assert "  answer:    Found it ␛]52;c;aGFuZHJhaWw=␇␛[2J␛]8;;https://evil.example/" in summary
    assert obeyed(summary) == []


def test_the_summary_answer_keeps_its_lines_and_shows_every_control() -> None:
    text = summary_text(
        outcome="success",
        answer=f"First {OSC52}\nSecond {C1_CSI}{BIDI}\rOVER",
        exit_code=0,
        audit_path=f"logs/{CLEAR}.jsonl",
    )
    lines = text.split("\n")
    assert lines[1] == "  answer:    First ␛]52;c;aGFuZHJhaWw=␇"
    assert lines[2] == "             Second ⟨U+009B⟩2J⟨U+202E⟩exe.txt⟨U+202C⟩␍OVER"
    assert lines[3] == "  audit log: logs/␛[2J.jsonl"
    assert obeyed(text) == []


def test_a_crash_message_in_the_summary_is_shown_too() -> None:
    text = summary_text(
        outcome="crashed", answer=f"RuntimeError: {LINK}", exit_code=1, audit_path=None
    )
    assert "␛]8;;https://evil.example/␛\\click" in text and obeyed(text) == []


# -- no terminal write bypasses the sanitiser ---------------------------------------------

SANITISED_BY = {
    "visible": "core.visible.visible, the sanitiser",
    "summary_text": "returns visible(...) of its lines",
    "summary_of": "returns summary_text(...)",
    "headless_notice": "returns handrail's own words, no outside text",
    "finish_text": "returns visible(...) of the run-finished notice",
}
"""Calls whose result is safe to write to a terminal."""

TERMINALS = {
    "sys.stdout",
    "sys.stderr",
    "sys.stdout.buffer",
    "sys.stderr.buffer",
    "self.out",
    "out",
}
"""What a ``.write(...)`` call's receiver is named when it is the terminal."""

REVIEWED: dict[tuple[str, str], tuple[int, str]] = {
    ("core/mcp/http.py", "token_from_file"): (1, "a random token into the person's file"),
    ("core/run/session.py", "_end_lease"): (1, "pool name (repr) and a PoolError of our words"),
    ("core/run/session.py", "_flush_audit"): (1, "the audit path (the person's) and an OSError"),
    ("tui/cli/demo.py", "serve_site_only"): (2, "a port, an OSError and our demo site's URL"),
    ("tui/cli/doctor.py", "run_doctor"): (1, "its report: its own colours, this machine's facts"),
    ("tui/cli/main.py", "_VersionAction.__call__"): (1, "the program name and version"),
    ("tui/cli/main.py", "_rerun"): (1, "the log path and its seal text are visible() inside"),
    ("tui/cli/main.py", "_where_confirmed"): (1, "start URL and hosts are visible() just above"),
    ("tui/cli/main.py", "_verify"): (3, "the person's paths; log content is quoted with !r"),
    ("tui/cli/main.py", "_key_export"): (3, "the key (hex), its source path and id"),
    ("tui/cli/main.py", "_replay"): (1, "the person's log path and our words"),
    ("tui/cli/pool.py", "run_pool"): (1, "pool names (checked) and our words"),
    ("tui/cli/pool.py", "_watch"): (1, "a PoolError of our words"),
    ("tui/cli/pool.py", "_act"): (4, "pool names (checked), slot numbers, our JSON (escaped)"),
    ("tui/screens/replay.py", "run_replay"): (1, "the person's log path and an OSError"),
    ("tui/screens/replay.py", "ReplayScreen._find"): (
        1,
        "our words; the query the person typed, as repr",
    ),
    ("tui/screens/pool_screen.py", "PoolScreen.action_open"): (1, "a toast with a slot number"),
    ("tui/screens/replay.py", "ReplayScreen._say_which"): (1, "our words and two counts"),
}
"""Terminal writes with arguments the check cannot see are safe, by file and function: how
many there are, and why each was judged safe (or what is still to do)."""


def _call_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else ""


def _safe(arg: ast.expr) -> bool:
    if isinstance(arg, ast.Constant):
        return isinstance(arg.value, str)
    if isinstance(arg, ast.JoinedStr):
        return all(isinstance(part, ast.Constant) for part in arg.values)
    return isinstance(arg, ast.Call) and _call_name(arg.func) in SANITISED_BY


class _Writes(ast.NodeVisitor):
    """Each ``print(...)``, terminal ``.write(...)`` or Textual ``.notify(...)`` (a toast)
    with an argument not known to be safe, by the function it is in."""

    def __init__(self) -> None:
        self.scope: list[str] = []
        self.found: Counter[str] = Counter()

    def _enter(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _enter

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        printing = isinstance(func, ast.Name) and func.id == "print"
        writing = (
            isinstance(func, ast.Attribute)
            and func.attr == "write"
            and ast.unparse(func.value) in TERMINALS
        )
        toast = isinstance(func, ast.Attribute) and func.attr == "notify"
        shown = [*node.args, *(k.value for k in node.keywords if toast and k.arg == "message")]
        if (printing or writing or toast) and not all(_safe(arg) for arg in shown):
            self.found[".".join(self.scope) or "<module>"] += 1
        self.generic_visit(node)


def unsanitised_writes() -> dict[tuple[str, str], int]:
    found: dict[tuple[str, str], int] = {}
    for path in sorted([*ROOT.glob("core/**/*.py"), *ROOT.glob("tui/**/*.py")]):
        writes = _Writes()
        writes.visit(ast.parse(path.read_text(), str(path)))
        rel = path.relative_to(ROOT).as_posix()
        found.update({(rel, scope): count for scope, count in writes.found.items()})
    return found


def test_every_terminal_write_goes_through_the_sanitiser_or_was_reviewed() -> None:
    found = unsanitised_writes()
    new = {key: count for key, count in found.items() if count > REVIEWED.get(key, (0, ""))[0]}
    assert not new, (
        "a print or terminal write whose text may come from outside: wrap it in "
        f"core.visible.visible(...), or review it and add it to REVIEWED: {new}"
    )
    gone = {key for key, (count, _why) in REVIEWED.items() if found.get(key, 0) < count}
    assert not gone, f"REVIEWED lists writes that are gone or now sanitised; update it: {gone}"


def test_the_check_sees_an_unsanitised_write() -> None:
    writes = _Writes()
    writes.visit(ast.parse("def f(t):\n print(t)\n sys.stderr.write(f'{t}')\n print(visible(t))"))
    assert writes.found == Counter({"f": 2})


def test_the_check_sees_a_toast_of_outside_text() -> None:
    writes = _Writes()
    writes.visit(
        ast.parse(
            "def f(t):\n self.app.notify(f'{t}')\n self.notify(message=t)\n"
            " self.notify(visible(t), markup=False)\n self.notify('ours')"
        )
    )
    assert writes.found == Counter({"f": 2})
