"""A live run, open to ``handrail attach`` from another terminal of the same user.

Every run listens on a Unix socket, ``<data dir>/live/<run id>.sock``, for as long as it
runs. Whoever connects gets the run's events so far and then each as it happens (the
observatory draws them), and one of them may hold the gate: the run's approvals and
hand-overs are asked there. The others watch, read-only, and are told who holds it.

When the process that drives the run has a person of its own (the observatory, an
interactive console, a fleet's queue), that person holds the gate and every attached
terminal watches. When it has none (``handrail mcp``, ``run --no-tui`` without a terminal),
the first terminal that attaches holds it, and a question that finds nobody attached waits
up to the run's ``wait`` for one, then goes to the local supervisor (which refuses or ends
the run, saying why).

The socket is a boundary to other local users:
- the folder is made 0700 and checked (owner, mode, not a link) before every use, and the
  socket is 0600;
- the server reads the peer's uid from the kernel (``SO_PEERCRED``) and closes any
  connection of another user before it reads a byte;
- ``attach`` never follows a link, connects only to a socket its user owns in that
  folder, and checks the server's uid the same way, so a planted socket is never followed.
Lines are JSON (:mod:`core.run.wire`), each at most :data:`MAX_LINE_IN` from a client; an
answer is checked before it is used, and who answered is the server's word, not the
client's.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import re
import socket
import stat
import struct
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

import structlog

from core.audit.key import data_dir
from core.guard.decision import ApprovalDecision
from core.run.events import (
    ApprovalRequest,
    Event,
    HumanRequest,
    HumanResponse,
    ModelWriting,
    NoSupervisor,
    RunFinished,
    Supervisor,
)
from core.run.wire import WireError, dumps, loads
from core.visible import visible

log = structlog.get_logger("handrail.live")

LIVE_DIR = "live"
SUFFIX = ".sock"
PROTOCOL = 1
MAX_LINE_IN = 256 * 1024
"""The longest line a client may send (an answer with edited parameters)."""
MAX_LINE_OUT = 64 * 1024 * 1024
"""The longest line ``attach`` reads (an approval with its picture)."""
MAX_BEHIND = 64 * 1024 * 1024
"""A watcher this far behind (bytes not yet taken) is dropped rather than let the run's
memory grow."""
HELLO_S = 10.0
RUN_ID = re.compile(r"[0-9a-z][0-9a-z_-]{0,63}")
_CRED = struct.Struct("3i")

AskKind = Literal["approval", "human"]
_EVENT_TYPES: tuple[type[Any], ...] = get_args(Event)
"""Every kind of event, as the union :data:`core.run.events.Event` names them."""


class LiveError(Exception):
    """The live folder or a run's socket cannot be used; the message says why and what to do."""


# -- the folder -------------------------------------------------------------------------


def live_folder() -> Path:
    return data_dir() / LIVE_DIR


def open_live_folder(*, create: bool) -> int:
    """A descriptor of the live folder, checked: a folder (not a link), the user's, 0700.
    ``create``: make it (and the data dir) when missing."""
    path = live_folder()
    if create:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, 0o700)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except FileNotFoundError:
        raise LiveError(f"no run is live: {path} does not exist") from None
    except OSError as exc:
        raise LiveError(
            f"{path} is not a folder (a link or a file is there: {exc.strerror}); remove it, "
            "and handrail makes the folder again, private to you"
        ) from None
    info = os.fstat(fd)
    if info.st_uid != os.geteuid() or info.st_mode & 0o077:
        os.close(fd)
        raise LiveError(
            f"{path} is not private to you (owner uid {info.st_uid}, mode "
            f"{stat.S_IMODE(info.st_mode):o}): remove it, and handrail makes it again, 0700"
        )
    return fd


def _in_folder(fd: int, name: str) -> str:
    """A path for ``name`` in the folder ``fd`` names, short enough for a socket address
    (108 bytes) wherever the data dir is: through ``/proc/self/fd`` on Linux."""
    proc = f"/proc/self/fd/{fd}"
    if os.path.isdir(proc):
        return f"{proc}/{name}"
    return str(live_folder() / name)


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end of a Unix socket, from the kernel."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    _pid, uid, _gid = _CRED.unpack(sock.getsockopt(socket.SOL_SOCKET, option, _CRED.size))
    return int(uid)


def peer_pid(sock: socket.socket) -> int:
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return 0
    pid, _uid, _gid = _CRED.unpack(sock.getsockopt(socket.SOL_SOCKET, option, _CRED.size))
    return int(pid)


# -- the run's side ---------------------------------------------------------------------


@dataclass(eq=False)
class _Peer:
    writer: asyncio.StreamWriter
    pid: int
    who: str
    watch: bool

    @property
    def label(self) -> str:
        return f"{self.who} (pid {self.pid})" if self.pid else self.who

    def send(self, line: bytes) -> bool:
        """Queue ``line``; False when the peer is gone or too far behind (then closed)."""
        transport = self.writer.transport
        if transport.is_closing():
            return False
        if transport.get_write_buffer_size() > MAX_BEHIND:
            transport.abort()
            return False
        self.writer.write(line)
        return True


@dataclass(eq=False)
class _Question:
    kind: AskKind
    request: ApprovalRequest | HumanRequest
    answer: asyncio.Future[Any]


@dataclass(eq=False)
class LiveRun:
    """The run's socket, its attached terminals, and the questions asked of its holder.

    ``local_holder``: who answers the run's questions in its own process (attached
    terminals then only watch), or None. ``on_abort(by)``: the holder asked to end the run.
    """

    run_id: str
    task: str
    audit_path: Path | None
    local_holder: str | None = None
    on_abort: Callable[[str], None] = lambda _by: None
    problem: str | None = None
    """Why nobody can attach (the folder is not private...), once :meth:`start` failed."""
    path: Path | None = None
    started: float = field(default_factory=time.time)
    _server: asyncio.Server | None = None
    _peers: list[_Peer] = field(default_factory=list)
    _holder: _Peer | None = None
    _holder_came: asyncio.Event = field(default_factory=asyncio.Event)
    _backlog: list[bytes] = field(default_factory=list)
    _questions: dict[int, _Question] = field(default_factory=dict)
    _next_id: int = 1

    async def start(self) -> None:
        """Listen. A run that cannot be attached to still runs: :attr:`problem` says why."""
        if not RUN_ID.fullmatch(self.run_id):
            self.problem = "the run id cannot name a socket"
            return
        name = self.run_id + SUFFIX
        try:
            fd = open_live_folder(create=True)
        except (LiveError, OSError) as exc:
            self.problem = str(exc)
            log.warning("live.unavailable", error=self.problem)
            return
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            # bind makes a new file or fails: whatever is at the name is never followed.
            address = _in_folder(fd, name)
            sock.bind(address)
            os.chmod(address, 0o600)
            self._server = await asyncio.start_unix_server(
                self._serve, sock=sock, limit=MAX_LINE_IN
            )
        except OSError as exc:
            sock.close()
            self.problem = f"cannot listen on {live_folder() / name}: {exc.strerror or exc}"
            log.warning("live.unavailable", error=self.problem)
            return
        finally:
            os.close(fd)
        self.path = live_folder() / name

    async def close(self) -> None:
        """Stop listening, say goodbye to every terminal, remove the socket."""
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        for peer in list(self._peers):
            peer.send(dumps({"type": "bye"}))
            with contextlib.suppress(Exception):
                peer.writer.close()
        self._peers.clear()
        self._remove_socket()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), 5)

    def _remove_socket(self) -> None:
        try:
            fd = open_live_folder(create=False)
        except LiveError:
            return
        try:
            info = os.stat(self.run_id + SUFFIX, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISSOCK(info.st_mode) and info.st_uid == os.geteuid():
                os.unlink(self.run_id + SUFFIX, dir_fd=fd)
        except OSError:
            pass
        finally:
            os.close(fd)

    # -- what the run tells --

    def event(self, event: Event) -> None:
        """An ``EventSink``: every terminal hears it; a later one gets it on attaching
        (except the text of a reply as it streams, which the reply then carries whole)."""
        if self._server is None:
            return
        try:
            line = dumps({"type": "event", "event": event})
        except (WireError, TypeError, ValueError) as exc:  # never the run's problem
            log.warning("live.unsent", event=type(event).__name__, error=str(exc))
            return
        if not isinstance(event, ModelWriting):
            self._backlog.append(line)
        self._broadcast(line)

    def _broadcast(self, line: bytes) -> None:
        for peer in list(self._peers):
            if not peer.send(line):
                self._gone(peer)

    @property
    def holder(self) -> str | None:
        """Who holds the gate: the local person, an attached terminal, or nobody."""
        if self.local_holder is not None:
            return self.local_holder
        return self._holder.label if self._holder is not None else None

    # -- what the run asks --

    async def ask(
        self, kind: AskKind, request: ApprovalRequest | HumanRequest, wait: float
    ) -> Any | None:
        """Ask the attached holder; None when no terminal holds the gate within ``wait``
        seconds. Once asked, it waits for the answer (a holder who leaves passes the
        question to the next one who attaches)."""
        if self._server is None or self.local_holder is not None:
            return None
        if self._holder is None:
            if wait <= 0:
                return None
            self._holder_came.clear()
            try:
                await asyncio.wait_for(self._holder_came.wait(), wait)
            except TimeoutError:
                return None
        number, self._next_id = self._next_id, self._next_id + 1
        question = _Question(kind, request, asyncio.get_running_loop().create_future())
        self._questions[number] = question
        try:
            if self._holder is not None:
                self._ask_holder(self._holder, number, question)
            return await question.answer
        finally:
            del self._questions[number]
            self._broadcast(dumps({"type": "settled", "id": number}))

    def _ask_holder(self, peer: _Peer, number: int, question: _Question) -> None:
        line = dumps(
            {"type": "ask", "id": number, "kind": question.kind, "request": question.request}
        )
        if not peer.send(line):
            self._gone(peer)

    # -- the terminals --

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        uid = peer_uid(sock) if sock is not None else None
        if uid is not None and uid != os.geteuid():
            log.warning("live.refused", uid=uid)
            writer.close()
            return
        peer: _Peer | None = None
        try:
            hello = loads(await asyncio.wait_for(reader.readuntil(b"\n"), HELLO_S))
            if hello.get("type") != "hello":
                raise WireError("the first line is a hello")
            who = hello.get("who")
            peer = _Peer(
                writer,
                peer_pid(sock) if sock is not None else 0,
                visible(who, one_line=True, limit=60) if isinstance(who, str) else "attach",
                watch=hello.get("watch") is True,
            )
            if hello.get("list") is True:
                peer.send(dumps(self._welcome(peer, "listing")))
                return
            self._join(peer)
            async for message in _lines(reader):
                self._heard(peer, message)
        except (
            WireError,
            TimeoutError,
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            ValueError,
            ConnectionError,
        ) as exc:
            if peer is not None and not writer.transport.is_closing():
                peer.send(dumps({"type": "error", "message": f"closed: {exc}"}))
        finally:
            if peer is not None:
                self._gone(peer)
            with contextlib.suppress(Exception):
                writer.close()

    def _welcome(self, peer: _Peer, role: str) -> dict[str, Any]:
        return {
            "type": "welcome",
            "protocol": PROTOCOL,
            "run_id": self.run_id,
            "task": self.task,
            "log": str(self.audit_path) if self.audit_path else None,
            "pid": os.getpid(),
            "started": self.started,
            "role": role,
            "holder": self.holder,
        }

    def _join(self, peer: _Peer) -> None:
        holds = not peer.watch and self.local_holder is None and self._holder is None
        if holds:
            self._holder = peer
        self._peers.append(peer)
        peer.send(dumps(self._welcome(peer, "holder" if holds else "watcher")))
        for line in self._backlog:
            peer.send(line)
        if holds:
            self._holder_came.set()
            for number, question in self._questions.items():
                self._ask_holder(peer, number, question)
            self._broadcast_holder(peer)

    def _broadcast_holder(self, except_for: _Peer | None = None) -> None:
        line = dumps({"type": "holder", "holder": self.holder})
        for peer in list(self._peers):
            if peer is not except_for and not peer.send(line):
                self._gone(peer)

    def _gone(self, peer: _Peer) -> None:
        if peer not in self._peers:
            return
        self._peers.remove(peer)
        if self._holder is peer:
            # The next terminal that asked to hold takes the gate, and the open questions.
            self._holder = next((p for p in self._peers if not p.watch), None)
            if self._holder is not None:
                self._holder.send(dumps({"type": "role", "role": "holder"}))
                for number, question in self._questions.items():
                    self._ask_holder(self._holder, number, question)
            self._broadcast_holder()

    def _heard(self, peer: _Peer, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if peer is not self._holder:
            if kind in ("answer", "abort"):
                peer.send(
                    dumps(
                        {
                            "type": "error",
                            "message": f"you are watching: {self.holder or 'nobody'} holds the gate",
                        }
                    )
                )
            return
        if kind == "abort":
            self.on_abort(f"the person at handrail attach ({peer.label}) aborted the run")
            return
        if kind != "answer":
            return
        number = message.get("id")
        question = self._questions.get(number) if isinstance(number, int) else None
        if question is None or question.answer.done():
            return  # answered already, or elsewhere
        answer = _checked(question.kind, message.get("answer"))
        if answer is None:
            peer.send(dumps({"type": "error", "message": "that answer does not fit the question"}))
            return
        question.answer.set_result(answer)


def _checked(kind: AskKind, answer: object) -> ApprovalDecision | HumanResponse | None:
    """The holder's answer, if it is one for a question of ``kind``; who gave it is the
    server's word: the person holding the gate."""
    if kind == "human":
        return "resume" if answer == "resume" else "abort" if answer == "abort" else None
    if not isinstance(answer, ApprovalDecision):
        return None
    if answer.decision not in ("approved", "denied", "edited", "abort"):
        return None
    if answer.edited_params is not None and not isinstance(answer.edited_params, dict):
        return None
    if answer.note is not None and not isinstance(answer.note, str):
        return None
    return dataclasses.replace(
        answer,
        by="person",
        approve_kind_for_run=answer.approve_kind_for_run is True,
        remember_for_site=answer.remember_for_site is True,
    )


async def _lines(reader: asyncio.StreamReader) -> AsyncIterator[dict[str, Any]]:
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            if exc.partial.strip():
                raise
            return
        if line.strip():
            yield loads(line)


def local_holder(supervisor: Supervisor) -> str | None:
    """Who answers ``supervisor``'s questions in the run's own process (its ``holder``),
    or None when nobody there can: attached terminals then may hold the gate."""
    holder = getattr(supervisor, "holder", None)
    return holder if isinstance(holder, str) else None


def wait_for_attach(supervisor: Supervisor) -> float:
    """How long a question waits for a terminal to attach before ``supervisor`` gets it
    (its ``wait_for_attach``; 0: at once)."""
    wait = getattr(supervisor, "wait_for_attach", 0.0)
    return float(wait) if isinstance(wait, int | float) else 0.0


class LiveSupervisor:
    """The run's supervisor: the attached holder first when the local one has no person,
    else the local one. ``wait``: how long a question waits for someone to attach before
    it goes to the local supervisor."""

    def __init__(self, local: Supervisor, live: LiveRun, *, wait: float = 0.0) -> None:
        self.local = local
        self.live = live
        self.wait = wait

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        if getattr(self.local, "answers_approvals", False) is True:
            return await self.local.approve(request)  # the MCP client's user, asked first
        answer = await self.live.ask("approval", request, self.wait)
        if isinstance(answer, ApprovalDecision):
            return answer
        return await self.local.approve(request)

    async def human(self, request: HumanRequest) -> HumanResponse:
        answer = await self.live.ask("human", request, self.wait)
        if answer == "resume" or answer == "abort":
            return "resume" if answer == "resume" else "abort"
        return await self.local.human(request)


# -- the terminal's side ----------------------------------------------------------------


@dataclass(frozen=True)
class LiveEntry:
    """One live run, as its socket describes it."""

    run_id: str
    task: str
    pid: int
    started: float
    holder: str | None
    log: str | None


class LiveClient:
    """A connection to one live run (``handrail attach``)."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, welcome: dict[str, Any]
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.welcome = welcome
        self.leaving = False
        """The person leaves (``q``): a cancelled :func:`follow` then does not abort the run."""

    @property
    def role(self) -> str:
        return str(self.welcome.get("role"))

    @classmethod
    async def connect(
        cls,
        run_id: str,
        *,
        watch: bool = False,
        who: str = "handrail attach",
        listing: bool = False,
    ) -> LiveClient:
        """Connect to the run ``run_id`` (a full id), checking the folder, the socket file
        and the server's uid; :class:`LiveError` says what is wrong."""
        if not RUN_ID.fullmatch(run_id):
            raise LiveError(f"{visible(run_id, one_line=True, limit=80)} is not a run id")
        name = run_id + SUFFIX
        fd = open_live_folder(create=False)
        try:
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                raise LiveError(f"run {run_id} is not live (no socket for it)") from None
            if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.geteuid():
                raise LiveError(
                    f"{live_folder() / name} is not a run's socket of yours (a link, a file or "
                    "another user's): not followed. Remove it."
                )
            try:
                reader, writer = await asyncio.open_unix_connection(
                    _in_folder(fd, name), limit=MAX_LINE_OUT
                )
            except (ConnectionRefusedError, FileNotFoundError):
                # Nobody listens: the run's process died without removing its socket. The
                # file was checked above (a socket of the user's); it goes.
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=fd)
                raise LiveError(
                    f"run {run_id} is not live any more (its process is gone)"
                ) from None
        finally:
            os.close(fd)
        sock = writer.get_extra_info("socket")
        uid = peer_uid(sock) if sock is not None else None
        if uid is not None and uid != os.geteuid():
            writer.close()
            raise LiveError(f"the socket of run {run_id} is served by another user: not used")
        writer.write(dumps({"type": "hello", "who": who, "watch": watch, "list": listing}))
        try:
            welcome = loads(await asyncio.wait_for(reader.readuntil(b"\n"), HELLO_S))
        except (WireError, TimeoutError, asyncio.IncompleteReadError, ConnectionError) as exc:
            writer.close()
            raise LiveError(f"run {run_id} did not answer as a handrail run ({exc})") from None
        if welcome.get("type") != "welcome":
            writer.close()
            raise LiveError(f"run {run_id} did not answer as a handrail run")
        return cls(reader, writer, welcome)

    async def messages(self) -> AsyncIterator[dict[str, Any]]:
        """What the run says, until it ends or the connection drops."""
        async for message in _lines(self.reader):
            yield message

    def send(self, message: dict[str, Any]) -> None:
        if not self.writer.transport.is_closing():
            self.writer.write(dumps(message))

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()


def live_ids() -> list[str]:
    """The run ids with a socket in the live folder (live or stale)."""
    try:
        fd = open_live_folder(create=False)
    except LiveError:
        return []
    try:
        names = os.listdir(fd)
    finally:
        os.close(fd)
    ids = [n[: -len(SUFFIX)] for n in names if n.endswith(SUFFIX)]
    return sorted(i for i in ids if RUN_ID.fullmatch(i))


async def live_runs() -> list[LiveEntry]:
    """The runs that answer on their socket, oldest first."""
    found: list[LiveEntry] = []
    for run_id in live_ids():
        try:
            client = await LiveClient.connect(run_id, watch=True, listing=True)
        except LiveError:
            continue
        client.close()
        w = client.welcome
        holder = w.get("holder")
        found.append(
            LiveEntry(
                run_id=run_id,
                task=str(w.get("task", "")),
                pid=int(w["pid"]) if isinstance(w.get("pid"), int) else 0,
                started=float(w["started"]) if isinstance(w.get("started"), int | float) else 0.0,
                holder=holder if isinstance(holder, str) else None,
                log=w["log"] if isinstance(w.get("log"), str) else None,
            )
        )
    return sorted(found, key=lambda e: e.started)


def match_run(given: str, ids: list[str]) -> str:
    """The one id ``given`` names (in full or by its start); :class:`LiveError` otherwise."""
    if given in ids:
        return given
    matches = [i for i in ids if i.startswith(given)]
    if len(matches) == 1:
        return matches[0]
    shown = visible(given, one_line=True, limit=80)
    if not matches:
        raise LiveError(f"no live run starts with {shown}: `handrail attach` lists them")
    raise LiveError(f"{shown} names {len(matches)} live runs: give more of the id")


GONE = "the run's process went away before the run ended (see its audit log)"


async def follow(
    client: LiveClient,
    sink: Callable[[Event], None],
    supervisor: Supervisor,
    told: Callable[[str], None] = lambda _text: None,
) -> RunFinished:
    """Follow the run ``client`` is attached to: each event goes to ``sink`` (the backlog
    first), each question to ``supervisor`` while this terminal holds the gate, and
    ``told(text)`` hears who holds it and what went wrong. Returns how the run ended.
    Cancelled (the person pressed ``x``): a holder asks the run to abort; a watcher only
    stops watching."""
    asked: dict[int, asyncio.Task[None]] = {}
    finished: RunFinished | None = None
    try:
        async for message in client.messages():
            kind = message["type"]
            if kind == "event":
                event = message.get("event")
                if isinstance(event, _EVENT_TYPES):
                    sink(event)
                    if isinstance(event, RunFinished):
                        finished = event
                        break  # the run is over: nothing more will be asked
            elif kind == "ask":
                number, request = message.get("id"), message.get("request")
                if isinstance(number, int) and isinstance(request, ApprovalRequest | HumanRequest):
                    asked[number] = asyncio.create_task(
                        _answer(client, number, request, supervisor)
                    )
            elif kind == "settled":
                task = asked.pop(message.get("id"), None)  # type: ignore[arg-type]
                if task is not None:
                    task.cancel()
            elif kind == "role":
                client.welcome["role"] = message.get("role")
                told("you hold the gate now: the run's questions come here")
            elif kind == "holder":
                holder = message.get("holder")
                client.welcome["holder"] = holder
                if client.role != "holder":
                    told(f"the gate is held by {holder}" if holder else "nobody holds the gate")
            elif kind == "error":
                told(visible(str(message.get("message", "")), one_line=True, limit=200))
            elif kind == "bye":
                break
    except (WireError, ConnectionError, asyncio.LimitOverrunError, ValueError) as exc:
        told(f"the connection to the run broke: {exc}")
    except asyncio.CancelledError:
        if client.role == "holder" and not client.leaving:
            client.send({"type": "abort"})
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.writer.drain(), 5)
        raise
    finally:
        for task in asked.values():
            task.cancel()
        client.close()
    if finished is None:
        return RunFinished("error", "", 0, 1, reason=GONE)
    return finished


async def _answer(
    client: LiveClient,
    number: int,
    request: ApprovalRequest | HumanRequest,
    supervisor: Supervisor,
) -> None:
    try:
        if isinstance(request, ApprovalRequest):
            answer: ApprovalDecision | str = await supervisor.approve(request)
        else:
            answer = await supervisor.human(request)
    except NoSupervisor:
        return  # nobody here can answer: the question stays open for another terminal
    client.send({"type": "answer", "id": number, "answer": answer})
