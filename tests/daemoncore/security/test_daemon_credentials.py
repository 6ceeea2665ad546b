"""A daemon mints its own token where the pool key is, and sends the token it was given
at join where only the public key is; without either it refuses to start, naming the file."""

from __future__ import annotations

import pytest

from daemoncore.security import issue_token, verify_token, write_token
from daemoncore.security.daemon_credentials import DaemonCredentials, load_daemon_credentials
from daemoncore.security.errors import SigningKeyError
from daemoncore.security.signing_key import create_signing_key, public_key_file, public_key_pem, write_public_key


@pytest.fixture
def pool_key(tmp_path):
    return create_signing_key(str(tmp_path / "cm" / "POOL"))


def test_a_host_with_the_signing_key_mints_and_reuses_its_token(tmp_path, pool_key):
    """The same token is sent until half its lifetime is gone, then a new one."""
    credentials = load_daemon_credentials(str(tmp_path / "cm" / "POOL"), "", "")
    first = credentials.daemon_token("schedd@pool", 300, now=1000)
    assert credentials.daemon_token("schedd@pool", 300, now=1149) == first
    renewed = credentials.daemon_token("schedd@pool", 300, now=1150)
    assert renewed != first
    assert verify_token(credentials.verify_key, renewed, now=1150).expires == 1450


def test_a_joined_host_sends_its_given_token_and_checks_with_the_public_key(tmp_path, pool_key):
    """Without a signing key the daemon's token is the file's, whatever identity it would have minted."""
    public = str(tmp_path / "exec" / "POOL.pub")
    write_public_key(public, public_key_pem(pool_key))
    given = issue_token(pool_key, "startd@exec1", ["DAEMON"], issuer="pool", now=0)
    write_token(str(tmp_path / "exec" / "daemon"), given)
    credentials = load_daemon_credentials(str(tmp_path / "exec" / "POOL"), public, str(tmp_path / "exec" / "daemon"))
    assert credentials.signing_key is None
    assert credentials.daemon_token("startd@pool", 300, now=5) == given
    assert verify_token(credentials.verify_key, given, now=5).name == "startd@exec1"


def test_the_public_key_defaults_to_the_file_beside_the_signing_key(tmp_path, pool_key):
    """With SEC_TOKEN_POOL_PUBLIC_KEY_FILE unset, POOL.pub beside the (absent) POOL is used."""
    signing = str(tmp_path / "exec" / "POOL")
    write_public_key(public_key_file(signing), public_key_pem(pool_key))
    write_token(str(tmp_path / "daemon"), issue_token(pool_key, "schedd@sub", ["DAEMON"], issuer="pool", now=0))
    assert load_daemon_credentials(signing, "", str(tmp_path / "daemon")).given_token


@pytest.mark.parametrize(("public", "token_file", "words"), [
    (False, "daemon", "neither the pool signing key .*POOL nor the pool's public key .*POOL.pub"),
    (True, "", "SEC_DAEMON_TOKEN_FILE is not set"),
    (True, "missing", "cannot read the token file .*missing.*SEC_DAEMON_TOKEN_FILE"),
])
def test_a_daemon_without_credentials_names_what_is_missing(tmp_path, pool_key, public, token_file, words):
    """No key, no public key or no token file: a SigningKeyError naming the file and the knob."""
    signing = str(tmp_path / "exec" / "POOL")
    if public:
        write_public_key(public_key_file(signing), public_key_pem(pool_key))
    with pytest.raises(SigningKeyError, match=words):
        load_daemon_credentials(signing, "", str(tmp_path / token_file) if token_file else "")


def test_credentials_from_a_key_verify_with_its_public_half(pool_key):
    """DaemonCredentials.signing checks with the public key, so the verifier cannot sign."""
    credentials = DaemonCredentials.signing(pool_key)
    token = credentials.daemon_token("negotiator@pool", 60, now=0)
    assert verify_token(credentials.verify_key, token, now=1).name == "negotiator@pool"
    with pytest.raises(SigningKeyError):
        issue_token(credentials.verify_key, "negotiator@pool", ["DAEMON"], now=0)
