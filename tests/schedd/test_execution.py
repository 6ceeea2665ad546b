"""Tests for schedd.execution on task.Clock: resource requests, matches, claiming and
activating, starter updates, claim reuse, leases and stopping jobs. The schedd is a
small stand-in (queue, clock, config, record, daemon_client) and the startd a
recording client that answers as the startd's routes say."""

import pytest
from twisted.internet.defer import fail, succeed

from classad import ClassAd, ExprTree
from daemoncore.config import Config
from daemoncore.security import issue_token
from daemoncore.security.accounts import current_account
from daemoncore.security.pool_trust import TrustedPools
from daemoncore.wire import schedd_routes, startd_routes
from daemoncore.wire.adcodec import ad_to_json
from daemoncore.wire.auth import token_verifier
from daemoncore.wire.errors import BadRequest, Conflict, NotFound, RemoteError, Unreachable
from daemoncore.wire.in_memory import clock_cooperator, encode_request, exchange
from daemoncore.wire.server import ApiRequest, ApiResource, make_site
from jobmodel.eventlog import EventType
from jobmodel.states import JobId, JobStatus
from schedd.execution import Execution, lease_seconds_for
from schedd.flocking import FlockLevels, FlockSettings
from shadow.shadow import maybe_call
from tests.schedd.conftest import cluster_ad, proc_ads
from tests.support.deferreds import resolved

STARTD = "127.0.0.1:9700"
SCHEDD = "127.0.0.1:9618"
KEY = b"k" * 32


def slot_json(memory=1024):
    ad = ClassAd({"Name": "slot1_1@node1", "Cpus": 1, "Memory": memory, "MyType": "Machine"})
    ad["Requirements"] = ExprTree("TARGET.RequestMemory <= MY.Memory")
    return ad_to_json(ad)


class RecordingStartd:
    """A startd client answering CLAIM, ACTIVATE, VACATE and RELEASE as the routes say,
    remembering every call; ``failing`` names routes that are unreachable."""

    def __init__(self):
        self.calls = []
        self.failing = set()
        self.unknown = set()  # positions in an ALIVE body the startd no longer holds
        self.reconnect_refusal = None  # the status RECONNECT fails with, if it does

    def call(self, route, body=None, **params):
        self.calls.append((route.name, body))
        if route.name in self.failing:
            return fail(Unreachable(f"no answer from {STARTD}"))
        if route is startd_routes.CLAIM:
            return succeed({"claim_id": "dyn-" + body["claim_id"], "slot_name": "slot1_1@node1",
                            "slot_ad": slot_json()})
        if route is startd_routes.RECONNECT:
            if self.reconnect_refusal is not None:
                return fail(RemoteError(self.reconnect_refusal, "not_found", "job 1.0 is not running on slot1_1"))
            return succeed({"reconnected": True, "slot_name": "slot1_1@node1"})
        if route is startd_routes.ALIVE:
            return succeed({"alive": len(body["claim_ids"]) - len(self.unknown), "unknown": sorted(self.unknown)})
        return succeed({startd_routes.ACTIVATE: {"started": True}, startd_routes.VACATE: {"vacating": True},
                        startd_routes.RELEASE: {"released": True}}[route])

    def named(self, name):
        return [body for called, body in self.calls if called == name]


class StandInSchedd:
    """What Execution reads from the schedd service."""

    def __init__(self, queue, clock, config_text=""):
        self.queue = queue
        self.clock = clock
        self.config = Config.from_text(config_text)
        self.address = SCHEDD
        self.startd = RecordingStartd()
        self.recorded = []
        self.trusted_pools = TrustedPools()
        self.flock_levels = FlockLevels(FlockSettings.from_config(self.config), clock, 300.0)
        self.tokens = []  # the token each startd client was made with (None: the schedd's own)
        self.changes = 0

    def record_all(self, transitions):
        for transition in transitions:
            self.record(transition)

    def record(self, transition):
        self.recorded.append(transition)

    def queue_changed(self):
        self.changes += 1

    def daemon_client(self, address, timeout=None, token=None):
        assert address == STARTD
        self.tokens.append(token)
        return self.startd

    def events(self, job_id=None):
        return [t.event.type for t in self.recorded
                if t.event is not None and (job_id is None or t.job_id == job_id)]


def request(route, body=b"", query=None, headers=None, **params):
    import json
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return ApiRequest(route, params, query or {}, data, identity=None, headers=headers or {})


@pytest.fixture
def schedd(queue, clock):
    return StandInSchedd(queue, clock)


def make_execution(schedd):
    return Execution(schedd, run_blocking=maybe_call)


@pytest.fixture
def execution(schedd):
    return make_execution(schedd)


def submit(queue, count=1, owner="alice", **extra):
    cluster = queue.submit_cluster(cluster_ad(owner, **extra), proc_ads(count))
    return [JobId(cluster, proc) for proc in range(count)]


def requests_of(execution, submitter="alice@pool"):
    reply = execution.resource_requests(request(schedd_routes.RESOURCE_REQUESTS, {"submitter": submitter}))
    return list(reply.items)


def match_body(request_id, job_id=None, claim="claim-1"):
    return {"matches": [{"request_id": request_id, "job_id": job_id, "slot_name": "slot1@node1",
                         "startd_address": STARTD, "claim_id": claim, "slot_ad": slot_json(4096)}]}


def start_one(execution, schedd, count=1, owner="alice", **extra):
    """Submit ``count`` jobs, ask for requests and match the first: returns job ids."""
    jobs = submit(schedd.queue, count, owner, **extra)
    [first_request] = requests_of(execution, f"{owner}@pool")
    answer = execution.matches(request(schedd_routes.MATCHES, match_body(first_request["request_id"])))
    assert answer.body == {"accepted": 1}
    return jobs


def activation(schedd, index=-1):
    return schedd.startd.named("activate")[index]


def update(execution, job_id, event, attrs=None, key=None):
    key = key if key is not None else execution.shadows[job_id]._transfer_key
    body = {"event": event, "attrs": attrs or {}}
    reply = execution.job_update(request(schedd_routes.JOB_UPDATE, body, headers={KEY_HEADER: key},
                                         job_id=str(job_id)))
    return resolved(reply).body


def test_resource_requests_group_idle_jobs_by_autocluster_with_counts(execution, schedd):
    """Jobs alike in their significant attributes share one request; its count is theirs."""
    submit(schedd.queue, 3)
    submit(schedd.queue, 2, RequestMemory=2048)
    lines = requests_of(execution)
    assert [line["count"] for line in lines] == [3, 2]
    assert lines[0]["ad"]["RequestMemory"] == 128 and lines[1]["ad"]["RequestMemory"] == 2048
    assert len({line["request_id"] for line in lines}) == 2


def test_resource_requests_leave_out_other_owners_and_jobs_not_idle(execution, schedd):
    """Only the submitter's idle jobs count; held and other users' jobs do not."""
    from schedd.queue import JobAction, JobSelection
    mine = submit(schedd.queue, 3)
    submit(schedd.queue, 4, owner="bob")
    schedd.queue.act(JobAction.Hold, JobSelection(ids=(mine[0],)))
    [line] = requests_of(execution)
    assert line["count"] == 2
    assert requests_of(execution, "carol@pool") == []


def test_a_submitter_name_is_required(execution):
    """A request without a submitter is a 400 naming what to send."""
    with pytest.raises(BadRequest, match="submitter"):
        requests_of(execution, submitter=None)


def test_a_match_claims_the_slot_then_activates_with_a_transfer_key(execution, schedd):
    """CLAIM carries the negotiator's ClaimId and the job ad; ACTIVATE uses the claim the
    startd answered with, a fresh transfer key and the job's lease."""
    [job] = start_one(execution, schedd)
    [claim_body] = schedd.startd.named("claim")
    assert claim_body["claim_id"] == "claim-1"
    assert claim_body["job_ad"]["ClusterId"] == job.cluster
    assert claim_body["schedd_address"] == f"<{SCHEDD}>"
    body = activation(schedd)
    assert body["claim_id"] == "dyn-claim-1" and body["job_id"] == str(job)
    assert len(body["transfer_key"]) >= 32
    assert body["job_ad"]["JobLeaseDuration"] == 2400
    assert body["transfer_key"] not in repr(execution.shadows[job])
    # a job being started is not offered again
    assert requests_of(execution) == []


def test_two_jobs_get_different_transfer_keys(execution, schedd):
    """Each activation has its own secret."""
    submit(schedd.queue, 2)
    [line] = requests_of(execution)
    execution.matches(request(schedd_routes.MATCHES, match_body(line["request_id"], claim="c1")))
    execution.matches(request(schedd_routes.MATCHES, match_body(line["request_id"], claim="c2")))
    keys = [body["transfer_key"] for body in schedd.startd.named("activate")]
    assert len(keys) == 2 and keys[0] != keys[1]


def test_a_match_with_no_idle_job_left_is_not_accepted(execution, schedd):
    """An unknown request, or one whose jobs are all taken, accepts nothing."""
    assert execution.matches(request(schedd_routes.MATCHES, match_body("nobody#1"))).body == {"accepted": 0}
    [job] = start_one(execution, schedd)
    again = execution.matches(request(schedd_routes.MATCHES, match_body(f"alice@pool#1", claim="c9")))
    assert again.body == {"accepted": 0}
    assert len(schedd.startd.named("claim")) == 1


def test_malformed_matches_are_refused_naming_the_field(execution):
    """A match without a ClaimId is a 400 pointing at it."""
    body = match_body("r")
    del body["matches"][0]["claim_id"]
    with pytest.raises(BadRequest, match=r"\$\.matches\[0\]\.claim_id"):
        execution.matches(request(schedd_routes.MATCHES, body))


def test_a_failed_claim_leaves_the_job_idle_for_the_next_cycle(execution, schedd):
    """When the startd cannot be reached the job is offered again."""
    schedd.startd.failing.add("claim")
    start_one(execution, schedd)
    assert execution.shadows == {}
    assert requests_of(execution)[0]["count"] == 1


def test_execute_update_makes_the_job_running_with_an_execute_event(execution, schedd):
    """execute: JobStatus 2, RemoteHost, NumJobStarts 1, event 001."""
    [job] = start_one(execution, schedd)
    assert update(execution, job, "execute") == {"job_status": 2}
    ad = schedd.queue.get_job(job)
    assert ad["JobStatus"] == JobStatus.RUNNING
    assert ad["RemoteHost"] == "slot1_1@node1"
    assert (ad["NumJobStarts"], ad["NumShadowStarts"], ad["JobRunCount"]) == (1, 1, 1)
    assert ad["JobStartDate"] == int(schedd.clock.seconds())
    assert schedd.events(job) == [EventType.EXECUTE]


def test_usage_updates_write_usage_and_log_image_size_only_when_it_grows(execution, schedd):
    """usage: the attributes are written; 006 when ImageSize grows, not when it stays."""
    [job] = start_one(execution, schedd)
    update(execution, job, "execute")
    usage = {"RemoteUserCpu": 1.5, "ResidentSetSize": 2048, "ImageSize": 4096, "MemoryUsage": 2}
    update(execution, job, "usage", usage)
    update(execution, job, "usage", dict(usage, RemoteUserCpu=2.5))
    ad = schedd.queue.get_job(job)
    assert (ad["RemoteUserCpu"], ad["ImageSize"], ad["MemoryUsage"]) == (2.5, 4096, 2)
    assert schedd.events(job) == [EventType.EXECUTE, EventType.IMAGE_SIZE]
    [size_event] = [t.event for t in schedd.recorded if t.event and t.event.type == EventType.IMAGE_SIZE]
    assert size_event.attributes["Size"] == 4096


def test_bad_updates_are_refused(execution, schedd):
    """Unknown events and non-numeric usage are 400s."""
    [job] = start_one(execution, schedd)
    with pytest.raises(BadRequest, match="event must be one of"):
        update(execution, job, "explode")
    with pytest.raises(BadRequest, match="ImageSize"):
        update(execution, job, "usage", {"ImageSize": "big"})
    with pytest.raises(BadRequest, match="ExitCode"):
        update(execution, job, "exit", {"ExitBySignal": False})


def test_exit_completes_the_job_and_the_claim_runs_the_next_job(execution, schedd):
    """exit 0: Completed with 005 and its exit recorded; the same claim is activated
    with the owner's next idle job, without another negotiation."""
    jobs = start_one(execution, schedd, count=2)
    update(execution, jobs[0], "execute")
    schedd.clock.advance(30)
    answer = update(execution, jobs[0], "exit", {"ExitCode": 0, "ExitBySignal": False, "RemoteUserCpu": 0.5})
    assert answer == {"job_status": 4, "decision": "complete"}
    [done] = [t for t in schedd.recorded if t.event and t.event.type == EventType.JOB_TERMINATED]
    assert done.changes["ExitCode"] == 0
    assert done.event.attributes["ReturnValue"] == 0
    assert done.event.attributes["RunRemoteUsage"].startswith("Usr 0 00:00:00")
    second = activation(schedd)
    assert second["job_id"] == str(jobs[1]) and second["claim_id"] == "dyn-claim-1"
    assert len(schedd.startd.named("claim")) == 1
    [finished] = list(schedd.queue.history.query())
    assert (finished["JobStatus"], finished["ExitCode"]) == (JobStatus.COMPLETED, 0)
    assert finished["RemoteWallClockTime"] == 30.0 and finished["RemoteUserCpu"] == 0.5
    [kept] = schedd.queue.db.running_claims()  # the claim kept for a restart names the next job only
    assert ((kept.cluster_id, kept.proc_id), kept.claim_id) == ((jobs[1].cluster, jobs[1].proc), "dyn-claim-1")


def test_wall_clock_time_is_added_per_run(execution, schedd):
    """RemoteWallClockTime sums the runs; a requeued job keeps its total."""
    [job] = start_one(execution, schedd, OnExitRemove=False)
    update(execution, job, "execute")
    schedd.clock.advance(40)
    update(execution, job, "exit", {"ExitCode": 1, "ExitBySignal": False})
    ad = schedd.queue.get_job(job)
    assert ad["JobStatus"] == JobStatus.IDLE
    assert ad["RemoteWallClockTime"] == 40.0 and ad["ExitCode"] == 1


def test_claim_is_not_reused_for_another_owner_and_is_released(execution, schedd):
    """Bob's idle job does not run on Alice's claim; with none of hers left it is released."""
    [job] = start_one(execution, schedd)
    submit(schedd.queue, 1, owner="bob")
    update(execution, job, "execute")
    update(execution, job, "exit", {"ExitCode": 0})
    assert len(schedd.startd.named("activate")) == 1
    assert schedd.startd.named("release") == [{"claim_id": "dyn-claim-1"}]
    assert len(execution.claims) == 0
    assert schedd.queue.db.running_claims() == []


def test_claim_worklife_zero_runs_one_job_per_claim(queue, clock):
    """CLAIM_WORKLIFE = 0: the claim is released after its first job."""
    schedd = StandInSchedd(queue, clock, "CLAIM_WORKLIFE = 0\n")
    execution = make_execution(schedd)
    jobs = start_one(execution, schedd, count=2)
    update(execution, jobs[0], "execute")
    update(execution, jobs[0], "exit", {"ExitCode": 0})
    assert len(schedd.startd.named("activate")) == 1
    assert len(schedd.startd.named("release")) == 1


def test_claim_worklife_expiry_stops_reuse(queue, clock):
    """After CLAIM_WORKLIFE seconds the claim takes no new job."""
    schedd = StandInSchedd(queue, clock, "CLAIM_WORKLIFE = 60\n")
    execution = make_execution(schedd)
    jobs = start_one(execution, schedd, count=3)
    update(execution, jobs[0], "execute")
    clock.advance(59)
    update(execution, jobs[0], "exit", {"ExitCode": 0})
    assert activation(schedd)["job_id"] == str(jobs[1])
    update(execution, jobs[1], "execute")
    clock.advance(1)
    update(execution, jobs[1], "exit", {"ExitCode": 0})
    assert len(schedd.startd.named("activate")) == 2
    assert len(schedd.startd.named("release")) == 1


def test_on_exit_hold_holds_the_job(execution, schedd):
    """on_exit_hold true: Held with its reason, event 012, claim still reused."""
    jobs = start_one(execution, schedd, count=2, OnExitHold=ExprTree("ExitCode != 0"))
    update(execution, jobs[0], "execute")
    answer = update(execution, jobs[0], "exit", {"ExitCode": 3})
    assert answer["job_status"] == JobStatus.HELD
    ad = schedd.queue.get_job(jobs[0])
    assert ad["HoldReasonCode"] == 3 and ad["ExitCode"] == 3
    assert EventType.JOB_HELD in schedd.events(jobs[0])
    assert activation(schedd)["job_id"] == str(jobs[1])


def test_exit_by_signal_is_recorded(execution, schedd):
    """A job killed by a signal has ExitBySignal and ExitSignal, no ExitCode."""
    [job] = start_one(execution, schedd, LeaveJobInQueue=True)
    update(execution, job, "execute")
    update(execution, job, "exit", {"ExitBySignal": True, "ExitSignal": 9})
    ad = schedd.queue.get_job(job)
    assert (ad["JobStatus"], ad["ExitBySignal"], ad["ExitSignal"]) == (JobStatus.COMPLETED, True, 9)
    assert "ExitCode" not in ad


def test_evicted_update_requeues_the_job_with_an_evicted_event(execution, schedd):
    """evicted: back to Idle with 004, the claim released, the job offered again."""
    [job] = start_one(execution, schedd)
    update(execution, job, "execute")
    update(execution, job, "evicted", {"Reason": "startd is shutting down"})
    ad = schedd.queue.get_job(job)
    assert ad["JobStatus"] == JobStatus.IDLE and "RemoteHost" not in ad
    assert ad["LastRemoteHost"] == "slot1_1@node1"
    assert schedd.events(job) == [EventType.EXECUTE, EventType.JOB_EVICTED]
    assert len(schedd.startd.named("release")) == 1
    assert requests_of(execution)[0]["count"] == 1


def test_lease_expiry_requeues_a_silent_job_and_updates_renew_it(queue, clock):
    """With SHADOW_LEASE_DURATION = 60: a report at 59 s renews the lease; 60 s of silence
    after that puts the job back to Idle with 004 and releases the claim."""
    schedd = StandInSchedd(queue, clock, "SHADOW_LEASE_DURATION = 60\n")
    execution = make_execution(schedd)
    [job] = start_one(execution, schedd)
    assert activation(schedd)["job_ad"]["JobLeaseDuration"] == 60
    update(execution, job, "execute")
    clock.advance(59)
    update(execution, job, "usage", {"ImageSize": 10})
    clock.advance(59)
    assert schedd.queue.get_job(job)["JobStatus"] == JobStatus.RUNNING
    clock.advance(1)
    assert schedd.queue.get_job(job)["JobStatus"] == JobStatus.IDLE
    assert schedd.events(job)[-1] == EventType.JOB_EVICTED
    assert execution.shadows == {}
    assert len(schedd.startd.named("release")) == 1
    with pytest.raises(NotFound):
        update(execution, job, "usage", {}, key="anything")


def test_job_lease_duration_of_the_job_is_kept_when_shorter():
    """The job's JobLeaseDuration wins over a longer override; unset means 2400 s."""
    assert lease_seconds_for(ClassAd({"JobLeaseDuration": 30}), 60.0) == 30
    assert lease_seconds_for(ClassAd({}), None) == 2400
    assert lease_seconds_for(ClassAd({"JobLeaseDuration": 0}), 100.0) == 100


def test_stop_job_of_a_removed_running_job_vacates_and_finishes_the_removal(execution, schedd):
    """condor_rm of a running job: the startd is told to vacate, the abort (009) is
    logged, and the job leaves the queue."""
    from schedd.queue import JobAction, JobSelection
    [job] = start_one(execution, schedd)
    update(execution, job, "execute")
    result = schedd.queue.act(JobAction.Remove, JobSelection(ids=(job,)))
    assert result.transitions[0].stop_shadow
    execution.stop_job(job, "via condor_rm")
    [vacate] = schedd.startd.named("vacate")
    assert vacate["claim_id"] == "dyn-claim-1" and vacate["reason"] == "via condor_rm"
    assert schedd.events(job)[-1] == EventType.JOB_ABORTED
    assert len(schedd.queue) == 0
    assert len(schedd.startd.named("release")) == 1


def test_a_job_held_before_it_executes_is_not_started(execution, schedd):
    """A job held while its slot was being claimed gets 409 on execute and is vacated."""
    from schedd.queue import JobAction, JobSelection
    [job] = start_one(execution, schedd)
    schedd.queue.act(JobAction.Hold, JobSelection(ids=(job,)))
    with pytest.raises(Conflict):
        update(execution, job, "execute")
    assert schedd.queue.get_job(job)["JobStatus"] == JobStatus.HELD
    assert len(schedd.startd.named("vacate")) == 1


def test_failed_activation_releases_the_claim_and_frees_the_job(execution, schedd):
    """If ACTIVATE fails the job is idle and offered again; the claim is given back."""
    schedd.startd.failing.add("activate")
    start_one(execution, schedd)
    assert execution.shadows == {}
    assert len(schedd.startd.named("release")) == 1
    assert requests_of(execution)[0]["count"] == 1


# --- over HTTP, in memory -------------------------------------------------------------

@pytest.fixture
def site(execution, clock):
    resource = ApiResource(execution.handlers(), token_verifier(KEY, clock), clock_cooperator(clock))
    return make_site(resource, clock=clock)


KEY_HEADER = schedd_routes.TRANSFER_KEY_HEADER


def daemon_token(clock):
    return issue_token(KEY, "startd@pool", ["DAEMON"], lifetime=3600, now=clock.seconds())


def test_starter_routes_need_the_jobs_transfer_key(execution, schedd, site, clock):
    """A DAEMON token alone is not enough: a wrong key is 403, an unknown job 404."""
    [job] = start_one(execution, schedd)
    path = schedd_routes.JOB_UPDATE.path(job_id=str(job))
    body = b'{"event": "execute", "attrs": {}}'
    raw = encode_request("POST", path, body, daemon_token(clock), headers={KEY_HEADER: "nope"})
    wrong, _ = exchange(site, raw, clock)
    assert wrong.status == 403 and "transfer key" in wrong.json()["message"]
    unknown_path = schedd_routes.JOB_UPDATE.path(job_id="99.0")
    missing, _ = exchange(site, encode_request("POST", unknown_path, body, daemon_token(clock)), clock)
    assert missing.status == 404
    key = activation(schedd)["transfer_key"]
    right, _ = exchange(site, encode_request("POST", path, body, daemon_token(clock), headers={KEY_HEADER: key}), clock)
    assert right.status == 200 and right.json() == {"job_status": 2}


def test_transfer_key_in_the_url_is_not_accepted(execution, schedd, site, clock):
    """The key counts only as a header: one passed as a query argument is refused (403)."""
    [job] = start_one(execution, schedd)
    key = activation(schedd)["transfer_key"]
    path = schedd_routes.JOB_UPDATE.path(job_id=str(job)) + f"?transfer_key={key}"
    raw = encode_request("POST", path, b'{"event": "execute", "attrs": {}}', daemon_token(clock))
    answer, _ = exchange(site, raw, clock)
    assert answer.status == 403


def test_resource_requests_stream_over_http(execution, schedd, site, clock):
    """The negotiator reads NDJSON lines with a DAEMON token; without one it gets 401."""
    submit(schedd.queue, 2)
    raw = encode_request("POST", schedd_routes.RESOURCE_REQUESTS.path(), b'{"submitter": "alice@pool"}',
                         daemon_token(clock))
    answer, _ = exchange(site, raw, clock)
    assert answer.status == 200
    [line] = answer.lines()
    assert line["count"] == 2
    anonymous, _ = exchange(site, encode_request("POST", schedd_routes.RESOURCE_REQUESTS.path(), b"{}"), clock)
    assert anonymous.status == 401


def test_input_streams_the_executable(execution, schedd, site, clock, tmp_path):
    """JOB_INPUT answers the job's input tar: its executable is in it."""
    import io
    import tarfile
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    # the owner is this process's own account: a root schedd reads a job's inputs as its owner
    [job] = start_one(execution, schedd, owner=current_account().name, Cmd=str(script), Iwd=str(tmp_path),
                      TransferExecutable=True)
    key = activation(schedd)["transfer_key"]
    path = schedd_routes.JOB_INPUT.path(job_id=str(job))
    answer, _ = exchange(site, encode_request("GET", path, b"", daemon_token(clock), headers={KEY_HEADER: key}), clock)
    assert answer.status == 200
    names = tarfile.open(fileobj=io.BytesIO(answer.body)).getnames()
    assert "run.sh" in names


def test_jobs_left_running_by_an_earlier_schedd_go_back_to_idle_at_start(schedd):
    """After a restart no shadow watches a Running job: it is requeued (004); a Removed
    job still on a machine finishes its removal (009) and leaves."""
    from schedd.queue import JobAction, JobSelection
    first = make_execution(schedd)
    jobs = start_one(first, schedd, count=2)
    update(first, jobs[0], "execute")
    second_claim = match_body(requests_of(first)[0]["request_id"], claim="c2")
    first.matches(request(schedd_routes.MATCHES, second_claim))
    update(first, jobs[1], "execute")
    schedd.queue.act(JobAction.Remove, JobSelection(ids=(jobs[1],)))
    for shadow in list(first.shadows.values()):
        shadow.shut_down()
    schedd.queue.db.delete_running_claim(jobs[0].cluster, jobs[0].proc)  # as before claims were kept
    schedd.recorded.clear()
    restarted = make_execution(schedd)
    restarted.startService()
    assert schedd.queue.get_job(jobs[0])["JobStatus"] == JobStatus.IDLE
    assert schedd.events() == [EventType.JOB_EVICTED, EventType.JOB_ABORTED]
    assert schedd.queue.db.running_claims() == []
    assert len(schedd.queue) == 1
    restarted.stopService()
    assert schedd.clock.getDelayedCalls() == []


def restarted_with_one_running(schedd):
    """A job Running on a claim when the schedd stopped, and the schedd started again."""
    first = make_execution(schedd)
    [job] = start_one(first, schedd)
    update(first, job, "execute")
    first.stopService()
    schedd.recorded.clear()
    restarted = make_execution(schedd)
    restarted.startService()
    return restarted, job


def test_a_restarted_schedd_takes_its_running_jobs_back_from_their_startds(schedd):
    """The claim kept in the queue is asked for again (RECONNECT, new key and address):
    the job stays Running with 023 and no second 001, and its exit completes it."""
    restarted, job = restarted_with_one_running(schedd)
    [asked] = schedd.startd.named("reconnect")
    assert asked["claim_id"] == "dyn-claim-1" and asked["job_id"] == str(job)
    assert asked["transfer_key"] == restarted.shadows[job]._transfer_key
    assert schedd.queue.get_job(job)["JobStatus"] == JobStatus.RUNNING
    assert schedd.events(job) == [EventType.JOB_RECONNECTED]
    update(restarted, job, "exit", {"ExitCode": 0})
    assert schedd.events(job) == [EventType.JOB_RECONNECTED, EventType.JOB_TERMINATED]
    assert schedd.queue.db.running_claims() == []
    restarted.stopService()


def test_a_job_its_startd_no_longer_runs_goes_back_to_idle_with_024(schedd):
    """RECONNECT answers 404 (the run ended while the schedd was away): 024, 004, Idle."""
    schedd.startd.reconnect_refusal = 404
    restarted, job = restarted_with_one_running(schedd)
    assert schedd.events(job) == [EventType.JOB_RECONNECT_FAILED, EventType.JOB_EVICTED]
    assert schedd.queue.get_job(job)["JobStatus"] == JobStatus.IDLE
    restarted.stopService()


def test_an_exit_report_alone_writes_the_execute_event_before_the_exit(execution, schedd):
    """A starter whose job ended before its execute report went tells the start inside
    the exit report: the job still gets 001 then 005, in that order, and completes."""
    [job] = start_one(execution, schedd)
    answer = update(execution, job, "exit", {"ExitCode": 0, "ExitBySignal": False, "RemoteHost": "slot1_1@node1"})
    assert answer == {"job_status": 4, "decision": "complete"}
    assert schedd.events(job) == [EventType.EXECUTE, EventType.JOB_TERMINATED]
