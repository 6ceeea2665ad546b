"""The schedd service's user routes in memory (no sockets, no execution side):
submit, query, act and edit with real tokens of each level, event logs, the
periodic policy pass and the Submitter/Scheduler ads."""

from __future__ import annotations

import json

import pytest

from bindings.eventlog import JobEventLog, JobEventType
from daemoncore.security import issue_token
from daemoncore.security.accounts import current_account
from daemoncore.wire.auth import token_verifier
from daemoncore.wire.in_memory import clock_cooperator, encode_request, exchange
from daemoncore.wire.server import ApiResource, make_site
from schedd.policy import SystemPolicy
from schedd.service import ScheddService, ScheddSettings
from tests.support.daemon_settings import daemon_settings

KEY = b"schedd-service-test-key-0123456789abcd"
TOKENS = {
    "alice": issue_token(KEY, "alice@pool", ["WRITE"], now=0),
    "bob": issue_token(KEY, "bob@pool", ["WRITE"], now=0),
    "reader": issue_token(KEY, "carol@pool", ["READ"], now=0),
    "admin": issue_token(KEY, "root@pool", ["ADMINISTRATOR"], now=0),
    # this process's own account: a root schedd writes a job's event log as its owner,
    # so the tests that read a log back submit as an owner with an account here
    "me": issue_token(KEY, f"{current_account().name}@pool", ["WRITE"], now=0),
}


@pytest.fixture
def schedd(tmp_path, reactor):
    settings = daemon_settings(tmp_path, "SCHEDD", "Scheduler", max_body=1 << 24)
    service = ScheddService(settings, reactor, ScheddSettings(spool=str(tmp_path / "spool"), periodic_interval=5),
                            key=KEY, with_execution=False)
    yield service
    service.queue.close()


@pytest.fixture
def call(schedd, reactor):
    """Call a route in memory as one of TOKENS; the parsed response."""
    site = make_site(ApiResource(schedd.handlers(), token_verifier(KEY, reactor),
                                 cooperator=clock_cooperator(reactor)), clock=reactor)

    def post(path, body, who="alice"):
        raw = encode_request("POST", path, json.dumps(body).encode(), token=TOKENS[who])
        response, _ = exchange(site, raw, reactor)
        return response

    return post


def submit(call, tmp_path, text, who="alice", **extra):
    return call("/v1/jobs", {"description": text, "iwd": str(tmp_path), **extra}, who)


SLEEP = "executable = /bin/sleep\narguments = 60\nlog = job.log\nqueue 3\n"


def test_submit_description_stores_a_cluster_owned_by_the_token_user(call, tmp_path):
    """A description becomes one cluster; Owner comes from the token, not the file."""
    response = submit(call, tmp_path, "+Owner = \"mallory\"\n" + SLEEP)
    assert response.status == 200, response.json()
    answer = response.json()
    assert (answer["cluster"], answer["first_proc"], answer["num_procs"]) == (1, 0, 3)
    ads = call("/v1/jobs/query", {"projection": ["ProcId", "Owner", "JobStatus"]}).lines()
    assert ads == [{"ProcId": p, "Owner": "alice", "JobStatus": 1} for p in range(3)]


def test_submit_with_itemdata_and_count(call, tmp_path):
    """itemdata gives one proc per item with its variables; count overrides the queue."""
    text = "executable = /bin/echo\narguments = $(word)\nqueue\n"
    submit(call, tmp_path, text, itemdata=[{"word": "a"}, {"word": "b c"}])
    submit(call, tmp_path, text, count=2)
    ads = call("/v1/jobs/query", {"projection": ["ClusterId", "Args"]}).lines()
    assert [(ad["ClusterId"], ad.get("Args")) for ad in ads] == [(1, "a"), (1, "b c"), (2, None), (2, None)]


def test_bad_submit_description_is_a_400_that_stores_nothing(call, tmp_path):
    response = submit(call, tmp_path, "executable = /bin/sleep\nrequest_cpus = (1 +\nqueue\n")
    assert response.status == 400
    assert "request_cpus" in response.json()["message"].lower()
    assert call("/v1/jobs/query", {}).lines() == []
    relative = call("/v1/jobs", {"description": SLEEP, "iwd": "here"})
    assert relative.status == 400 and "absolute" in relative.json()["message"]


def test_query_constraint_projection_and_limit(call, tmp_path):
    submit(call, tmp_path, SLEEP)
    found = call("/v1/jobs/query", {"constraint": "ProcId >= 1", "projection": ["ProcId"], "limit": 1}).lines()
    assert found == [{"ProcId": 1}]
    bad = call("/v1/jobs/query", {"constraint": "ProcId >= "})
    assert bad.status == 400 and "constraint" in bad.json()["message"]


def test_reader_may_query_but_not_submit(call, tmp_path):
    assert submit(call, tmp_path, SLEEP, who="reader").status == 403
    assert call("/v1/jobs/query", {}, "reader").status == 200


def test_hold_release_remove_with_reasons_write_events(call, tmp_path):
    """Actions change state, keep their reasons, and append events in order."""
    submit(call, tmp_path, SLEEP, who="me")
    held = call("/v1/jobs/act", {"action": "Hold", "ids": ["1.0"], "reason": "disk full"}, "me").json()
    assert held == {"changed": 1, "refused": []}
    [ad] = call("/v1/jobs/query", {"constraint": "ProcId == 0", "projection": ["JobStatus", "HoldReason"]}).lines()
    assert ad == {"JobStatus": 5, "HoldReason": "disk full"}
    call("/v1/jobs/act", {"action": "Release", "ids": ["1.0"]}, "me")
    removed = call("/v1/jobs/act", {"action": "Remove", "ids": ["1"], "reason": "done with it"}, "me").json()
    assert removed["changed"] == 3
    assert call("/v1/jobs/query", {}).lines() == []
    events = [(e.type, e.cluster, e.proc) for e in JobEventLog(str(tmp_path / "job.log")).events(stop_after=0)]
    assert events[:3] == [(JobEventType.SUBMIT, 1, p) for p in range(3)]
    assert events[3:5] == [(JobEventType.JOB_HELD, 1, 0), (JobEventType.JOB_RELEASED, 1, 0)]
    assert events[5:] == [(JobEventType.JOB_ABORTED, 1, p) for p in range(3)]
    history = call("/v1/history/query", {"projection": ["ProcId", "RemoveReason"]}).lines()
    assert {ad["RemoveReason"] for ad in history} == {"done with it"}


def test_another_users_jobs_are_untouchable(call, tmp_path):
    """Naming bob's job is a 403 that changes nothing; alice's constraint skips his jobs."""
    submit(call, tmp_path, SLEEP, who="bob")
    refused = call("/v1/jobs/act", {"action": "Remove", "ids": ["1.0"]}, "alice")
    assert refused.status == 403 and "bob" in refused.json()["message"]
    assert call("/v1/jobs/act", {"action": "Hold", "constraint": "true"}, "alice").json()["changed"] == 0
    assert call("/v1/jobs/edit", {"ids": ["1.0"], "attr": "Foo", "value": "1"}, "alice").status == 403
    assert [ad["JobStatus"] for ad in call("/v1/jobs/query", {"projection": ["JobStatus"]}).lines()] == [1, 1, 1]
    assert call("/v1/jobs/act", {"action": "Hold", "constraint": "true"}, "admin").json()["changed"] == 3


def test_edit_sets_attributes_and_refuses_protected_ones(call, tmp_path):
    submit(call, tmp_path, SLEEP)
    assert call("/v1/jobs/edit", {"ids": ["1"], "attr": "JobPrio", "value": "10"}).json() == {"changed": 3}
    refused = call("/v1/jobs/edit", {"ids": ["1.0"], "attr": "Owner", "value": '"bob"'})
    assert refused.status == 403 and "protected" in refused.json()["message"]
    bad = call("/v1/jobs/edit", {"ids": ["1.0"], "attr": "Foo", "value": "1 +"})
    assert bad.status == 400
    ads = call("/v1/jobs/query", {"projection": ["JobPrio", "Owner"]}).lines()
    assert ads == [{"JobPrio": 10, "Owner": "alice"}] * 3


def test_bad_act_requests_say_what_to_fix(call, tmp_path):
    submit(call, tmp_path, SLEEP)
    assert "Hold" in call("/v1/jobs/act", {"action": "Freeze", "ids": ["1.0"]}).json()["message"]
    assert call("/v1/jobs/act", {"action": "Hold"}).status == 400
    assert call("/v1/jobs/act", {"action": "Hold", "ids": ["x.y"]}).status == 400
    assert call("/v1/jobs/act", {"action": "Hold", "ids": ["9.0"]}).status == 404
    assert call("/v1/jobs/act", {"action": "Release", "ids": ["1.0"]}).status == 409


def test_periodic_remove_fires_on_the_interval(schedd, call, tmp_path, reactor):
    submit(call, tmp_path, "executable = /bin/sleep\nperiodic_remove = true\nlog = job.log\nqueue\n", who="me")
    schedd.startService()
    try:
        reactor.advance(5)
        assert call("/v1/jobs/query", {}).lines() == []
        [gone] = call("/v1/history/query", {"projection": ["RemoveReason"]}).lines()
        assert "periodic" in gone["RemoveReason"].lower() or "PeriodicRemove" in gone["RemoveReason"]
    finally:
        schedd.stopService()
    types = [e.type for e in JobEventLog(str(tmp_path / "job.log")).events(stop_after=0)]
    assert types == [JobEventType.SUBMIT, JobEventType.JOB_ABORTED]


def test_system_periodic_hold_applies_to_every_job(tmp_path, reactor):
    settings = ScheddSettings(spool=str(tmp_path), system_policy=SystemPolicy.from_config(hold="JobPrio > 5"))
    assert settings.system_policy.hold is not None


def test_scheduler_and_submitter_ads_count_jobs(schedd, call, tmp_path):
    submit(call, tmp_path, SLEEP)
    submit(call, tmp_path, "executable = /bin/sleep\nhold = true\nqueue\n", who="bob")
    ad = schedd.own_ad()
    assert (ad["MyType"], ad["TotalIdleJobs"], ad["TotalHeldJobs"]) == ("Scheduler", 3, 1)
    from schedd.ads import submitter_ads
    ads = submitter_ads(schedd.queue.totals_by_submitter(), "sched", "127.0.0.1:1", "pool")
    assert [(a["Name"], a["IdleJobs"], a["HeldJobs"]) for a in ads] == [("alice@pool", 3, 0), ("bob@pool", 0, 1)]
    assert ads[0]["ScheddIpAddr"] == "<127.0.0.1:1>"


def test_scheduler_ad_says_where_it_flocks_only_when_it_flocks(schedd, tmp_path, reactor):
    """TotalFlockedJobs is always there; EffectiveFlockList only with FLOCK_TO, empty until a submitter flocks."""
    ad = schedd.own_ad()
    assert ad["TotalFlockedJobs"] == 0 and "EffectiveFlockList" not in ad
    from daemoncore.config import Config
    from schedd.flocking import FlockSettings
    settings = daemon_settings(tmp_path / "flocking", "SCHEDD", "Scheduler")
    flock = FlockSettings.from_config(Config.from_text("FLOCK_TO = 198.18.1.2\nMIN_FLOCK_LEVEL = 1\n"))
    flocking = ScheddService(settings, reactor, ScheddSettings(spool=str(tmp_path / "spool2"), flock=flock),
                             key=KEY, with_execution=False)
    try:
        flocking.flock_levels.check({"alice@pool": 2})
        assert flocking.own_ad()["EffectiveFlockList"] == "198.18.1.2:9618"
    finally:
        flocking.queue.close()


def test_an_action_in_many_batches_answers_after_the_last_with_every_event(call, tmp_path, monkeypatch):
    """Removing 5 jobs 2 per transaction, one batch per reactor turn, answers once
    with all 5 removed and an abort event for each in the log."""
    from schedd import routes
    from schedd.queue import jobqueue
    monkeypatch.setattr(routes, "ACT_SLICE_SECONDS", 0.0)
    monkeypatch.setattr(jobqueue, "ACT_BATCH", 2)
    submit(call, tmp_path, SLEEP.replace("queue 3", "queue 5"), who="me")
    removed = call("/v1/jobs/act", {"action": "Remove", "constraint": "true"}, "me").json()
    assert removed == {"changed": 5, "refused": []}
    assert call("/v1/jobs/query", {}).lines() == []
    events = [(e.type, e.proc) for e in JobEventLog(str(tmp_path / "job.log")).events(stop_after=0)]
    assert events[5:] == [(JobEventType.JOB_ABORTED, p) for p in range(5)]


def test_a_refused_action_in_batches_is_a_403_that_changed_nothing(call, tmp_path, monkeypatch):
    """Naming bob's cluster among alice's jobs refuses before any batch commits."""
    from schedd.queue import jobqueue
    monkeypatch.setattr(jobqueue, "ACT_BATCH", 1)
    submit(call, tmp_path, SLEEP, who="alice")
    submit(call, tmp_path, SLEEP, who="bob")
    refused = call("/v1/jobs/act", {"action": "Remove", "ids": ["1", "2"]}, "alice")
    assert refused.status == 403
    assert len(call("/v1/jobs/query", {}).lines()) == 6


def test_the_submit_answer_is_json_with_the_stored_cluster_ad(call, schedd, tmp_path):
    """The submit answer, written around the queue's own JSON of the job, reads as the
    job's wire ad, non-ASCII values and all, and its event log target is the stored one's."""
    from daemoncore.wire.adcodec import ad_to_json
    from jobmodel.states import JobId
    from schedd.service import PER_PROC

    response = submit(call, tmp_path, "executable = /bin/echo\narguments = \u00e9t\u00e9\nlog = a.log\nqueue 2\n")
    answer = response.json()
    assert (answer["cluster"], answer["first_proc"], answer["num_procs"]) == (1, 0, 2)
    assert answer["cluster_ad"] == ad_to_json(schedd.queue.get_job(JobId(1, 0)))
    assert schedd._cluster_logs[1].path == str(tmp_path / "a.log")
    submit(call, tmp_path, "executable = /bin/echo\nlog = b$(Process).log\nqueue 2\n")
    assert schedd._cluster_logs[2] is PER_PROC
    kept = dict(schedd._cluster_logs)
    schedd._cluster_logs.clear()  # read back from the queue, they are the same
    assert {cluster: schedd._cluster_log(cluster) for cluster in kept} == kept


def test_one_description_submitted_again_by_another_owner_is_theirs(call, tmp_path):
    """A reused expansion's owned form is kept for its owner only: the same description
    submitted by alice three times, then by bob, stores each job under its submitter."""
    text = "executable = /bin/true\nqueue\n"
    for who in ("alice", "alice", "alice", "bob", "alice"):
        assert submit(call, tmp_path, text, who=who).status == 200
    ads = call("/v1/jobs/query", {"projection": ["ClusterId", "Owner", "User"]}).lines()
    assert [ad["Owner"] for ad in ads] == ["alice", "alice", "alice", "bob", "alice"]
    assert [ad["ClusterId"] for ad in ads] == [1, 2, 3, 4, 5]


def test_a_cluster_that_left_the_queue_logs_its_removals_and_is_forgotten(call, schedd, tmp_path, monkeypatch):
    """Removing a cluster in batches writes every job's 009 to its log; once the last job
    left, the schedd keeps no event log for the cluster (the one still queued keeps its)."""
    from schedd.queue import jobqueue
    monkeypatch.setattr(jobqueue, "ACT_BATCH", 2)
    submit(call, tmp_path, "executable = /bin/true\nlog = gone.log\nqueue 5\n", who="me")
    submit(call, tmp_path, "executable = /bin/true\nlog = kept.log\nqueue 1\n", who="me")
    assert call("/v1/jobs/act", {"action": "Remove", "ids": ["1"]}, "me").status == 200
    events = [(e.type, e.proc) for e in JobEventLog(str(tmp_path / "gone.log")).events(stop_after=0)]
    assert events[5:] == [(JobEventType.JOB_ABORTED, p) for p in range(5)]
    assert 1 not in schedd._cluster_logs and schedd._cluster_logs[2].path == str(tmp_path / "kept.log")


@pytest.mark.parametrize("batch", [1, 64])
def test_a_users_constraint_reaches_only_their_own_jobs_and_factories(call, schedd, tmp_path, monkeypatch, batch):
    """bob's rm and qedit by a constraint every job matches change only bob's jobs, in
    batches or not, and stop only bob's job factory; an administrator's reach them all."""
    from schedd.queue import jobqueue
    monkeypatch.setattr(jobqueue, "ACT_BATCH", batch)
    submit(call, tmp_path, SLEEP, who="alice")
    submit(call, tmp_path, SLEEP, who="bob")
    submit(call, tmp_path, SLEEP.replace("queue 3", "max_materialize = 1\nqueue 3"), who="alice")
    assert call("/v1/jobs/edit", {"constraint": "true", "attr": "JobPrio", "value": "5"}, "bob").json() == {
        "changed": 3}
    removed = call("/v1/jobs/act", {"action": "Remove", "constraint": "JobPrio >= 0"}, "bob").json()
    assert removed == {"changed": 3, "refused": []}
    left = call("/v1/jobs/query", {"projection": ["Owner", "JobPrio"]}).lines()
    assert sorted((ad["Owner"], ad["JobPrio"]) for ad in left) == [("alice", 0)] * 4
    from schedd.queue import factory
    assert schedd.queue.cluster_ad(3).get(factory.PAUSED, 0) == 0  # alice's factory still running
    assert call("/v1/jobs/act", {"action": "Remove", "constraint": "true"}, "admin").json()["changed"] == 4


def test_a_change_while_stopping_schedules_nothing_on_the_queue_about_to_close(schedd, call, tmp_path, reactor,
                                                                               monkeypatch):
    """Until its listener has closed the schedd still runs; a queue change then (a shadow
    ending as the startd shuts down) must not schedule a pass that would find the queue
    closed (seen as a critical 'materialising factory jobs failed' at the end of a pool)."""
    from twisted.internet.defer import Deferred
    schedd.startService()
    listener_closed = Deferred()
    monkeypatch.setattr(schedd.port, "stopListening", lambda: listener_closed)
    stopped = schedd.stopService()
    assert schedd.running
    before = len(reactor.getDelayedCalls())
    schedd.queue_changed()
    assert len(reactor.getDelayedCalls()) == before
    listener_closed.callback(None)
    assert stopped.called and not schedd.running


def test_a_submit_in_many_chunks_answers_after_the_last_and_is_hidden_until_then(call, schedd, tmp_path,
                                                                                  reactor, monkeypatch):
    """A cluster stored 2 procs per transaction, one per reactor turn, is answered once
    whole; a query between two chunks does not see it."""
    from schedd import routes
    from schedd.queue import incoming
    monkeypatch.setattr(routes, "ACT_SLICE_SECONDS", 0.0)
    monkeypatch.setattr(incoming, "SUBMIT_CHUNK", 2)
    seen = []
    reactor.callLater(0, lambda: seen.append(len(list(schedd.queue.query()))))
    answer = submit(call, tmp_path, SLEEP.replace("queue 3", "queue 5")).json()
    assert (answer["cluster"], answer["num_procs"]) == (1, 5)
    assert seen == [0]
    assert len(call("/v1/jobs/query", {}).lines()) == 5


def test_a_large_description_takes_its_id_at_once_and_is_expanded_off_the_reactor(call, schedd, tmp_path,
                                                                                   monkeypatch):
    """A description making more than EXPAND_INLINE_PROCS procs takes its ClusterId first
    (hidden while its expansion runs in a worker, so a submit meanwhile gets the next
    id), is stored whole and answered; a wrong one answers 400, storing nothing, and its
    id is not reused."""
    from twisted.internet.defer import maybeDeferred

    from schedd import routes
    from tests.schedd.conftest import cluster_ad, proc_ads
    monkeypatch.setattr(routes, "EXPAND_INLINE_PROCS", 3)
    during = []

    def in_a_worker(work):
        if not during:
            during.append((schedd.queue.db.cluster_ids(), len(schedd.queue),
                           schedd.queue.submit_cluster(cluster_ad("alice"), proc_ads(1))))
        return maybeDeferred(work)
    monkeypatch.setattr(routes, "in_worker_thread", in_a_worker)
    answer = submit(call, tmp_path, SLEEP.replace("queue 3", "queue 5")).json()
    assert (answer["cluster"], answer["num_procs"]) == (1, 5)
    assert during == [([], 0, 2)]
    assert [(ad["ClusterId"], ad["ProcId"]) for ad in schedd.queue.query()] == [(1, p) for p in range(5)] + [(2, 0)]
    assert submit(call, tmp_path, SLEEP.replace("queue 3", "queue 1")).json()["cluster"] == 3
    refused = submit(call, tmp_path, "executable = /bin/true\nrequest_memory = 12 parsecs\nqueue 5\n")
    assert refused.status == 400 and "line 2" in refused.json()["message"]
    assert len(schedd.queue) == 7 and schedd.queue.db.cluster_ids() == [1, 2, 3]
    assert submit(call, tmp_path, SLEEP.replace("queue 3", "queue 1")).json()["cluster"] == 5


def test_a_long_description_is_expanded_off_the_reactor_without_being_read_first(call, schedd, tmp_path,
                                                                                  monkeypatch):
    """A description longer than EXPAND_INLINE_CHARS (many inline items) goes to the worker
    at once, however few procs it makes, and is stored whole."""
    from twisted.internet.defer import maybeDeferred

    from schedd import routes
    monkeypatch.setattr(routes, "EXPAND_INLINE_CHARS", 100)
    monkeypatch.setattr(routes, "description_procs", lambda *args, **kwargs: pytest.fail("read on the reactor"))
    workers = []
    monkeypatch.setattr(routes, "in_worker_thread", lambda work: workers.append(work) or maybeDeferred(work))
    items = "\n".join(f"input{index}.dat" for index in range(12))
    answer = submit(call, tmp_path, f"executable = /bin/true\narguments = $(Item)\nqueue Item from (\n{items}\n)\n").json()
    assert (answer["cluster"], answer["num_procs"], len(workers)) == (1, 12, 1)
    assert [ad["Args"] for ad in schedd.queue.query(projection=["Args"])] == [f"input{n}.dat" for n in range(12)]
