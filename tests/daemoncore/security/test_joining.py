"""Tests for daemoncore.security.joining: join strings, bootstrap tokens and the ledger of their use."""

import pytest

from daemoncore.security import AuthorizationLevel, verify_token
from daemoncore.security.joining import (
    JoinError,
    JoinLedger,
    JoinString,
    decode_join_string,
    encode_join_string,
    issue_join_token,
)

KEY = b"joining-test-signing-key-0123456789abcdef"
FINGERPRINT = "ab" * 32


def bootstrap(role="execute", lifetime=3600):
    return verify_token(KEY, issue_join_token(KEY, role, "pool", lifetime, now=0), now=1)


def test_join_string_round_trips():
    """The one string carries the collector, the CA fingerprint and the token, and reads back."""
    join = JoinString("198.18.0.1:9618", FINGERPRINT, "a.b.c")
    text = encode_join_string(join)
    assert text.startswith("roostjoin1.") and " " not in text
    assert decode_join_string(f"  {text}\n") == join


@pytest.mark.parametrize("text, fragment", [
    ("hello", "not a join string"),
    ("roostjoin1.!!!", "damaged"),
    ("roostjoin1.e30", "lacks"),
])
def test_bad_join_strings_say_what_is_wrong(text, fragment):
    """A string that is not a join string, is damaged, or lacks a part is refused saying which."""
    with pytest.raises(JoinError, match=fragment):
        decode_join_string(text)


def test_a_bad_fingerprint_is_refused():
    """A fingerprint that is not SHA-256 hex is refused before anything is used."""
    with pytest.raises(JoinError, match="64 hex digits"):
        decode_join_string(encode_join_string(JoinString("h:1", "abc", "t")))


def test_bootstrap_token_has_only_the_join_scope():
    """The bootstrap token names its role and grants JOIN, which implies nothing else."""
    identity = bootstrap()
    assert identity.name == "join-execute@pool"
    assert identity.expires == 3600
    assert identity.allows(AuthorizationLevel.JOIN)
    assert not any(identity.allows(level) for level in AuthorizationLevel if level is not AuthorizationLevel.JOIN)


def test_bootstrap_token_lifetime_is_bounded():
    """Lifetimes over 7 days or unknown roles are refused."""
    with pytest.raises(JoinError, match="7 days"):
        issue_join_token(KEY, "execute", "pool", 8 * 86400, now=0)
    with pytest.raises(JoinError, match="cannot be joined"):
        issue_join_token(KEY, "central-manager", "pool", now=0)


def test_ledger_admits_once_per_token_and_names_the_identity():
    """An execute token gives startd@host the first time and is refused the second."""
    ledger, identity = JoinLedger(), bootstrap()
    assert ledger.admit(identity, "execute", "hostB", now=10) == "startd@hostB"
    with pytest.raises(JoinError, match="used already"):
        ledger.admit(identity, "execute", "hostC", now=11)
    assert JoinLedger().admit(bootstrap("submit"), "submit", "hostS", now=10) == "schedd@hostS"


def test_ledger_refuses_another_role_without_using_the_token():
    """A token for execute used for submit is refused, and can still join an execute host."""
    ledger, identity = JoinLedger(), bootstrap()
    with pytest.raises(JoinError, match="for an execute host, not a submit host"):
        ledger.admit(identity, "submit", "hostB", now=10)
    assert ledger.admit(identity, "execute", "hostB", now=10) == "startd@hostB"


def test_ledger_refuses_a_token_that_is_not_a_join_token():
    """A DAEMON token of startd@pool cannot join anything."""
    from daemoncore.security import issue_token
    daemon = verify_token(KEY, issue_token(KEY, "startd@pool", ["DAEMON"], now=0), now=1)
    with pytest.raises(JoinError, match="not a join token"):
        JoinLedger().admit(daemon, "execute", "hostB", now=10)


def test_ledger_forgets_expired_tokens():
    """Used tokens are forgotten once expired (they fail verification then anyway)."""
    ledger = JoinLedger()
    ledger.admit(bootstrap(lifetime=5), "execute", "hostB", now=1)
    ledger.admit(bootstrap(), "execute", "hostC", now=10)
    assert len(ledger.used) == 1
