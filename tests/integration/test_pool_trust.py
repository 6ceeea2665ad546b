"""`roost pool trust` between two central managers on 127.0.0.1 (pool A's collector on
9618, pool B's on 9619): the offer, the answer and the finish, then -list on both sides,
and -remove revoking the token; a tampered offer, or one whose collector shows another CA,
is refused and nothing is stored."""

from __future__ import annotations

import base64
import json

import pytest

from tests.integration.conftest import isolated_env, roost

pytestmark = pytest.mark.integration


def _central_manager(tmp_path_factory, name: str, port: int):
    home = tmp_path_factory.mktemp(name)
    env = {**isolated_env(home), "_ROOST_TRUST_DOMAIN": name, "_ROOST_COLLECTOR_PORT": str(port),
           "_ROOST_CONDOR_HOST": f"https://127.0.0.1:{port}"}
    directory = home / "pool"
    roost(env, "pool", "up", "-dir", str(directory), "-role", "central-manager", "-interface", "127.0.0.1")
    return {"env": env, "dir": directory}


@pytest.fixture(scope="module")
def pools(tmp_path_factory):
    """Pool A and pool B, each a central manager alone."""
    started = []
    try:
        started.append(_central_manager(tmp_path_factory, "poolA", 9618))
        started.append(_central_manager(tmp_path_factory, "poolB", 9619))
        yield started
    finally:
        for pool in started:
            roost(pool["env"], "pool", "down", "-dir", str(pool["dir"]), check=False)


def trust(pool, *args, check=True):
    return roost(pool["env"], "pool", "trust", "-dir", str(pool["dir"]), *args, check=check)


def test_a_tampered_offer_is_refused_and_nothing_is_stored(pools):
    pool_a, pool_b = pools
    offer = trust(pool_a).stdout.strip()
    refused = trust(pool_b, offer[:-8] + "AAAAAAAA", check=False)
    assert refused.returncode == 1 and "roost pool trust:" in refused.stderr
    assert "trusts no other pool" in trust(pool_b, "-list").stdout


def test_two_pools_trust_each_other_in_three_steps_and_one_removes_the_other(pools):
    pool_a, pool_b = pools
    offer = trust(pool_a).stdout.strip()
    assert offer.startswith("roosttrust1.")
    answer = trust(pool_b, offer)
    assert "pool poolB now trusts pool poolA" in answer.stderr
    done = trust(pool_a, answer.stdout.strip())
    assert "pool poolA now trusts pool poolB (collector 127.0.0.1:9619?tls=1)" in done.stdout

    listed_a = trust(pool_a, "-list").stdout
    assert "poolB" in listed_a and "flock@poolA" in listed_a and "negotiator@peer-" in listed_a
    listed_b = trust(pool_b, "-list").stdout
    assert "poolA" in listed_b and "negotiator@peer-" in listed_b and "flock@poolA" in listed_b
    assert oct((pool_a["dir"] / "trust.d" / "pool-poolB.json").stat().st_mode & 0o777) == "0o600"

    again = trust(pool_a, answer.stdout.strip(), check=False)
    assert again.returncode == 1 and "made no trust offer" in again.stderr

    removed = trust(pool_b, "-remove", "poolA")
    assert "pool poolA is no longer trusted" in removed.stdout and "is revoked" in removed.stdout
    revoked = (pool_b["dir"] / "spool" / "revoked_tokens").read_text()
    assert "roost pool trust -remove poolA" in revoked and "jti ==" in revoked
    assert "trusts no other pool" in trust(pool_b, "-list").stdout
    unknown = trust(pool_b, "-remove", "poolA", check=False)
    assert unknown.returncode == 1 and "does not trust a pool named 'poolA'" in unknown.stderr


def test_an_offer_whose_collector_shows_another_ca_is_refused(pools):
    """An offer naming pool B's collector but carrying pool A's CA is refused before anything is stored."""
    pool_a, pool_b = pools
    offer = trust(pool_a).stdout.strip()
    encoded = offer[len("roosttrust1."):]
    body = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
    body["collector"] = "127.0.0.1:9619?tls=1"
    forged = "roosttrust1." + base64.urlsafe_b64encode(json.dumps(body).encode()).decode()
    refused = trust(pool_b, forged, check=False)
    assert refused.returncode == 1 and "presents" in refused.stderr and "nothing was stored" in refused.stderr
