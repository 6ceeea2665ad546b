"""The job state machine: statuses, transitions and the attributes they set."""

import pytest

from classad import ClassAd
from jobmodel import states
from jobmodel.errors import InvalidTransitionError
from jobmodel.eventlog import EventType
from jobmodel.states import ExitRecord, HoldCode, JobId, JobStatus


def job(status=JobStatus.IDLE, **extra) -> ClassAd:
    ad = ClassAd({"ClusterId": 7, "ProcId": 2, "JobStatus": int(status), "EnteredCurrentStatus": 0})
    for name, value in extra.items():
        ad[name] = value
    return ad


def after(ad, transition):
    return states.apply_changes(ad, transition.changes)


class FixedClock:
    def seconds(self):
        return 5000.7


def test_status_codes_are_htcondors():
    """JobStatus numbers match HTCondor's 1-7."""
    assert [s.value for s in JobStatus] == [1, 2, 3, 4, 5, 6, 7]
    assert JobStatus.REMOVED == 3 and JobStatus.HELD == 5


def test_hold_sets_reason_code_counts_and_times():
    """Holding an idle job records the reason, code, subcode, hold counts and times."""
    t = states.hold(job(), "disk full", lambda: 100, code=HoldCode.JobPolicy, subcode=7)
    ad = after(job(), t)
    assert ad["JobStatus"] == 5 and ad["LastJobStatus"] == 1 and ad["EnteredCurrentStatus"] == 100
    assert (ad["HoldReason"], ad["HoldReasonCode"], ad["HoldReasonSubCode"]) == ("disk full", 3, 7)
    assert ad["NumHolds"] == 1
    assert ad["NumHoldsByReason"]["JobPolicy"] == 1
    assert t.event.type == EventType.JOB_HELD and (t.event.cluster, t.event.proc) == (7, 2)
    assert not t.stop_shadow


def test_second_hold_counts_by_reason():
    """NumHolds and NumHoldsByReason accumulate across holds."""
    ad = after(job(), states.hold(job(), "a", lambda: 1))
    ad = after(ad, states.release(ad, "r", lambda: 2))
    ad = after(ad, states.hold(ad, "b", lambda: 3, code=HoldCode.JobPolicy))
    assert ad["NumHolds"] == 2
    assert ad["NumHoldsByReason"]["UserRequest"] == 1 and ad["NumHoldsByReason"]["JobPolicy"] == 1


def test_hold_of_running_job_stops_its_shadow():
    """A running job goes Held at once and its shadow must be stopped."""
    assert states.hold(job(JobStatus.RUNNING), "x", lambda: 1).stop_shadow


def test_holding_a_held_job_is_refused():
    """Holding a job that is already held names the job and its state."""
    with pytest.raises(InvalidTransitionError, match=r"job 7\.2: it is Held already"):
        states.hold(job(JobStatus.HELD), "x", lambda: 1)


def test_release_keeps_last_hold_reason_and_sets_release_reason():
    """Release returns the job to Idle, moves HoldReason to LastHoldReason and records why."""
    held = after(job(), states.hold(job(), "because", lambda: 1))
    t = states.release(held, "fixed", FixedClock())
    ad = after(held, t)
    assert ad["JobStatus"] == 1 and ad["LastJobStatus"] == 5 and ad["EnteredCurrentStatus"] == 5000
    assert "HoldReason" not in ad and ad["LastHoldReason"] == "because" and ad["LastHoldReasonCode"] == 1
    assert ad["ReleaseReason"] == "fixed"
    assert t.event.type == EventType.JOB_RELEASED and t.event.attributes["Reason"] == "fixed"


def test_releasing_a_job_that_is_not_held_is_refused():
    """Releasing an idle job is an error saying it is not held."""
    with pytest.raises(InvalidTransitionError, match="cannot release job 7.2: it is Idle, not Held"):
        states.release(job(), "r", lambda: 1)


def test_remove_of_idle_job_leaves_at_once_with_abort_event():
    """Removing an idle job marks it Removed and it may leave the queue immediately."""
    t = states.remove(job(), "via condor_rm", lambda: 9)
    ad = after(job(), t)
    assert ad["JobStatus"] == 3 and ad["RemoveReason"] == "via condor_rm"
    assert not states.leave_in_queue(ad)
    assert t.event.type == EventType.JOB_ABORTED and not t.stop_shadow


def test_remove_of_running_job_waits_for_its_shadow():
    """A removed running job stays (Removed) until its shadow reports, then leaves."""
    running = job(JobStatus.RUNNING, RemoteHost="slot1@ep")
    t = states.remove(running, "bye", lambda: 9)
    ad = after(running, t)
    assert t.stop_shadow and t.event is None
    assert ad["JobStatus"] == 3 and states.leave_in_queue(ad)
    done = states.removal_done(ad, lambda: 10)
    final = after(ad, done)
    assert not states.leave_in_queue(final) and final["LastRemoteHost"] == "slot1@ep"
    assert done.event.type == EventType.JOB_ABORTED and done.event.attributes["Reason"] == "bye"


@pytest.mark.parametrize("status, host", [(JobStatus.IDLE, None), (JobStatus.HELD, "slot1@gone"),
                                          (JobStatus.RUNNING, "slot1@ep")])
def test_a_removal_alike_is_the_removal_of_that_job(status, host):
    """removal_alike of a job in the same status and run gives what removal gives it."""
    facts = [states.JobFacts(JobId(7, proc), status, host, None) for proc in (2, 3)]
    decided = states.removal(facts[0], "via condor_rm", 9)
    assert states.removal_alike(decided, JobId(7, 3)) == states.removal(facts[1], "via condor_rm", 9)


def test_removing_a_removed_job_is_refused():
    """A second remove while the shadow is still exiting is refused."""
    with pytest.raises(InvalidTransitionError, match="already"):
        states.remove(job(JobStatus.REMOVED), "x", lambda: 1)


def test_complete_records_exit_and_completion_date():
    """Completing a running job records ExitCode, ExitBySignal and CompletionDate."""
    running = job(JobStatus.RUNNING, RemoteHost="slot1@ep")
    t = states.complete(running, ExitRecord(exit_code=3), lambda: 77)
    ad = after(running, t)
    assert ad["JobStatus"] == 4 and ad["ExitCode"] == 3 and ad["ExitBySignal"] is False
    assert ad["CompletionDate"] == 77 and "RemoteHost" not in ad
    assert t.event.attributes == {"TerminatedNormally": True, "ReturnValue": 3}


def test_complete_by_signal_records_the_signal():
    """A job killed by a signal records ExitSignal and no ExitCode."""
    running = job(JobStatus.RUNNING)
    ad = after(running, states.complete(running, ExitRecord(exit_by_signal=True, exit_signal=9), lambda: 1))
    assert ad["ExitBySignal"] is True and ad["ExitSignal"] == 9 and "ExitCode" not in ad


def test_completing_an_idle_job_is_refused():
    """Only a running job can complete."""
    with pytest.raises(InvalidTransitionError, match="not Running"):
        states.complete(job(), ExitRecord(exit_code=0), lambda: 1)


def test_start_and_vacate_round_trip():
    """Starting sets start dates and counts; vacating sends the job back to Idle."""
    ad = after(job(), states.start(job(), "<10.0.0.1:9618>", lambda: 10, "slot1@ep"))
    assert ad["JobStatus"] == 2 and ad["NumJobStarts"] == 1 and ad["JobCurrentStartDate"] == 10
    t = states.vacate(ad, lambda: 20)
    ad = after(ad, t)
    assert ad["JobStatus"] == 1 and ad["LastJobStatus"] == 2 and t.stop_shadow
    assert t.event.type == EventType.JOB_EVICTED


def test_leave_in_queue_keeps_completed_job_while_true():
    """A completed job with LeaveJobInQueue true stays; false lets it go."""
    assert states.leave_in_queue(job(JobStatus.COMPLETED, LeaveJobInQueue=True))
    assert not states.leave_in_queue(job(JobStatus.COMPLETED, LeaveJobInQueue=False))
    assert not states.leave_in_queue(job(JobStatus.COMPLETED))
    assert states.leave_in_queue(job(JobStatus.HELD))


def test_job_id_parses_and_refuses_garbage():
    """JobId reads "12.3" and names the expected form on bad input."""
    assert JobId.parse("12.3") == JobId(12, 3) and str(JobId(12, 3)) == "12.3"
    with pytest.raises(ValueError, match="ClusterId.ProcId"):
        JobId.parse("twelve")


def test_bad_job_status_is_reported_with_the_job():
    """A job ad with a JobStatus outside 1-7 gets an error naming the job."""
    with pytest.raises(InvalidTransitionError, match="job 7.2 has JobStatus 9"):
        states.hold(job(9), "x", lambda: 1)
