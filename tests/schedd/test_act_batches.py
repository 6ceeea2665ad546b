"""A large action runs as batches (``JobQueue.act_in_batches``): each batch commits on
its own, the batches together do what one ``act`` does, and whatever makes ``act``
refuse the request is refused before any batch, changing nothing."""

import pytest

from classad import ClassAd
from jobmodel import states
from jobmodel.errors import InvalidTransitionError, JobNotFoundError, NotOwnerError
from jobmodel.states import JobId, JobStatus
from schedd.queue import JobAction, JobQueue, JobSelection
from tests.schedd.conftest import cluster_ad, proc_ads


def _all(queue, action, spec, actor=None, batch=2):
    return list(queue.act_in_batches(action, JobSelection.from_spec(spec), "test", actor=actor, batch=batch))


def test_removal_by_constraint_in_batches_removes_every_job_to_history(queue):
    """Seven jobs removed two at a time: four batches, all seven in history, none queued."""
    queue.submit_cluster(cluster_ad("alice"), proc_ads(5))
    queue.submit_cluster(cluster_ad("bob"), proc_ads(2))
    results = _all(queue, JobAction.Remove, "true")
    assert [len(result.transitions) for result in results] == [2, 2, 2, 1]
    assert sum(len(result.left_queue) for result in results) == 7
    assert len(queue) == 0
    assert len(queue.history) == 7
    assert queue.db.cluster_ids() == []


def test_batches_do_what_one_act_does(queue, tmp_path, clock):
    """Holding by constraint in batches leaves the same ads as one act over a twin queue."""
    (tmp_path / "twin").mkdir()
    twin = JobQueue(tmp_path / "twin", clock)
    for q in (queue, twin):
        q.submit_cluster(cluster_ad("alice"), proc_ads(5))
    _all(queue, JobAction.Hold, "ProcId != 2")
    twin.act(JobAction.Hold, JobSelection.from_spec("ProcId != 2"), "test")
    assert [dict(ad) for ad in queue.query()] == [dict(ad) for ad in twin.query()]
    twin.close()


def test_a_job_in_the_wrong_state_found_by_constraint_is_skipped(queue):
    """Releasing by constraint skips the idle jobs, batch by batch, and lists them."""
    queue.submit_cluster(cluster_ad("alice"), proc_ads(4))
    queue.act(JobAction.Hold, JobSelection.from_spec(["1.1"]))
    results = _all(queue, JobAction.Release, "true")
    assert sum(len(result.transitions) for result in results) == 1
    assert sorted(str(job) for result in results for job, _ in result.skipped) == ["1.0", "1.2", "1.3"]


@pytest.mark.parametrize("spec, actor, error", [
    (["1.0", "9.0"], None, JobNotFoundError),
    (["9"], None, JobNotFoundError),
    (["1.0", "2.0"], "alice", NotOwnerError),
    (["2"], "alice", NotOwnerError),
])
def test_refusals_come_before_any_batch(queue, spec, actor, error):
    """A missing or another's named job or cluster refuses the request with nothing removed."""
    queue.submit_cluster(cluster_ad("alice"), proc_ads(3))
    queue.submit_cluster(cluster_ad("bob"), proc_ads(3))
    with pytest.raises(error):
        _all(queue, JobAction.Remove, spec, actor=actor, batch=1)
    assert len(queue) == 6


def test_a_named_job_in_the_wrong_state_refuses_before_any_batch(queue):
    """Releasing 1.0 (held) and 1.1 (idle) by id refuses both, releasing nothing."""
    queue.submit_cluster(cluster_ad("alice"), proc_ads(2))
    queue.act(JobAction.Hold, JobSelection.from_spec(["1.0"]))
    with pytest.raises(InvalidTransitionError):
        _all(queue, JobAction.Release, ["1.0", "1.1"], batch=1)
    assert [ad["JobStatus"] for ad in queue.query()] == [JobStatus.HELD, JobStatus.IDLE]


def test_a_cluster_and_its_jobs_named_together_are_acted_on_once(queue):
    """Naming 1.1 and cluster 1 holds each of the three jobs once."""
    queue.submit_cluster(cluster_ad("alice"), proc_ads(3))
    results = _all(queue, JobAction.Hold, ["1.1", "1"])
    assert sorted(str(t.job_id) for result in results for t in result.transitions) == ["1.0", "1.1", "1.2"]


def test_a_batch_of_holds_writes_each_rows_status_column(queue):
    """Jobs held in batches (one UPDATE per batch) have Held in their status column, the rest Idle."""
    queue.submit_cluster(cluster_ad("alice"), proc_ads(5))
    _all(queue, JobAction.Hold, "ProcId != 2")
    statuses = {(row.cluster_id, row.proc_id): row.status for row in queue.db.find_jobs()}
    assert statuses == {(1, 0): 5, (1, 1): 5, (1, 2): 1, (1, 3): 5, (1, 4): 5}


def _mixed_cluster(queue):
    """Seven jobs a removal treats in every way: idle, held, idle with a stale
    RemoteHost and RemotePool, running, kept by LeaveJobInQueue = true, by an
    expression for it, and one whose RemoteHost is an expression."""
    queue.submit_cluster(cluster_ad("alice"), proc_ads(7))
    queue.act(JobAction.Hold, JobSelection.from_spec(["1.1"]))
    for spec, attr, value in ((["1.2"], "RemoteHost", '"slot1@gone"'), (["1.2"], "RemotePool", '"far"'),
                              (["1.4"], "LeaveJobInQueue", "true"), (["1.5"], "LeaveJobInQueue", "ProcId == 5"),
                              (["1.6"], "RemoteHost", 'strcat("slot", "2@gone")')):
        queue.edit(JobSelection.from_spec(spec), attr, value)
    queue.transition(JobId(1, 3), states.start, "<127.0.0.1:1>")


def test_a_removal_in_batches_leaves_what_one_act_leaves(queue, tmp_path, clock):
    """Removing by constraint in batches (jobs read from their stored text where it is
    plain, from their ad otherwise) leaves the same queue, history and events as one
    act over a twin queue (every job through its ad)."""
    (tmp_path / "twin").mkdir()
    twin = JobQueue(tmp_path / "twin", clock)
    for q in (queue, twin):
        _mixed_cluster(q)
    batched = _all(queue, JobAction.Remove, 'Owner == "alice"')
    whole = twin.act(JobAction.Remove, JobSelection.from_spec('Owner == "alice"'), "test")
    assert [t for result in batched for t in result.transitions] == list(whole.transitions)
    assert sorted(job for result in batched for job in result.left_queue) == sorted(whole.left_queue)
    assert [dict(ad) for ad in queue.query()] == [dict(ad) for ad in twin.query()]
    assert [dict(ad) for ad in queue.history.query()] == [dict(ad) for ad in twin.history.query()]
    assert [str(ad["ProcId"]) for ad in queue.query()] == ["3", "4", "5"]
    twin.close()


def test_a_job_removed_already_is_skipped_by_a_batched_removal(queue):
    """A running job removed once waits for its shadow; removing again by constraint skips it, saying why."""
    queue.submit_cluster(cluster_ad("alice"), proc_ads(2))
    queue.transition(JobId(1, 0), states.start, "<127.0.0.1:1>")
    _all(queue, JobAction.Remove, "ProcId == 0")
    results = _all(queue, JobAction.Remove, "true")
    assert [why for result in results for _, why in result.skipped] == [
        "cannot remove job 1.0: it is Removed already (waiting for its shadow to exit)"]
    assert sum(len(result.left_queue) for result in results) == 1


def test_a_removal_by_constraint_reads_a_proc_naming_its_attributes_for_itself(queue, tmp_path, clock):
    """A constraint decided once per cluster for procs naming none of its attributes
    still reads every proc that names one (its own Owner; an Args holding the name
    only looks so), and the removal of a cluster with a stale RemoteHost in its own
    attributes leaves what one act over a twin queue leaves."""
    (tmp_path / "twin").mkdir()
    twin = JobQueue(tmp_path / "twin", clock)
    for q in (queue, twin):
        q.submit_cluster(cluster_ad("alice", RemoteHost="slot1@gone"),
                         [ClassAd({"Args": "0"}), ClassAd({"Owner": "bob"}), ClassAd({"Args": '"Owner"'}),
                          ClassAd({"Args": "3"})])
    batched = _all(queue, JobAction.Remove, 'Owner == "alice"')
    whole = twin.act(JobAction.Remove, JobSelection.from_spec('Owner == "alice"'), "test")
    assert [t for result in batched for t in result.transitions] == list(whole.transitions)
    assert [(ad["ProcId"], ad["Owner"]) for ad in queue.query()] == [(1, "bob")]
    assert [dict(ad) for ad in queue.history.query()] == [dict(ad) for ad in twin.history.query()]
    assert all(ad["LastRemoteHost"] == "slot1@gone" and "RemoteHost" not in ad for ad in queue.history.query())
    twin.close()


def test_history_trimmed_between_batches_keeps_every_record_readable(tmp_path, clock):
    """With HISTORY_MAX_JOBS trimming during a batched removal (and dropping bases no
    record uses), every record kept still reads back whole."""
    queue = JobQueue(tmp_path, clock, history_max_jobs=3)
    try:
        for _ in range(3):
            queue.submit_cluster(cluster_ad("alice"), proc_ads(3))
        assert sum(len(result.transitions) for result in _all(queue, JobAction.Remove, "true")) == 9
        kept = list(queue.history.query())
        assert [(ad["ClusterId"], ad["ProcId"]) for ad in kept] == [(3, 2), (3, 1), (3, 0)]
        assert all(ad["Owner"] == "alice" and ad["JobStatus"] == 3 for ad in kept)
        queue.submit_cluster(cluster_ad("alice"), proc_ads(4))
        _all(queue, JobAction.Remove, "true", batch=3)
        assert [ad["Cmd"] for ad in queue.history.query()] == ["/bin/sleep"] * 3
    finally:
        queue.close()
