"""The SQLite job queue: submits, queries, edits, actions, durability."""

import os
import sqlite3

import pytest

from classad import ClassAd, ConstraintError, ExprTree
from jobmodel.errors import (
    BadConstraintError,
    BadJobAdError,
    InvalidTransitionError,
    JobNotFoundError,
    NotOwnerError,
    ProtectedAttributeError,
)
from jobmodel.eventlog import EventType
from jobmodel.states import ExitRecord, JobId, JobStatus, removal_done, start
from schedd.policy import SystemPolicy
from schedd.queue import QUEUE_FILE, JobAction, JobQueue, JobSelection
from tests.schedd.conftest import START, cluster_ad, proc_ads


def ids(ads):
    return [(ad["ClusterId"], ad["ProcId"]) for ad in ads]


def test_submit_allocates_cluster_ids_and_numbers_procs(queue):
    """Clusters get ids 1, 2, ... and procs 0..n-1; every job starts Idle with QDate."""
    assert queue.submit_cluster(cluster_ad(), proc_ads(3)) == 1
    assert queue.submit_cluster(cluster_ad(), proc_ads(1)) == 2
    ads = list(queue.query())
    assert ids(ads) == [(1, 0), (1, 1), (1, 2), (2, 0)]
    assert all(ad["JobStatus"] == 1 and ad["QDate"] == START for ad in ads)


def test_query_sees_whole_job_ads(queue):
    """A job ad merges the cluster's common attributes with the proc's own."""
    queue.submit_cluster(cluster_ad(), proc_ads(2))
    ad = queue.get_job(JobId(1, 1))
    assert ad["Owner"] == "alice" and ad["Args"] == "1" and ad["ProcId"] == 1
    assert str(ad.lookup("Requirements")) == "TARGET.Cpus >= RequestCpus"


def test_common_attributes_are_stored_once(tmp_path, queue):
    """The cluster's attributes live in one row; proc rows hold only differences."""
    queue.submit_cluster(cluster_ad(), proc_ads(50))
    con = sqlite3.connect(tmp_path / QUEUE_FILE)
    (cluster_text,) = con.execute("SELECT attrs FROM clusters").fetchone()
    proc_texts = [r[0] for r in con.execute("SELECT attrs FROM jobs")]
    assert "/bin/sleep" in cluster_text
    assert all("/bin/sleep" not in t and "Args" in t for t in proc_texts)


def test_a_proc_may_override_cluster_attributes(queue):
    """A per-proc attribute wins over the cluster's."""
    queue.submit_cluster(cluster_ad(), [ClassAd({"RequestCpus": 4}), ClassAd()])
    assert [ad["RequestCpus"] for ad in queue.query()] == [4, 1]


def test_submitted_on_hold(queue):
    """A cluster submitted Held (hold = true) stays Held."""
    queue.submit_cluster(cluster_ad(JobStatus=5, HoldReasonCode=15, HoldReason="submitted on hold"), proc_ads(1))
    assert queue.get_job(JobId(1, 0))["JobStatus"] == 5


def test_query_constraint_projection_and_limit(queue):
    """Queries filter by constraint, cut to the projection and stop at the limit."""
    queue.submit_cluster(cluster_ad(), proc_ads(5))
    queue.submit_cluster(cluster_ad("bob"), proc_ads(5))
    found = list(queue.query('Owner == "bob" && ProcId >= 2', ["ProcId", "Owner"], limit=2))
    assert [dict(ad) for ad in found] == [{"ProcId": 2, "Owner": "bob"}, {"ProcId": 3, "Owner": "bob"}]
    assert len(list(queue.query(projection=["ClusterId"]))) == 10
    assert [dict(a) for a in queue.query(projection=["Args"], limit=1)] == [{"Args": "0"}]


def test_query_streams_as_a_generator(queue):
    """A query is a generator: the first ad arrives before the rest are read."""
    queue.submit_cluster(cluster_ad(), proc_ads(5000))
    stream = queue.query("true", ["ProcId"])
    assert next(stream)["ProcId"] == 0
    assert sum(1 for _ in stream) == 4999


def test_query_by_status_reads_only_jobs_in_that_status_a_few_rows_first(queue):
    """``status`` narrows the rows read through the index, in id order across pages; the
    first idle job after thousands of running ones comes without reading them."""
    queue.submit_cluster(cluster_ad(), proc_ads(3000))
    queue.submit_cluster(cluster_ad("bob"), proc_ads(2))
    for proc in range(2990):
        queue.transition(JobId(1, proc), start, "<10.0.0.2:9618>", slot_name="slot1@ep")
    idle = queue.query(owner="alice", status=JobStatus.IDLE)
    assert next(idle)["ProcId"] == 2990
    assert [ad["ProcId"] for ad in idle] == list(range(2991, 3000))
    assert len(list(queue.query(owner="alice", status=JobStatus.RUNNING))) == 2990
    assert ids(queue.query(status=JobStatus.IDLE, limit=11))[-1] == (2, 0)
    rows = queue.db.find_jobs(owner="alice", status=int(JobStatus.RUNNING), first_page=16, page_size=100)
    assert [row.proc_id for row in rows] == list(range(2990))


def test_status_of_follows_transitions_and_refuses_unknown_jobs(queue):
    """A job's status comes from its row and follows each transition."""
    queue.submit_cluster(cluster_ad(), proc_ads(1))
    assert queue.status_of(JobId(1, 0)) is JobStatus.IDLE
    queue.transition(JobId(1, 0), start, "<10.0.0.2:9618>", slot_name="slot1@ep")
    assert queue.status_of(JobId(1, 0)) is JobStatus.RUNNING
    with pytest.raises(JobNotFoundError):
        queue.status_of(JobId(9, 0))


def test_bad_constraint_is_reported_before_streaming(queue):
    """A constraint that does not parse raises at once with the parser's message."""
    with pytest.raises(ConstraintError, match="does not parse"):
        queue.query("Owner ==")


def test_bad_submissions_are_refused(queue):
    """A cluster with no procs or a non-ClassAd proc is refused and nothing is stored."""
    with pytest.raises(BadJobAdError, match="at least one proc"):
        queue.submit_cluster(cluster_ad(), [])
    with pytest.raises(BadJobAdError, match="proc ad 1 must be a ClassAd"):
        queue.submit_cluster(cluster_ad(), [ClassAd(), {"x": 1}])
    with pytest.raises(BadJobAdError, match="job 1.1 has JobStatus 12"):
        queue.submit_cluster(cluster_ad(), [ClassAd(), ClassAd({"JobStatus": 12})])
    assert len(queue) == 0
    assert queue.submit_cluster(cluster_ad(), proc_ads(1)) == 1  # the failed id was not used


def test_queue_file_is_wal_and_survives_reopen(tmp_path, clock):
    """The queue is one WAL-mode file; jobs and the next cluster id survive a reopen."""
    q = JobQueue(tmp_path, clock)
    q.submit_cluster(cluster_ad(), proc_ads(2))
    assert os.path.exists(tmp_path / (QUEUE_FILE + "-wal"))
    (mode,) = q.db.db.execute("PRAGMA journal_mode").fetchone()
    assert mode == "wal"
    q.act(JobAction.Remove, JobSelection.from_spec(["1"]))
    q.close()
    again = JobQueue(tmp_path, clock)
    assert again.submit_cluster(cluster_ad(), proc_ads(1)) == 2
    assert len(again.history) == 2
    again.close()


def test_edit_sets_expression_and_values(queue):
    """Edits set an attribute from expression text or a Python value, for chosen jobs."""
    queue.submit_cluster(cluster_ad(), proc_ads(3))
    assert queue.edit(JobSelection.from_spec("1.1"), "RequestMemory", "2 * 1024") == 1
    assert queue.edit(JobSelection.from_spec("ProcId != 1"), "Tag", "\"x\"") == 2
    assert queue.get_job(JobId(1, 1)).eval("RequestMemory") == 2048
    assert [ad.get("Tag") for ad in queue.query()] == ["x", None, "x"]


def test_edit_refuses_protected_attributes(queue):
    """ClusterId, ProcId, Owner and JobStatus cannot be edited; nothing changes."""
    queue.submit_cluster(cluster_ad(), proc_ads(1))
    for name in ("ClusterId", "procid", "Owner", "JobStatus"):
        with pytest.raises(ProtectedAttributeError, match="protected"):
            queue.edit(JobSelection.from_spec("1.0"), name, "5")
    assert queue.get_job(JobId(1, 0))["JobStatus"] == 1


def test_edit_with_bad_value_names_the_attribute(queue):
    """A value that does not parse gets an error naming the attribute."""
    queue.submit_cluster(cluster_ad(), proc_ads(1))
    with pytest.raises(BadConstraintError, match="new value of Foo"):
        queue.edit(JobSelection.from_spec("1.0"), "Foo", "1 +")


def test_other_users_jobs_are_untouchable(queue):
    """A user may not act on or edit another user's jobs, and nothing changes."""
    queue.submit_cluster(cluster_ad("alice"), proc_ads(1))
    queue.submit_cluster(cluster_ad("bob"), proc_ads(1))
    with pytest.raises(NotOwnerError, match="bob may not hold job 1.0, owned by 'alice'; nothing was changed"):
        queue.act(JobAction.Hold, JobSelection.from_spec("true"), actor="bob")
    with pytest.raises(NotOwnerError):
        queue.edit(JobSelection.from_spec(["1.0"]), "Foo", "1", actor="bob")
    assert [ad["JobStatus"] for ad in queue.query()] == [1, 1]
    assert len(queue.act(JobAction.Hold, JobSelection.from_spec(["2"]), actor="bob").transitions) == 1


def test_hold_release_with_reasons(queue, clock):
    """Hold and release record their reasons and return the events to log."""
    queue.submit_cluster(cluster_ad(), proc_ads(2))
    held = queue.act(JobAction.Hold, JobSelection.from_spec(["1.0"]), "not now", actor="alice")
    assert held.transitions[0].event.type == EventType.JOB_HELD
    clock.advance(30)
    queue.act(JobAction.Release, JobSelection.from_spec(["1.0"]), actor="alice")
    ad = queue.get_job(JobId(1, 0))
    assert ad["LastHoldReason"] == "not now" and ad["ReleaseReason"] == "via condor_release (by user alice)"
    assert ad["EnteredCurrentStatus"] == START + 30


def test_release_of_job_that_is_not_held_is_an_error(queue):
    """Releasing a named job that is not held fails and changes nothing."""
    queue.submit_cluster(cluster_ad(), proc_ads(2))
    queue.act(JobAction.Hold, JobSelection.from_spec(["1.0"]))
    with pytest.raises(InvalidTransitionError, match="1.1: it is Idle, not Held"):
        queue.act(JobAction.Release, JobSelection.from_spec(["1.0", "1.1"]))
    assert queue.get_job(JobId(1, 0))["JobStatus"] == 5


def test_constraint_actions_skip_jobs_in_the_wrong_state(queue):
    """By constraint, jobs the action does not apply to are skipped and listed."""
    queue.submit_cluster(cluster_ad(), proc_ads(3))
    queue.act(JobAction.Hold, JobSelection.from_spec(["1.1"]))
    result = queue.act(JobAction.Release, JobSelection.from_spec("true"))
    assert [str(t.job_id) for t in result.transitions] == ["1.1"]
    assert [str(j) for j, _ in result.skipped] == ["1.0", "1.2"]


def test_unknown_job_is_not_found(queue):
    """Acting on a job that is not in the queue names it."""
    with pytest.raises(JobNotFoundError, match="job 9.0 is not in the queue"):
        queue.act(JobAction.Hold, JobSelection.from_spec(["9.0"]))


def test_remove_of_idle_and_held_jobs_moves_them_to_history(queue):
    """Removing idle and held jobs takes them out of the queue into history at once."""
    queue.submit_cluster(cluster_ad(), proc_ads(2))
    queue.act(JobAction.Hold, JobSelection.from_spec(["1.1"]))
    result = queue.act(JobAction.Remove, JobSelection.from_spec(["1"]), "done with it")
    assert [str(j) for j in result.left_queue] == ["1.0", "1.1"]
    assert len(queue) == 0 and queue.db.cluster_ids() == []
    gone = list(queue.history.query())
    assert [ad["RemoveReason"] for ad in gone] == ["done with it"] * 2
    assert gone[0]["Owner"] == "alice" and gone[0]["JobStatus"] == 3


def test_remove_of_running_job_waits_for_shadow(queue):
    """A running job stays Removed until its shadow's exit is recorded."""
    queue.submit_cluster(cluster_ad(), proc_ads(1))
    queue.transition(JobId(1, 0), start, "<10.0.0.2:9618>", slot_name="slot1@ep")
    result = queue.act(JobAction.Remove, JobSelection.from_spec(["1.0"]))
    assert result.transitions[0].stop_shadow and not result.left_queue
    assert queue.get_job(JobId(1, 0))["JobStatus"] == 3
    queue.evaluate_periodic()
    assert len(queue) == 1
    queue.transition(JobId(1, 0), removal_done)
    assert len(queue) == 0 and len(queue.history) == 1


def test_leave_in_queue_keeps_completed_job_until_false(queue):
    """LeaveJobInQueue keeps a completed job until the expression turns false."""
    queue.submit_cluster(cluster_ad(LeaveJobInQueue=ExprTree("KeepMe =!= false")), proc_ads(1))
    queue.transition(JobId(1, 0), start, "<h:1>")
    decision, _ = queue.job_exited(JobId(1, 0), ExitRecord(exit_code=0))
    assert queue.get_job(JobId(1, 0))["JobStatus"] == 4
    queue.evaluate_periodic()
    assert len(queue) == 1
    queue.edit(JobSelection.from_spec(["1.0"]), "KeepMe", "false")
    result = queue.evaluate_periodic()
    assert [str(j) for j in result.left_queue] == ["1.0"] and len(queue) == 0
    assert next(queue.history.query())["ExitCode"] == 0


def test_completed_job_leaves_to_history_with_exit(queue):
    """A job that exits and completes goes to history with its exit code."""
    queue.submit_cluster(cluster_ad(), proc_ads(1))
    queue.transition(JobId(1, 0), start, "<h:1>")
    decision, t = queue.job_exited(JobId(1, 0), ExitRecord(exit_code=2))
    assert t.event.type == EventType.JOB_TERMINATED and len(queue) == 0
    ad = next(queue.history.query())
    assert ad["JobStatus"] == 4 and ad["ExitCode"] == 2 and ad["CompletionDate"] == START


def test_on_exit_hold_holds_with_exit_recorded(queue):
    """on_exit_hold holds the exited job with code 3, keeping its exit code."""
    queue.submit_cluster(cluster_ad(OnExitHold=ExprTree("ExitCode != 0")), proc_ads(1))
    queue.transition(JobId(1, 0), start, "<h:1>")
    queue.job_exited(JobId(1, 0), ExitRecord(exit_code=1))
    ad = queue.get_job(JobId(1, 0))
    assert ad["JobStatus"] == 5 and ad["HoldReasonCode"] == 3 and ad["ExitCode"] == 1


def test_periodic_remove_fires(queue, clock):
    """periodic_remove removes an idle job once its expression turns true."""
    queue.submit_cluster(cluster_ad(PeriodicRemove=ExprTree("Deadline =?= true")), proc_ads(2))
    assert queue.evaluate_periodic().transitions == ()
    queue.edit(JobSelection.from_spec(["1"]), "Deadline", "true")
    result = queue.evaluate_periodic()
    assert len(result.left_queue) == 2 and len(queue) == 0


def test_system_periodic_hold_fires(queue):
    """SYSTEM_PERIODIC_HOLD holds matching jobs with code 26."""
    queue.submit_cluster(cluster_ad(), proc_ads(2))
    queue.evaluate_periodic(SystemPolicy.from_config(hold="ProcId == 1"))
    assert [(a["JobStatus"], a.get("HoldReasonCode")) for a in queue.query()] == [(1, None), (5, 26)]


def test_totals_by_owner_count_statuses(queue):
    """Per-owner totals count idle, held and running jobs for Submitter ads."""
    queue.submit_cluster(cluster_ad("alice"), proc_ads(3))
    queue.submit_cluster(cluster_ad("bob"), proc_ads(1))
    queue.act(JobAction.Hold, JobSelection.from_spec(["1.2"]))
    totals = queue.totals_by_owner()
    assert totals["alice"] == {JobStatus.IDLE: 2, JobStatus.HELD: 1} and totals["bob"] == {JobStatus.IDLE: 1}


def test_in_memory_queue_works_without_a_file(clock):
    """JobQueue(None, clock) keeps everything in memory, for tests."""
    q = JobQueue(None, clock)
    q.submit_cluster(cluster_ad(), proc_ads(1))
    assert len(q) == 1


def test_refusal_part_way_through_rolls_everything_back(queue):
    """When a refused job comes after allowed ones, the allowed ones are not changed either."""
    queue.submit_cluster(cluster_ad("bob"), proc_ads(2))
    queue.submit_cluster(cluster_ad("alice"), proc_ads(1))
    with pytest.raises(NotOwnerError, match="job 2.0"):
        queue.act(JobAction.Remove, JobSelection.from_spec("true"), actor="bob")
    assert len(queue) == 3 and len(queue.history) == 0
    assert [ad["JobStatus"] for ad in queue.query()] == [1, 1, 1]


def test_an_owners_jobs_without_a_status_come_in_id_order_across_statuses(queue):
    """find_jobs by owner alone pages through the owner's jobs in id order whatever their status."""
    queue.submit_cluster(cluster_ad("alice"), proc_ads(5))
    queue.submit_cluster(cluster_ad("bob"), proc_ads(2))
    queue.submit_cluster(cluster_ad("alice"), proc_ads(2))
    queue.act(JobAction.Hold, JobSelection.from_spec(["1.1", "1.3", "3.0"]))
    found = [(row.cluster_id, row.proc_id, row.status) for row in queue.db.find_jobs(owner="alice", page_size=2)]
    assert found == [(1, 0, 1), (1, 1, 5), (1, 2, 1), (1, 3, 5), (1, 4, 1), (3, 0, 5), (3, 1, 1)]
    assert [row.proc_id for row in queue.db.find_jobs(submitter="bob", page_size=1)] == [0, 1]


def test_query_leaves_out_the_jobs_skip_names(queue):
    """skip drops jobs by id before their ads are made (the claim-reuse path passes over
    the jobs it is starting)."""
    queue.submit_cluster(cluster_ad(), proc_ads(4))
    taken = {JobId(1, 0), JobId(1, 2)}
    found = queue.query(status=JobStatus.IDLE, skip=taken.__contains__)
    assert ids(found) == [(1, 1), (1, 3)]
