"""Tests for daemoncore.security.pool_trust: the trust.d store, the holder and its watcher."""

import os
import stat

import pytest
from twisted.internet.defer import fail, succeed
from twisted.internet.task import Clock

from daemoncore.security.pool_trust import (
    PoolTrustError,
    TrustedPool,
    TrustedPools,
    TrustWatcher,
    pools_from_wire,
    read_trusted_pools,
    remove_trusted_pool,
    save_pending_offer,
    save_trusted_pool,
    take_pending_offer,
)
from daemoncore.security.tls import make_authority

CA_PEM = make_authority("pool B CA").certificate_pem().decode()


def pool_b(**changes) -> TrustedPool:
    fields = {"name": "poolB", "collector": "198.18.1.2:9618?tls=1", "ca_pem": CA_PEM, "token": "a.b.c",
              "peer_negotiator": "negotiator@peer-3f9a0b1c", "issued_jti": "jti-1"}
    return TrustedPool(**{**fields, **changes})


def test_a_saved_pool_is_read_back_from_a_0600_file(tmp_path):
    """save_trusted_pool writes one private file per pool, read back equal; remove deletes it and says what it held."""
    directory = str(tmp_path / "trust.d")
    path = save_trusted_pool(directory, pool_b())
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert read_trusted_pools(directory) == {"poolB": pool_b()}
    assert remove_trusted_pool(directory, "poolB") == pool_b()
    assert read_trusted_pools(directory) == {}
    assert remove_trusted_pool(directory, "poolB") is None


def test_a_missing_directory_holds_no_pools(tmp_path):
    assert read_trusted_pools(str(tmp_path / "none")) == {}


def test_a_pool_name_that_is_not_a_trust_domain_is_not_saved(tmp_path):
    with pytest.raises(PoolTrustError, match="not a pool name"):
        save_trusted_pool(str(tmp_path), pool_b(name="../evil"))
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(("changes", "words"), [
    ({"collector": "no port here:"}, "collector"),
    ({"ca_pem": "not a certificate"}, "ca_pem"),
    ({"token": ""}, "token is missing"),
])
def test_a_bad_entry_is_refused_naming_the_field(changes, words):
    with pytest.raises(PoolTrustError, match=words):
        TrustedPool.from_json(pool_b(**changes).to_json(), "the test")


def test_a_damaged_file_is_refused_naming_it(tmp_path):
    (tmp_path / "pool-poolB.json").write_text('{"name": "poolB", "collector": "h:1", "ca_pem": "x", "token": "t"}')
    with pytest.raises(PoolTrustError, match="pool-poolB.json"):
        read_trusted_pools(str(tmp_path))
    (tmp_path / "pool-poolB.json").write_text("not json")
    with pytest.raises(PoolTrustError, match="is not JSON"):
        read_trusted_pools(str(tmp_path))


def test_a_pending_offer_is_taken_once(tmp_path):
    save_pending_offer(str(tmp_path), "3f9a0b1c", "jti-7")
    assert take_pending_offer(str(tmp_path), "3f9a0b1c") == "jti-7"
    with pytest.raises(PoolTrustError, match="made no trust offer 3f9a0b1c"):
        take_pending_offer(str(tmp_path), "3f9a0b1c")
    with pytest.raises(PoolTrustError, match="not a trust offer id"):
        take_pending_offer(str(tmp_path), "../x")


def test_the_wire_form_carries_no_issued_token_id():
    answer = {"pools": [pool_b().to_wire()]}
    assert "issued_jti" not in answer["pools"][0]
    assert pools_from_wire(answer, "the collector") == {"poolB": pool_b(issued_jti="")}
    with pytest.raises(PoolTrustError, match="no list"):
        pools_from_wire({"pools": "x"}, "the collector")


def test_the_holder_finds_pools_by_collector_and_negotiator():
    holder = TrustedPools()
    holder.replace({"poolB": pool_b()})
    assert holder.version == 1
    holder.replace({"poolB": pool_b()})
    assert holder.version == 1
    assert holder.by_collector("198.18.1.2") == pool_b()
    assert holder.by_collector("198.18.1.2:9619") is None
    assert holder.by_negotiator("negotiator@peer-3f9a0b1c") == pool_b()
    assert holder.by_negotiator("negotiator@peer-other") is None
    assert holder.ca_pems() == (CA_PEM,)


def test_the_watcher_rereads_and_keeps_the_pools_when_reading_fails():
    clock, holder = Clock(), TrustedPools()
    answers = [succeed({"poolB": pool_b()}), fail(PoolTrustError("broken")), succeed({})]
    watcher = TrustWatcher(holder, clock, 10.0, lambda: answers.pop(0), "the test")
    watcher.startService()
    assert holder.get("poolB") == pool_b()
    clock.advance(10)
    assert holder.get("poolB") == pool_b()
    clock.advance(10)
    assert holder.current == {}
    watcher.stopService()
    assert clock.getDelayedCalls() == []
