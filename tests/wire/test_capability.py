"""Tests of a route's capability (daemoncore.wire.route ``capability``): a caller with
another pool's token is admitted by the capability it carries, and by nothing else."""

import hmac

import pytest

from daemoncore.security import issue_token
from daemoncore.wire.auth import CapabilityHolder, token_verifier
from daemoncore.wire.errors import Forbidden
from daemoncore.wire.in_memory import clock_cooperator, encode_request, exchange
from daemoncore.wire.route import Route
from daemoncore.wire.schedd_routes import JOB_INPUT, JOB_OUTPUT, JOB_UPDATE, MATCHES, TRANSFER_KEY_HEADER
from daemoncore.wire.server import ApiResource, JsonReply, make_site
from tests.wire.toy_api import KEY, token

KEYED = Route("keyed", "POST", "/v1/keyed", level="DAEMON", capability="transfer_key")
PLAIN = Route("plain", "POST", "/v1/plain", level="DAEMON")
THE_KEY = "k-0123456789"
OTHER_POOL_KEY = b"pool-b-signing-key-0123456789abcdefgh"


def keyed(request):
    """Stands for the schedd's starter routes: the handler checks the key itself."""
    presented = request.header(TRANSFER_KEY_HEADER) or ""
    if not hmac.compare_digest(presented, THE_KEY):
        raise Forbidden("the transfer key is missing or wrong")
    return JsonReply({"who": request.identity.name, "foreign": isinstance(request.identity, CapabilityHolder)})


def plain(request):
    return JsonReply({"who": request.identity.name})


@pytest.fixture
def site(clock):
    resource = ApiResource({KEYED: keyed, PLAIN: plain}, token_verifier(KEY, clock),
                           cooperator=clock_cooperator(clock))
    return make_site(resource, clock=clock)


def foreign_token() -> str:
    return issue_token(OTHER_POOL_KEY, "startd@pool-b", ["DAEMON"], now=0)


def call(site, clock, path, token_text, key=None):
    headers = {TRANSFER_KEY_HEADER: key} if key is not None else {}
    response, _ = exchange(site, encode_request("POST", path, b"{}", token=token_text, headers=headers), clock)
    return response


def test_another_pools_token_with_the_right_key_is_accepted(site, clock):
    """The starter of a flocked job (pool B's token) gets in with the job's transfer key."""
    response = call(site, clock, "/v1/keyed", foreign_token(), THE_KEY)
    assert response.status == 200 and response.json()["foreign"] is True


def test_another_pools_token_with_a_wrong_key_is_403(site, clock):
    """A wrong transfer key is refused by the handler's check."""
    assert call(site, clock, "/v1/keyed", foreign_token(), "k-guess").status == 403


def test_another_pools_token_without_a_key_is_401(site, clock):
    """Without the key header another pool's token is not authenticated, as before."""
    response = call(site, clock, "/v1/keyed", foreign_token())
    assert response.status == 401 and "signature" in response.json()["message"]


def test_no_token_at_all_is_401_even_with_the_key(site, clock):
    """The key stands in for an unverifiable token, not for a missing one."""
    assert call(site, clock, "/v1/keyed", None, THE_KEY).status == 401


def test_own_pools_expired_token_is_not_excused_by_the_key(site, clock):
    """A token of this pool that expired is refused even with the right key."""
    expired = issue_token(KEY, "startd@pool", ["DAEMON"], now=0, lifetime=10)
    clock.advance(100)
    response = call(site, clock, "/v1/keyed", expired, THE_KEY)
    assert response.status == 401 and "expired" in response.json()["message"]


def test_own_pools_token_still_needs_the_level(site, clock):
    """This pool's READ token does not reach DAEMON, key or not."""
    assert call(site, clock, "/v1/keyed", token("alice@pool", "READ"), THE_KEY).status == 403


def test_own_pools_daemon_token_works_as_before(site, clock):
    """This pool's DAEMON token with the key is the ordinary caller, not a capability holder."""
    response = call(site, clock, "/v1/keyed", token("startd@pool", "DAEMON"), THE_KEY)
    assert response.status == 200 and response.json() == {"who": "startd@pool", "foreign": False}


def test_routes_without_a_capability_are_unchanged(site, clock):
    """Another pool's token with a key header is still 401 on a route with no capability."""
    assert call(site, clock, "/v1/plain", foreign_token(), THE_KEY).status == 401


def test_only_the_starter_routes_take_the_transfer_key():
    """JOB_INPUT, JOB_OUTPUT and JOB_UPDATE carry the capability; the negotiator's MATCHES does not."""
    assert {r.capability for r in (JOB_INPUT, JOB_OUTPUT, JOB_UPDATE)} == {"transfer_key"}
    assert MATCHES.capability is None and JOB_INPUT.capability_header == TRANSFER_KEY_HEADER


def test_an_unknown_capability_is_refused():
    """A route naming a capability the server does not know fails at definition."""
    with pytest.raises(ValueError, match="capability"):
        Route("x", "GET", "/v1/x", capability="claim_id")
