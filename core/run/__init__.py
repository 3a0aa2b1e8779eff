"""One run: its settings and session (:mod:`core.run.session`), the agent's loop
(:mod:`core.run.agent`) and its gate (:mod:`core.run.checkpoint`: decide, approve, act),
the typed events it emits and the supervisor seam it awaits, the recorder that turns
events into audit records, each round's pictures, the operational log, fleets of runs
and ``handrail doctor``'s checks.

May import every core layer below it: pool, audit, model, guard, hands, eyes, world,
browser, cdp and the shared vocabulary. Only :mod:`core.rerun`, :mod:`core.demo` and the
TUI import it.
"""
