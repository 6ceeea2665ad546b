"""Tests for negotiator.service and negotiator.routes with MemoryReactorClock: the
routes byte for byte over the in-memory wire, cycles against the in-memory pool."""

import json

import pytest
from twisted.internet.testing import MemoryReactorClock

from daemoncore.config import Config, ConfigError
from daemoncore.security import issue_token
from daemoncore.wire.in_memory import encode_request, exchange
from negotiator.db import AccountantDatabase
from negotiator.service import NegotiatorService
from negotiator.settings import NegotiatorSettings
from tests.negotiator.in_memory_pool import COLLECTOR, KEY, InMemoryPool, submitter_ad
from tests.support.daemon_settings import daemon_settings

SCHEDD = "127.0.0.1:9701"


@pytest.fixture
def reactor():
    reactor = MemoryReactorClock()
    reactor.advance(1_700_000_000)
    return reactor


@pytest.fixture
def settings(tmp_path):
    return daemon_settings(tmp_path, "NEGOTIATOR", "Negotiator", collector_host=COLLECTOR)


@pytest.fixture
def pool(reactor):
    return InMemoryPool(reactor)


@pytest.fixture
def negotiator(settings, reactor, pool, tmp_path):
    service = NegotiatorService(settings, reactor, NegotiatorSettings(interval=60, min_interval=5), key=KEY,
                                http=pool.http, database=AccountantDatabase(str(tmp_path / "acct.sqlite")))
    service.startService()
    pool.settle()
    yield service
    pool.wait(service.stopService())


def call(negotiator, reactor, method, path, body=None, level="READ"):
    site = reactor.tcpServers[0][1]
    token = issue_token(KEY, f"{level.lower()}@pool", [level], now=reactor.seconds()) if level else None
    raw = json.dumps(body).encode() if body is not None else b""
    response, _ = exchange(site, encode_request(method, path, raw, token=token), reactor)
    return response.status, response.json()


def test_negotiator_advertises_its_ad_with_cycle_statistics(negotiator, pool, reactor):
    """The Negotiator ad reaches the collector; after a cycle it carries the cycle's figures."""
    [ad] = pool.store.query("Negotiator")
    assert ad.wire["MyType"] == "Negotiator" and ad.wire["NegotiatorInterval"] == 60
    reactor.advance(300)
    pool.settle()
    ad = next(pool.store.query("Negotiator"))
    assert ad.wire["LastNegotiationCycleTime0"] >= 1_700_000_000
    assert "LastNegotiationCycleMatches0" in ad.wire


def test_cycle_at_start_matches_and_charges(negotiator, pool, reactor):
    """The service negotiates on its reactor's clock: a job submitted before the next cycle is matched."""
    schedd = pool.add_schedd(SCHEDD)
    schedd.add_requests("alice@pool", "alice", 1)
    pool.advertise("Submitter", submitter_ad("alice@pool", SCHEDD))
    pool.add_slot("slot1@x", claim_id="cap-1")
    reactor.advance(60)
    pool.settle()
    [match] = schedd.matched()
    assert match["claim_id"] == "cap-1"


def test_priorities_route_lists_customers(negotiator, pool, reactor):
    """PRIORITIES answers each customer with HTCondor's accountant attribute names."""
    pool.add_slot("slot1@x", cpus=2, state="Claimed", RemoteOwner="alice@pool")
    reactor.advance(60)
    pool.settle()
    status, answer = call(negotiator, reactor, "GET", "/v1/priorities")
    assert status == 200
    [row] = answer["priorities"]
    assert row["Name"] == "alice@pool" and row["ResourcesUsed"] == 2
    assert row["PriorityFactor"] == 1000 and row["EffectivePriority"] == row["Priority"] * 1000
    assert answer["last_update"] == reactor.seconds()


def test_set_factor_needs_administrator(negotiator, reactor):
    """READ and DAEMON tokens cannot set factors (403); ADMINISTRATOR can, and it shows."""
    for level in ("READ", "DAEMON"):
        status, answer = call(negotiator, reactor, "POST", "/v1/priorities/factor",
                              {"name": "bob@pool", "factor": 10}, level=level)
        assert (status, answer["error"]) == (403, "forbidden")
    status, _ = call(negotiator, reactor, "POST", "/v1/priorities/factor",
                     {"name": "bob@pool", "factor": 10}, level="ADMINISTRATOR")
    assert status == 200
    _, answer = call(negotiator, reactor, "GET", "/v1/priorities")
    assert [(r["Name"], r["PriorityFactor"]) for r in answer["priorities"]] == [("bob@pool", 10)]


@pytest.mark.parametrize("body, field", [
    ({"name": "bob@pool", "factor": 0.5}, "$.factor"),
    ({"name": "bob@pool", "factor": "big"}, "$.factor"),
    ({"name": "bob pool", "factor": 2}, "$.name"),
    ({"factor": 2}, "$.name"),
    ({"name": "bob@pool", "factor": 2, "prio": 1}, "$.prio"),
])
def test_bad_set_factor_is_a_400_naming_the_field(negotiator, reactor, body, field):
    """Each bad body is refused with a message that names the field at fault."""
    status, answer = call(negotiator, reactor, "POST", "/v1/priorities/factor", body, level="ADMINISTRATOR")
    assert status == 400 and answer["message"].startswith(field)


def test_reset_usage_gives_back_the_best_priority(negotiator, pool, reactor):
    """After usage has worsened a priority, RESET_USAGE puts it back at 0.5 with no accumulated usage."""
    pool.add_slot("slot1@x", cpus=8, state="Claimed", RemoteOwner="alice@pool", ClassAdLifetime=86400)
    for _ in range(3):
        reactor.advance(3600)
        pool.settle()
    assert negotiator.accountant.real_priority("alice@pool") > 0.5
    status, _ = call(negotiator, reactor, "POST", "/v1/priorities/reset", {"name": "alice@pool"},
                     level="ADMINISTRATOR")
    assert status == 200
    _, answer = call(negotiator, reactor, "GET", "/v1/priorities")
    [row] = answer["priorities"]
    assert (row["Priority"], row["AccumulatedUsage"]) == (0.5, 0)


def test_reschedule_needs_daemon_and_runs_a_cycle_soon(negotiator, pool, reactor):
    """A schedd's RESCHEDULE starts a cycle within NEGOTIATOR_MIN_INTERVAL; a user token gets 403."""
    status, _ = call(negotiator, reactor, "POST", "/v1/reschedule", {}, level="ADMINISTRATOR")
    assert status == 403
    before = len(negotiator.driver.reports)
    reactor.advance(10)
    status, answer = call(negotiator, reactor, "POST", "/v1/reschedule", {}, level="DAEMON")
    assert (status, answer["started"], answer["in_seconds"]) == (200, True, 0.0)
    pool.settle()
    assert len(negotiator.driver.reports) == before + 1


def test_accountant_survives_a_restart(settings, reactor, pool, tmp_path):
    """Factors set before a stop are there after a new service opens the same SQLite file."""
    path = str(tmp_path / "spool" / "Accountant.sqlite")
    knobs = NegotiatorSettings(database_file=path)
    first = NegotiatorService(settings, reactor, knobs, key=KEY, http=pool.http)
    first.accountant.set_factor("bob@pool", 42)
    first.startService()
    pool.wait(first.stopService())
    second = NegotiatorService(settings, reactor, knobs, key=KEY, http=pool.http)
    assert second.accountant.factor("bob@pool") == 42
    second.database.close()


def test_knobs_come_from_config_and_bad_ones_are_refused(tmp_path):
    """Config sets the interval and database; a bad rank expression is a ConfigError naming the knob."""
    config = Config.from_text(f"SPOOL = {tmp_path}/spool\nNEGOTIATOR_INTERVAL = 2m\n")
    knobs = NegotiatorSettings.from_config(config)
    assert knobs.interval == 120 and knobs.database_file == f"{tmp_path}/spool/Accountant.sqlite"
    with pytest.raises(ConfigError, match="NEGOTIATOR_PRE_JOB_RANK"):
        NegotiatorSettings.from_config(Config.from_text("NEGOTIATOR_PRE_JOB_RANK = 10 *\n"))


def test_last_cycle_route_says_why_each_request_waits(negotiator, pool, reactor):
    """GET /v1/negotiator/last-cycle (READ) answers null before a cycle, then the requests left idle
    with the jobs still waiting and a reason, narrowed by submitter and job."""
    status, answer = call(negotiator, reactor, "GET", "/v1/negotiator/last-cycle")
    assert status == 200 and answer["waiting"] == []
    schedd = pool.add_schedd(SCHEDD)
    schedd.add_requests("alice@pool", "alice", 3)
    pool.advertise("Submitter", submitter_ad("alice@pool", SCHEDD, idle=3))
    pool.add_slot("slot1@x", claim_id="cap-1")
    reactor.advance(60)
    pool.settle()
    status, answer = call(negotiator, reactor, "GET", "/v1/negotiator/last-cycle?submitter=alice@pool&job=1.2")
    assert status == 200 and answer["started"] is not None and answer["ended"] >= answer["started"]
    [waiting] = answer["waiting"]
    assert (waiting["submitter"], waiting["schedd"].strip("<>"), waiting["left"]) == ("alice@pool", SCHEDD, 2)
    assert waiting["job_ids"] == ["1.1", "1.2"] and waiting["reason"]
    assert [s["name"] for s in answer["submitters"]] == ["alice@pool"]
    assert call(negotiator, reactor, "GET", "/v1/negotiator/last-cycle?job=1.0")[1]["waiting"] == []


@pytest.mark.parametrize("query, named", [("job=3", "job"), ("job=a.b", "job"), ("submitter=a%20b", "submitter"),
                                          ("job=1.0&job=2.0", "job")])
def test_last_cycle_route_refuses_bad_queries(negotiator, reactor, query, named):
    """A malformed job id, a submitter with spaces or a repeated argument is a 400 naming it."""
    status, answer = call(negotiator, reactor, "GET", f"/v1/negotiator/last-cycle?{query}")
    assert status == 400 and answer["message"].startswith(f"{named}:")


def test_last_cycle_route_needs_a_token(negotiator, reactor):
    """Without a token the last cycle's reasons are not given (401)."""
    assert call(negotiator, reactor, "GET", "/v1/negotiator/last-cycle", level=None)[0] == 401
