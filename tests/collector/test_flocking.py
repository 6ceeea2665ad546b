"""Tests for the collector's checks of other pools' schedds (``flock@poolA``): only
Submitter ads of schedds FLOCK_FROM lists, only from a trusted pool; every refusal is a
403 naming the identity, the ad and the reason, and stores nothing."""

import json

import pytest

from collector.metrics import CollectorMetrics
from collector.ownership import FlockPolicy
from collector.routes import CollectorRoutes
from daemoncore.security import issue_token
from daemoncore.security.pool_trust import TrustedPools
from daemoncore.wire.auth import token_verifier
from daemoncore.wire.in_memory import clock_cooperator, encode_request, exchange
from daemoncore.wire.server import ApiResource, make_site
from tests.collector.conftest import DAEMON, KEY, READ
from tests.daemoncore.security.test_pool_trust import pool_b

FLOCK_A = issue_token(KEY, "flock@poolA", ["DAEMON"], issuer="poolB", now=0)
SUBMITTER = {"Name": "alice@poolA", "ScheddName": "submitA.example.org", "IdleJobs": 3}


@pytest.fixture
def trusted():
    holder = TrustedPools()
    holder.replace({"poolA": pool_b(name="poolA")})
    return holder


@pytest.fixture
def call(store, clock, trusted):
    """The collector's routes in memory, with FLOCK_FROM = submitA.*, *.site-c.org and pool A trusted."""
    policy = FlockPolicy(("submitA.*", "*.site-c.org"), lambda pool: trusted.get(pool) is not None)
    routes = CollectorRoutes(store, CollectorMetrics(store), policy)
    site = make_site(ApiResource(routes.handlers(), token_verifier(KEY, clock),
                                 cooperator=clock_cooperator(clock)), clock=clock)

    def post(path, body=None, token=FLOCK_A):
        token = {"READ": READ, "DAEMON": DAEMON}.get(token, token)
        response, _ = exchange(site, encode_request("POST", path, json.dumps(body).encode(), token=token), clock)
        return response

    return post


def stored(call, ad_type="Submitter"):
    return {ad["Name"]: ad for ad in call(f"/v1/ads/{ad_type}/query", {}, token="READ").lines()}


def test_a_listed_schedd_of_a_trusted_pool_advertises_its_submitters(call):
    """The ad is stored, stamped with the identity that advertised it."""
    assert call("/v1/ads/Submitter", {"ads": [SUBMITTER]}).status == 200
    assert stored(call)["alice@poolA"]["AuthenticatedIdentity"] == "flock@poolA"


def test_an_advertised_authenticated_identity_is_replaced_by_the_real_one(call):
    """A daemon cannot claim to be someone else: the collector writes the identity of the token."""
    ad = {"Name": "slot1@pool", "Machine": "pool", "authenticatedidentity": "negotiator@pool"}
    assert call("/v1/ads/Machine", {"ads": [ad]}, token="DAEMON").status == 200
    assert stored(call, "Machine")["slot1@pool"]["AuthenticatedIdentity"] == "startd@pool"


@pytest.mark.parametrize(("ad_type", "ad", "words"), [
    ("Submitter", {**SUBMITTER, "ScheddName": "submitX.example.org"},
     "ScheddName 'submitX.example.org', which this pool's FLOCK_FROM does not list"),
    ("Submitter", {"Name": "alice@poolA"}, "ScheddName None"),
    ("Machine", {"Name": "slot1@submitA.example.org", "Machine": "submitA.example.org"},
     "may send only Submitter ads, not Machine ads"),
    ("Scheduler", {"Name": "submitA.example.org"}, "not Scheduler ads"),
])
def test_anything_else_from_a_flocking_schedd_is_refused(call, ad_type, ad, words):
    response = call(f"/v1/ads/{ad_type}", {"ads": [ad]})
    assert response.status == 403
    message = response.json()["message"]
    assert "flock@poolA" in message and words in message
    assert stored(call, ad_type) == {}


def test_a_wildcard_of_flock_from_matches_the_schedds_host(call):
    ad = {**SUBMITTER, "ScheddName": "schedd@Submit1.Site-C.org"}
    assert call("/v1/ads/Submitter", {"ads": [ad]}).status == 200


def test_an_untrusted_pool_is_refused_even_for_a_listed_schedd(call, trusted):
    """Once pool A's trust is removed, its schedds are refused, naming the pool."""
    trusted.replace({})
    response = call("/v1/ads/Submitter", {"ads": [SUBMITTER]})
    assert response.status == 403
    assert "pool poolA is not trusted by this pool" in response.json()["message"]
    assert stored(call) == {}


def test_a_flocking_schedd_withdraws_only_its_own_submitters(call):
    """By Name its own ad goes; an ad of the same kind advertised by the pool's own schedd stays; never by constraint."""
    call("/v1/ads/Submitter", {"ads": [{"Name": "bob@poolB", "ScheddName": "submitA.example.org"}]}, token="DAEMON")
    call("/v1/ads/Submitter", {"ads": [SUBMITTER]})
    refused = call("/v1/ads/Submitter/invalidate", {"names": ["bob@poolB"]})
    assert refused.status == 403 and "only the Submitter ads it advertised" in refused.json()["message"]
    assert call("/v1/ads/Submitter/invalidate", {"constraint": "true"}).status == 403
    assert call("/v1/ads/Submitter/invalidate", {"names": ["alice@poolA"]}).json() == {"invalidated": 1}
    assert sorted(stored(call)) == ["bob@poolB"]


def test_without_flock_from_a_collector_lets_no_pool_in(store):
    """The default policy of a collector (no FLOCK_FROM, no trusted pool) refuses every flock@ identity."""
    assert not FlockPolicy().lists("submitA.example.org")
    assert not FlockPolicy().trusts("poolA")


def test_a_flocked_submitter_neither_replaces_nor_is_withdrawn_by_a_home_one_of_the_same_name(call):
    """alice@pool at B's own schedd and alice@pool flocking in from A are two ads; B's schedd
    withdrawing its alice leaves A's."""
    home = {"Name": "alice@pool", "ScheddName": "submitB", "IdleJobs": 1}
    assert call("/v1/ads/Submitter", {"ads": [home]}, token="DAEMON").status == 200
    flocked = {**SUBMITTER, "Name": "alice@pool"}
    assert call("/v1/ads/Submitter", {"ads": [flocked]}).status == 200
    ads = call("/v1/ads/Submitter/query", {}, token="READ").lines()
    assert sorted(ad["ScheddName"] for ad in ads) == ["submitA.example.org", "submitB"]
    withdrawn = call("/v1/ads/Submitter/invalidate", {"names": ["alice@pool"]}, token="DAEMON")
    assert withdrawn.json() == {"invalidated": 1}
    [left] = call("/v1/ads/Submitter/query", {}, token="READ").lines()
    assert left["AuthenticatedIdentity"] == "flock@poolA"
