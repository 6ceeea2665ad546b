"""History: finished jobs newest first, constraints, projections, match, since, rotation."""

import pytest

from classad import ConstraintError
from jobmodel.errors import NotOwnerError
from schedd.queue import JobAction, JobQueue, JobSelection
from tests.schedd.conftest import cluster_ad, proc_ads


def remove_all(queue, spec):
    queue.act(JobAction.Remove, JobSelection.from_spec(spec))


@pytest.fixture
def finished(queue, clock):
    """Clusters 1 (alice, 3 procs) and 2 (bob, 2 procs), removed in that order."""
    queue.submit_cluster(cluster_ad("alice"), proc_ads(3))
    queue.submit_cluster(cluster_ad("bob"), proc_ads(2))
    remove_all(queue, ["1"])
    clock.advance(100)
    remove_all(queue, ["2"])
    return queue


def jobs(ads):
    return [f'{ad["ClusterId"]}.{ad["ProcId"]}' for ad in ads]


def test_history_is_newest_first(finished):
    """condor_history order: the job that left last comes first."""
    assert jobs(finished.history.query()) == ["2.1", "2.0", "1.2", "1.1", "1.0"]


def test_history_keeps_the_final_ad(finished):
    """The stored ad is the job's whole final ad, including its remove reason."""
    ad = next(finished.history.query('Owner == "alice"'))
    assert ad["Cmd"] == "/bin/sleep" and ad["JobStatus"] == 3 and ad["Args"] == "2"
    assert ad["RemoveReason"].startswith("via condor_rm")


def test_history_constraint_projection_and_match(finished):
    """Constraint, projection and match limit work as for condor_history."""
    found = list(finished.history.query('Owner == "alice"', ["ProcId"], match=2))
    assert [dict(ad) for ad in found] == [{"ProcId": 2}, {"ProcId": 1}]
    assert [dict(ad) for ad in finished.history.query(projection=["Owner"], match=1)] == [{"Owner": "bob"}]


def test_since_a_job_id_stops_there(finished):
    """since = a job id stops the scan at that job, which is not returned."""
    assert jobs(finished.history.query(since="1.2")) == ["2.1", "2.0"]
    assert jobs(finished.history.query(since="1")) == ["2.1", "2.0"]


def test_since_an_expression_stops_when_true(finished):
    """since = an expression stops at the first job for which it is true."""
    assert jobs(finished.history.query(since='Owner == "alice"')) == ["2.1", "2.0"]


def test_bad_history_constraint_is_refused(finished):
    """A constraint that does not parse raises at once."""
    with pytest.raises(ConstraintError):
        finished.history.query("Owner ==")


def test_rotation_by_max_jobs(tmp_path, clock):
    """HISTORY_MAX_JOBS keeps only the newest jobs."""
    queue = JobQueue(tmp_path, clock, history_max_jobs=3)
    queue.submit_cluster(cluster_ad(), proc_ads(5))
    remove_all(queue, ["1"])
    assert jobs(queue.history.query()) == ["1.4", "1.3", "1.2"]
    queue.close()


def test_rotation_by_age(tmp_path, clock):
    """Jobs older than the age limit are dropped at the next write."""
    queue = JobQueue(tmp_path, clock, history_max_age=50)
    queue.submit_cluster(cluster_ad(), proc_ads(2))
    queue.submit_cluster(cluster_ad(), proc_ads(1))
    remove_all(queue, ["1"])
    clock.advance(60)
    remove_all(queue, ["2"])
    assert jobs(queue.history.query()) == ["2.0"]
    queue.close()


def _history_table(queue, sql):
    return queue.db.db.execute(sql).fetchall()


def test_a_clusters_jobs_share_one_stored_base(queue):
    """Five procs removed together store their cluster's attributes once: each history
    row holds only its proc's differences, and reads back as the whole final ad."""
    queue.submit_cluster(cluster_ad("alice", Comment="kept once"), proc_ads(5))
    remove_all(queue, ["1"])
    assert _history_table(queue, "SELECT COUNT(*) FROM history_bases") == [(1,)]
    (longest,) = _history_table(queue, "SELECT MAX(LENGTH(attrs)) FROM history")[0]
    assert longest < len(_history_table(queue, "SELECT attrs FROM history_bases")[0][0])
    ads = list(queue.history.query())
    assert [ad["Args"] for ad in ads] == ["4", "3", "2", "1", "0"]
    assert all(ad["Comment"] == "kept once" and ad["JobStatus"] == 3 and ad["Cmd"] == "/bin/sleep" for ad in ads)


def test_a_cluster_attribute_a_proc_deleted_stays_deleted_in_history(queue):
    """A proc whose stored differences delete one of its cluster's attributes (a None
    text) leaves without it, while its sibling keeps it."""
    queue.submit_cluster(cluster_ad("alice", Comment="cluster's"), proc_ads(2))
    queue.db.db.execute("UPDATE jobs SET attrs = json_insert(attrs, '$[#]', json_array('Comment', NULL)) "
                        "WHERE proc_id = 1")
    remove_all(queue, ["1"])
    by_proc = {ad["ProcId"]: ad for ad in queue.history.query()}
    assert by_proc[0]["Comment"] == "cluster's"
    assert "Comment" not in by_proc[1]


def test_rows_of_an_older_roost_holding_whole_ads_still_read(tmp_path, clock):
    """A history row stored whole by an older Roost (no base) reads as it was, beside
    rows stored with a base."""
    queue = JobQueue(tmp_path, clock)
    queue.db.db.execute(
        "INSERT INTO history (cluster_id, proc_id, owner, left_queue, attrs) VALUES "
        "(7, 0, 'carol', 1, '[[\"ClusterId\",\"7\"],[\"ProcId\",\"0\"],[\"Owner\",\"\\\"carol\\\"\"]]')")
    queue.submit_cluster(cluster_ad("alice"), proc_ads(1))
    remove_all(queue, ["1"])
    assert [(ad["ClusterId"], ad["Owner"]) for ad in queue.history.query()] == [(1, "alice"), (7, "carol")]
    queue.close()


def test_rotation_drops_a_base_only_when_no_row_uses_it(tmp_path, clock):
    """Trimming keeps the base its remaining rows use and drops the ones left unused."""
    queue = JobQueue(tmp_path, clock, history_max_jobs=3)
    queue.submit_cluster(cluster_ad("alice"), proc_ads(2))
    queue.submit_cluster(cluster_ad("bob"), proc_ads(4))
    remove_all(queue, ["1"])
    remove_all(queue, ["2"])
    assert jobs(queue.history.query()) == ["2.3", "2.2", "2.1"]
    assert [ad["Owner"] for ad in queue.history.query()] == ["bob"] * 3
    assert _history_table(queue, "SELECT COUNT(*) FROM history_bases") == [(1,)]
    queue.close()


def test_a_removal_rolled_back_leaves_no_base_behind(queue):
    """A removal refused part way (another's job) writes no history row and no base."""
    queue.submit_cluster(cluster_ad("alice"), proc_ads(2))
    queue.submit_cluster(cluster_ad("bob"), proc_ads(1))
    with pytest.raises(NotOwnerError):
        queue.act(JobAction.Remove, JobSelection.from_spec("true"), actor="alice")
    assert _history_table(queue, "SELECT COUNT(*) FROM history_bases") == [(0,)]
    assert len(queue.history) == 0 and len(queue) == 3


def test_one_jobs_record_is_found_through_an_index_made_on_an_older_queue_too(tmp_path, clock):
    """history_attrs reads one job's records by index; a queue file made without the
    index (an older Roost's) gets it when opened."""
    import sqlite3

    from schedd.queue import QUEUE_FILE
    queue = JobQueue(tmp_path, clock)
    queue.submit_cluster(cluster_ad("alice"), proc_ads(3))
    remove_all(queue, ["1"])
    queue.close()
    con = sqlite3.connect(tmp_path / QUEUE_FILE)
    con.execute("DROP INDEX history_by_job")
    con.close()
    queue = JobQueue(tmp_path, clock)
    try:
        assert '"Args"' in queue.db.history_attrs(1, 2) and queue.db.history_attrs(1, 3) is None
        plan = queue.db.db.execute("EXPLAIN QUERY PLAN SELECT id FROM history h WHERE h.cluster_id = 1 "
                                   "AND h.proc_id = 2 ORDER BY h.id DESC LIMIT 1").fetchall()
        assert any("history_by_job" in row[-1] for row in plan)
    finally:
        queue.close()
