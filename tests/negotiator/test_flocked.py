"""Tests for negotiator.flocked and the Submitter ads of other pools in
negotiator.pool_view: which pool a submitter belongs to, which are skipped and why,
and the token each schedd is called with."""

import pytest
from attrs import frozen

from classad import ClassAd
from daemoncore.wire.resource_request import ResourceRequest
from negotiator.cycle import Submitter
from negotiator.flocked import flocked_customers, flocking_pool_of, schedd_token, untrusted_reason, user_domain
from negotiator.pool_view import submitter_targets
from tests.negotiator.in_memory_pool import submitter_ad


@frozen
class Entry:
    name: str
    token: str


TRUSTED = {"poolA": Entry("poolA", "token-signed-by-A")}


@pytest.mark.parametrize(("identity", "pool"), [
    ("flock@poolA", "poolA"), ("FLOCK@poolA", "poolA"), (" flock@poolA ", "poolA"),
    ("schedd@submit1", None), ("schedd@poolB", None), ("flock@", None), ("flock", None),
    ("", None), (None, None), (7, None), ("alice@poolA", None),
])
def test_only_a_flock_identity_names_another_pool(identity, pool):
    assert flocking_pool_of(identity) == pool


def test_home_submitters_keep_the_negotiators_own_token():
    """None means the negotiator's own DAEMON token: a home schedd is called as before."""
    assert schedd_token(None, TRUSTED) is None
    assert schedd_token(None, {}) is None


def test_flocked_submitters_are_called_with_their_pools_token():
    assert schedd_token("poolA", TRUSTED) == "token-signed-by-A"


def test_an_untrusted_pool_has_no_token():
    with pytest.raises(KeyError):
        schedd_token("poolC", TRUSTED)


def test_untrusted_reason_names_the_pool_and_what_to_do():
    why = untrusted_reason("poolC", TRUSTED)
    assert "poolC" in why and "poolA" in why and "roost pool trust" in why
    assert "no token" in untrusted_reason("poolA", {"poolA": Entry("poolA", "")})
    assert untrusted_reason("poolA", TRUSTED) is None


def test_user_domain():
    assert user_domain("alice@Submit-A.example") == "submit-a.example"
    assert user_domain("group_physics") is None
    assert user_domain("alice@") is None
    assert user_domain("@x") is None


def test_targets_carry_the_pool_of_a_trusted_flock_identity():
    home = submitter_ad("bob@submitB", "198.18.1.3:9700")
    flocked = {**submitter_ad("alice@submitA", "198.18.0.3:9700"), "AuthenticatedIdentity": "flock@poolA"}
    targets, skipped = submitter_targets([home, flocked], TRUSTED)
    assert skipped == []
    assert [(t.name, t.pool) for t in targets] == [("alice@submitA", "poolA"), ("bob@submitB", None)]


def test_submitters_of_untrusted_pools_are_skipped_saying_why():
    """An ad stamped flock@poolC while poolC is not (or no longer) trusted is not asked:
    the negotiator would have no token to call its schedd with."""
    flocked = {**submitter_ad("carol@submitC", "198.18.2.3:9700"), "AuthenticatedIdentity": "flock@poolC"}
    targets, skipped = submitter_targets([flocked], TRUSTED)
    assert targets == []
    [why] = skipped
    assert "carol@submitC" in why and "flock@poolC" in why and "not one of this pool's trusted pools" in why


def test_without_trusted_pools_every_flocked_submitter_is_skipped():
    flocked = {**submitter_ad("alice@submitA", "198.18.0.3:9700"), "AuthenticatedIdentity": "flock@poolA"}
    targets, skipped = submitter_targets([flocked])
    assert targets == [] and len(skipped) == 1


def _asked(name: str, schedd: str, *users: str | None) -> Submitter:
    ads = [ClassAd({"Owner": "alice"} if user is None else {"Owner": "alice", "User": user}) for user in users]
    return Submitter(name, schedd, tuple(ResourceRequest(f"{name}#{n}", name, schedd, 1, ad)
                                          for n, ad in enumerate(ads)))


def test_flocked_customers_are_the_submitter_and_its_jobs_users():
    """A flocked submitter is charged by its Submitter ad's Name and by its jobs' User
    (its claimed slots' RemoteOwner); home submitters, even of the same name at another
    schedd, are not among them."""
    flocked = _asked("alice@submitA", "198.18.0.3:9700", "alice@poolA", "alice@poolA", None)
    home = _asked("alice@submitA", "198.18.1.3:9700", "alice@poolB")
    names = flocked_customers([flocked, home], {("alice@submitA", "198.18.0.3:9700")})
    assert names == {"alice@submitA", "alice@poolA"}
    assert flocked_customers([home], {("alice@submitA", "198.18.0.3:9700")}) == set()
