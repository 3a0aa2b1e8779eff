"""The installation's audit key: 32 random bytes that seal every record this user writes.

The key lives in the user's data directory (``$HANDRAIL_DATA_DIR``, else
``$XDG_DATA_HOME/handrail``, else ``~/.local/share/handrail``) as ``audit.key``, mode 0600,
created on first use by a writer. Readers never create it: a verifier without the key says so
instead of inventing one.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

DATA_DIR_ENV = "HANDRAIL_DATA_DIR"
"""Overrides the data directory (tests point it at a temporary directory)."""
KEY_FILE = "audit.key"
KEY_BYTES = 32


class AuditKeyError(Exception):
    """The key file exists but cannot be used; the message says how to fix it."""


@dataclass(frozen=True, slots=True)
class AuditKey:
    """A sealing key and where it came from. ``key_id`` names it in a log without revealing it."""

    secret: bytes
    source: Path | None = None

    @property
    def key_id(self) -> str:
        """First 16 hex digits of SHA-256 over the key: which key sealed a log."""
        return hashlib.sha256(b"handrail audit key id\n" + self.secret).hexdigest()[:16]

    def hex(self) -> str:
        return self.secret.hex()


def data_dir() -> Path:
    """The directory that holds the key (not created here)."""
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return Path(override)
    xdg = os.environ.get("XDG_DATA_HOME")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "handrail"
    return Path.home() / ".local" / "share" / "handrail"


def key_path() -> Path:
    return data_dir() / KEY_FILE


def installation_key() -> AuditKey:
    """The installation key, created (0600; its directory 0700 when missing) if there is none.

    Raises :class:`AuditKeyError` when the file exists but is unusable (wrong size, readable by
    others) and ``OSError`` when it cannot be created.
    """
    path = key_path()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        found = existing_key()
        assert found is not None
        return found
    try:
        secret = secrets.token_bytes(KEY_BYTES)
        os.write(fd, secret)
        os.fsync(fd)
    finally:
        os.close(fd)
    return AuditKey(secret, path)


def existing_key() -> AuditKey | None:
    """The installation key when there is one; never creates it. Raises :class:`AuditKeyError`
    when the file exists but is unusable."""
    path = key_path()
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise AuditKeyError(
            f"{path} can be read by other users (mode {stat.filemode(info.st_mode)}), so its "
            f"seal proves nothing. Run: chmod 600 {path}"
        )
    return AuditKey(_read_secret(path), path)


def key_from_file(path: Path) -> AuditKey:
    """A key given by an auditor: the raw 32 bytes, or the 64 hex digits ``key export`` prints.

    Raises :class:`AuditKeyError` (content) or ``OSError`` (reading).
    """
    return AuditKey(_read_secret(Path(path)), Path(path))


def _read_secret(path: Path) -> bytes:
    data = path.read_bytes()
    if len(data) == KEY_BYTES:
        return data
    text = data.strip()
    if len(text) == 2 * KEY_BYTES:
        try:
            return bytes.fromhex(text.decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            pass
    raise AuditKeyError(
        f"{path} is not a handrail audit key: expected {KEY_BYTES} raw bytes or "
        f"{2 * KEY_BYTES} hex digits (what `handrail key export` prints), found {len(data)} bytes"
    )
