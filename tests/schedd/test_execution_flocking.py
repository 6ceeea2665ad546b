"""Tests of schedd.execution with flocking: matches from another pool's negotiator are
claimed with that pool's token and the job carries RemotePool, the home negotiator's
cycles that leave jobs idle raise the submitter's flock level, and a flocked job's
starter reaches the schedd with its pool's token and the job's transfer key."""

import json

import pytest

from daemoncore.security import AuthorizationLevel, Identity, issue_token
from daemoncore.security.pool_trust import TrustedPool
from daemoncore.wire import schedd_routes
from daemoncore.wire.in_memory import encode_request, exchange
from daemoncore.wire.server import ApiRequest
from jobmodel.states import JobStatus
from tests.schedd.test_execution import (
    KEY_HEADER,
    StandInSchedd,
    activation,
    make_execution,
    match_body,
    site,  # noqa: F401 (fixture)
    submit,
    update,
)

PEER = "negotiator@peer-3f9a"
POOL_B = TrustedPool(name="poolB", collector="198.18.1.2:9618?tls=1", ca_pem="(pem)", token="token-from-B",
                     peer_negotiator=PEER)


def negotiator(name):
    user, domain = name.split("@")
    return Identity(user, domain, frozenset({AuthorizationLevel.DAEMON}))


@pytest.fixture
def schedd(queue, clock):
    stand_in = StandInSchedd(queue, clock, "FLOCK_TO = 198.18.1.2\n")
    stand_in.trusted_pools.replace({"poolB": POOL_B})
    return stand_in


@pytest.fixture
def execution(schedd):
    return make_execution(schedd)


def requests_from(execution, who, submitter="alice@pool"):
    api = ApiRequest(schedd_routes.RESOURCE_REQUESTS, {}, {}, json.dumps({"submitter": submitter}).encode(),
                     identity=negotiator(who))
    return list(execution.resource_requests(api).items)


def matches_from(execution, who, body):
    api = ApiRequest(schedd_routes.MATCHES, {}, {}, json.dumps(body).encode(), identity=negotiator(who))
    return execution.matches(api).body


def flock_one(execution, schedd, count=1):
    jobs = submit(schedd.queue, count)
    [first] = requests_from(execution, PEER)
    assert matches_from(execution, PEER, match_body(first["request_id"])) == {"accepted": 1}
    return jobs


def test_a_match_from_another_pools_negotiator_is_claimed_with_that_pools_token(execution, schedd):
    """CLAIM and ACTIVATE of a flocked match go with the token pool B gave this pool."""
    flock_one(execution, schedd)
    assert schedd.startd.named("claim") and schedd.startd.named("activate")
    assert set(schedd.tokens) == {"token-from-B"}


def test_a_match_from_the_home_negotiator_uses_the_schedds_own_token(execution, schedd):
    """Home matches are claimed as before, with the schedd's DAEMON token."""
    [job] = submit(schedd.queue, 1)
    [first] = requests_from(execution, "negotiator@pool")
    matches_from(execution, "negotiator@pool", match_body(first["request_id"]))
    assert set(schedd.tokens) == {None}
    update(execution, job, "execute")
    assert "RemotePool" not in schedd.queue.get_job(job)


def test_a_flocked_job_has_remote_pool_while_running_and_last_remote_pool_after(execution, schedd):
    """RemotePool names pool B while the job runs there; LastRemotePool once it has ended."""
    [job] = flock_one(execution, schedd)
    update(execution, job, "execute")
    assert schedd.queue.get_job(job)["RemotePool"] == "poolB"
    assert execution.flocked_by_submitter() == {"alice": 1}
    update(execution, job, "exit", {"ExitCode": 0, "ExitBySignal": False})
    [finished] = list(schedd.queue.history.query())
    assert finished["LastRemotePool"] == "poolB" and "RemotePool" not in finished
    assert execution.flocked_by_submitter() == {}


def test_flocked_jobs_are_counted_per_submitter(execution, schedd):
    """A flocked job of alice in group_a counts for submitter group_a.alice, not for alice's own jobs."""
    submit(schedd.queue, 1)
    [job] = submit(schedd.queue, 1, AccountingGroup="group_a.alice")
    [first] = requests_from(execution, PEER, "group_a.alice@pool")
    assert matches_from(execution, PEER, match_body(first["request_id"])) == {"accepted": 1}
    update(execution, job, "execute")
    assert execution.flocked_by_submitter() == {"group_a.alice": 1}


def test_an_evicted_flocked_job_keeps_last_remote_pool_and_is_idle(execution, schedd):
    """A flocked job sent back to Idle no longer has RemotePool but remembers the pool."""
    [job] = flock_one(execution, schedd)
    update(execution, job, "execute")
    update(execution, job, "evicted", {"Reason": "gone"})
    ad = schedd.queue.get_job(job)
    assert ad["JobStatus"] == JobStatus.IDLE and ad["LastRemotePool"] == "poolB" and "RemotePool" not in ad


def test_home_cycles_that_leave_jobs_idle_raise_the_flock_level_and_advertise(execution, schedd):
    """The home negotiator asking twice while jobs stay idle sends the submitter to pool B, advertised at once."""
    submit(schedd.queue, 3)
    requests_from(execution, "negotiator@pool")
    assert schedd.flock_levels.level("alice@pool") == 0 and schedd.changes == 0
    requests_from(execution, "negotiator@pool")
    assert schedd.flock_levels.level("alice@pool") == 1 and schedd.changes == 1


def test_a_submitter_whose_jobs_all_start_does_not_flock(execution, schedd):
    """Jobs matched at home are not idle any more: the next cycle finds none and the level stays."""
    submit(schedd.queue, 1)
    [first] = requests_from(execution, "negotiator@pool")
    matches_from(execution, "negotiator@pool", match_body(first["request_id"]))
    assert requests_from(execution, "negotiator@pool") == []
    assert schedd.flock_levels.level("alice@pool") == 0


def test_a_flocked_starter_with_its_pools_token_and_the_key_reaches_the_schedd(execution, schedd, site, clock):
    """JOB_UPDATE with a token signed by pool B's key is accepted with the job's transfer key, 403 with another."""
    [job] = flock_one(execution, schedd)
    foreign = issue_token(b"pool-b-key-0123456789abcdef0123456789", "startd@exec-b", ["DAEMON"], lifetime=3600,
                          now=clock.seconds())
    path = schedd_routes.JOB_UPDATE.path(job_id=str(job))
    body = b'{"event": "execute", "attrs": {}}'
    wrong, _ = exchange(site, encode_request("POST", path, body, foreign, headers={KEY_HEADER: "guess"}), clock)
    assert wrong.status == 403
    without, _ = exchange(site, encode_request("POST", path, body, foreign), clock)
    assert without.status == 401
    key = activation(schedd)["transfer_key"]
    right, _ = exchange(site, encode_request("POST", path, body, foreign, headers={KEY_HEADER: key}), clock)
    assert right.status == 200 and schedd.queue.get_job(job)["RemotePool"] == "poolB"


def test_a_restarted_schedd_reconnects_to_a_flocked_job_with_its_pools_token(execution, schedd):
    """The running claim remembers pool B, so after a restart RECONNECT goes with B's token
    and the job still says where it runs."""
    [job] = flock_one(execution, schedd)
    update(execution, job, "execute")
    assert [c.pool for c in schedd.queue.db.running_claims()] == ["poolB"]
    execution.stopService()
    schedd.tokens.clear()
    restarted = make_execution(schedd)
    restarted.startService()
    assert schedd.startd.named("reconnect")
    assert set(schedd.tokens) == {"token-from-B"}
    assert restarted.shadows[job].remote_pool == "poolB"
    restarted.stopService()


def test_a_queue_kept_before_pools_were_remembered_gains_the_column(tmp_path):
    """A running_claims table without the pool column (an older Roost's) is extended in place."""
    import sqlite3

    from schedd.queue.db import QueueDatabase
    path = tmp_path / "queue.db"
    old = sqlite3.connect(path)
    old.execute("CREATE TABLE running_claims (cluster_id INTEGER NOT NULL, proc_id INTEGER NOT NULL, claim_id TEXT "
                "NOT NULL, slot_name TEXT NOT NULL, startd_address TEXT NOT NULL, owner TEXT NOT NULL, lease REAL "
                "NOT NULL, claimed_at REAL NOT NULL, PRIMARY KEY (cluster_id, proc_id)) WITHOUT ROWID")
    old.execute("INSERT INTO running_claims VALUES (1, 0, 'c', 's', 'a', 'alice', 60, 0)")
    old.commit()
    old.close()
    [claim] = QueueDatabase(str(path)).running_claims()
    assert (claim.claim_id, claim.pool) == ("c", None)
