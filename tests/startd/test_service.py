"""The startd service against a real collector's routes in memory (treq's StubTreq):
slot ads with the startd's address, private ads with ClaimIds, re-advertised soon
after a change and withdrawn when a dynamic slot goes; the schedd link's requests."""

import io
import json

import pytest
from treq.testing import StubTreq
from twisted.internet import defer
from twisted.web.resource import Resource

import classad
from collector.metrics import CollectorMetrics
from collector.routes import CollectorRoutes
from collector.store import AdStore
from daemoncore.config import Config, ConfigError
from daemoncore.security import create_signing_key
from daemoncore.wire.auth import token_verifier
from daemoncore.wire.server import ApiResource
from startd.job_run import RunSettings, exit_attributes, starter_job_ad
from startd.schedd_link import ScheddLink
from startd.service import ACTIVITY_ADVERTISE_DELAY, CHANGE_ADVERTISE_DELAY, StartdService, build_startd
from startd.slot_types import plan_slots
from startd.slots import SlotTable
from startd.starter import JobOutcome
from startd.usage import Usage
from tests.support.daemon_settings import daemon_settings

KEY = b"startd-service-test-signing-key-0123456789"


def settings(**changes):
    return daemon_settings(".", "STARTD", "Machine", collector_host="127.0.0.1:9618", **changes)


@pytest.fixture
def pool(machine, clock, tmp_path):
    store = AdStore(clock, default_lifetime=900)
    collector = ApiResource(CollectorRoutes(store, CollectorMetrics(store)).handlers(), token_verifier(KEY, clock))
    http = StubTreq(collector)
    table = SlotTable.from_plans(machine, plan_slots(Config.from_text("", env={}), machine), clock)
    service = StartdService(settings(), clock, table, RunSettings(str(tmp_path)), key=KEY, http=http)
    return {"store": store, "http": http, "service": service, "table": table, "clock": clock}


def stored(pool, private=False):
    pool["http"].flush()
    return {s.name: s.wire for s in pool["store"].query("Machine", private=private)}


def test_slot_ads_and_private_ads_reach_the_collector_with_the_startds_address(pool):
    """Public ads carry MyAddress/StartdIpAddr; the private ad holds the ClaimId."""
    pool["service"].advertise_self({})
    [public] = stored(pool).values()
    assert public["Name"] == "slot1@node1" and public["StartdIpAddr"] == public["MyAddress"]
    assert public["MyAddress"].startswith("<127.0.0.1:")
    assert "ClaimId" not in public
    [private] = stored(pool, private=True).values()
    assert private["ClaimId"] == pool["table"].private_ads()[0]["ClaimId"]


def test_the_slot_ads_are_made_over_several_turns_and_sent_together(machine, clock, tmp_path, monkeypatch):
    """With no time to spare per turn, one slot's ads are made per turn; nothing reaches
    the collector before the last, and then every slot's ad in one update."""
    monkeypatch.setattr("startd.service.AD_SLICE_SECONDS", 0.0)
    store = AdStore(clock, default_lifetime=900)
    http = StubTreq(ApiResource(CollectorRoutes(store, CollectorMetrics(store)).handlers(), token_verifier(KEY, clock)))
    table = SlotTable.from_plans(machine, plan_slots(Config.from_text("NUM_SLOTS = 4", env={}), machine), clock)
    service = StartdService(settings(), clock, table, RunSettings(str(tmp_path)), key=KEY, http=http)
    sent = []
    service.advertise_self({}).addCallback(sent.append)
    http.flush()
    assert (list(store.query("Machine", private=False)), sent) == ([], [])  # one slot made in this turn
    clock.advance(0)  # the later turns (task.Clock runs a turn's new callLater(0) in the same advance)
    http.flush()
    assert sorted(ad.name for ad in store.query("Machine", private=False)) == [f"slot{n}@node1" for n in range(1, 5)]


def test_a_change_is_advertised_soon_and_an_ended_dynamic_slot_is_withdrawn(pool):
    """A claim shows in the collector after the short delay; releasing it removes its ads."""
    service, table = pool["service"], pool["table"]
    service.advertise_self({})
    grant = table.request_claim(table.private_ads()[0]["ClaimId"], classad.ClassAd({"RequestCpus": 1}))
    service.changed()
    service.changed()  # changes close together share one update
    pool["clock"].advance(CHANGE_ADVERTISE_DELAY)
    assert sorted(stored(pool)) == ["slot1@node1", "slot1_1@node1"]
    table.release(grant.claim_id)
    service.changed()
    pool["clock"].advance(CHANGE_ADVERTISE_DELAY)
    assert sorted(stored(pool)) == ["slot1@node1"]
    assert sorted(stored(pool, private=True)) == ["slot1@node1"]


def test_an_activity_change_waits_longer_unless_a_claim_change_comes(pool):
    """A change of activity alone goes out after ACTIVITY_ADVERTISE_DELAY; a claim made meanwhile brings it forward."""
    service, table, clock = pool["service"], pool["table"], pool["clock"]
    service.advertise_self({})
    grant = table.request_claim(table.private_ads()[0]["ClaimId"], classad.ClassAd({"RequestCpus": 1}))
    service.activity_changed()
    clock.advance(CHANGE_ADVERTISE_DELAY)
    assert sorted(stored(pool)) == ["slot1@node1"]
    clock.advance(ACTIVITY_ADVERTISE_DELAY - CHANGE_ADVERTISE_DELAY)
    assert sorted(stored(pool)) == ["slot1@node1", "slot1_1@node1"]
    table.release(grant.claim_id)
    service.activity_changed()
    service.changed()
    clock.advance(CHANGE_ADVERTISE_DELAY)
    assert sorted(stored(pool)) == ["slot1@node1"]
    assert not clock.getDelayedCalls()


def test_unchanged_static_slots_ads_are_not_made_again(machine, clock, tmp_path):
    """slot_ads builds a static slot's ads once and again only when the slot (or what its
    ad is made of) changed: a claim on slot2 rebuilds slot2's ads alone, with the new state."""
    table = SlotTable.from_plans(machine, plan_slots(Config.from_text("NUM_SLOTS = 4", env={}), machine), clock)
    service = StartdService(settings(), clock, table, RunSettings(str(tmp_path)), key=KEY)
    public, private = service.slot_ads()
    [claim_id] = [ad["ClaimId"] for ad in private if ad["Name"].startswith("slot2@")]
    table.request_claim(claim_id, classad.ClassAd({"RequestCpus": 1}))
    again, private_again = service.slot_ads()
    assert [a is b for a, b in zip(public, again)] == [True, False, True, True]
    assert again[1]["State"] == "Claimed" and public[1]["State"] == "Unclaimed"
    assert private_again[1]["ClaimId"] == table.slots[again[1]["Name"]].claim_id
    table.refusals[again[2]["Name"]] = 1
    third, _ = service.slot_ads()
    assert [a is b for a, b in zip(again, third)] == [True, True, False, True]
    assert third[2]["ClaimRequestsRefused"] == 1


class RecordingCollector(Resource):
    """The collector's routes, recording the names each update carried (public and private)."""

    isLeaf = True

    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.updates = []

    def render(self, request):
        body = json.loads(request.content.read() or b"null")
        request.content.seek(0)
        if request.path.endswith(b"/v1/ads/Machine"):
            self.updates.append((bool(body.get("private")), sorted(ad["Name"] for ad in body["ads"])))
        return self.inner.render(request)


def test_a_change_sends_only_the_changed_slots_and_the_periodic_update_sends_all(machine, clock, tmp_path):
    """After a claim on slot2 the change update carries slot2's ads alone (public and
    private); the periodic update carries every slot's; no change, no update."""
    store = AdStore(clock, default_lifetime=900)
    collector = RecordingCollector(ApiResource(CollectorRoutes(store, CollectorMetrics(store)).handlers(),
                                               token_verifier(KEY, clock)))
    http = StubTreq(collector)
    table = SlotTable.from_plans(machine, plan_slots(Config.from_text("NUM_SLOTS = 4", env={}), machine), clock)
    service = StartdService(settings(), clock, table, RunSettings(str(tmp_path)), key=KEY, http=http)
    every = [f"slot{n}@node1" for n in range(1, 5)]
    service.advertise_self({})
    http.flush()
    assert collector.updates == [(False, every), (True, every)]
    [claim_id] = [ad["ClaimId"] for ad in table.private_ads() if ad["Name"] == "slot2@node1"]
    table.request_claim(claim_id, classad.ClassAd({"RequestCpus": 1}))
    service.changed()
    clock.advance(CHANGE_ADVERTISE_DELAY)
    http.flush()
    assert collector.updates[2:] == [(False, ["slot2@node1"]), (True, ["slot2@node1"])]
    assert {s.name: s.wire["State"] for s in store.query("Machine", private=False)}["slot2@node1"] == "Claimed"
    service.changed()
    clock.advance(CHANGE_ADVERTISE_DELAY)
    http.flush()
    assert len(collector.updates) == 4
    service.advertise_self({})
    http.flush()
    assert collector.updates[4:] == [(False, every), (True, every)]


def test_after_a_failed_update_the_next_change_sends_every_slot(machine, clock, tmp_path):
    """A change update the collector did not take may have lost ads: the next one sends them all."""
    store = AdStore(clock, default_lifetime=900)
    collector = RecordingCollector(ApiResource(CollectorRoutes(store, CollectorMetrics(store)).handlers(),
                                               token_verifier(KEY, clock)))
    table = SlotTable.from_plans(machine, plan_slots(Config.from_text("NUM_SLOTS = 2", env={}), machine), clock)
    service = StartdService(settings(), clock, table, RunSettings(str(tmp_path)), key=KEY, http=StubTreq(collector))
    service.advertise_self({})
    service._http.flush()
    service._http = StubTreq(Unavailable())
    [claim_id] = [ad["ClaimId"] for ad in table.private_ads() if ad["Name"] == "slot1@node1"]
    table.request_claim(claim_id, classad.ClassAd({"RequestCpus": 1}))
    service.changed()
    clock.advance(CHANGE_ADVERTISE_DELAY)
    service._http.flush()
    service._http = StubTreq(collector)
    service.changed()
    clock.advance(CHANGE_ADVERTISE_DELAY)
    service._http.flush()
    assert collector.updates[2:] == [(False, ["slot1@node1", "slot2@node1"]), (True, ["slot1@node1", "slot2@node1"])]


class Unavailable(Resource):
    """A collector that answers every call with 503."""

    isLeaf = True

    def render(self, request):
        request.setResponseCode(503)
        return b'{"message": "away"}'


def test_a_withdrawal_that_failed_is_sent_again_once_the_collector_answers(pool):
    """A dynamic slot that ended while the collector was cut off is withdrawn at the next update."""
    service, table = pool["service"], pool["table"]
    grant = table.request_claim(table.private_ads()[0]["ClaimId"], classad.ClassAd({"RequestCpus": 1}))
    service.advertise_self({})
    assert sorted(stored(pool)) == ["slot1@node1", "slot1_1@node1"]
    table.release(grant.claim_id)
    working, service._http = service._http, StubTreq(Unavailable())
    service.advertise_self({}).addErrback(lambda _: None)
    service._http.flush()
    service._http = working
    service.advertise_self({})
    assert sorted(stored(pool)) == ["slot1@node1"]


def test_build_startd_cleans_leftovers_and_lays_out_the_configured_slots(tmp_path, clock):
    """Start-up removes old sandboxes and reads NUM_CPUS and GPU_DISCOVERY into the slot table."""
    execute = tmp_path / "execute"
    (execute / "dir_3.0_abcd").mkdir(parents=True)
    config = Config.from_text(f"EXECUTE = {execute}\nNUM_CPUS = 2\nGPU_DISCOVERY = simulated:2xA100:40G\n"
                              "MACHINE_MAX_VACATE_TIME = 5\n", env={})
    key_file = tmp_path / "POOL"
    create_signing_key(str(key_file))
    service = build_startd(settings(signing_key_file=str(key_file)), clock, config)
    assert [p.name for p in execute.iterdir()] == ["simulated_gpu_usage"]  # the sandbox went; simulated cards report here
    [ad] = service.table.public_ads()
    assert (ad["Cpus"], ad["GPUs"], ad["SlotType"]) == (2, 2, "Partitionable")
    assert service.run_settings.vacate_time == 5


def test_a_bad_slot_layout_is_a_config_error_naming_the_knob(tmp_path, clock):
    """NUM_CPUS = 0 stops start-up with a message naming the knob, not a traceback."""
    config = Config.from_text(f"EXECUTE = {tmp_path}\nNUM_CPUS = 0\n", env={})
    with pytest.raises(ConfigError, match="NUM_CPUS"):
        build_startd(settings(), clock, config)


class RecordingSchedd(Resource):
    """Answers every request with JSON and records path, query and transfer-key header."""

    isLeaf = True

    def __init__(self):
        super().__init__()
        self.seen = []

    def render(self, request):
        self.seen.append((request.method, request.path, request.args,
                          request.getHeader(b"x-roost-transfer-key"), request.content.read()))
        request.setHeader(b"content-type", b"application/json")
        if request.path.endswith(b"/input"):
            return b"tar bytes"
        return json.dumps({"job_status": 2}).encode()


def test_schedd_link_sends_the_transfer_key_and_a_fresh_token_with_each_call():
    """Input and updates go to the job's routes with the key in a header and never in the URL."""
    schedd = RecordingSchedd()
    http = StubTreq(schedd)
    tokens = iter(["t1", "t2", "t3"])
    link = ScheddLink("<127.0.0.1:9618>", "5.1", "secret-key", lambda: next(tokens), http=http)
    spool = io.BytesIO()
    fetched = link.fetch_input(spool)
    http.flush()
    assert fetched.result == 9 and spool.getvalue() == b"tar bytes"
    updated = link.update("execute", {"RemoteHost": "slot1_1@node1"})
    http.flush()
    assert updated.result == {"job_status": 2}
    paths = [(method, path) for method, path, *_ in schedd.seen]
    assert paths == [(b"GET", b"/v1/jobs/5.1/input"), (b"POST", b"/v1/jobs/5.1/update")]
    assert all(args == {} and header == b"secret-key"
               for _, _, args, header, _ in schedd.seen)
    assert json.loads(schedd.seen[1][4]) == {"event": "execute", "attrs": {"RemoteHost": "slot1_1@node1"}}
    # (output goes as a file body producer, which StubTreq cannot carry: the process test covers it)


def test_the_starter_runs_the_transferred_executable_and_exit_reports_wall_time():
    """Cmd becomes the executable's sandbox name; exit attrs add RemoteWallClockTime."""
    job = classad.ClassAd({"Cmd": "/home/alice/run.sh", "ClusterId": 1, "ProcId": 0})
    assert starter_job_ad(job, "run.sh")["Cmd"] == "run.sh"
    assert starter_job_ad(job, None)["Cmd"] == "/home/alice/run.sh"
    outcome = JobOutcome(3, False, None, Usage(1.5, 0.25, 2048, 4096), "/x", "/x/o", "/x/e")
    attrs = exit_attributes(outcome, 12.3456)
    assert (attrs["ExitCode"], attrs["ExitBySignal"], attrs["RemoteWallClockTime"]) == (3, False, 12.346)
    assert (attrs["RemoteUserCpu"], attrs["ResidentSetSize"], attrs["MemoryUsage"]) == (1.5, 2048, 2)


def _service_noting_threads(machine, clock, tmp_path):
    """A startd whose worker threads note each call (and run it at once); (service, calls)."""
    table = SlotTable.from_plans(machine, plan_slots(Config.from_text("", env={}), machine), clock)
    threaded: list = []

    def run_blocking(function, *args):
        threaded.append(function)
        return defer.maybeDeferred(function, *args)
    return StartdService(settings(), clock, table, RunSettings(str(tmp_path)), key=KEY,
                         run_blocking=run_blocking), threaded


def test_a_runs_sandbox_setup_goes_to_a_worker_thread_only_while_launches_wait(machine, clock, tmp_path):
    """With no launch waiting for its turn the setup runs at once, in the reactor's thread;
    while launches queue it goes to the worker threads (one at a time), off their way."""
    service, threaded = _service_noting_threads(machine, clock, tmp_path)
    done: list = []
    service._setup_blocking(lambda: "here").addCallback(done.append)
    assert done == ["here"] and threaded == []
    service.routes.launches.launch(defer.Deferred)  # starts now: its turn is this one
    service.routes.launches.launch(defer.Deferred)  # waits for the next turn
    service._setup_blocking(lambda: "in a thread").addCallback(done.append)
    assert done == ["here", "in a thread"] and len(threaded) == 1


def test_a_runs_sandbox_setup_goes_to_a_worker_thread_while_the_reactor_is_busy(machine, clock, tmp_path):
    """With no launch waiting, a reactor whose load is at BUSY_REACTOR or more still hands
    the setup to the worker threads; below it the setup runs at once."""
    from startd.service import BUSY_REACTOR

    service, threaded = _service_noting_threads(machine, clock, tmp_path)
    clock.load = BUSY_REACTOR - 0.1
    service._setup_blocking(lambda: None)
    assert threaded == []
    clock.load = BUSY_REACTOR
    service._setup_blocking(lambda: None)
    assert len(threaded) == 1
