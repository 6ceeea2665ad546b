"""The pool signing key: an Ed25519 private key in a file only its owner can read, and
its public key in a file beside it (``POOL.pub``) that every host may hold.

Only a host holding the private key (the central manager, a personal pool) can mint
tokens; every daemon verifies them with the public key, so a host that joined the pool
can check tokens without being able to forge one.

A key file written before Roost used Ed25519 holds random bytes (a shared HS256
secret). :func:`load_signing_key` still reads it, so an existing personal pool keeps
working; such a pool cannot have hosts join it (they would need the secret), and
``roost pool join-token`` says to move the old key aside and make a new one.
"""

from __future__ import annotations

import os
import stat

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from daemoncore.security.errors import SigningKeyError
from daemoncore.security.token_files import replace_file

#: Length of the shared secret of an old (HS256) key file.
KEY_BYTES = 64
MIN_KEY_BYTES = 32
PUBLIC_KEY_SUFFIX = ".pub"
PUBLIC_KEY_MODE = 0o644
_PEM_START = b"-----BEGIN "

#: What mints tokens: an Ed25519 private key, or an old pool's shared secret.
SigningKey = Ed25519PrivateKey | bytes
#: What checks tokens: a public key, or anything that mints them.
VerifyKey = Ed25519PublicKey | Ed25519PrivateKey | bytes


def public_key_file(signing_key_file: str) -> str:
    """Where the public key of the signing key at ``signing_key_file`` is kept: beside it, ``.pub`` added."""
    return signing_key_file + PUBLIC_KEY_SUFFIX


def is_shared_secret(key: VerifyKey) -> bool:
    """Whether ``key`` is an old pool's HS256 secret (whoever can check tokens can also mint them)."""
    return isinstance(key, bytes)


def verifying_key(key: VerifyKey) -> Ed25519PublicKey | bytes:
    """What checks the tokens ``key`` signs: the public half of a private key, a shared secret itself."""
    return key.public_key() if isinstance(key, Ed25519PrivateKey) else key


def public_key_pem(key: Ed25519PrivateKey | Ed25519PublicKey) -> str:
    """The public key of ``key`` in PEM form (what a joining host is given)."""
    return verifying_key(key).public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def create_signing_key(path: str) -> Ed25519PrivateKey:
    """Write a fresh Ed25519 key to ``path`` (mode 0600) and its public key beside it
    (mode 0644), and return it. Missing parent directories are created with mode 0700.

    Raises:
        SigningKeyError: ``path`` already exists (it is never overwritten) or cannot be written.
    """
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
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
        handle.write(pem)
        handle.flush()
        os.fsync(handle.fileno())
    write_public_key(public_key_file(path), public_key_pem(key))
    return key


def load_signing_key(path: str) -> SigningKey:
    """Read the key at ``path``, refusing one that others could read: an Ed25519 private
    key, or the shared secret of a pool made before (bytes, for HS256).

    Raises:
        SigningKeyError: missing, not a regular file, owned by someone else, readable or
            writable by group or others, not an Ed25519 key, or a secret shorter than 32 bytes.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        raise SigningKeyError(f"signing key {path} does not exist: create the pool's key first") from None
    except OSError as err:
        raise SigningKeyError(f"cannot read signing key {path}: {err.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        _check_private(path, os.fstat(handle.fileno()))
        data = handle.read()
    if not data.startswith(_PEM_START):
        if len(data) < MIN_KEY_BYTES:
            raise SigningKeyError(f"signing key {path} holds {len(data)} bytes: expected at least {MIN_KEY_BYTES}")
        return data
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as err:
        raise SigningKeyError(f"signing key {path} is not a readable private key: {err}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningKeyError(f"signing key {path} is a {type(key).__name__}, not an Ed25519 key")
    return key


def ensure_signing_key(path: str) -> SigningKey:
    """Load the key at ``path``, creating it first if there is none; an Ed25519 key whose
    public key file is missing gets it written again.

    Raises:
        SigningKeyError: as :func:`load_signing_key` or :func:`create_signing_key`.
    """
    if not os.path.lexists(path):
        try:
            return create_signing_key(path)
        except SigningKeyError:
            if not os.path.lexists(path):
                raise
    key = load_signing_key(path)
    if not is_shared_secret(key) and not os.path.exists(public_key_file(path)):
        write_public_key(public_key_file(path), public_key_pem(key))
    return key


def load_public_key(path: str) -> Ed25519PublicKey:
    """Read the pool's public key at ``path`` (PEM).

    Raises:
        SigningKeyError: missing, unreadable, or not an Ed25519 public key.
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read(64 * 1024)
    except FileNotFoundError:
        raise SigningKeyError(f"the pool's public key {path} does not exist: copy it from the central "
                              f"manager (beside its signing key) or join with `roost pool join`") from None
    except OSError as err:
        raise SigningKeyError(f"cannot read the pool's public key {path}: {err.strerror}") from None
    return parse_public_key(data, path)


def parse_public_key(data: bytes, source: str) -> Ed25519PublicKey:
    """The Ed25519 public key in the PEM ``data`` from ``source``.

    Raises:
        SigningKeyError: ``data`` is not an Ed25519 public key in PEM form.
    """
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError) as err:
        raise SigningKeyError(f"{source} is not a public key in PEM form: {err}") from None
    if not isinstance(key, Ed25519PublicKey):
        raise SigningKeyError(f"{source} holds a {type(key).__name__}, not an Ed25519 public key")
    return key


def write_public_key(path: str, pem: str) -> None:
    """Write the public key ``pem`` to ``path`` (mode 0644, atomically).

    Raises:
        SigningKeyError: the file cannot be written.
    """
    try:
        replace_file(path, pem, PUBLIC_KEY_MODE)
    except OSError as err:
        raise SigningKeyError(f"cannot write the pool's public key {path}: {err.strerror or err}") from None


def _check_private(path: str, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise SigningKeyError(f"signing key {path} is not a regular file")
    if info.st_uid != os.geteuid():
        raise SigningKeyError(f"signing key {path} belongs to uid {info.st_uid}, not to you (uid {os.geteuid()})")
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        raise SigningKeyError(f"signing key {path} has mode {mode:04o}, so others can read or change it: "
                              f"run 'chmod 600 {path}'")
