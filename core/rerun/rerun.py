"""One rerun from its options to its end: the recorded run, the live settings, the plan.

A rerun is an ordinary run (:func:`core.run.session.run_session`: its own log, browser, gate,
hand-overs, allowlist) whose "model" is :class:`~core.rerun.plan.RecordedPlan`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from core.guard.policy import host_of
from core.rerun.plan import RecordedPlan
from core.rerun.rebase import Rebase, origin_of, parse_rebase
from core.rerun.source import RecordedRun, RerunError, load_recorded
from core.run.events import EventSink, RunFinished, Supervisor
from core.run.session import (
    ConfigError,
    PhaseSink,
    Prepared,
    RunSettings,
    check_settings,
    ready_model,
    run_policy,
    run_price,
    run_session,
)

NO_MODEL = "none"
"""``RunSettings.model_spec`` of a rerun without ``--model`` (written so in its log)."""
EXTRA_ROUNDS = 10
"""Rounds a rerun may take beyond the recorded steps (model rounds for changed steps)."""


@dataclass(frozen=True, slots=True)
class Rerun:
    """A recorded run and how it maps onto the live site."""

    recorded: RecordedRun
    rebase: Rebase

    @classmethod
    def load(cls, log: Path, rebase: Sequence[str] = (), *, trust_log: bool = False) -> Rerun:
        """Raises :class:`ConfigError` (exit 2) naming what is wrong with the log or --rebase
        (a log not sealed here is refused unless ``trust_log``)."""
        try:
            recorded = load_recorded(log, trust_log=trust_log)
            start = recorded.start_url or (recorded.steps[0].url if recorded.steps else "")
            return cls(recorded, parse_rebase(rebase, origin_of(start)))
        except RerunError as exc:
            raise ConfigError(str(exc)) from exc

    @property
    def start_rebased(self) -> bool:
        """Whether --rebase moves the recorded start page to an origin the person named."""
        start = self.recorded.start_url
        return bool(start) and self.rebase.url(start or "") != start

    def settings(
        self,
        base: RunSettings,
        *,
        start_url: str | None = None,
        allow_domains: Sequence[str] = (),
        max_rounds: int | None = None,
    ) -> RunSettings:
        """``base`` (the command line's options) completed from the recording: its task, its
        start URL on the live origin unless ``start_url`` is given, its allowlist (with the
        rebased hosts) unless ``allow_domains`` is given, and room for the recorded steps.

        A log not sealed here supplies neither: its start URL only through --rebase (or
        ``start_url``), and its allowlist never, so it cannot widen where the run may go.
        Without ``allow_domains`` such a run may visit only the start page's host and the
        rebased ones. Raises :class:`ConfigError` when such a log leaves no start page."""
        recorded = self.recorded
        trusted = recorded.sealed_here
        added = tuple(h for h in (host_of(t) for t in self.rebase.targets()) if h)
        if start_url is None and recorded.start_url and (trusted or self.start_rebased):
            start_url = self.rebase.url(recorded.start_url)
        if not trusted and start_url is None:
            raise ConfigError(
                f"{recorded.path} is not sealed here, so its start page is not used: give "
                "--start-url, or --rebase the recorded origin onto yours"
            )
        if allow_domains:
            allowed = tuple(allow_domains)
        elif not trusted:
            allowed = (host_of(start_url or ""), *added)
        elif recorded.allow_domains:
            allowed = (*recorded.allow_domains, *added)
        else:
            allowed = ()
        if not trusted and not any(allowed):
            # An empty allowlist means every host: never the default for a log not sealed here.
            raise ConfigError(
                f"{recorded.path} is not sealed here and its start page names no host: give "
                "--allow-domain for the hosts the rerun may visit"
            )
        # The documented default (docs/architecture.md, `rerun --help`): the header's
        # "round 1 of N" must say the limit the person was told.
        rounds = max_rounds or len(recorded.steps) + EXTRA_ROUNDS
        return replace(
            base,
            task=recorded.task,
            start_url=start_url,
            allow_domains=tuple(dict.fromkeys(h for h in allowed if h)),
            max_rounds=rounds,
        )


async def run_rerun(
    rerun: Rerun,
    settings: RunSettings,
    *,
    supervisor: Supervisor,
    sinks: Sequence[EventSink] = (),
    env: Mapping[str, str] | None = None,
    on_phase: PhaseSink | None = None,
) -> tuple[RunFinished, RecordedPlan]:
    """Repeat the recorded run with ``settings`` (see :meth:`Rerun.settings`); returns how it
    ended and the plan (which counts its model requests). Raises :class:`ConfigError`."""
    env = os.environ if env is None else env
    with_model = settings.model_spec != NO_MODEL
    secrets = check_settings(settings, env, with_model=with_model)
    policy = run_policy(settings)
    price = run_price(settings, policy, env)
    fallback = await ready_model(settings, env, check=True) if with_model else None
    plan = RecordedPlan(rerun.recorded, rebase=rerun.rebase, secrets=secrets, fallback=fallback)
    finished = await run_session(
        settings,
        supervisor=supervisor,
        sinks=sinks,
        prepared=Prepared(model=plan, secrets=secrets, policy=policy, price=price),
        env=env,
        on_phase=on_phase,
    )
    return finished, plan
