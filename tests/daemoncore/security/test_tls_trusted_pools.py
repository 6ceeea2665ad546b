"""A client trusts its own pool's CA and the CA of every pool it flocks with: a daemon
of a trusted pool is checked against that pool's CA (host name, dates), and a refusal
names every CA tried. With no trusted pool nothing changes."""

from __future__ import annotations

import datetime

from daemoncore.security.pool_trust import TrustedPools
from daemoncore.security.tls import issue_host_certificate, make_authority, parse_certificate
from daemoncore.security.tls_client import PoolTrust, client_trust, refusal_reason_among, use_client_trust
from tests.daemoncore.security.test_pool_trust import pool_b

NOW = datetime.datetime(2030, 1, 2, tzinfo=datetime.timezone.utc)
CA_A = make_authority("Pool A CA", now=NOW)
CA_B = make_authority("Pool B CA", now=NOW)
CA_C = make_authority("Pool C CA", now=NOW)


def _peer(authority, names=("cm.b.org",)):
    return parse_certificate(issue_host_certificate(authority, list(names), now=NOW).certificate_pem)


def test_a_trusted_pools_daemon_is_checked_against_its_own_ca():
    cas = (CA_A.certificate, CA_B.certificate)
    assert refusal_reason_among(_peer(CA_B), "cm.b.org", cas, NOW) is None
    assert refusal_reason_among(_peer(CA_A), "cm.b.org", cas, NOW) is None
    assert "host name mismatch" in refusal_reason_among(_peer(CA_B), "other.b.org", cas, NOW)


def test_a_certificate_of_no_trusted_ca_is_refused_naming_every_ca_tried():
    reason = refusal_reason_among(_peer(CA_C), "cm.b.org", (CA_A.certificate, CA_B.certificate), NOW)
    assert reason == ("certificate not signed by this pool's CA nor by a trusted pool's CA (it was issued by "
                      "CN=Pool C CA; the CAs tried are CN=Pool A CA; CN=Pool B CA)")


def test_alone_the_own_ca_refuses_in_the_words_of_a_single_pool():
    reason = refusal_reason_among(_peer(CA_C), "cm.b.org", (CA_A.certificate,), NOW)
    assert reason.startswith("certificate not signed by this pool's CA (it was issued by CN=Pool C CA")


def test_the_process_trust_adds_the_trusted_pools_cas_as_they_change():
    """client_trust() follows the holder: pool B's CA while B is trusted, only the own CA after."""
    own = PoolTrust(CA_A.certificate, "pool_ca.crt")
    holder = TrustedPools()
    use_client_trust(own)
    try:
        assert client_trust(holder) is own
        holder.replace({"poolB": pool_b(ca_pem=CA_B.certificate_pem().decode())})
        combined = client_trust(holder)
        assert combined.authorities == (CA_A.certificate, CA_B.certificate)
        assert client_trust(holder) is combined
        assert combined.ssl_context() is combined.ssl_context()
        combined.twisted_options()
        holder.replace({})
        assert client_trust(holder) is own
    finally:
        use_client_trust(None)
