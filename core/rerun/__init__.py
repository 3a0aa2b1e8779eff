"""``handrail rerun``: repeat a recorded run on the live site, finding each target again by
what it was, asking the model only where a step no longer fits (docs/architecture.md)."""

from core.rerun.match import FIT, MARGIN, find_target, read_digest, recorded_entry
from core.rerun.plan import RecordedPlan
from core.rerun.rebase import Rebase, parse_rebase
from core.rerun.source import RecordedRun, RecordedStep, RerunError, load_recorded

__all__ = [
    "FIT",
    "MARGIN",
    "Rebase",
    "RecordedPlan",
    "RecordedRun",
    "RecordedStep",
    "RerunError",
    "find_target",
    "load_recorded",
    "parse_rebase",
    "read_digest",
    "recorded_entry",
]
