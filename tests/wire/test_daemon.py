"""Tests for daemoncore.daemon: a daemon advertising itself into a collector served
in memory through StubTreq."""

import attrs
import pytest
from treq.testing import StubTreq
from twisted.internet.testing import MemoryReactorClock

from collector.metrics import CollectorMetrics
from collector.routes import CollectorRoutes
from collector.store import AdStore
from daemoncore.config import Config
from daemoncore.daemon import DaemonService, DaemonSettings
from daemoncore.wire.auth import token_verifier
from daemoncore.wire.server import ApiResource

KEY = b"daemon-test-signing-key-0123456789abc"


@pytest.fixture
def reactor():
    return MemoryReactorClock()


@pytest.fixture
def settings(tmp_path):
    config = Config.from_text(f"LOG = {tmp_path}\nCOLLECTOR_HOST = 127.0.0.1:9618\nUPDATE_INTERVAL = 2m\n")
    return DaemonSettings.from_config(config, "schedd", "Scheduler")


def test_settings_come_from_config(settings, tmp_path):
    """Durations, the collector's address and file locations are read from config."""
    assert settings.update_interval == 120
    assert settings.collector_host == "127.0.0.1:9618"
    assert settings.address_file == str(tmp_path / ".schedd_address")
    assert settings.log_file == str(tmp_path / "ScheddLog")


def test_daemon_advertises_itself_every_update_interval(settings, reactor):
    """The daemon's ad reaches the collector at start and again each UPDATE_INTERVAL."""
    store = AdStore(reactor)
    resource = ApiResource(CollectorRoutes(store, CollectorMetrics(store)).handlers(), token_verifier(KEY, reactor))
    stub = StubTreq(resource)
    daemon = DaemonService(settings, reactor, key=KEY, http=stub)
    daemon.startService()
    stub.flush()
    [ad] = store.query("Scheduler")
    assert ad.wire["MyType"] == "Scheduler" and ad.wire["UpdateSequenceNumber"] == 1
    assert ad.wire["ClassAdLifetime"] == 900
    reactor.advance(120)
    stub.flush()
    assert next(store.query("Scheduler")).wire["UpdateSequenceNumber"] == 2
    daemon.stopService()


def test_unreachable_collector_does_not_stop_the_daemon(settings, reactor):
    """A failed advertisement is logged and the loop keeps going."""
    daemon = DaemonService(attrs.evolve(settings, collector_host="127.0.0.1:1"), reactor, key=KEY,
                           http=StubTreq(ApiResource({}, None)))
    daemon.startService()
    reactor.advance(120)
    assert daemon._advertiser.running
    daemon.stopService()
