"""Tests for collector.service with MemoryReactorClock (no sockets)."""

import pytest
from twisted.internet.testing import MemoryReactorClock

from classad import compile_constraint
from collector.service import CollectorService
from tests.support.daemon_settings import daemon_settings

KEY = b"service-test-signing-key-0123456789ab"


@pytest.fixture
def settings(tmp_path):
    return daemon_settings(tmp_path, "COLLECTOR", "Collector")


@pytest.fixture
def reactor():
    return MemoryReactorClock()


def test_start_listens_on_loopback_and_writes_address(settings, reactor, tmp_path):
    """Starting listens on 127.0.0.1 and writes the address file; stopping removes it."""
    collector = CollectorService(settings, reactor, key=KEY)
    collector.startService()
    port, _site, _backlog, interface = reactor.tcpServers[0]
    assert (port, interface) == (0, "127.0.0.1")
    assert (tmp_path / ".collector_address").read_text().startswith("<127.0.0.1:")
    collector.stopService()
    assert not (tmp_path / ".collector_address").exists()


def test_collector_advertises_itself_every_update_interval(settings, reactor):
    """The collector's own ad is in its store at once and refreshed every UPDATE_INTERVAL."""
    collector = CollectorService(settings, reactor, key=KEY)
    collector.startService()
    [own] = collector.store.query("Collector")
    assert own.wire["UpdateSequenceNumber"] == 1
    reactor.advance(299)
    assert next(collector.store.query("Collector")).wire["UpdateSequenceNumber"] == 1
    reactor.advance(1)
    assert next(collector.store.query("Collector")).wire["UpdateSequenceNumber"] == 2
    collector.stopService()


def test_sweep_drops_expired_ads(settings, reactor):
    """The periodic sweep removes ads past their lifetime from the store."""
    collector = CollectorService(settings, reactor, key=KEY, sweep_interval=10)
    collector.startService()
    collector.store.update("Machine", None, {"Name": "a", "ClassAdLifetime": 15})
    reactor.advance(10)
    assert collector.store.counts().get("Machine") == 1
    reactor.advance(10)
    assert "Machine" not in collector.store.counts()
    collector.stopService()


def test_stop_leaves_no_timers(settings, reactor):
    """After stopping, no delayed calls remain on the clock."""
    collector = CollectorService(settings, reactor, key=KEY)
    collector.startService()
    reactor.advance(1000)
    collector.stopService()
    assert reactor.getDelayedCalls() == []


@pytest.mark.parametrize("constraint", ['MyType =!= "x"', 'MyType == "Collector"', "UpdateSequenceNumber > 0"])
def test_constraint_over_any_evaluates_in_the_collectors_own_ad(settings, reactor, constraint):
    """The collector's own ad is a parsed ClassAd, so any constraint over type Any evaluates in it."""
    collector = CollectorService(settings, reactor, key=KEY)
    collector.startService()
    found = list(collector.store.query("Any", compile_constraint(constraint)))
    assert [stored.ad_type for stored in found] == ["Collector"]
    assert found[0].ad.evaluate("MyType") == "Collector"
    collector.stopService()


def test_a_sweep_freezes_what_the_collector_holds_when_asked(settings, reactor):
    """With freeze_held the sweep leaves the objects alive then (the stored ads) out of
    later cyclic collections; without it nothing is frozen."""
    import gc

    gc.unfreeze()
    try:
        plain = CollectorService(settings, reactor, key=KEY, sweep_interval=10)
        plain.startService()
        reactor.advance(10)
        assert gc.get_freeze_count() == 0
        plain.stopService()
        frozen = CollectorService(settings, reactor, key=KEY, sweep_interval=10, freeze_held=True)
        frozen.startService()
        reactor.advance(10)
        assert gc.get_freeze_count() > 0
        frozen.stopService()
    finally:
        gc.unfreeze()
