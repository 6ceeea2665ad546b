"""Tests for daemoncore.security.host_identity: which identities are bound to a host."""

import pytest

from daemoncore.security import issue_token, verify_token
from daemoncore.security.host_identity import (
    bound_host,
    flock_identity,
    flocking_pool,
    host_identity,
    host_of_name,
    same_host,
    slot_refusal,
)
from daemoncore.security.levels import AuthorizationLevel
from daemoncore.security.tokens import Identity

KEY = b"host-identity-test-key-0123456789abcdef"


def identity(name, scope="DAEMON", issuer="pool"):
    return verify_token(KEY, issue_token(KEY, name, [scope], issuer=issuer, now=0), now=1)


@pytest.mark.parametrize("name, host", [
    ("startd@hostB", "hostB"), ("schedd@hostB.example.org", "hostB.example.org"),
    ("startd@pool", None), ("schedd@pool", None), ("negotiator@hostB", None), ("alice@hostB", None),
])
def test_bound_host_is_the_domain_of_a_startd_or_schedd_of_another_name_than_the_pool(name, host):
    """startd@hostB and schedd@hostB are bound to their host; the pool's own daemons and others are not."""
    assert bound_host(identity(name)) == host


def test_no_identity_is_bound_to_no_host():
    """A request without an identity has no host."""
    assert bound_host(None) is None


def test_host_identity_names_daemon_and_host():
    """host_identity joins a daemon and a host, refusing what would not be bound."""
    assert host_identity("startd", "hostB", "pool") == "startd@hostB"
    with pytest.raises(ValueError, match="no per-host identity"):
        host_identity("negotiator", "hostB", "pool")
    with pytest.raises(ValueError, match="not a DNS name"):
        host_identity("startd", "host B", "pool")
    with pytest.raises(ValueError, match="pool's own name"):
        host_identity("startd", "pool", "pool")


def test_host_of_name_and_same_host():
    """Slot names give their host after the last @; hosts compare without case or a final dot."""
    assert host_of_name("slot1_2@hostB") == "hostB"
    assert host_of_name("hostB") == "hostB"
    assert same_host("HostB.example.org.", "hostb.example.org")
    assert not same_host("hostB", "hostA")


def test_a_startd_of_another_host_may_not_act_on_slots():
    """startd@hostA is refused at hostB's startd, naming both hosts; schedds and the own host pass."""
    refusal = slot_refusal(identity("startd@hostA"), "hostB")
    assert refusal is not None and "startd@hostA" in refusal and "hostB" in refusal
    assert slot_refusal(identity("startd@hostB"), "hostB") is None
    assert slot_refusal(identity("schedd@hostA"), "hostB") is None
    assert slot_refusal(identity("startd@pool"), "hostB") is None


def test_a_flock_identity_names_its_pool_and_is_bound_to_no_host():
    """flock@poolA (issued by pool B to pool A's schedds) acts for pool A, on no host in particular."""
    flock = Identity("flock", "poolA", frozenset({AuthorizationLevel.DAEMON}), issuer="poolB")
    assert flocking_pool(flock) == "poolA" and flock_identity("poolA") == "flock@poolA"
    assert bound_host(flock) is None and slot_refusal(flock, "execB1") is None
    assert flocking_pool(Identity("schedd", "hostA", frozenset(), issuer="poolA")) is None
