"""Policy expressions: periodic and on-exit decisions, user and system."""

import pytest

from classad import ClassAd, ExprTree
from jobmodel.errors import BadConstraintError
from jobmodel.states import ExitRecord, JobStatus
from schedd.policy import PolicyAction, SystemPolicy, exit_decision, frozen_attributes, periodic_decision


def job(status=JobStatus.IDLE, **exprs) -> ClassAd:
    ad = ClassAd({"ClusterId": 1, "ProcId": 0, "JobStatus": int(status), "NumJobStarts": 3})
    for name, text in exprs.items():
        ad[name] = ExprTree(text) if isinstance(text, str) else text
    return ad


def test_no_policy_decides_nothing():
    """A job without policy expressions is left alone."""
    assert periodic_decision(job()) is None


def test_periodic_hold_uses_given_reason_and_subcode():
    """PeriodicHold fires with code 3 and the job's PeriodicHoldReason/SubCode."""
    d = periodic_decision(job(PeriodicHold="NumJobStarts > 2", PeriodicHoldReason='"too many starts"',
                              PeriodicHoldSubCode="42"))
    assert (d.action, d.reason, d.code, d.subcode) == (PolicyAction.HOLD, "too many starts", 3, 42)
    assert frozen_attributes(d) == {"HoldReason": "too many starts", "HoldReasonCode": 3, "HoldReasonSubCode": 42}


def test_periodic_hold_default_reason_quotes_the_expression():
    """Without a reason the decision says which expression evaluated to TRUE."""
    d = periodic_decision(job(PeriodicHold="NumJobStarts > 2"))
    assert d.reason == "The job attribute PeriodicHold expression 'NumJobStarts > 2' evaluated to TRUE"


def test_undefined_periodic_expression_does_not_fire():
    """Only a boolean true fires a periodic expression."""
    assert periodic_decision(job(PeriodicHold="NoSuchAttr > 2")) is None


def test_hold_beats_remove():
    """When both fire, hold wins over remove."""
    d = periodic_decision(job(PeriodicHold="true", PeriodicRemove="true"))
    assert d.action is PolicyAction.HOLD


def test_periodic_remove_of_held_job():
    """A held job can be removed by PeriodicRemove."""
    d = periodic_decision(job(JobStatus.HELD, HoldReasonCode=3, PeriodicRemove="true"))
    assert d.action is PolicyAction.REMOVE


def test_periodic_release_skips_jobs_a_user_held():
    """PeriodicRelease never releases a job held by a user (HoldReasonCode 1)."""
    assert periodic_decision(job(JobStatus.HELD, HoldReasonCode=1, PeriodicRelease="true")) is None
    d = periodic_decision(job(JobStatus.HELD, HoldReasonCode=3, PeriodicRelease="true"))
    assert d.action is PolicyAction.RELEASE


def test_user_policy_goes_before_system_policy():
    """The job's own PeriodicHold is applied before SYSTEM_PERIODIC_HOLD."""
    system = SystemPolicy.from_config(hold="true", hold_reason='"admin says"')
    d = periodic_decision(job(PeriodicHold="true"), system)
    assert d.code == 3


def test_system_periodic_hold_has_code_26_and_its_reason():
    """SYSTEM_PERIODIC_HOLD holds with code 26 and SYSTEM_PERIODIC_HOLD_REASON/SUBCODE."""
    system = SystemPolicy.from_config(hold="NumJobStarts > 1", hold_reason='strcat("starts: ", NumJobStarts)',
                                      hold_subcode="5")
    d = periodic_decision(job(), system)
    assert (d.action, d.reason, d.code, d.subcode) == (PolicyAction.HOLD, "starts: 3", 26, 5)


def test_system_periodic_remove_and_release():
    """SYSTEM_PERIODIC_REMOVE removes idle jobs, SYSTEM_PERIODIC_RELEASE releases policy holds."""
    system = SystemPolicy.from_config(remove="NumJobStarts == 3", release="true")
    assert periodic_decision(job(), system).action is PolicyAction.REMOVE
    assert periodic_decision(job(JobStatus.HELD, HoldReasonCode=26), system).action is PolicyAction.RELEASE


def test_finished_jobs_are_not_evaluated():
    """Completed and removed jobs get no periodic decisions."""
    assert periodic_decision(job(JobStatus.COMPLETED, PeriodicRemove="true")) is None


def test_bad_system_expression_names_the_knob():
    """A system policy knob that does not parse is reported by name."""
    with pytest.raises(BadConstraintError, match="SYSTEM_PERIODIC_REMOVE"):
        SystemPolicy.from_config(remove="1 +")


def test_exit_defaults_complete_the_job():
    """With no on_exit expressions a job that exits completes."""
    assert exit_decision(job(JobStatus.RUNNING), ExitRecord(exit_code=1)).action is PolicyAction.COMPLETE


def test_on_exit_remove_false_requeues():
    """OnExitRemove false sends the job back to run again; it sees the exit code."""
    ad = job(JobStatus.RUNNING, OnExitRemove="ExitCode == 0")
    assert exit_decision(ad, ExitRecord(exit_code=1)).action is PolicyAction.REQUEUE
    assert exit_decision(ad, ExitRecord(exit_code=0)).action is PolicyAction.COMPLETE


def test_on_exit_hold_sees_signal_and_uses_its_reason():
    """OnExitHold can look at ExitBySignal/ExitSignal and sets its reason and subcode."""
    ad = job(JobStatus.RUNNING, OnExitHold="ExitBySignal && ExitSignal == 11",
             OnExitHoldReason='"segfault"', OnExitHoldSubCode="11")
    d = exit_decision(ad, ExitRecord(exit_by_signal=True, exit_signal=11))
    assert (d.action, d.reason, d.code, d.subcode) == (PolicyAction.HOLD, "segfault", 3, 11)


def test_undefined_on_exit_expression_holds_with_policy_undefined():
    """An on-exit expression that is neither true nor false holds the job (code 5)."""
    d = exit_decision(job(JobStatus.RUNNING, OnExitRemove="NoSuch == 1"), ExitRecord(exit_code=0))
    assert d.action is PolicyAction.HOLD and d.code == 5 and "UNDEFINED" in d.reason
