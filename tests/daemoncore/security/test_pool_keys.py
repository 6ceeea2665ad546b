"""The pool key is Ed25519: the private key mints, the public key beside it only checks;
an older pool's shared-secret key file still works for that pool alone."""

from __future__ import annotations

import os

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from daemoncore.security import issue_token, verify_token
from daemoncore.security.errors import MalformedTokenError, SigningKeyError, TokenSignatureError
from daemoncore.security.signing_key import (
    create_signing_key,
    ensure_signing_key,
    is_shared_secret,
    load_public_key,
    load_signing_key,
    public_key_file,
    public_key_pem,
)

NOW = 1_700_000_000.0


@pytest.fixture
def key_file(tmp_path):
    path = str(tmp_path / "passwords.d" / "POOL")
    create_signing_key(path)
    return path


def test_the_public_key_checks_tokens_but_cannot_issue_them(key_file):
    """A token minted with the private key verifies with the public key file; the public key refuses to sign."""
    public = load_public_key(public_key_file(key_file))
    token = issue_token(load_signing_key(key_file), "startd@hostB", ["DAEMON"], issuer="pool", now=NOW)
    assert verify_token(public, token, now=NOW).name == "startd@hostB"
    with pytest.raises(SigningKeyError, match="only the pool's public key.*cannot"):
        issue_token(public, "startd@hostC", ["DAEMON"], now=NOW)


def test_a_token_of_another_pool_is_refused_by_the_public_key(key_file, tmp_path):
    """Another pool's Ed25519 key signs tokens this pool's public key refuses as badly signed."""
    other = create_signing_key(str(tmp_path / "other" / "POOL"))
    token = issue_token(other, "startd@pool", ["DAEMON"], now=NOW)
    with pytest.raises(TokenSignatureError):
        verify_token(load_public_key(public_key_file(key_file)), token, now=NOW)


def test_an_old_shared_secret_key_file_still_works_for_its_own_pool(tmp_path):
    """A key file of random bytes (a pool made before Ed25519) loads as a shared secret and signs HS256 tokens."""
    path = tmp_path / "POOL"
    path.write_bytes(os.urandom(64))
    path.chmod(0o600)
    secret = ensure_signing_key(str(path))
    assert is_shared_secret(secret) and not os.path.exists(public_key_file(str(path)))
    token = issue_token(secret, "alice@pool", ["READ"], now=NOW)
    assert verify_token(secret, token, now=NOW).name == "alice@pool"


def test_an_hs256_token_is_refused_by_an_ed25519_pool_saying_why(key_file):
    """A token signed with a shared secret, shown to an Ed25519 pool, is refused naming the old kind of key."""
    token = issue_token(os.urandom(64), "alice@pool", ["ADMINISTRATOR"], now=NOW)
    with pytest.raises(MalformedTokenError, match="shared secret.*HS256"):
        verify_token(load_public_key(public_key_file(key_file)), token, now=NOW)


def test_a_missing_public_key_file_is_written_again(key_file):
    """ensure_signing_key restores the public key file of an Ed25519 key when it was removed."""
    os.remove(public_key_file(key_file))
    key = ensure_signing_key(key_file)
    assert open(public_key_file(key_file)).read() == public_key_pem(key)


@pytest.mark.parametrize(("content", "words"), [
    (None, "does not exist.*roost pool join"),
    (b"not a key", "not a public key in PEM form"),
])
def test_a_bad_public_key_file_is_refused_clearly(tmp_path, content, words):
    """A missing or unreadable public key file is a SigningKeyError saying what to do."""
    path = tmp_path / "POOL.pub"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(SigningKeyError, match=words):
        load_public_key(str(path))


def test_a_private_key_of_another_kind_is_refused(tmp_path):
    """A PEM private key that is not Ed25519 (an ECDSA CA key, say) is not taken for the pool key."""
    path = tmp_path / "POOL"
    path.write_bytes(ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    path.chmod(0o600)
    with pytest.raises(SigningKeyError, match="not an Ed25519 key"):
        load_signing_key(str(path))
