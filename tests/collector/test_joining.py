"""Tests for collector.joining: the join route, served in memory with real tokens and a real CA."""

import json

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from collector.joining import JoinRoutes
from daemoncore.security import issue_token, verify_token
from daemoncore.security.joining import issue_join_token
from daemoncore.security.signing_key import parse_public_key
from daemoncore.security.tls import make_authority
from daemoncore.wire.auth import token_verifier
from daemoncore.wire.collector_routes import QUERY
from daemoncore.wire.in_memory import clock_cooperator, encode_request, exchange
from daemoncore.wire.server import ApiResource, JsonReply, make_site

KEY = Ed25519PrivateKey.generate()


@pytest.fixture
def join(clock):
    """POST to the join route (and a query route beside it) in memory."""
    routes = JoinRoutes(KEY, "pool", clock, make_authority())
    table = {**routes.handlers(), QUERY: lambda request: JsonReply([])}
    site = make_site(ApiResource(table, token_verifier(KEY, clock), cooperator=clock_cooperator(clock)), clock=clock)

    def post(token, body, path="/v1/join"):
        response, _ = exchange(site, encode_request("POST", path, json.dumps(body).encode(), token=token), clock)
        return response

    return post


def test_a_join_token_gets_a_daemon_token_and_a_certificate(join, clock):
    """The execute host gets a DAEMON token for startd@hostB and a certificate naming hostB and its address."""
    token = issue_join_token(KEY, "execute", "pool", now=0)
    response = join(token, {"role": "execute", "host": "hostB", "addresses": ["198.18.0.2"]})
    assert response.status == 200, response.json()
    answer = response.json()
    identity = verify_token(parse_public_key(answer["public_key"].encode(), "the answer"), answer["token"], now=1)
    assert (identity.name, identity.issuer, [s.name for s in identity.scopes]) == ("startd@hostB", "pool", ["DAEMON"])
    names = x509.load_pem_x509_certificate(answer["certificate"].encode()).extensions.get_extension_for_class(
        x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["hostb"]  # DNS names are kept in lower case
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == ["198.18.0.2"]
    assert answer["key"].startswith("-----BEGIN") and answer["ca"].startswith("-----BEGIN CERTIFICATE")


def test_a_join_token_works_once(join):
    """The second use of the same join token is a 403 saying it was used."""
    token = issue_join_token(KEY, "execute", "pool", now=0)
    assert join(token, {"role": "execute", "host": "hostB"}).status == 200
    again = join(token, {"role": "execute", "host": "hostC"})
    assert again.status == 403 and "used already" in again.json()["message"]


def test_a_join_token_for_another_role_or_expired_is_refused(join, clock):
    """A submit join with an execute token is 403; an expired join token is 401."""
    token = issue_join_token(KEY, "execute", "pool", lifetime=60, now=0)
    wrong = join(token, {"role": "submit", "host": "hostB"})
    assert wrong.status == 403 and "not a submit host" in wrong.json()["message"]
    clock.advance(61)
    expired = join(token, {"role": "execute", "host": "hostB"})
    assert expired.status == 401 and "expired" in expired.json()["message"]


def test_a_join_token_may_do_nothing_else(join):
    """A join token querying ads is refused (403): JOIN implies no other level."""
    token = issue_join_token(KEY, "execute", "pool", now=0)
    assert join(token, {}, path="/v1/ads/Machine/query").status == 403


def test_a_daemon_token_cannot_join(join):
    """Only JOIN tokens reach the join route: a DAEMON token is 403."""
    token = issue_token(KEY, "startd@pool", ["DAEMON"], now=0)
    assert join(token, {"role": "execute", "host": "hostB"}).status == 403


def test_a_bad_host_name_is_a_400_and_does_not_use_the_token(join):
    """A host name that is not a DNS name is refused and the token stays usable."""
    token = issue_join_token(KEY, "execute", "pool", now=0)
    assert join(token, {"role": "execute", "host": "bad host"}).status == 400
    assert join(token, {"role": "execute", "host": "hostB"}).status == 200


@pytest.mark.parametrize(("key", "why"), [(None, "does not hold the pool's signing key"),
                                          (b"s" * 40, "old shared secret")])
def test_a_collector_that_cannot_give_identities_says_why(clock, key, why):
    """A collector without the Ed25519 signing key answers a valid join with a 403 naming the reason."""
    routes = JoinRoutes(key, "pool", clock, make_authority())
    verifier = token_verifier(KEY, clock)
    site = make_site(ApiResource(routes.handlers(), verifier, cooperator=clock_cooperator(clock)), clock=clock)
    body = json.dumps({"role": "execute", "host": "hostB"}).encode()
    token = issue_join_token(KEY, "execute", "pool", now=0)
    response, _ = exchange(site, encode_request("POST", "/v1/join", body, token=token), clock)
    assert response.status == 403 and why in response.json()["message"]
