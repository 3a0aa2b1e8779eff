"""How one line joins the chain and carries its seal: the bytes the writer and the verifier
must agree on, in one place.

A sealed line is the record's JSON (compact, ``seq`` and ``prev`` first) with ``"mac"`` as its
last key. The MAC is HMAC-SHA256, under the installation key, over a fixed label, the running
chain head (the SHA-256 of the previous whole line, ``prev``) and the line as it was before
``mac`` was added. The next line's ``prev`` is the SHA-256 of this whole line, ``mac``
included.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from typing import Any

MAC_LABEL = b"handrail audit mac v2\n"
_MAC_TAIL = re.compile(rb',"mac":"([0-9a-f]{64})"\}$')


def line_hash(line: bytes) -> str:
    """SHA-256 hex of one log line's bytes, without its newline: the next record's ``prev``."""
    return hashlib.sha256(line.rstrip(b"\n")).hexdigest()


def encode(record: dict[str, Any]) -> bytes:
    """The line for ``record`` (no newline, no MAC): compact JSON, UTF-8, keys in order."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def mac_of(secret: bytes, head: str | None, unsealed: bytes) -> str:
    """The MAC of an unsealed line that follows chain head ``head`` (``None`` for the first)."""
    message = MAC_LABEL + (head or "").encode("ascii") + b"\n" + unsealed
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def with_mac(unsealed: bytes, mac: str) -> bytes:
    """``unsealed`` with ``mac`` appended as its last key: the sealed line."""
    return unsealed[:-1] + b',"mac":"' + mac.encode("ascii") + b'"}'


def split_seal(line: bytes) -> tuple[bytes, str] | None:
    """The unsealed line and its MAC, or ``None`` when the line does not end with a MAC."""
    found = _MAC_TAIL.search(line)
    if found is None:
        return None
    return line[: found.start()] + b"}", found.group(1).decode("ascii")


def seal_holds(secret: bytes, head: str | None, line: bytes) -> bool:
    """Whether ``line`` carries the MAC ``secret`` gives it after ``head`` (constant time)."""
    parts = split_seal(line)
    if parts is None:
        return False
    unsealed, mac = parts
    return hmac.compare_digest(mac, mac_of(secret, head, unsealed))
