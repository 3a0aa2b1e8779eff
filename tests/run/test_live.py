"""A live run's socket (``handrail attach``): who may connect, who holds the gate, and what
crosses it. The socket is a boundary to other local users; these tests are theirs too."""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
import shutil
import socket
import stat
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from core.actions import Action
from core.audit.key import DATA_DIR_ENV
from core.audit.records import ApprovalRecord, ScreenshotRef
from core.guard.decision import ApprovalDecision, RuleRef
from core.guard.rules import Budget
from core.result import ActionResult, Changes
from core.run.budget import Spent
from core.run.events import (
    ActionDone,
    ApprovalRequest,
    BudgetSpent,
    HumanRequest,
    HumanResponse,
    NoSupervisor,
    Observed,
    RunFinished,
    RunStarted,
    TargetCrop,
)
from core.run.live import (
    MAX_LINE_IN,
    LiveClient,
    LiveError,
    LiveRun,
    LiveSupervisor,
    follow,
    live_folder,
    live_runs,
    match_run,
)
from core.run.wire import WireError, decode, dumps, encode, loads

WAIT = 30.0


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data folder of this test's own: no other test's runs are live in it."""
    path = tmp_path / "data"
    monkeypatch.setenv(DATA_DIR_ENV, str(path))
    return path


def request(round_: int = 1) -> ApprovalRequest:
    return ApprovalRequest(
        round=round_,
        action=Action("click", {"index": 3}, reason="send it"),
        url="http://127.0.0.1:1/form",
        title="Form",
        why="every page-changing action asks",
        element_line="[3]<button>Send</button>",
        details=("Form: POST /send",),
        crop=TargetCrop(b"\x89PNG fake bytes", (1, 2, 3, 4)),
        target_name="Send",
    )


class Local:
    """The supervisor of the run's own process: records what it was asked."""

    def __init__(self, holder: str | None = None) -> None:
        self.holder = holder
        self.asked: list[ApprovalRequest] = []

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        self.asked.append(request)
        return ApprovalDecision("denied", by="local", note="asked locally")

    async def human(self, request: HumanRequest) -> HumanResponse:
        raise NoSupervisor("nobody here")


@contextlib.asynccontextmanager
async def live(
    local_holder: str | None = None, run_id: str = "0123456789ab"
) -> AsyncIterator[LiveRun]:
    run = LiveRun(run_id, "book a seat", Path("/logs/run.jsonl"), local_holder=local_holder)
    await run.start()
    assert run.problem is None, run.problem
    try:
        yield run
    finally:
        await run.close()


async def next_of(client: LiveClient, kind: str) -> dict[str, Any]:
    async with asyncio.timeout(WAIT):
        while True:
            line = await client.reader.readuntil(b"\n")
            message = loads(line)
            if message["type"] == kind:
                return message


# -- what crosses ------------------------------------------------------------------------


def test_every_event_crosses_whole_and_comes_back_equal() -> None:
    spent = Spent(tokens=10, cost=None, seconds=1.5, limits=Budget(max_tokens=100))
    events = [
        RunStarted("id", "task", "model", "launched", 20, settings={"$policy": {"a": [1]}}),
        Observed(
            2,
            "http://x/",
            "X",
            "<browser_state>…</browser_state>",
            tabs=("a", "b"),
            screenshot=ScreenshotRef("run/1.jpg", "ab" * 32, masked=1),
        ),
        BudgetSpent(3, spent, warn=("tokens",)),
        ActionDone(
            4,
            Action("type", {"index": 1, "text": "<secret:PIN>"}),
            ActionResult.success("typed", Changes(dom_changed=True), data={"$x": (1, 2)}),
            ApprovalRecord("approved", "person", rule=RuleRef(2, "action = type", None, "ff")),
            model_output=({"type": "text", "text": "hi"},),
        ),
        RunFinished("success", "done", 4, 0, spent=spent.to_json()),
    ]
    for event in events:
        assert loads(dumps({"type": "event", "event": event}))["event"] == event


def test_a_line_names_only_what_may_cross() -> None:
    for line, why in [
        (b'{"type":"event","event":{"$":"Popen","args":["sh"]}}', "unknown kind"),
        (b'{"type":"event","event":{"$":"Action","name":"x","nope":1}}', "unexpected keyword"),
        (b'{"type":"x","v":{"$bytes":"***"}}', "not base64"),
        (b'{"type":"x","v":{"$tuple":1}}', "holds no list"),
        (b'{"type":"x","v":{"$evil":1,"b":2}}', "no tag"),
        (b"[" * 5000 + b"]" * 5000, "JSON"),
        (b'{"type":"x","v":' + b'{"a":' * 300 + b"1" + b"}" * 301, "deeper"),
        (b"[1]", "object with a type"),
        (b"\xff\xfe", "JSON"),
    ]:
        with pytest.raises(WireError, match=why):
            loads(line)
    with pytest.raises(WireError):
        encode(object())
    assert decode(encode({"$tuple": "page data"})) == {"$tuple": "page data"}


# -- who answers ---------------------------------------------------------------------------


async def test_an_attached_terminal_holds_the_gate_and_its_answer_is_the_persons() -> None:
    local = Local()
    async with live() as run:
        supervisor = LiveSupervisor(local, run, wait=WAIT)
        asking = asyncio.create_task(supervisor.approve(request()))
        client = await LiveClient.connect(run.run_id)
        assert client.role == "holder" and client.welcome["task"] == "book a seat"
        ask = await next_of(client, "ask")
        assert ask["request"] == request()  # the picture and the target came along
        client.send(
            {
                "type": "answer",
                "id": ask["id"],
                "answer": ApprovalDecision("approved", by="someone else entirely"),
            }
        )
        decision = await asyncio.wait_for(asking, WAIT)
        assert (decision.decision, decision.by) == ("approved", "person")
        assert (await next_of(client, "settled"))["id"] == ask["id"]
        client.close()
    assert local.asked == []


async def test_nobody_attached_the_local_supervisor_answers_after_the_wait() -> None:
    local = Local()
    async with live() as run:
        decision = await LiveSupervisor(local, run, wait=0).approve(request())
    assert decision.note == "asked locally" and len(local.asked) == 1


async def test_a_run_with_its_own_person_keeps_the_gate_and_terminals_watch() -> None:
    local = Local(holder="the run's own observatory (pid 1)")
    async with live(local_holder=local.holder) as run:
        client = await LiveClient.connect(run.run_id)
        assert client.role == "watcher" and client.welcome["holder"] == local.holder
        decision = await LiveSupervisor(local, run, wait=WAIT).approve(request())
        assert decision.by == "local"
        client.send({"type": "abort"})
        assert "you are watching" in (await next_of(client, "error"))["message"]
        client.close()


async def test_a_watcher_cannot_answer_and_the_gate_passes_when_its_holder_leaves() -> None:
    aborted: list[str] = []
    said = asyncio.Event()

    def abort(by: str) -> None:
        aborted.append(by)
        said.set()

    async with live() as run:
        run.on_abort = abort
        holder = await LiveClient.connect(run.run_id, who="first")
        watcher = await LiveClient.connect(run.run_id, watch=True)
        second = await LiveClient.connect(run.run_id, who="second")
        assert (holder.role, watcher.role, second.role) == ("holder", "watcher", "watcher")
        assert watcher.welcome["holder"].startswith("first (pid ")
        asking = asyncio.create_task(LiveSupervisor(Local(), run, wait=WAIT).approve(request()))
        ask = await next_of(holder, "ask")
        watcher.send({"type": "answer", "id": ask["id"], "answer": ApprovalDecision("approved")})
        assert "you are watching" in (await next_of(watcher, "error"))["message"]
        holder.close()  # the holder leaves with the question open
        assert (await next_of(second, "role"))["role"] == "holder"
        again = await next_of(second, "ask")
        assert again["id"] == ask["id"] and not asking.done()
        second.send(
            {
                "type": "answer",
                "id": again["id"],
                "answer": ApprovalDecision("denied", note="not this one"),
            }
        )
        decision = await asyncio.wait_for(asking, WAIT)
        assert (decision.decision, decision.note) == ("denied", "not this one")
        second.send({"type": "abort"})
        await asyncio.wait_for(said.wait(), WAIT)
        assert "handrail attach" in aborted[0]
        for c in (watcher, second):
            c.close()


async def test_a_wrong_answer_is_refused_and_the_question_stays_open() -> None:
    async with live() as run:
        client = await LiveClient.connect(run.run_id)
        asking = asyncio.create_task(
            LiveSupervisor(Local(), run, wait=WAIT).human(
                HumanRequest(1, "password", "a password field", "http://x/")
            )
        )
        ask = await next_of(client, "ask")
        client.send({"type": "answer", "id": ask["id"], "answer": ApprovalDecision("approved")})
        assert "does not fit" in (await next_of(client, "error"))["message"]
        client.send({"type": "answer", "id": ask["id"], "answer": "resume"})
        assert await asyncio.wait_for(asking, WAIT) == "resume"
        client.close()


async def test_a_late_terminal_gets_the_run_so_far_and_follow_returns_its_end() -> None:
    async with live() as run:
        started = RunStarted("0123456789ab", "book a seat", "m", "b", 5)
        run.event(started)
        seen: list[object] = []
        client = await LiveClient.connect(run.run_id, watch=True)
        following = asyncio.create_task(follow(client, seen.append, Local()))
        finished = RunFinished("success", "booked", 3, 0)
        run.event(finished)
        await run.close()
        assert await asyncio.wait_for(following, WAIT) == finished
        assert seen == [started, finished]


async def test_listing_names_each_live_run_and_a_prefix_picks_one() -> None:
    async with live(run_id="aaaa11112222") as one, live(run_id="aaaa33334444"):
        entries = await live_runs()
        assert [e.run_id for e in entries] == ["aaaa11112222", "aaaa33334444"]
        assert entries[0].task == "book a seat" and entries[0].pid == os.getpid()
        assert match_run("aaaa1", [e.run_id for e in entries]) == one.run_id
        with pytest.raises(LiveError, match="names 2 live runs"):
            match_run("aaaa", [e.run_id for e in entries])
    assert await live_runs() == []  # closed runs take their sockets away


# -- the boundary ----------------------------------------------------------------------------


async def test_a_line_too_long_or_not_json_closes_that_connection_only() -> None:
    async with live() as run:
        good = await LiveClient.connect(run.run_id, watch=True)
        for junk in (b"x" * (MAX_LINE_IN + 10) + b"\n", b'{"type":"hello"}\n' + b"\xff{\n"):
            reader, writer = await asyncio.open_unix_connection(str(run.path))
            writer.write(junk)
            async with asyncio.timeout(WAIT):
                rest = await reader.read()  # the server closes it
            assert b"welcome" not in rest or b"error" in rest
            writer.close()
        run.event(RunFinished("success", "", 1, 0))
        assert (await next_of(good, "event"))["event"].outcome == "success"
        good.close()


async def test_the_folder_is_private_and_a_loose_or_linked_one_is_refused(data_dir: Path) -> None:
    async with live() as run:
        assert run.path is not None
        assert stat.S_IMODE(live_folder().stat().st_mode) == 0o700
        assert stat.S_IMODE(run.path.stat().st_mode) == 0o600
    live_folder().chmod(0o755)
    run = LiveRun("0123456789ab", "t", None)
    await run.start()
    assert run.problem is not None and "not private" in run.problem and run.path is None
    with pytest.raises(LiveError, match="not private"):
        await LiveClient.connect("0123456789ab")
    live_folder().rmdir()
    elsewhere = data_dir.parent / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    live_folder().symlink_to(elsewhere)
    run = LiveRun("0123456789ab", "t", None)
    await run.start()
    assert run.problem is not None and "not a folder" in run.problem
    assert list(elsewhere.iterdir()) == []


async def test_a_planted_file_at_a_runs_name_is_never_followed(data_dir: Path) -> None:
    async with live(run_id="feedfeedfeed"):
        pass
    folder = live_folder()
    target = data_dir.parent / "target.sock"
    decoy = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    decoy.bind(str(target))
    decoy.listen()
    try:
        (folder / "0123456789ab.sock").symlink_to(target)
        with pytest.raises(LiveError, match="not followed"):
            await LiveClient.connect("0123456789ab")
        # The run whose name was taken does not follow it either: it cannot be attached to.
        run = LiveRun("0123456789ab", "t", None)
        await run.start()
        assert run.problem is not None and run.path is None
        (folder / "abcdefabcdef.sock").write_text("not a socket")
        with pytest.raises(LiveError, match="not followed"):
            await LiveClient.connect("abcdefabcdef")
        with pytest.raises(LiveError, match="is not a run id"):
            await LiveClient.connect("../../elsewhere/x")
    finally:
        decoy.close()


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")


@needs_root
async def test_a_socket_of_another_user_is_not_used(data_dir: Path) -> None:
    nobody = pwd.getpwnam("nobody").pw_uid
    async with live(run_id="0123456789ab") as run:
        assert run.path is not None
        os.chown(run.path, nobody, -1, follow_symlinks=False)
        with pytest.raises(LiveError, match="not followed"):
            await LiveClient.connect(run.run_id)


@needs_root
async def test_another_user_is_closed_before_a_byte_is_read(data_dir: Path) -> None:
    nobody = pwd.getpwnam("nobody").pw_uid
    async with live() as run:
        assert run.path is not None
        # Another user could reach the socket only through a way in made for this test:
        # a hard link to it in a folder anyone may pass through, the socket 0666.
        door = Path(tempfile.mkdtemp())  # under /tmp, which anyone may pass through
        door.chmod(0o711)
        try:
            os.link(run.path, door / "door.sock")
        except OSError as exc:
            shutil.rmtree(door)
            pytest.skip(f"no hard link to the socket in {door}: {exc}")
        os.chmod(door / "door.sock", 0o666)
        script = (
            "import os, socket, sys\n"
            "if sys.argv[2] == 'other':\n"
            f"    os.setgid({nobody}); os.setuid({nobody})\n"
            "s = socket.socket(socket.AF_UNIX)\n"
            "s.connect(sys.argv[1])\n"
            "try:\n"
            '    s.sendall(b\'{"type":"hello","watch":true}\\n\')\n'
            "    print(repr(s.recv(100)[:18]))\n"
            "except (BrokenPipeError, ConnectionResetError):\n"
            "    print(repr(b''))\n"
        )

        async def as_user(who: str) -> bytes:
            proc = await asyncio.create_subprocess_exec(
                "python3",
                "-c",
                script,
                str(door / "door.sock"),
                who,
                stdout=asyncio.subprocess.PIPE,
            )
            out, _ = await asyncio.wait_for(proc.communicate(), WAIT)
            return out.strip()

        try:
            # The same way in serves the owner: what closes the other user is its uid.
            assert await as_user("owner") == b'b\'{"type":"welcome",\''
            assert await as_user("other") == b"b''"  # closed: no welcome, no event
        finally:
            shutil.rmtree(door)


async def test_the_socket_of_a_run_that_died_is_cleared_when_found() -> None:
    from core.run.live import open_live_folder

    folder = open_live_folder(create=True)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(f"/proc/self/fd/{folder}/deadbeef0001.sock")  # short, wherever tmp is
    dead.close()  # its process is gone; the file stays
    os.close(folder)
    assert await live_runs() == []
    assert not (live_folder() / "deadbeef0001.sock").exists()
    with pytest.raises(LiveError, match="not live"):
        await LiveClient.connect("deadbeef0001")
