"""`roost token revoke` against real daemons on loopback: a revoked token gets 401,
naming the rule, at the collector and at the startd within one UPDATE_INTERVAL."""

from __future__ import annotations

import time

import pytest

from daemoncore.security import issue_token, load_signing_key, read_unverified
from daemoncore.wire import collector_routes, startd_routes
from daemoncore.wire.blocking_client import BlockingClient
from daemoncore.wire.errors import RemoteError
from tests.integration.conftest import roost
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

UPDATE_INTERVAL = 2
POOL_ENV = {"_ROOST_UPDATE_INTERVAL": str(UPDATE_INTERVAL)}
POOL_DAEMON_LIST = "MASTER, COLLECTOR, STARTD"


def token_for(pool, name: str, scope: str = "DAEMON") -> str:
    key = load_signing_key(str(pool["dir"] / "passwords.d" / "POOL"))
    return issue_token(key, name, [scope], lifetime=600, issuer="pool")


def refused_within(call, seconds: float) -> RemoteError:
    """The 401 ``call`` gets once its token is refused, waiting up to ``seconds``."""
    started = time.monotonic()
    while True:
        try:
            call()
        except RemoteError as exc:
            if exc.status == 401:
                return exc
        assert time.monotonic() - started < seconds, "the revoked token was still accepted"
        time.sleep(0.1)


def test_revoked_identity_gets_401_at_the_collector_within_one_interval(pool):
    """After `roost token revoke -identity startd@hostB`, its advertise is a 401 naming the rule, within one interval."""
    client = BlockingClient(pool["facts"]["collector"], token=token_for(pool, "startd@hostB"), timeout=10)
    ad = {"Name": "slot1@hostB", "Machine": "hostB", "ClassAdLifetime": 30}
    client.call(collector_routes.ADVERTISE, {"ads": [ad]}, ad_type="Machine")
    roost(pool["env"], "token", "revoke", "-identity", "startd@hostB", "-pool", str(pool["dir"]))
    error = refused_within(lambda: client.call(collector_routes.ADVERTISE, {"ads": [ad]}, ad_type="Machine"),
                           UPDATE_INTERVAL + 1.5)
    assert error.status == 401 and "revoked" in error.message and "startd@hostB" in error.message
    other = BlockingClient(pool["facts"]["collector"], token=token_for(pool, "startd@hostC"), timeout=10)
    other.call(collector_routes.ADVERTISE, {"ads": [{"Name": "slot1@hostC", "Machine": "hostC"}]},
               ad_type="Machine")


def test_revoked_token_id_gets_401_at_the_startd_too(pool, tmp_path):
    """A token revoked by its file (its jti) is refused by the startd as well, and a fresh token is not."""
    reader = BlockingClient(pool["facts"]["collector"], token=token_for(pool, "reader@pool", "READ"), timeout=10)
    wait_for(lambda: reader.call(collector_routes.QUERY, {"limit": 1}, ad_type="Machine"), seconds=20,
             what="the startd's slots")
    [ad] = reader.call(collector_routes.QUERY, {"limit": 1, "projection": ["StartdIpAddr"]}, ad_type="Machine")
    doomed = token_for(pool, "schedd@pool")
    (tmp_path / "doomed").write_text(doomed + "\n")
    startd = BlockingClient(ad["StartdIpAddr"].strip("<>"), token=doomed, timeout=10)
    with pytest.raises(RemoteError) as unknown_claim:
        startd.call(startd_routes.RELEASE, {"claim_id": "none"})
    assert unknown_claim.value.status == 404
    done = roost(pool["env"], "token", "revoke", "-token", str(tmp_path / "doomed"), "-pool", str(pool["dir"]))
    assert read_unverified(doomed).token_id in done.stdout
    error = refused_within(lambda: startd.call(startd_routes.RELEASE, {"claim_id": "none"}),
                           UPDATE_INTERVAL + 1.5)
    assert error.status == 401 and read_unverified(doomed).token_id in error.message
    fresh = BlockingClient(ad["StartdIpAddr"].strip("<>"), token=token_for(pool, "schedd@pool"), timeout=10)
    with pytest.raises(RemoteError) as still_404:
        fresh.call(startd_routes.RELEASE, {"claim_id": "none"})
    assert still_404.value.status == 404


def test_revoke_needs_exactly_one_target(pool):
    """`roost token revoke` with nothing to revoke is a usage error (2) and writes nothing."""
    done = roost(pool["env"], "token", "revoke", "-pool", str(pool["dir"]), check=False)
    assert done.returncode == 2 and "exactly one of" in done.stderr
