"""Tests for daemoncore.security.revocation: rules over a token's claims, and the file they live in."""

import os

import pytest

from daemoncore.security import issue_token, verify_token
from daemoncore.security.revocation import (
    MAX_REVOCATION_BYTES,
    RevocationError,
    Revocations,
    add_revocation,
    claims_ad,
    read_revocation_file,
    revocations_from,
    rule_for_identity,
    rule_for_token_id,
)

KEY = b"revocation-test-signing-key-0123456789ab"


def identity(name="startd@hostB", lifetime=None):
    return verify_token(KEY, issue_token(KEY, name, ["DAEMON"], lifetime=lifetime, issuer="pool", now=100), now=101)


def test_claims_ad_holds_the_tokens_claims():
    """jti, sub, iss, iat, exp and scope are attributes a rule can test."""
    who = identity(lifetime=50)
    ad = claims_ad(who)
    assert (ad["jti"], ad["sub"], ad["iss"], ad["iat"], ad["exp"], ad["scope"]) == (
        who.token_id, "startd@hostB", "pool", 100, 150, "roost:/DAEMON")


def test_a_rule_by_id_revokes_that_token_only():
    """jti == "..." revokes the one token, naming the rule and where it was."""
    who, other = identity(), identity()
    revocations = Revocations.of([("revoked_tokens:3", rule_for_token_id(who.token_id))])
    reason = revocations.reason(who)
    assert reason is not None and who.token_id in reason and "revoked_tokens:3" in reason
    assert revocations.reason(other) is None


def test_a_rule_by_identity_revokes_every_token_of_it():
    """sub == "startd@hostB" revokes all its tokens and no other identity's."""
    revocations = Revocations.of([("x", rule_for_identity("startd@hostB"))])
    assert revocations.reason(identity()) is not None
    assert revocations.reason(identity("startd@hostC")) is None


def test_the_knob_and_the_file_combine():
    """SEC_TOKEN_REVOCATION_EXPR (here: issued before 200) and the file's rules both count."""
    revocations = revocations_from("iat < 200", '# comment\n\nsub == "nobody@pool"\n', "f")
    reason = revocations.reason(identity("alice@pool"))
    assert reason is not None and "SEC_TOKEN_REVOCATION_EXPR" in reason
    assert revocations_from(None, 'sub == "nobody@pool"', "f").reason(identity("alice@pool")) is None


def test_no_rules_revoke_nothing():
    """An empty list revokes nothing (it is not the constraint `true`)."""
    assert revocations_from("", "", "f").reason(identity()) is None


def test_a_bad_rule_is_refused_naming_its_line():
    """A line that is not an expression is an error naming file and line."""
    with pytest.raises(RevocationError, match="f:2"):
        revocations_from(None, 'jti == "a"\njti == == "b"\n', "f")


@pytest.mark.parametrize("bad", ['a" || true || "', "", "x" * 200])
def test_rule_for_token_id_refuses_what_is_not_an_id(bad):
    """A token id with quotes or of odd length cannot make a rule that revokes more."""
    with pytest.raises(RevocationError, match="not a token id"):
        rule_for_token_id(bad)


def test_rule_for_identity_quotes_the_name():
    """An identity becomes a quoted string literal; a malformed one is refused."""
    assert rule_for_identity(" startd@hostB ") == 'sub == "startd@hostB"'
    with pytest.raises(RevocationError, match="user@domain"):
        rule_for_identity("no-at-sign")


def test_add_revocation_appends_once(tmp_path):
    """A rule is appended with its comment, and adding it again changes nothing."""
    path = str(tmp_path / "spool" / "revoked_tokens")
    assert read_revocation_file(path) is None
    assert add_revocation(path, 'jti == "abc"', comment="why")
    assert not add_revocation(path, 'jti == "abc"')
    assert add_revocation(path, 'sub == "startd@hostB"')
    assert read_revocation_file(path) == '# why\njti == "abc"\nsub == "startd@hostB"\n'


def test_add_revocation_refuses_a_bad_rule_and_writes_nothing(tmp_path):
    """A rule that does not parse is refused before the file is touched."""
    path = str(tmp_path / "revoked_tokens")
    with pytest.raises(RevocationError):
        add_revocation(path, "jti ==")
    assert not os.path.exists(path)


def test_an_oversized_file_is_refused(tmp_path):
    """A revocation file over the bound is an error, not a slow read."""
    path = tmp_path / "revoked_tokens"
    path.write_text("#" * (MAX_REVOCATION_BYTES + 1))
    with pytest.raises(RevocationError, match="over"):
        read_revocation_file(str(path))
