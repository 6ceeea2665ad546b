"""No job loops forever: retries are counted and used-up jobs leave the queue."""

from classad import ExprTree
from jobmodel.states import ExitRecord, JobId, JobStatus, hold, removal_done, remove, start
from schedd.policy import PolicyAction, exit_decision
from tests.schedd.conftest import cluster_ad, proc_ads

RETRY = "NumJobCompletions > JobMaxRetries || ExitCode is 0"


def test_exit_decision_counts_this_completion():
    """The exit being decided is counted in NumJobCompletions before OnExitRemove."""
    ad = cluster_ad(JobMaxRetries=2, NumJobCompletions=2, OnExitRemove=ExprTree(RETRY))
    ad["ClusterId"], ad["ProcId"], ad["JobStatus"] = 1, 0, int(JobStatus.RUNNING)
    assert exit_decision(ad, ExitRecord(exit_code=1)).action is PolicyAction.COMPLETE


def test_max_retries_two_runs_three_times_then_leaves(queue):
    """max_retries = 2 and exit 1: three runs, then the job leaves with ExitCode 1."""
    queue.submit_cluster(cluster_ad(JobMaxRetries=2, NumJobCompletions=0, OnExitRemove=ExprTree(RETRY)),
                         proc_ads(1))
    runs = 0
    while len(queue) and runs < 10:
        queue.transition(JobId(1, 0), start, "<h:1>")
        queue.job_exited(JobId(1, 0), ExitRecord(exit_code=1))
        runs += 1
    assert runs == 3 and len(queue) == 0
    ad = next(queue.history.query())
    assert ad["ExitCode"] == 1 and ad["NumJobCompletions"] == 3 and ad["JobStatus"] == 4


def test_remove_of_job_held_after_running_leaves_to_history(queue):
    """A job that ran and was held leaves for history as Removed when condor_rm'd."""
    queue.submit_cluster(cluster_ad(), proc_ads(1))
    queue.transition(JobId(1, 0), start, "<h:1>")
    queue.transition(JobId(1, 0), hold, "by test")
    queue.transition(JobId(1, 0), remove, "by test")
    queue.evaluate_periodic()
    assert len(queue) == 0
    assert next(queue.history.query())["JobStatus"] == 3


def test_every_removed_job_leaves_within_one_interval(queue):
    """Invariant: a removed job leaves the queue after its vacate (removal_done) plus
    one periodic pass, whatever state it was removed from."""
    for cluster, path in enumerate(("i", "r", "h", "H"), start=1):
        queue.submit_cluster(cluster_ad(), proc_ads(1))
        job = JobId(cluster, 0)
        if path in ("r", "h"):
            queue.transition(job, start, "<h:1>")
        if path in ("h", "H"):
            queue.transition(job, hold, "by test")
        t = queue.transition(job, remove, "by test")
        if t.stop_shadow:
            queue.transition(job, removal_done)
        queue.evaluate_periodic()
        assert len(queue) == 0, path
