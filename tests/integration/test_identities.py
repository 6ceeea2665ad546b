"""Per-host identities against real daemons on loopback: a token for startd@hostB
advertises only hostB's ads at the collector and cannot claim at another host's startd,
while the pool's own daemons go on as before."""

from __future__ import annotations

import socket

import pytest

from daemoncore.security import issue_token, load_signing_key
from daemoncore.wire import collector_routes, startd_routes
from daemoncore.wire.blocking_client import BlockingClient
from daemoncore.wire.errors import RemoteError
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

POOL_DAEMON_LIST = "MASTER, COLLECTOR, STARTD"


def token_for(pool, name: str) -> str:
    key = load_signing_key(str(pool["dir"] / "passwords.d" / "POOL"))
    return issue_token(key, name, ["DAEMON"], lifetime=600, issuer="pool")


def machine_names(pool) -> list[str]:
    reader = BlockingClient(pool["facts"]["collector"], token=token_for(pool, "reader@pool"), timeout=10)
    return sorted(ad["Name"] for ad in reader.call(collector_routes.QUERY, {}, ad_type="Machine"))


def test_the_pools_own_startd_still_advertises(pool):
    """The startd of the pool, holding the pool key, advertises its slots as before."""
    host = socket.gethostname()
    wait_for(lambda: any(name.endswith(f"@{host}") for name in machine_names(pool)), seconds=20,
             what="the pool's own slots")


def test_a_startd_of_host_b_cannot_advertise_an_ad_of_host_a(pool):
    """startd@hostB sending a slot of hostA gets 403 naming both, and hostA's slot is not in the collector."""
    client = BlockingClient(pool["facts"]["collector"], token=token_for(pool, "startd@hostB"), timeout=10)
    ad = {"Name": "slot1@hostA", "Machine": "hostA", "Cpus": 1}
    with pytest.raises(RemoteError) as refused:
        client.call(collector_routes.ADVERTISE, {"ads": [ad]}, ad_type="Machine")
    assert refused.value.status == 403
    assert "startd@hostB" in refused.value.message and "slot1@hostA" in refused.value.message
    assert "slot1@hostA" not in machine_names(pool)
    own = {"Name": "slot1@hostB", "Machine": "hostB", "Cpus": 1, "ClassAdLifetime": 5}
    client.call(collector_routes.ADVERTISE, {"ads": [own]}, ad_type="Machine")
    assert "slot1@hostB" in machine_names(pool)


def test_a_startd_of_another_host_cannot_claim_here(pool):
    """At this host's startd, a claim call from startd@otherhost is a 403 before the ClaimId is looked at."""
    host = socket.gethostname()
    startd = BlockingClient(pool["facts"]["collector"], token=token_for(pool, "reader@pool"), timeout=10)
    [ad] = startd.call(collector_routes.QUERY, {"constraint": f'Machine == "{host}"', "limit": 1,
                                                "projection": ["StartdIpAddr"]}, ad_type="Machine")
    address = ad["StartdIpAddr"].strip("<>")
    other = BlockingClient(address, token=token_for(pool, f"startd@not-{host}"), timeout=10)
    with pytest.raises(RemoteError) as refused:
        other.call(startd_routes.RELEASE, {"claim_id": "whatever"})
    assert refused.value.status == 403 and f"startd@not-{host}" in refused.value.message
    pool_startd = BlockingClient(address, token=token_for(pool, "startd@pool"), timeout=10)
    with pytest.raises(RemoteError) as unknown:
        pool_startd.call(startd_routes.RELEASE, {"claim_id": "whatever"})
    assert unknown.value.status == 404
