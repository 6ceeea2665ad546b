"""The pool signing key, issuing and verifying tokens, and finding a client's token."""

from __future__ import annotations

import os
import stat

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from daemoncore.security import (
    TOKEN_ENV,
    AuthorizationLevel,
    MalformedTokenError,
    SigningKeyError,
    TokenError,
    TokenExpiredError,
    TokenSignatureError,
    create_signing_key,
    ensure_signing_key,
    find_token,
    issue_token,
    list_tokens,
    load_signing_key,
    read_unverified,
    verify_token,
    write_token,
)

NOW = 1_700_000_000.0


@pytest.fixture
def key(tmp_path):
    return create_signing_key(str(tmp_path / "passwords.d" / "POOL"))


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def raw(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                             serialization.NoEncryption())


# --- signing key ---

def test_created_key_is_private_random_and_loadable(tmp_path):
    """A new key file has mode 0600 in a 0700 directory and loads back the same key; its
    public key lies beside it, readable by all."""
    path = tmp_path / "passwords.d" / "POOL"
    key = create_signing_key(str(path))
    assert mode(path) == 0o600 and mode(path.parent) == 0o700
    assert raw(load_signing_key(str(path))) == raw(key)
    assert raw(create_signing_key(str(tmp_path / "other"))) != raw(key)
    assert mode(str(path) + ".pub") == 0o644


def test_existing_key_is_never_overwritten(tmp_path, key):
    """Creating a key where one exists fails and leaves the old key in place."""
    path = str(tmp_path / "passwords.d" / "POOL")
    with pytest.raises(SigningKeyError, match="already exists"):
        create_signing_key(path)
    assert raw(load_signing_key(path)) == raw(key)
    assert raw(ensure_signing_key(path)) == raw(key)


def test_ensure_creates_a_missing_key(tmp_path):
    """ensure_signing_key makes a key when there is none yet."""
    path = str(tmp_path / "POOL")
    key = ensure_signing_key(path)
    assert raw(load_signing_key(path)) == raw(key)


@pytest.mark.parametrize("bad_mode", [0o640, 0o604, 0o660])
def test_key_readable_by_others_is_refused(tmp_path, key, bad_mode):
    """A key that group or others can read or write is refused with the chmod that fixes it."""
    path = str(tmp_path / "passwords.d" / "POOL")
    os.chmod(path, bad_mode)
    with pytest.raises(SigningKeyError, match=f"mode {bad_mode:04o}.*chmod 600"):
        load_signing_key(path)


def test_missing_or_short_key_is_refused(tmp_path):
    """A missing key file or one too short to be a key gives a clear error."""
    with pytest.raises(SigningKeyError, match="does not exist"):
        load_signing_key(str(tmp_path / "nope"))
    short = tmp_path / "short"
    short.write_bytes(b"tiny")
    os.chmod(short, 0o600)
    with pytest.raises(SigningKeyError, match="at least 32"):
        load_signing_key(str(short))


# --- issuing and verifying ---

def test_token_round_trip_gives_the_identity_and_scopes(key):
    """A token issued for alice@pool with WRITE verifies to that identity, allowing READ too."""
    token = issue_token(key, "alice@pool", [AuthorizationLevel.WRITE], lifetime=3600,
                        issuer="cm.example", now=NOW)
    who = verify_token(key, token, now=NOW + 10)
    assert (who.user, who.domain, who.name) == ("alice", "pool", "alice@pool")
    assert who.scopes == {AuthorizationLevel.WRITE}
    assert who.allows(AuthorizationLevel.READ) and who.allows(AuthorizationLevel.WRITE)
    assert not who.allows(AuthorizationLevel.ADMINISTRATOR) and not who.allows(AuthorizationLevel.DAEMON)
    assert (who.issuer, who.issued, who.expires) == ("cm.example", NOW, NOW + 3600)


def test_token_claims_follow_the_documented_shape(key):
    """The JWT carries sub, iss, iat, exp, a random jti and a roost:/ scope string, signed EdDSA."""
    token = issue_token(key, "alice@pool", ["read", "DAEMON"], lifetime=60, now=NOW)
    other = issue_token(key, "alice@pool", ["read", "DAEMON"], lifetime=60, now=NOW)
    claims = jwt.decode(token, key.public_key(), algorithms=["EdDSA"], options={"verify_exp": False})
    assert jwt.get_unverified_header(token)["alg"] == "EdDSA"
    assert claims["sub"] == "alice@pool" and claims["iss"] == "pool"
    assert claims["iat"] == NOW and claims["exp"] == NOW + 60
    assert claims["scope"] == "roost:/READ roost:/DAEMON"
    assert claims["jti"] != jwt.decode(other, key.public_key(), algorithms=["EdDSA"],
                                       options={"verify_exp": False})["jti"]


def test_token_without_lifetime_never_expires(key):
    """A token issued with no lifetime has no exp and verifies at any time."""
    token = issue_token(key, "bob@pool", ["READ"], now=NOW)
    assert verify_token(key, token, now=NOW + 10 * 365 * 86400).expires is None


def test_expired_token_is_rejected_at_its_expiry_and_not_before(key):
    """A token verifies until its exp second and fails from then on."""
    token = issue_token(key, "alice@pool", ["READ"], lifetime=60, now=NOW)
    assert verify_token(key, token, now=NOW + 59.9).name == "alice@pool"
    with pytest.raises(TokenExpiredError, match="alice@pool expired at"):
        verify_token(key, token, now=NOW + 60)


def test_token_signed_with_another_key_is_rejected(key, tmp_path):
    """A token from another pool's key fails with a bad signature error."""
    other = create_signing_key(str(tmp_path / "other"))
    token = issue_token(other, "mallory@pool", ["ADMINISTRATOR"], now=NOW)
    with pytest.raises(TokenSignatureError, match="signature"):
        verify_token(key, token, now=NOW)


def test_tampered_token_is_rejected(key):
    """Changing the claims of a signed token breaks its signature."""
    token = issue_token(key, "alice@pool", ["READ"], now=NOW)
    header, _, signature = token.split(".")
    forged_claims = jwt.encode({"sub": "alice@pool", "iss": "pool", "iat": NOW, "jti": "x",
                                "scope": "roost:/ADMINISTRATOR"}, b"k" * 64).split(".")[1]
    with pytest.raises(TokenSignatureError):
        verify_token(key, f"{header}.{forged_claims}.{signature}", now=NOW)


def test_issuer_mismatch_is_rejected(key):
    """A daemon that names its pool refuses tokens issued for another pool name."""
    token = issue_token(key, "alice@pool", ["READ"], issuer="pool-a", now=NOW)
    assert verify_token(key, token, now=NOW, issuer="pool-a").issuer == "pool-a"
    with pytest.raises(TokenSignatureError, match="issued by 'pool-a'"):
        verify_token(key, token, now=NOW, issuer="pool-b")


@pytest.mark.parametrize(("claims", "words"), [
    ({"iss": "p", "iat": 1, "jti": "j", "scope": "roost:/READ"}, "no 'sub' claim"),
    ({"sub": "alice@pool", "iat": 1, "jti": "j", "scope": "roost:/READ"}, "no 'iss' claim"),
    ({"sub": "alice@pool", "iss": "p", "iat": 1, "jti": "j"}, "no 'scope' claim"),
    ({"sub": "alice", "iss": "p", "iat": 1, "jti": "j", "scope": "roost:/READ"}, "user@domain"),
    ({"sub": "alice@pool", "iss": "p", "iat": 1, "jti": "j", "scope": "roost:/GOD"}, "GOD"),
    ({"sub": "alice@pool", "iss": "p", "iat": 1, "jti": "j", "scope": "roost:/READ", "exp": "soon"},
     "'exp' claim"),
])
def test_tokens_with_bad_claims_are_malformed(key, claims, words):
    """A correctly signed token with missing or bad claims is still refused, saying which claim."""
    token = jwt.encode(claims, key, algorithm="EdDSA")
    with pytest.raises(MalformedTokenError, match=words):
        verify_token(key, token, now=NOW)


@pytest.mark.parametrize("text", ["", "not a token", "a.b.c", "eyJhbGciOiJub25lIn0.e30."])
def test_garbage_is_malformed(key, text):
    """Text that is not an EdDSA JWT raises MalformedTokenError, never a PyJWT exception."""
    with pytest.raises(MalformedTokenError):
        verify_token(key, text, now=NOW)


def test_other_algorithms_are_refused(key):
    """Only EdDSA is accepted with an Ed25519 key, so an HS512 token is refused."""
    token = jwt.encode({"sub": "a@b", "iss": "p", "iat": 1, "jti": "j", "scope": "roost:/READ"},
                       b"k" * 64, algorithm="HS512")
    with pytest.raises(MalformedTokenError, match="expected EdDSA"):
        verify_token(key, token, now=NOW)


@pytest.mark.parametrize(("identity", "scopes", "lifetime", "words"), [
    ("alice", ["READ"], None, "user@domain"),
    ("a@b@c", ["READ"], None, "user@domain"),
    ("alice@pool", [], None, "at least one scope"),
    ("alice@pool", ["ROOT"], None, "unknown authorization level"),
    ("alice@pool", ["READ"], 0, "not positive"),
])
def test_issue_refuses_bad_requests(key, identity, scopes, lifetime, words):
    """issue_token checks its identity, scopes and lifetime and says what is wrong."""
    with pytest.raises(ValueError, match=words):
        issue_token(key, identity, scopes, lifetime, now=NOW)


def test_identity_repr_holds_no_secret(key):
    """An Identity is a frozen value that is safe to log."""
    who = verify_token(key, issue_token(key, "alice@pool", ["READ"], now=NOW), now=NOW)
    with pytest.raises(AttributeError):
        who.user = "root"
    assert "alice" in repr(who)


# --- finding a token ---

def test_roost_token_holding_the_token_text_wins(tmp_path, key):
    """ROOST_TOKEN with a token in it is used before any token file."""
    token = issue_token(key, "alice@pool", ["READ"], now=NOW)
    write_token(str(tmp_path / "tokens.d" / "other"), issue_token(key, "bob@pool", ["READ"], now=NOW))
    found = find_token({TOKEN_ENV: token}, str(tmp_path / "tokens.d"))
    assert (found.text, found.source) == (token, TOKEN_ENV)
    assert token not in repr(found)


def test_roost_token_naming_a_file(tmp_path, key):
    """ROOST_TOKEN may name a file holding the token."""
    token = issue_token(key, "alice@pool", ["READ"], now=NOW)
    path = str(tmp_path / "my.token")
    write_token(path, token)
    assert find_token({TOKEN_ENV: path}).text == token


def test_roost_token_naming_a_missing_or_empty_file_is_an_error(tmp_path):
    """A ROOST_TOKEN path that is missing or holds nothing is a TokenError that says so."""
    with pytest.raises(TokenError, match="does not exist"):
        find_token({TOKEN_ENV: str(tmp_path / "gone")})
    empty = tmp_path / "empty"
    empty.write_text("# nothing here\n\n")
    with pytest.raises(TokenError, match="holds no token"):
        find_token({TOKEN_ENV: str(empty)})


def test_token_directory_files_are_searched_in_name_order(tmp_path, key):
    """Without ROOST_TOKEN, the first token in the token directory's files is used."""
    directory = tmp_path / "tokens.d"
    write_token(str(directory / "b"), issue_token(key, "bob@pool", ["READ"], now=NOW))
    write_token(str(directory / "a"), issue_token(key, "alice@pool", ["READ"], now=NOW))
    (directory / ".hidden").write_text(issue_token(key, "eve@pool", ["READ"], now=NOW))
    found = find_token({}, str(directory))
    assert read_unverified(found.text).name == "alice@pool"
    assert found.source == str(directory / "a")
    assert [read_unverified(t.text).user for t in list_tokens(str(directory))] == ["alice", "bob"]


def test_token_directory_search_can_pick_the_pool_by_issuer(tmp_path, key):
    """Given an issuer, the search skips tokens of other pools and malformed lines."""
    directory = tmp_path / "tokens.d"
    write_token(str(directory / "a"), issue_token(key, "alice@a", ["READ"], issuer="pool-a", now=NOW))
    (directory / "b").write_text("garbage\n" + issue_token(key, "alice@b", ["READ"], issuer="pool-b", now=NOW))
    assert read_unverified(find_token({}, str(directory), issuer="pool-b").text).domain == "b"
    assert find_token({}, str(directory), issuer="pool-c") is None


def test_default_token_directory_is_under_home(tmp_path, key):
    """The token directory defaults to ~/.config/roost/tokens.d of the given HOME."""
    token = issue_token(key, "alice@pool", ["READ"], now=NOW)
    write_token(str(tmp_path / ".config/roost/tokens.d/pool"), token)
    assert find_token({"HOME": str(tmp_path)}).text == token
    assert find_token({"HOME": str(tmp_path / "nobody")}) is None


def test_written_token_file_is_private(tmp_path, key):
    """write_token leaves the token in a 0600 file with a trailing newline."""
    path = tmp_path / "t" / "alice"
    write_token(str(path), "abc.def.ghi")
    assert mode(path) == 0o600 and path.read_text() == "abc.def.ghi\n"
