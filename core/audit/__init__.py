"""The audit log: an append-only JSONL hash chain whose every record is sealed.

One job per module: :mod:`~core.audit.key` (the installation's key), :mod:`~core.audit.chain`
(the bytes of a sealed, chained line), :mod:`~core.audit.writer` (durable appends),
:mod:`~core.audit.records` (typed records: the recorder writes them, replay reads them
back), :mod:`~core.audit.reader` (whole-log and indexed reading) and
:mod:`~core.audit.verify`. The recorder, which turns a run's events into records, belongs to
the run: :mod:`core.run.recorder`. Record shapes are the contract in docs/architecture.md
("Audit log").

May import: :mod:`core.model` and everything below it; never :mod:`core.run`.
"""

from typing import TYPE_CHECKING

# The names below are loaded on first use (PEP 562), so that importing one light module such
# as core.audit.key (``handrail --help`` does) does not load the records, reader and verifier.
if TYPE_CHECKING:
    from core.audit.chain import line_hash
    from core.audit.key import (
        AuditKey,
        AuditKeyError,
        existing_key,
        installation_key,
        key_from_file,
    )
    from core.audit.reader import LogIndex, LogProblem, LogRead, read_log
    from core.audit.records import ApprovalRecord, RoundEntry, rounds_of
    from core.audit.verify import VerifyReport, verify
    from core.audit.writer import SCHEMA, AuditError, AuditLockedError, AuditWriter
    from core.secrets import REDACTED

__all__ = [
    "REDACTED",
    "SCHEMA",
    "ApprovalRecord",
    "AuditError",
    "AuditKey",
    "AuditKeyError",
    "AuditLockedError",
    "AuditWriter",
    "LogIndex",
    "LogProblem",
    "LogRead",
    "RoundEntry",
    "VerifyReport",
    "existing_key",
    "installation_key",
    "key_from_file",
    "line_hash",
    "read_log",
    "rounds_of",
    "verify",
]

_HOME = {
    "line_hash": "core.audit.chain",
    "AuditKey": "core.audit.key",
    "AuditKeyError": "core.audit.key",
    "existing_key": "core.audit.key",
    "installation_key": "core.audit.key",
    "key_from_file": "core.audit.key",
    "LogIndex": "core.audit.reader",
    "LogProblem": "core.audit.reader",
    "LogRead": "core.audit.reader",
    "read_log": "core.audit.reader",
    "ApprovalRecord": "core.audit.records",
    "RoundEntry": "core.audit.records",
    "rounds_of": "core.audit.records",
    "VerifyReport": "core.audit.verify",
    "verify": "core.audit.verify",
    "SCHEMA": "core.audit.writer",
    "AuditError": "core.audit.writer",
    "AuditLockedError": "core.audit.writer",
    "AuditWriter": "core.audit.writer",
    "REDACTED": "core.secrets",
}


def __getattr__(name: str) -> object:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'core.audit' has no attribute {name!r}")
    from importlib import import_module

    module = import_module(home)
    # Importing a submodule binds its name here (``core.audit.verify`` the module): bind
    # every name that module exports over it, or ``verify`` stays the module once
    # ``VerifyReport`` was asked for first.
    for other, where in _HOME.items():
        if where == home:
            globals()[other] = getattr(module, other)
    return globals()[name]
