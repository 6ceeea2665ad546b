"""A cluster stored a chunk per transaction: hidden from every read until its last
chunk commits, dropped at start-up when it never got there."""

import sqlite3

import pytest

from classad import ClassAd
from jobmodel.errors import BadJobAdError, JobNotFoundError
from jobmodel.states import JobId
from schedd.queue import QUEUE_FILE, JobAction, JobQueue, JobSelection
from tests.schedd.conftest import cluster_ad, proc_ads


def stored_rows(tmp_path) -> tuple[int, int, int]:
    """(clusters, jobs, incoming marks) in the queue file, read past the queue's filters."""
    con = sqlite3.connect(tmp_path / QUEUE_FILE)
    try:
        return tuple(con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                     for table in ("clusters", "jobs", "incoming_clusters"))
    finally:
        con.close()


def test_a_cluster_of_one_chunk_is_stored_in_one_step(tmp_path, queue):
    """A cluster no larger than a chunk is whole after the first step and never marked incoming."""
    incoming = queue.submit_in_steps(cluster_ad(), proc_ads(3), chunk=3)
    assert incoming.step() is True
    assert incoming.cluster_id == 1 and len(queue) == 3
    assert stored_rows(tmp_path) == (1, 3, 0)


def test_reads_do_not_see_an_incoming_cluster(tmp_path, queue):
    """While its chunks are stored, queries, counts, lookups, rm and qedit behave as if
    the cluster did not exist; after the last chunk it is there whole."""
    queue.submit_cluster(cluster_ad(), proc_ads(2))
    incoming = queue.submit_in_steps(cluster_ad(), proc_ads(10), chunk=4)
    assert incoming.step() is False and incoming.cluster_id == 2
    assert stored_rows(tmp_path) == (2, 2, 1)  # the first step only marks it: it shares the request's turn
    assert incoming.step() is False
    assert incoming.step() is False
    assert stored_rows(tmp_path) == (2, 2 + 8, 1)
    assert len(queue) == 2
    assert [(ad["ClusterId"], ad["ProcId"]) for ad in queue.query()] == [(1, 0), (1, 1)]
    assert [line.count(b"\n") for line in queue.query_lines() if line] == [2]
    assert queue.totals_by_owner() == {"alice": {1: 2}}
    assert sum(n for per in queue.totals_by_submitter().values() for c in per.values() for n in c.values()) == 2
    assert queue.db.cluster_ids() == [1]
    with pytest.raises(JobNotFoundError):
        queue.get_job(JobId(2, 0))
    with pytest.raises(JobNotFoundError):
        queue.cluster_ad(2)
    with pytest.raises(JobNotFoundError):
        queue.act(JobAction.Hold, JobSelection(clusters=(2,)))
    assert queue.edit(JobSelection(constraint="true"), "Note", '"edited"') == 2
    removed = sum(len(step.transitions) for step in queue.act_in_batches(JobAction.Remove,
                                                                         JobSelection(constraint="true")))
    assert removed == 2
    assert incoming.step() is True
    assert [ad["ProcId"] for ad in queue.query()] == list(range(10))
    assert all("Note" not in ad and ad["JobStatus"] == 1 for ad in queue.query())
    assert stored_rows(tmp_path) == (1, 10, 0)


def test_start_up_drops_an_incoming_cluster(tmp_path, clock):
    """A cluster still incoming when the queue is reopened was never acknowledged: its
    procs and cluster are dropped; acknowledged clusters stay, and ids go on."""
    queue = JobQueue(tmp_path, clock)
    queue.submit_cluster(cluster_ad(), proc_ads(2))
    incoming = queue.submit_in_steps(cluster_ad(), proc_ads(9), chunk=4)
    for _ in range(3):
        incoming.step()
    queue.close()  # as a killed schedd leaves it
    assert stored_rows(tmp_path) == (2, 2 + 8, 1)
    reopened = JobQueue(tmp_path, clock)
    try:
        assert reopened.db.dropped_incoming == [2]
        assert stored_rows(tmp_path) == (1, 2, 0)
        assert [(ad["ClusterId"], ad["ProcId"]) for ad in reopened.query()] == [(1, 0), (1, 1)]
        assert reopened.submit_cluster(cluster_ad(), proc_ads(1)) == 3
    finally:
        reopened.close()


def test_a_failing_chunk_drops_the_whole_cluster(tmp_path, queue):
    """A proc refused in a later chunk fails that step and drops the chunks stored
    before it: nothing of the cluster stays, and later steps refuse to go on."""
    procs = proc_ads(6) + [ClassAd({"JobStatus": 12})]
    incoming = queue.submit_in_steps(cluster_ad(), procs, chunk=3)
    assert incoming.step() is False
    with pytest.raises(BadJobAdError):
        while not incoming.step():
            pass
    assert stored_rows(tmp_path) == (0, 0, 0)
    assert len(queue) == 0 and list(queue.query()) == []
    with pytest.raises(RuntimeError):
        incoming.step()


def test_an_aborted_submit_leaves_nothing(tmp_path, queue):
    """Giving a submit up between chunks drops what it stored."""
    incoming = queue.submit_in_steps(cluster_ad(), proc_ads(5), chunk=2)
    incoming.step()
    incoming.abort()
    assert stored_rows(tmp_path) == (0, 0, 0)
    assert queue.submit_cluster(cluster_ad(), proc_ads(1)) == 2
    assert len(queue) == 1
