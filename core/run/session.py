"""One run from settings to its end: checks, log, browser, start page, agent, clean-up.

Everything that can be wrong with the configuration (model spec, key, endpoint, secrets,
start URL outside the allowlist, audit folder) is found by :func:`prepare` before the agent
acts, and raised as :class:`ConfigError` (the CLI exits with code 2). Everything that needs
no network and no SDK is checked before any browser starts; a browser handrail launches
itself then starts while the model's SDK loads and its endpoint is asked (Chrome's start-up
is most of a run's start-up), and a model the endpoint refuses stops it again. A browser to
attach to (``--cdp-url``, ``--connect``) is reached only after every check.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import stat
import sys
import tempfile
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import structlog

from core.audit import AuditError, AuditWriter
from core.browser.browser import Browser
from core.browser.errors import BrowserError
from core.browser.launch import LaunchOptions
from core.cdp import shown_endpoint
from core.eyes.snapshot import follow_frames
from core.guard.allowlist import (
    NETWORK_MODES,
    DomainGuard,
    NetworkMode,
    default_network_mode,
    webrtc_direct_hosts,
)
from core.guard.policy import ApproveMode, Gate, host_of, parse_allow_pattern, url_allowed
from core.guard.rules import Budget, Policy, PolicyError, load_policy
from core.hands import Page, screenshot_mask
from core.hands.badge import Badge
from core.model.base import Model, ModelConfigError
from core.model.prices import Price, PriceError, price_of
from core.model.spec import DEFAULT_SPEC, build_model, parse_spec, precheck
from core.pool.pool import PoolRun
from core.pool.state import PoolError, PoolFull
from core.run import oplog
from core.run.agent import MAX_CONSECUTIVE_FAILURES, Agent, AgentConfig
from core.run.budget import BudgetKeeper
from core.run.events import EventSink, RunFinished, Supervisor
from core.run.live import LiveRun, LiveSupervisor, local_holder, wait_for_attach
from core.run.live_trace import LiveTrace
from core.run.netlog import HarContent, NetworkLog
from core.run.permissions import PermissionStore, store_name
from core.run.phases import first_phase, launches_browser
from core.run.recorder import AuditRecorder
from core.run.round_shots import RoundShots
from core.secrets import Secrets, SecretsError

log = structlog.get_logger("handrail.session")


class ConfigError(Exception):
    """The run cannot start as configured. The message says what to change."""


@dataclass(frozen=True, slots=True)
class RunSettings:
    """Everything a run is configured with (the ``handrail run`` options)."""

    task: str
    start_url: str | None = None
    model_spec: str = DEFAULT_SPEC
    base_url: str | None = None
    approve: ApproveMode = "ask"
    policy: str | None = None
    """``--policy``: a policy file, or a built-in's name; None: the built-in of ``approve``."""
    max_rounds: int = 30
    give_up_after: int | None = MAX_CONSECUTIVE_FAILURES
    """Failed actions in a row that end the run; None: never (``handrail mcp``)."""
    max_tokens: int | None = None
    """``--max-tokens``: over the policy's ``[budget]``; None: the policy's, if any."""
    max_cost: float | None = None
    """``--max-cost`` in US dollars (core/model/prices.toml prices the model)."""
    max_time: float | None = None
    """``--max-time`` in seconds."""
    headless: bool = False
    cdp_url: str | None = None
    connect: bool = False
    pool: str | None = None
    """``--pool NAME``: claim a slot of that tab pool instead of launching (core/pool)."""
    resume_slot: int | None = None
    """``--resume-slot N``: claim exactly that completed slot and go on from its page."""
    profile: Path | None = None
    remove_on_exit: tuple[Path, ...] = ()
    """Temporary paths (the demo's profile) removed when the browser stops, however the run
    ends: the browser's reaper removes them even if handrail is killed."""
    chrome_path: str | None = None
    allow_domains: tuple[str, ...] = ()
    network: NetworkMode | None = None
    """``--network``; None: ``strict`` when a secret is configured, else ``documents``."""
    allow_js: bool = False
    allow_file_urls: bool = False
    secrets: tuple[str, ...] = ()
    secrets_file: Path | None = None
    audit_dir: Path = Path("audit_logs")
    upload_dir: Path | None = None
    action_timeout: float = 45.0
    console_log: bool = False
    """Operational log to stderr too (console mode)."""
    screenshots: bool = True
    """Save each round's screenshot in the run folder (``--no-screenshots``: off)."""
    otlp: str | None = None
    """``--otlp URL`` (or ``OTEL_EXPORTER_OTLP_ENDPOINT``): send the run's spans to this
    OTLP/HTTP collector while it runs (core/run/live_trace.py)."""
    har: bool = False
    """``--har``: write ``network.har`` (headers too) in the run folder; its sha256 goes into
    ``run_end``. The log records the requests either way (core/run/netlog.py)."""
    har_content: HarContent = "omit"
    """``--har-content embed``: the HAR file keeps request and response bodies."""
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])

    def network_mode(self) -> NetworkMode:
        """The ``--network`` mode this run guards with (see :mod:`core.guard.allowlist`)."""
        if self.network is not None:
            return self.network
        return default_network_mode(bool(self.secrets or self.secrets_file))

    def public(self) -> dict[str, object]:
        """The settings as written to the audit log (secret names, never values)."""
        out: dict[str, object] = {
            "start_url": self.start_url,
            "model": self.model_spec,
            "base_url": self.base_url,
            "approve": self.approve,
            "policy": self.policy,
            "max_tokens": self.max_tokens,
            "max_cost": self.max_cost,
            "max_time": self.max_time,
            "max_rounds": self.max_rounds,
            "headless": self.headless,
            "browser": (
                "pool"
                if self.pool
                else "cdp_url"
                if self.cdp_url
                else ("connect" if self.connect else "launch")
            ),
            "pool": self.pool,
            "resume_slot": self.resume_slot,
            "cdp_url": shown_endpoint(self.cdp_url) if self.cdp_url else None,
            "allow_domains": list(self.allow_domains),
            "network": self.network_mode(),
            "allow_js": self.allow_js,
            "secrets": [s.split("=", 1)[0] for s in self.secrets],
            "upload_dir": str(self.upload_dir) if self.upload_dir else None,
            "screenshots": self.screenshots,
        }
        if self.har:
            out["har"] = self.har_content
        return out


@dataclass(slots=True)
class Prepared:
    """What the pre-flight built: reused by the run so nothing is checked twice."""

    model: Model
    secrets: Secrets
    policy: Policy
    price: Price | None = None
    """The model's price, when the run has a cost budget (or the table knows the model)."""


async def prepare(
    settings: RunSettings, *, env: Mapping[str, str] | None = None, check_model: bool = True
) -> Prepared:
    """Check the configuration before any browser starts. Raises :class:`ConfigError`.

    ``check_model=False`` skips the model's network pre-flight (when it already passed in
    an earlier event loop: clients are bound to the loop that made them).
    """
    env = os.environ if env is None else env
    secrets = check_settings(settings, env)
    policy = run_policy(settings)
    price = run_price(settings, policy, env)
    return Prepared(
        model=await ready_model(settings, env, check=check_model),
        secrets=secrets,
        policy=policy,
        price=price,
    )


def run_budget(settings: RunSettings, policy: Policy) -> Budget:
    """The run's limits: the command line's over the policy file's ``[budget]``."""
    return policy.budget.over(Budget(settings.max_tokens, settings.max_cost, settings.max_time))


def run_price(settings: RunSettings, policy: Policy, env: Mapping[str, str]) -> Price | None:
    """The model's price from core/model/prices.toml (a scripted plan is free). Raises
    :class:`ConfigError` naming the model when a cost budget is set and the table has no
    price for it; without a cost budget, an unknown model is simply not priced."""
    budget = run_budget(settings, policy)
    if budget.max_tokens is not None and budget.max_tokens < 1:
        raise ConfigError("--max-tokens must be at least 1")
    if budget.max_cost is not None and not budget.max_cost > 0:
        raise ConfigError("--max-cost must be a positive number of US dollars")
    if budget.max_time is not None and not budget.max_time > 0:
        raise ConfigError("--max-time must be a positive duration (90s, 15m, 1.5h)")
    try:
        kind, value = parse_spec(settings.model_spec)
    except ModelConfigError:
        return None  # check_settings says what is wrong with the spec
    if kind == "scripted":
        return Price(0.0, 0.0, source="a scripted plan: no model is paid")
    try:
        return price_of(kind, value, env)
    except PriceError as exc:
        if budget.max_cost is not None:
            raise ConfigError(str(exc)) from exc
        return None


def run_policy(settings: RunSettings) -> Policy:
    """The run's approval policy: ``--policy`` (a file or a built-in), else the built-in
    policy of ``--approve``. Raises :class:`ConfigError` naming what to fix."""
    try:
        return load_policy(settings.policy or settings.approve)
    except PolicyError as exc:
        raise ConfigError(str(exc)) from exc


async def ready_model(settings: RunSettings, env: Mapping[str, str], *, check: bool) -> Model:
    """Build the model (its SDK imported in a thread: seconds of CPU, while a browser may be
    starting on this loop) and run its network pre-flight. Raises :class:`ConfigError`."""
    try:
        model = await asyncio.to_thread(
            build_model, settings.model_spec, base_url=settings.base_url, env=env
        )
        if check:
            await model.check()
    except ModelConfigError as exc:
        raise ConfigError(str(exc)) from exc
    return model


def check_settings(
    settings: RunSettings, env: Mapping[str, str], *, with_model: bool = True
) -> Secrets:
    """Everything about the configuration that needs no network and no SDK: fast, so it
    runs before a browser starts. Returns the run's secrets; raises :class:`ConfigError`.
    ``with_model=False``: the run has no model spec to check (a rerun without ``--model``)."""
    if not settings.task.strip():
        raise ConfigError("the task is empty: say what handrail should do")
    if settings.max_rounds < 1:
        raise ConfigError("--max-rounds must be at least 1")
    if not math.isfinite(settings.action_timeout) or settings.action_timeout <= 0:
        raise ConfigError(
            f"--action-timeout must be a positive number of seconds (got {settings.action_timeout:g}); "
            "the default is 45"
        )
    if settings.cdp_url and settings.connect:
        raise ConfigError("use either --cdp-url or --connect, not both")
    if settings.resume_slot is not None and not settings.pool:
        raise ConfigError(
            "--resume-slot resumes a slot of a tab pool: give the pool too (--pool NAME)"
        )
    if settings.pool and (settings.cdp_url or settings.connect):
        raise ConfigError(
            "--pool runs in the pool's own browser: drop --cdp-url/--connect (give them to "
            "`handrail pool start` instead)"
        )
    for entry in settings.allow_domains:
        try:
            parse_allow_pattern(entry)
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
    if settings.network is not None and settings.network not in NETWORK_MODES:
        raise ConfigError(
            f"--network must be one of {', '.join(NETWORK_MODES)} (got {settings.network!r})"
        )
    connected = bool(settings.cdp_url or settings.connect)
    if connected and settings.allow_domains and settings.network_mode() == "strict":
        why = "" if settings.network else " (the default when a secret is configured)"
        raise ConfigError(
            f"--network strict{why} cannot be held in a browser handrail connects to: its "
            "WebRTC, and speculative loads from a popup, follow that browser's own settings "
            "and can reach any host. Drop --cdp-url/--connect so handrail launches its own "
            "browser, or pass --network documents to accept what that mode lets through"
        )
    if settings.start_url:
        scheme = settings.start_url.split(":", 1)[0].lower()
        if scheme not in ("http", "https") and not (scheme == "file" and settings.allow_file_urls):
            raise ConfigError(f"--start-url must be an http(s) URL (got {settings.start_url!r})")
        host = host_of(settings.start_url)
        if not host and scheme != "file":
            raise ConfigError(
                f"--start-url {settings.start_url!r} has no host; give a whole URL, "
                "such as https://example.org/"
            )
        if not url_allowed(settings.start_url, settings.allow_domains):
            raise ConfigError(
                f"--start-url {settings.start_url} is outside --allow-domain "
                f"({', '.join(settings.allow_domains)}); add its host or pick another start page"
            )
    if settings.secrets_file is not None:
        _check_secrets_file(settings.secrets_file)
    try:
        secrets = Secrets.from_specs(settings.secrets, env, settings.secrets_file)
    except SecretsError as exc:
        raise ConfigError(str(exc)) from exc
    try:
        if with_model:
            precheck(settings.model_spec, base_url=settings.base_url, env=env)
    except ModelConfigError as exc:
        raise ConfigError(str(exc)) from exc
    try:
        settings.audit_dir.mkdir(parents=True, exist_ok=True)
        # A new file of a random name (O_EXCL): a link planted at a predictable one would
        # have had its target emptied.
        fd, probe = tempfile.mkstemp(prefix=".handrail-write-test-", dir=settings.audit_dir)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ConfigError(
            f"the audit folder {settings.audit_dir} is not writable: {exc}; choose one with --audit-dir"
        ) from exc
    if settings.upload_dir is not None and not settings.upload_dir.is_dir():
        raise ConfigError(f"--upload-dir {settings.upload_dir} is not a folder")
    return secrets


SECRETS_FILE_LIMIT = 1_000_000
"""Bytes: a secrets file is a few lines of TOML; anything larger is a mistake."""


def _check_secrets_file(path: Path) -> None:
    """A regular file of at most :data:`SECRETS_FILE_LIMIT` bytes, or :class:`ConfigError`."""
    try:
        info = path.stat()
    except OSError as exc:
        raise ConfigError(
            f"--secrets-file {path}: {exc.strerror or exc}; give the path of a TOML file"
        ) from exc
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"--secrets-file {path} is not a regular file; give a TOML file")
    if info.st_size > SECRETS_FILE_LIMIT:
        raise ConfigError(
            f"--secrets-file {path} is {info.st_size:,} bytes, over the 1 MB limit for a "
            "secrets file; give the TOML file of your secrets"
        )


def claim_slot(settings: RunSettings) -> PoolRun | None:
    """With ``--pool``: claim the run's first slot (the database only; the browser is not
    touched). Raises :class:`PoolFull` when every slot is running, :class:`ConfigError`
    when the pool cannot be used."""
    if not settings.pool:
        return None
    try:
        lease = PoolRun(settings.pool, settings.run_id, settings.task, resume=settings.resume_slot)
    except PoolError as exc:
        raise ConfigError(str(exc)) from exc
    try:
        lease.claim_first()
    except PoolFull:
        lease.state.close()
        raise
    except PoolError as exc:
        lease.state.close()
        raise ConfigError(str(exc)) from exc
    return lease


async def open_browser(settings: RunSettings, lease: PoolRun | None = None) -> Browser:
    """Launch or connect as the settings say (with ``lease``: attach to its pool slot only).
    Raises :class:`ConfigError` on failure."""
    try:
        if lease is not None:
            return await lease.open()
        if settings.cdp_url:
            return await Browser.connect(settings.cdp_url)
        if settings.connect:
            return await Browser.connect_local()
        return await Browser.launch(
            LaunchOptions(
                executable=settings.chrome_path,
                profile_dir=settings.profile,
                headless=settings.headless,
                remove_on_exit=settings.remove_on_exit,
                direct_hosts=(
                    webrtc_direct_hosts(settings.allow_domains)
                    if settings.allow_domains and settings.network_mode() == "strict"
                    else None
                ),
            )
        )
    except BrowserError as exc:
        raise ConfigError(str(exc)) from exc


PhaseSink = Callable[[str], None]
"""Told what a run is doing before its first round and after its last: ``starting Chrome…``,
``closing Chrome…``, ``closed`` (a screen shows it while nothing else moves)."""


def browser_is_launched(settings: RunSettings) -> bool:
    """Whether the run launches its own Chrome (rather than attaching to one)."""
    return launches_browser(cdp_url=settings.cdp_url, connect=settings.connect, pool=settings.pool)


def launch_early(settings: RunSettings) -> asyncio.Task[Browser] | None:
    """Start launching the browser now, on the running loop, so Chrome starts while the model
    loads and is checked. None when the settings attach to a browser instead (attaching waits
    for every check)."""
    if not browser_is_launched(settings):
        return None
    return asyncio.create_task(open_browser(settings), name="launch browser")


async def _discard(early: asyncio.Task[Browser] | None) -> None:
    """Stop a browser launched for a run that will not happen (its launch cleans up after
    itself when cancelled)."""
    if early is None:
        return
    if not early.done():
        early.cancel()
    await asyncio.wait([early])
    if not early.cancelled() and early.exception() is None:
        with contextlib.suppress(Exception):
            await early.result().close()


async def run_session(
    settings: RunSettings,
    *,
    supervisor: Supervisor,
    sinks: Sequence[EventSink] = (),
    prepared: Prepared | None = None,
    env: Mapping[str, str] | None = None,
    on_browser: Callable[[Browser], None] | None = None,
    on_phase: PhaseSink | None = None,
    configure_oplog: bool = True,
    shared_budget: BudgetKeeper | None = None,
) -> RunFinished:
    """Run one task to its end and return how it ended.

    Without ``prepared`` the configuration is checked here: the cheap checks
    (:func:`check_settings`) first, then the model is loaded and asked (:func:`ready_model`)
    while a launched browser starts. The audit log is written to ``settings.audit_dir`` (its
    recorder is added to ``sinks``); the operational log and the run folder go beside it, all
    new (:func:`open_run`). The browser is closed at the end (a launched one is stopped; in
    connect mode only our tabs are closed). ``on_phase`` hears the steps before the first
    round and after the last. ``configure_oplog=False``: the caller has configured the
    process-wide operational log (a fleet writes one for all its runs, scrubbing every run's
    secrets). ``shared_budget``: a fleet's budget, spent by every run of the fleet beside
    the run's own. Raises :class:`ConfigError`
    when the run cannot start; cancellation propagates after the log is closed.
    """
    phase = on_phase or (lambda _text: None)
    env = os.environ if env is None else env
    # The cheap checks first: a typo never flashes a browser window.
    secrets = check_settings(settings, env) if prepared is None else prepared.secrets
    policy = run_policy(settings) if prepared is None else prepared.policy
    price = run_price(settings, policy, env) if prepared is None else prepared.price
    phase(first_phase(cdp_url=settings.cdp_url, connect=settings.connect, pool=settings.pool))
    early = launch_early(settings) if prepared is None else None
    lease: PoolRun | None = None
    try:
        if prepared is None:
            model = await ready_model(settings, env, check=True)
            prepared = Prepared(model=model, secrets=secrets, policy=policy, price=price)
        # Before the log is opened: a full pool touches nothing.
        lease = claim_slot(settings)
        writer = open_run(settings, prepared.secrets, configure_oplog=configure_oplog)
    except BaseException:
        await _discard(early)
        if lease is not None:
            await _end_lease(lease, None)
        raise
    recorder = AuditRecorder(writer)
    run_dir = writer.path.with_suffix("")
    try:
        if early is None:
            phase(
                "starting Chrome…"
                if browser_is_launched(settings)
                else "claiming a slot…"
                if lease is not None
                else "attaching…"
            )
        if lease is not None:
            lease.set_audit_path(writer.path)
        browser = await (early if early is not None else open_browser(settings, lease))
        await browser.set_downloads_dir(run_dir / DOWNLOADS)
    except BaseException:
        writer.close()
        await _discard(early)
        if lease is not None:
            await _end_lease(lease, None)
        raise
    if on_browser is not None:
        on_browser(browser)
    screenshot_mask.register(browser, prepared.secrets)
    # The marks are for a person watching the window; a headless run has none.
    badge = None if browser.headless else Badge(browser)
    live: LiveRun | None = None
    netlog: NetworkLog | None = None
    try:
        page = Page(
            browser,
            action_timeout=settings.action_timeout,
            allow_file_urls=settings.allow_file_urls,
            upload_dir=settings.upload_dir,
            downloads_dir=run_dir / DOWNLOADS,
            screenshots_dir=run_dir / "screenshots",
        )
        guard = DomainGuard(browser, settings.allow_domains, settings.network_mode())
        await guard.install()
        # After the guard: its hooks on child targets must run before any child does.
        await follow_frames(browser)
        netlog = NetworkLog(
            browser,
            guard,
            scrub=recorder.scrubbed,
            keep_full=settings.har,
            content=settings.har_content,
        )
        await netlog.install()
        recorder.network = netlog
        if settings.har:
            recorder.finish_har = lambda: netlog.write_har(run_dir)
        if settings.start_url:
            # The person's own step: opened before the first round, not gated.
            result = await page.navigate(settings.start_url)
            if not result.ok:
                log.warning("session.start_url_failed", url=settings.start_url, error=result.error)
        permissions = PermissionStore(
            store_name(
                pool=settings.pool,
                profile=settings.profile,
                cdp_url=settings.cdp_url,
                connect=settings.connect,
            )
        )
        policy = prepared.policy.with_remembered(permissions.rules())
        gate = Gate(
            policy=policy,
            allow_domains=settings.allow_domains,
            allow_js=settings.allow_js,
            secrets=prepared.secrets,
        )
        live = LiveRun(
            writer.run_id, settings.task, writer.path, local_holder=local_holder(supervisor)
        )
        running = asyncio.current_task()

        def abort(by: str) -> None:
            if running is not None:
                running.cancel(by)

        live.on_abort = abort
        await live.start()
        supervisor = LiveSupervisor(supervisor, live, wait=wait_for_attach(supervisor))
        agent = Agent(
            config=AgentConfig(
                task=settings.task,
                max_rounds=settings.max_rounds,
                give_up_after=settings.give_up_after,
                allow_js=settings.allow_js,
                action_timeout=settings.action_timeout,
                headless=browser.headless,
            ),
            model=prepared.model,
            page=page,
            gate=gate,
            supervisor=supervisor,
            sinks=[
                recorder,  # first: the sinks after it read what it wrote
                oplog.RunTimings(),
                *sinks,
                live.event,
                *([LiveTrace(settings.otlp)] if settings.otlp else []),
            ],
            secrets=prepared.secrets,
            run_id=writer.run_id,
            browser_label=browser.describe(),
            settings={**settings.public(), "policy": policy.record()},
            audit_path=writer.path,
            guard=guard,
            round_shots=RoundShots(browser, writer.path) if settings.screenshots else None,
            badge=badge,
            budget=BudgetKeeper(run_budget(settings, prepared.policy), prepared.price),
            shared_budget=shared_budget,
            permissions=permissions,
        )
        return await agent.run()
    finally:
        if netlog is not None:
            netlog.close()
        if live is not None:
            await live.close()
        if badge is not None:
            await badge.clear()
        _flush_audit(recorder)
        writer.close()
        if lease is not None:
            # The slots become completed with their pages as the run left them; the URL a
            # secret was typed into (a GET form) is kept with the secret redacted.
            await _end_lease(lease, browser, scrub=prepared.secrets.scrub)
        phase("closing Chrome…" if browser.kind == "launch" else "leaving the browser…")
        with contextlib.suppress(Exception):
            await browser.close()
        phase("closed")


DOWNLOADS = "downloads"
RUN_FOLDER_REPLACED = (
    "the run folder {path} was replaced by something else as it was made: give --audit-dir "
    "a folder only you can write to"
)
RUN_FOLDER_TAKEN = (
    "{path} is already there, and a run's folder must be new (a link or folder planted at "
    "this name would take the run's downloads and pictures elsewhere): remove it, or give "
    "--audit-dir a folder only you can write to"
)
OPLOG_TAKEN = (
    "the operational log {path} is already there, and a run's files must be new (a link, "
    "hard link or pipe planted at this name would make the run write into another file): "
    "remove it, or give --audit-dir a folder only you can write to"
)


def open_run(
    settings: RunSettings,
    secrets: Secrets,
    *,
    configure_oplog: bool = True,
    now: datetime | None = None,
) -> AuditWriter:
    """Create the run's files in ``settings.audit_dir``, each new: the audit log, the run
    folder beside it (:func:`make_run_folder`) and, with ``configure_oplog``, the
    operational log (``<log>.log``). ``now`` names them (default: the local time).

    The names are predictable, so whoever can write in the audit folder could plant a link
    at one first: nothing already there is used. Raises :class:`ConfigError` saying what to
    do; what this call made is removed again then.
    """
    try:
        writer = AuditWriter.create(
            settings.audit_dir, settings.task, run_id=settings.run_id, secrets=secrets, now=now
        )
    except (OSError, AuditError) as exc:
        raise ConfigError(f"cannot create the audit log in {settings.audit_dir}: {exc}") from exc
    run_dir: Path | None = None
    try:
        run_dir = make_run_folder(writer.path)
        if configure_oplog:
            _open_oplog(writer.path, settings, secrets)
    except BaseException:
        _abandon(writer, run_dir)
        raise
    return writer


def make_run_folder(audit_path: Path) -> Path:
    """Create the run folder of the log at ``audit_path`` (the log's name without
    ``.jsonl``) and its ``downloads/``: new, real folders, this user's, closed to others,
    so nothing written under them can be sent elsewhere. Returns the folder; raises
    :class:`ConfigError` when anything is already at its name."""
    run_dir = audit_path.with_suffix("")
    try:
        # mkdir never follows a link, and fails on anything already at the name.
        os.mkdir(run_dir, 0o700)
    except FileExistsError:
        raise ConfigError(RUN_FOLDER_TAKEN.format(path=run_dir)) from None
    except OSError as exc:
        raise ConfigError(f"cannot create the run folder {run_dir}: {exc.strerror}") from exc
    try:
        fd = os.open(run_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:
        raise ConfigError(RUN_FOLDER_REPLACED.format(path=run_dir)) from exc
    try:
        if os.fstat(fd).st_uid != os.geteuid():
            raise ConfigError(RUN_FOLDER_REPLACED.format(path=run_dir))
        os.mkdir(DOWNLOADS, 0o700, dir_fd=fd)
    except OSError as exc:
        raise ConfigError(f"cannot create {run_dir / DOWNLOADS}: {exc.strerror}") from exc
    finally:
        os.close(fd)
    return run_dir


def _open_oplog(audit_path: Path, settings: RunSettings, secrets: Secrets) -> None:
    path = oplog.log_path_for(audit_path)
    try:
        oplog.configure(path, console=settings.console_log, secrets=secrets)
    except FileExistsError:
        raise ConfigError(OPLOG_TAKEN.format(path=path)) from None
    except OSError as exc:
        raise ConfigError(f"cannot create the operational log {path}: {exc.strerror}") from exc


def _abandon(writer: AuditWriter, run_dir: Path | None) -> None:
    """Take back what a refused set-up made: the still empty audit log and the empty run
    folder. Only empty ones go, so nothing someone else put there is removed."""
    writer.close()
    with contextlib.suppress(OSError):
        if os.lstat(writer.path).st_size == 0:
            os.unlink(writer.path)
    if run_dir is not None:
        for folder in (run_dir / DOWNLOADS, run_dir):
            with contextlib.suppress(OSError):
                os.rmdir(folder)


async def _end_lease(
    lease: PoolRun, browser: Browser | None, *, scrub: Callable[[str], str] | None = None
) -> None:
    """Mark the run's pool slots completed. A failure is said, never swallowed: a slot
    left ``running`` is freed only once this process has ended."""
    try:
        await lease.end(browser, scrub=scrub)
    except Exception as exc:
        log.error("pool.release_failed", pool=lease.name, error=str(exc))
        print(
            f"handrail: could not mark this run's slots of pool {lease.name!r} completed: "
            f"{exc}; they stay running until this process ends",
            file=sys.stderr,
        )


def _flush_audit(recorder: AuditRecorder) -> None:
    """Write the rounds still in flight. An audit tool must not lose a record silently: a
    failure here goes to the operational log and, as the process exits, to stderr."""
    try:
        recorder.flush_pending()
    except (OSError, AuditError, ValueError) as exc:
        path = recorder.writer.path
        log.error("audit.flush_failed", path=str(path), error=str(exc))
        print(
            f"handrail: the last rounds could not be written to the audit log {path}: {exc}",
            file=sys.stderr,
        )
