"""handrail's exit codes, defined once (``handrail run --help`` and the README list them).

0 and 1 for a finished run come from the run itself (``core.run.events.RunFinished.exit_code``).
"""

from __future__ import annotations

EXIT_CRASHED = 1
"""The run stopped with an error of ours."""
EXIT_USAGE = 2
"""A usage or configuration error: nothing ran (or the run could not start)."""
EXIT_POOL_FULL = 4
"""``--pool``: every slot of the pool is running (or the slot to resume is)."""
EXIT_BUDGET = 5
"""A budget (``--max-tokens``, ``--max-cost``, ``--max-time``) stopped the run before its
next model call (core/run/budget.py)."""
EXIT_INTERRUPTED = 130
"""ctrl+c, a closed terminal or a polite kill, or the person aborted the run."""
