"""The audit log: an append-only JSONL hash chain whose every record is sealed.

One job per module: :mod:`~core.audit.key` (the installation's key), :mod:`~core.audit.chain`
(the bytes of a sealed, chained line), :mod:`~core.audit.writer` (durable appends),
:mod:`~core.audit.records` (typed records shared by the recorder and replay),
:mod:`~core.audit.recorder` (agent events to records), :mod:`~core.audit.reader` (whole-log
and indexed reading) and :mod:`~core.audit.verify`. Record shapes are the contract in
docs/architecture.md ("Audit log").
"""

from core.audit.chain import line_hash
from core.audit.key import AuditKey, AuditKeyError, existing_key, installation_key, key_from_file
from core.audit.reader import LogIndex, LogProblem, LogRead, read_log
from core.audit.recorder import AuditRecorder
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
    "AuditRecorder",
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
