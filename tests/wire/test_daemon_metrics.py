"""Every daemon answers ``/metrics`` with its own registry in Prometheus text: a READ
token is needed unless ``METRICS_REQUIRE_AUTHENTICATION = false``."""

from __future__ import annotations

import attrs
import pytest
from prometheus_client.parser import text_string_to_metric_families
from twisted.internet.testing import MemoryReactorClock

from collector.service import CollectorService
from daemoncore.config import Config
from daemoncore.daemon import DaemonSettings
from daemoncore.master.service import MasterService
from daemoncore.master.supervisor import Supervisor
from daemoncore.security import issue_token
from daemoncore.wire.auth import token_verifier
from daemoncore.wire.in_memory import clock_cooperator, encode_request, exchange
from daemoncore.wire.server import ApiResource, make_site
from negotiator.db import AccountantDatabase
from negotiator.driver import CycleReport
from negotiator.service import NegotiatorService
from negotiator.settings import NegotiatorSettings
from schedd.service import ScheddService, ScheddSettings
from startd.job_run import RunSettings
from startd.service import StartdService
from startd.slot_types import plan_slots
from startd.slots import SlotTable
from tests.startd.conftest import make_machine
from tests.support.daemon_settings import daemon_settings

KEY = b"metrics-test-signing-key-0123456789abcdef"
READ = issue_token(KEY, "carol@pool", ["READ"], now=0)


class _NoSpawner:
    """The master's supervisor is never started here: nothing is spawned."""

    def spawn(self, name, port, collector):
        raise AssertionError(f"{name} should not be spawned")


def _collector(tmp_path, reactor, settings):
    return CollectorService(settings, reactor, key=KEY)


def _schedd(tmp_path, reactor, settings):
    return ScheddService(settings, reactor, ScheddSettings(spool=str(tmp_path / "spool")), config=Config.from_text(""),
                         key=KEY, with_execution=False)


def _negotiator(tmp_path, reactor, settings):
    return NegotiatorService(settings, reactor, NegotiatorSettings(), key=KEY,
                             database=AccountantDatabase(str(tmp_path / "accountant.sqlite")))


def _startd(tmp_path, reactor, settings):
    machine = make_machine()
    table = SlotTable.from_plans(machine, plan_slots(Config.from_text("", env={}), machine), reactor)
    return StartdService(settings, reactor, table, RunSettings(str(tmp_path)), key=KEY)


def _master(tmp_path, reactor, settings):
    supervisor = Supervisor(["COLLECTOR", "SCHEDD"], _NoSpawner(), reactor)
    return MasterService(settings, reactor, supervisor, str(tmp_path / "pool.json"), {}, key=KEY)


#: (daemon type, ad type, builder, a metric the daemon exports)
DAEMONS = [
    ("COLLECTOR", "Collector", _collector, "roost_pool_cpus_total"),
    ("SCHEDD", "Scheduler", _schedd, "roost_schedd_jobs"),
    ("NEGOTIATOR", "Negotiator", _negotiator, "roost_negotiator_matches"),
    ("STARTD", "Machine", _startd, "roost_gpu_memory_total_bytes"),
    ("MASTER", "DaemonMaster", _master, "roost_master_daemon_restarts"),
]


def _scraper(service, reactor):
    site = make_site(ApiResource(service.route_table(), token_verifier(KEY, reactor),
                                 cooperator=clock_cooperator(reactor)), clock=reactor)

    def scrape(token=None):
        response, _ = exchange(site, encode_request("GET", "/metrics", token=token), reactor)
        return response
    return scrape


def _families(text: bytes) -> dict:
    return {family.name: family for family in text_string_to_metric_families(text.decode())}


@pytest.fixture(params=DAEMONS, ids=[d[0].lower() for d in DAEMONS])
def daemon(request, tmp_path):
    daemon_type, ad_type, build, metric = request.param
    reactor = MemoryReactorClock()
    service = build(tmp_path, reactor, daemon_settings(tmp_path, daemon_type, ad_type))
    yield service, reactor, metric
    if hasattr(service, "queue"):
        service.queue.close()
    if hasattr(service, "database"):
        service.database.close()


def test_metrics_need_a_read_token(daemon):
    """Without a token /metrics answers 401; with a READ token it is Prometheus text with the daemon's metrics."""
    service, reactor, metric = daemon
    scrape = _scraper(service, reactor)
    assert scrape().status == 401
    answer = scrape(READ)
    assert answer.status == 200 and answer.headers["content-type"].startswith("text/plain")
    assert metric in _families(answer.body)


def test_metrics_open_without_authentication(daemon):
    """METRICS_REQUIRE_AUTHENTICATION = false lets a scraper in without a token."""
    service, reactor, metric = daemon
    service.settings = attrs.evolve(service.settings, metrics_require_authentication=False)
    answer = _scraper(service, reactor)(None)
    assert answer.status == 200 and metric in _families(answer.body)


def test_the_knob_is_read_from_config(tmp_path):
    """METRICS_REQUIRE_AUTHENTICATION defaults to true and is read as a boolean."""
    assert DaemonSettings.from_config(Config.from_text(f"LOG = {tmp_path}\n"), "schedd", "Scheduler") \
        .metrics_require_authentication is True
    config = Config.from_text(f"LOG = {tmp_path}\nMETRICS_REQUIRE_AUTHENTICATION = false\n")
    assert DaemonSettings.from_config(config, "schedd", "Scheduler").metrics_require_authentication is False


def test_schedd_counts_jobs_by_state_and_submits(tmp_path):
    """The schedd's metrics show the queue's jobs per owner and state, and submits counted."""
    reactor = MemoryReactorClock()
    schedd = _schedd(tmp_path, reactor, daemon_settings(tmp_path, "SCHEDD", "Scheduler"))
    try:
        schedd.metrics.submitted(3)
        schedd.metrics.submitted(2)
        families = _families(_scraper(schedd, reactor)(READ).body)
        assert families["roost_schedd_submits"].samples[0].value == 2
        assert families["roost_schedd_jobs_submitted"].samples[0].value == 5
    finally:
        schedd.queue.close()


def test_negotiator_counts_cycles(tmp_path):
    """Each cycle's report feeds the negotiator's counters: matches, accepted, rejections, cycle time."""
    reactor = MemoryReactorClock()
    negotiator = _negotiator(tmp_path, reactor, daemon_settings(tmp_path, "NEGOTIATOR", "Negotiator"))
    try:
        for observe in negotiator.driver.observers:
            observe(CycleReport(10.0, 10.5, slots=4, submitters=1, requests=2, matches=3, matches_accepted=2))
            observe(CycleReport(70.0, 70.25, slots=4, submitters=1, requests=1, matches=1, matches_accepted=1))
        families = _families(_scraper(negotiator, reactor)(READ).body)
        value = {s.name: s.value for f in families.values() for s in f.samples}
        assert value["roost_negotiator_matches_total"] == 4
        assert value["roost_negotiator_matches_accepted_total"] == 3
        assert value["roost_negotiator_rejections_total"] == 1
        assert value["roost_negotiator_cycle_duration_seconds_count"] == 2
        assert value["roost_negotiator_last_cycle_duration_seconds"] == 0.25
    finally:
        negotiator.database.close()


def test_master_reports_restarts(tmp_path):
    """The master exports each supervised daemon's restarts and whether it is up."""
    reactor = MemoryReactorClock()
    master = _master(tmp_path, reactor, daemon_settings(tmp_path, "MASTER", "DaemonMaster"))
    master.supervisor.children["SCHEDD"].restarts = 2
    master.supervisor.children["COLLECTOR"].state = "ready"
    families = _families(_scraper(master, reactor)(READ).body)
    restarts = {s.labels["daemon"]: s.value for s in families["roost_master_daemon_restarts"].samples
                if s.name.endswith("_total")}
    up = {s.labels["daemon"]: s.value for s in families["roost_master_daemon_up"].samples}
    assert restarts == {"COLLECTOR": 0, "SCHEDD": 2}
    assert up == {"COLLECTOR": 1, "SCHEDD": 0}
