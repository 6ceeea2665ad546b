"""Several changes of one job applied as one queue change (a short job's start, run
end and exit arrive in one report)."""

import pytest

from classad import ExprTree
from jobmodel.errors import InvalidTransitionError
from jobmodel.eventlog import EventType
from jobmodel.states import ExitRecord, JobId, JobStatus, Transition, start
from schedd.policy import ExitStep, PolicyAction
from tests.schedd.conftest import START, cluster_ad, proc_ads

JOB = JobId(1, 0)


def test_each_step_sees_the_changes_of_the_steps_before(queue):
    """Start then exit in one change: the exit applies to the Running job the start made,
    and the job leaves for history with both steps' attributes."""
    queue.submit_cluster(cluster_ad(), proc_ads(1))
    exited = ExitStep(ExitRecord(exit_code=3))
    results = queue.transitions(JOB, [lambda ad, clock: start(ad, "<h:1>", clock), exited])
    assert [r.event.type for r in results] == [EventType.EXECUTE, EventType.JOB_TERMINATED]
    assert exited.ad["JobStatus"] == JobStatus.RUNNING and exited.decision.action is PolicyAction.COMPLETE
    assert len(queue) == 0
    ad = next(queue.history.query())
    assert ad["JobStatus"] == 4 and ad["ExitCode"] == 3 and ad["JobCurrentStartDate"] == START


def test_a_step_that_does_not_apply_writes_nothing(queue):
    """An exit of a job that never started fails the whole change: the start before it is not kept."""
    queue.submit_cluster(cluster_ad(), proc_ads(1))
    steps = [lambda ad, clock: Transition(JOB, {"Marked": 1}), ExitStep(ExitRecord(exit_code=0))]
    with pytest.raises(InvalidTransitionError):
        queue.transitions(JOB, steps)
    ad = queue.get_job(JOB)
    assert ad["JobStatus"] == JobStatus.IDLE and "Marked" not in ad


def test_a_step_without_change_is_left_out(queue):
    """A step answering None changes nothing and gives no transition."""
    queue.submit_cluster(cluster_ad(), proc_ads(1))
    results = queue.transitions(JOB, [lambda ad, clock: None, lambda ad, clock: Transition(JOB, {"Marked": 2})])
    assert len(results) == 1 and queue.get_job(JOB)["Marked"] == 2


def test_the_exit_policy_reads_the_ad_the_earlier_steps_made(queue):
    """on_exit_hold sees the attributes set by the step before the exit (the run's usage)."""
    queue.submit_cluster(cluster_ad(OnExitHold=ExprTree("RemoteUserCpu > 5")), proc_ads(1))
    queue.transition(JOB, start, "<h:1>")
    exited = ExitStep(ExitRecord(exit_code=0))
    queue.transitions(JOB, [lambda ad, clock: Transition(JOB, {"RemoteUserCpu": 9.0}), exited])
    assert exited.decision.action is PolicyAction.HOLD and queue.get_job(JOB)["JobStatus"] == JobStatus.HELD
