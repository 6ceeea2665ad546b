"""The pool signing key: random bytes in a file only its owner can read."""

from __future__ import annotations

import os
import secrets
import stat

from daemoncore.security.errors import SigningKeyError

KEY_BYTES = 64
MIN_KEY_BYTES = 32


def create_signing_key(path: str) -> bytes:
    """Write a fresh random key to ``path`` with mode 0600 and return it.

    Missing parent directories are created with mode 0700.

    Raises:
        SigningKeyError: ``path`` already exists (it is never overwritten) or cannot be written.
    """
    key = secrets.token_bytes(KEY_BYTES)
    try:
        parent = os.path.dirname(os.path.abspath(path))
        os.makedirs(parent, mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise SigningKeyError(f"signing key {path} already exists: load it, or remove it first") from None
    except OSError as err:
        raise SigningKeyError(f"cannot create signing key {path}: {err.strerror}") from None
    with os.fdopen(fd, "wb") as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(key)
        handle.flush()
        os.fsync(handle.fileno())
    return key


def load_signing_key(path: str) -> bytes:
    """Read the key at ``path``, refusing one that others could read.

    Raises:
        SigningKeyError: missing, not a regular file, owned by someone else, readable or
            writable by group or others, or shorter than 32 bytes.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        raise SigningKeyError(f"signing key {path} does not exist: create the pool's key first") from None
    except OSError as err:
        raise SigningKeyError(f"cannot read signing key {path}: {err.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        _check_private(path, os.fstat(handle.fileno()))
        key = handle.read()
    if len(key) < MIN_KEY_BYTES:
        raise SigningKeyError(f"signing key {path} holds {len(key)} bytes: expected at least {MIN_KEY_BYTES}")
    return key


def ensure_signing_key(path: str) -> bytes:
    """Load the key at ``path``, creating it first if there is none.

    Raises:
        SigningKeyError: as :func:`load_signing_key` or :func:`create_signing_key`.
    """
    if not os.path.lexists(path):
        try:
            return create_signing_key(path)
        except SigningKeyError:
            if not os.path.lexists(path):
                raise
    return load_signing_key(path)


def _check_private(path: str, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise SigningKeyError(f"signing key {path} is not a regular file")
    if info.st_uid != os.geteuid():
        raise SigningKeyError(f"signing key {path} belongs to uid {info.st_uid}, not to you (uid {os.geteuid()})")
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        raise SigningKeyError(f"signing key {path} has mode {mode:04o}, so others can read or change it: "
                              f"run 'chmod 600 {path}'")
