"""A job with an accounting group is its own submitter, as in HTCondor: AccountingGroup
"group_a.alice" is negotiated as ``group_a.alice@UID_DOMAIN``, separately from alice's
plain jobs (``alice@UID_DOMAIN``): the queue's submitter column and its migration, the
Submitter ads, the resource requests a negotiator gets for each name, and claim reuse."""

from __future__ import annotations

import sqlite3

import pytest

from classad import ClassAd
from daemoncore.wire import schedd_routes
from jobmodel.states import JobStatus
from schedd.ads import submitter_ads
from schedd.claims import claim_terms, job_fits_claim
from schedd.queue import JobQueue, JobSelection
from schedd.queue.jobqueue import QUEUE_FILE
from schedd.queue.stored import encode_ad
from tests.schedd.test_claims import claim, job
from tests.schedd.test_execution import (  # noqa: F401 (fixtures)
    execution,
    match_body,
    request,
    requests_of,
    schedd,
    submit,
    update,
)

GROUP_A = {"AccountingGroup": "group_a.alice", "AcctGroup": "group_a", "AcctGroupUser": "alice"}


def test_group_jobs_and_plain_jobs_are_two_submitters_in_the_queue(queue):
    """totals_by_submitter keys alice's group_a jobs by "group_a.alice" and her plain
    jobs by "alice"; a query by submitter reads only that submitter's jobs."""
    plain = submit(queue, 2)
    grouped = submit(queue, 3, **GROUP_A)
    totals = queue.totals_by_submitter()
    assert totals == {"alice": {"alice": {JobStatus.IDLE: 2}}, "group_a.alice": {"alice": {JobStatus.IDLE: 3}}}
    ids = [(ad["ClusterId"], ad["ProcId"]) for ad in queue.query(submitter="group_a.alice", status=JobStatus.IDLE)]
    assert ids == [(job_id.cluster, job_id.proc) for job_id in grouped]
    assert len(list(queue.query(submitter="alice"))) == len(plain)


def test_an_edited_accounting_group_moves_the_job_to_that_submitter(queue):
    """condor_qedit of AccountingGroup changes which submitter the job is negotiated under."""
    [job_id] = submit(queue, 1)
    queue.edit(JobSelection(ids=(job_id,)), "AccountingGroup", '"group_b.alice"')
    assert set(queue.totals_by_submitter()) == {"group_b.alice"}


@pytest.mark.parametrize("group", ['"x@elsewhere"', '"two words"', "42", '""'])
def test_an_accounting_group_unfit_for_a_name_leaves_the_job_under_its_owner(queue, group):
    """An AccountingGroup with '@', a space, not a string or empty cannot name a
    submitter (``<name>@<domain>`` would not read back): the job stays its owner's."""
    [job_id] = submit(queue, 1)
    queue.edit(JobSelection(ids=(job_id,)), "AccountingGroup", group)
    assert set(queue.totals_by_submitter()) == {"alice"}


OLD_JOBS_TABLE = """
CREATE TABLE queue_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE clusters (cluster_id INTEGER PRIMARY KEY, attrs TEXT NOT NULL);
CREATE TABLE jobs (
    cluster_id INTEGER NOT NULL, proc_id INTEGER NOT NULL, status INTEGER NOT NULL,
    owner TEXT, attrs TEXT NOT NULL, PRIMARY KEY (cluster_id, proc_id)) WITHOUT ROWID;
CREATE INDEX jobs_by_owner ON jobs (owner, status);
"""


def test_a_queue_kept_by_an_older_roost_gets_its_submitters_in_place(tmp_path, clock):
    """A queue file without the submitter column is migrated when the schedd opens it:
    every proc gets its submitter (a proc's own AccountingGroup overriding its
    cluster's), the index is made, and the jobs are kept."""
    with sqlite3.connect(tmp_path / QUEUE_FILE) as old:
        old.executescript(OLD_JOBS_TABLE)
        old.execute("INSERT INTO queue_meta VALUES ('next_cluster_id', 3)")
        for cluster_id, common in ((1, {"Owner": "alice", "JobStatus": 1}),
                                   (2, {"Owner": "alice", "JobStatus": 1, **GROUP_A})):
            old.execute("INSERT INTO clusters VALUES (?, ?)", (cluster_id, encode_ad(ClassAd(common))))
        rows = [(1, 0, 1, "alice", encode_ad(ClassAd({"ProcId": 0}))),
                (1, 1, 1, "alice", encode_ad(ClassAd({"ProcId": 1, "AccountingGroup": "group_b.alice"}))),
                (2, 0, 2, "alice", encode_ad(ClassAd({"ProcId": 0, "JobStatus": 2})))]
        old.executemany("INSERT INTO jobs VALUES (?, ?, ?, ?, ?)", rows)
    queue = JobQueue(tmp_path, clock)
    try:
        assert queue.totals_by_submitter() == {"alice": {"alice": {JobStatus.IDLE: 1}},
                                               "group_b.alice": {"alice": {JobStatus.IDLE: 1}},
                                               "group_a.alice": {"alice": {JobStatus.RUNNING: 1}}}
        indexes = {row[1] for row in queue.db.db.execute("PRAGMA index_list(jobs)")}
        assert "jobs_by_submitter" in indexes
        assert queue.submit_cluster(ClassAd({"Owner": "alice", **GROUP_A}), [ClassAd()]) == 3
    finally:
        queue.close()
    reopened = JobQueue(tmp_path, clock)  # a second open finds nothing to migrate
    assert reopened.totals_by_submitter()["group_a.alice"] == {"alice": {JobStatus.IDLE: 1, JobStatus.RUNNING: 1}}
    reopened.close()


def test_submitter_ads_name_the_group_user_apart_from_the_plain_user(queue):
    """alice@pool (no AccountingGroup) and group_a.alice@pool (AccountingGroup
    "group_a.alice"), each with its own counts and alice as Owner."""
    submit(queue, 2)
    submit(queue, 3, **GROUP_A)
    ads = {ad["Name"]: ad for ad in submitter_ads(queue.totals_by_submitter(), "sched", "127.0.0.1:1", "pool")}
    assert set(ads) == {"alice@pool", "group_a.alice@pool"}
    assert "AccountingGroup" not in ads["alice@pool"] and ads["alice@pool"]["IdleJobs"] == 2
    grouped = ads["group_a.alice@pool"]
    assert (grouped["AccountingGroup"], grouped["Owner"], grouped["IdleJobs"]) == ("group_a.alice", "alice", 3)


def test_one_group_user_named_by_two_owners_is_one_submitter(queue):
    """bob's jobs with accounting_group_user = alice join alice's group_a submitter
    (the name is the AccountingGroup); the ad then names no single Owner."""
    submit(queue, 1, **GROUP_A)
    submit(queue, 2, owner="bob", **GROUP_A)
    [ad] = submitter_ads(queue.totals_by_submitter(), "sched", "127.0.0.1:1", "pool")
    assert (ad["Name"], ad["IdleJobs"], "Owner" in ad) == ("group_a.alice@pool", 3, False)


def test_resource_requests_of_a_group_submitter_hold_only_its_jobs(execution, schedd):
    """The negotiator asking for group_a.alice@pool gets her group_a jobs; asking for
    alice@pool gets her plain jobs only."""
    submit(schedd.queue, 2)
    submit(schedd.queue, 3, **GROUP_A)
    assert [line["count"] for line in requests_of(execution, "group_a.alice@pool")] == [3]
    assert [line["count"] for line in requests_of(execution, "alice@pool")] == [2]
    assert requests_of(execution, "group_b.alice@pool") == []


def test_a_claim_runs_another_job_only_of_its_group_user_and_limits():
    """Claim reuse needs the same owner, AccountingGroup and ConcurrencyLimits as the
    job claimed for (HTCondor's schedd never moves a claim across them)."""
    def grouped(**attrs):
        ad = job()
        ad.update(attrs)
        return ad
    first = grouped(AccountingGroup="group_a.alice", ConcurrencyLimits="license")
    on = claim(**{k: v for k, v in claim_terms(first).items() if k != "owner"})
    assert job_fits_claim(on, grouped(AccountingGroup="group_a.alice", ConcurrencyLimits="LICENSE"))
    assert not job_fits_claim(on, grouped(ConcurrencyLimits="license"))  # her plain job
    assert not job_fits_claim(on, grouped(AccountingGroup="group_b.alice", ConcurrencyLimits="license"))
    assert not job_fits_claim(on, grouped(AccountingGroup="group_a.alice"))  # no limit
    assert not job_fits_claim(on, grouped(AccountingGroup="group_a.alice", ConcurrencyLimits="license:2"))
    assert not job_fits_claim(claim(), first)  # a plain claim takes no group job


def test_the_claim_of_a_group_job_is_not_reused_for_her_plain_job(execution, schedd):
    """After alice's group_a job exits, her idle plain job does not run on its claim:
    the claim is released for the negotiator to match the plain submitter."""
    [grouped] = submit(schedd.queue, 1, **GROUP_A)
    submit(schedd.queue, 1)
    [line] = requests_of(execution, "group_a.alice@pool")
    assert execution.matches(request(schedd_routes.MATCHES, match_body(line["request_id"]))).body == {"accepted": 1}
    update(execution, grouped, "execute")
    update(execution, grouped, "exit", {"ExitCode": 0})
    assert len(schedd.startd.named("activate")) == 1
    assert schedd.startd.named("release") == [{"claim_id": "dyn-claim-1"}]
