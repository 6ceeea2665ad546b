"""Job policy: the user's ``periodic_*`` and ``on_exit_*`` expressions and the
schedd-wide ``SYSTEM_PERIODIC_*`` knobs, evaluated against a job ad into decided
actions. Pure: nothing here changes a job; :class:`schedd.queue.JobQueue` does.

Order follows HTCondor: the user's periodic expressions before the system's,
hold before remove, and periodic before on-exit.
"""

from __future__ import annotations

import enum
from typing import Any

import attrs

from classad import ClassAd, ExprTree
from classad.values import ERROR, UNDEFINED
from jobmodel.errors import BadConstraintError
from jobmodel.states import (
    ACTIVE,
    ClockLike,
    ExitRecord,
    HoldCode,
    JobStatus,
    Transition,
    apply_changes,
    complete,
    completions_after_exit,
    hold,
    requeue,
    status_of,
)


class PolicyAction(enum.Enum):
    """What a policy decided to do with a job."""

    HOLD = "hold"
    RELEASE = "release"
    REMOVE = "remove"
    COMPLETE = "complete"  # on exit: leave the queue as Completed
    REQUEUE = "requeue"  # on exit: run again


@attrs.frozen
class Decision:
    """A decided action with the reason (and hold code/subcode) to record."""

    action: PolicyAction
    reason: str = ""
    code: int = 0
    subcode: int = 0


def _compile(name: str, text: str | None) -> ExprTree | None:
    if text is None or not text.strip():
        return None
    try:
        return ExprTree(text)
    except ValueError as exc:
        raise BadConstraintError(f"{name} = {text!r} does not parse: {exc}") from None


@attrs.frozen
class SystemPolicy:
    """The schedd's ``SYSTEM_PERIODIC_HOLD/RELEASE/REMOVE`` expressions (and the hold's
    reason and subcode), parsed once from their config text."""

    hold: ExprTree | None = None
    hold_reason: ExprTree | None = None
    hold_subcode: ExprTree | None = None
    release: ExprTree | None = None
    remove: ExprTree | None = None

    @classmethod
    def from_config(cls, hold: str | None = None, release: str | None = None, remove: str | None = None,
                    hold_reason: str | None = None, hold_subcode: str | None = None) -> "SystemPolicy":
        """Parse the knobs' text; empty or None means the knob is not set.

        Raises:
            BadConstraintError: a knob's text does not parse (the message names it).
        """
        return cls(hold=_compile("SYSTEM_PERIODIC_HOLD", hold),
                   hold_reason=_compile("SYSTEM_PERIODIC_HOLD_REASON", hold_reason),
                   hold_subcode=_compile("SYSTEM_PERIODIC_HOLD_SUBCODE", hold_subcode),
                   release=_compile("SYSTEM_PERIODIC_RELEASE", release),
                   remove=_compile("SYSTEM_PERIODIC_REMOVE", remove))


NO_SYSTEM_POLICY = SystemPolicy()


def _fires(ad: ClassAd, attr: str) -> bool:
    return attr in ad and ad.evaluate(attr) is True


def _string_attr(ad: ClassAd, attr: str) -> str | None:
    value = ad.evaluate(attr)
    return value if type(value) is str else None


def _int_attr(ad: ClassAd, attr: str) -> int:
    value = ad.evaluate(attr)
    return value if type(value) is int else 0


def _expression_text(ad: ClassAd, attr: str) -> str:
    return str(ad.lookup(attr))


def _user_reason(ad: ClassAd, attr: str, reason_attr: str) -> str:
    given = _string_attr(ad, reason_attr)
    if given:
        return given
    return f"The job attribute {attr} expression '{_expression_text(ad, attr)}' evaluated to TRUE"


def _system_fires(expr: ExprTree | None, ad: ClassAd) -> bool:
    return expr is not None and expr.evaluate(ad) is True


def _system_reason(policy: SystemPolicy, ad: ClassAd, knob: str, expr: ExprTree) -> tuple[str, int]:
    reason = policy.hold_reason.evaluate(ad) if policy.hold_reason is not None else UNDEFINED
    subcode = policy.hold_subcode.evaluate(ad) if policy.hold_subcode is not None else UNDEFINED
    text = reason if type(reason) is str and reason else f"The system macro {knob} expression '{expr}' evaluated to TRUE"
    return text, subcode if type(subcode) is int else 0


def periodic_decision(ad: ClassAd, system: SystemPolicy = NO_SYSTEM_POLICY) -> Decision | None:
    """What the periodic expressions decide for one job now, or None.

    Held jobs may be released (never those a user held, ``HoldReasonCode == 1``) or
    removed; idle and running jobs may be held or removed. Only a boolean true fires.
    """
    status = status_of(ad)
    if status == JobStatus.HELD:
        if _int_attr(ad, "HoldReasonCode") != HoldCode.UserRequest:
            if _fires(ad, "PeriodicRelease"):
                return Decision(PolicyAction.RELEASE, _user_reason(ad, "PeriodicRelease", "PeriodicReleaseReason"))
            if _system_fires(system.release, ad):
                return Decision(PolicyAction.RELEASE,
                                f"The system macro SYSTEM_PERIODIC_RELEASE expression '{system.release}' evaluated to TRUE")
    elif status == JobStatus.IDLE or status in ACTIVE:
        if _fires(ad, "PeriodicHold"):
            return Decision(PolicyAction.HOLD, _user_reason(ad, "PeriodicHold", "PeriodicHoldReason"),
                            HoldCode.JobPolicy, _int_attr(ad, "PeriodicHoldSubCode"))
        if _system_fires(system.hold, ad):
            reason, subcode = _system_reason(system, ad, "SYSTEM_PERIODIC_HOLD", system.hold)
            return Decision(PolicyAction.HOLD, reason, HoldCode.SystemPolicy, subcode)
    else:
        return None
    if _fires(ad, "PeriodicRemove"):
        return Decision(PolicyAction.REMOVE, _user_reason(ad, "PeriodicRemove", "PeriodicRemoveReason"))
    if _system_fires(system.remove, ad):
        return Decision(PolicyAction.REMOVE,
                        f"The system macro SYSTEM_PERIODIC_REMOVE expression '{system.remove}' evaluated to TRUE")
    return None


def _undefined_hold(ad: ClassAd, attr: str) -> Decision:
    return Decision(PolicyAction.HOLD,
                    f"The job attribute {attr} expression '{_expression_text(ad, attr)}' evaluated to UNDEFINED",
                    HoldCode.JobPolicyUndefined, 0)


def exit_decision(ad: ClassAd, exit: ExitRecord) -> Decision:
    """What happens to a job whose process just ended: ``OnExitHold`` (default false)
    is checked first, then ``OnExitRemove`` (default true); false requeues the job.
    An expression that is neither true nor false holds the job (JobPolicyUndefined)."""
    changes = {k: v for k, v in exit.attributes().items() if v is not None}
    changes["NumJobCompletions"] = completions_after_exit(ad)
    job = apply_changes(ad, changes)
    if "OnExitHold" in job:
        value = job.evaluate("OnExitHold")
        if value is True:
            return Decision(PolicyAction.HOLD, _user_reason(job, "OnExitHold", "OnExitHoldReason"),
                            HoldCode.JobPolicy, _int_attr(job, "OnExitHoldSubCode"))
        if value is not False:
            return _undefined_hold(job, "OnExitHold")
    if "OnExitRemove" not in job:
        return Decision(PolicyAction.COMPLETE)
    value = job.evaluate("OnExitRemove")
    if value is True:
        return Decision(PolicyAction.COMPLETE)
    if value is False:
        return Decision(PolicyAction.REQUEUE, "The job attribute OnExitRemove expression evaluated to FALSE")
    return _undefined_hold(job, "OnExitRemove")


@attrs.define
class ExitStep:
    """Records a running job's exit (a step for :meth:`schedd.queue.JobQueue.transition` or
    ``transitions``): ``on_exit_hold``/``on_exit_remove`` decide, on the
    ad the step is given, whether it is held, completed or requeued. The step keeps
    that ad and the decision for its caller (the terminated event reads the ad)."""

    exit: ExitRecord
    decision: Decision | None = None
    ad: ClassAd | None = None

    def __call__(self, ad: ClassAd, clock: ClockLike) -> Transition:
        self.ad, self.decision = ad, exit_decision(ad, self.exit)
        if self.decision.action is PolicyAction.HOLD:
            decision = self.decision
            result = hold(ad, decision.reason, clock, decision.code, decision.subcode)
            return attrs.evolve(result, changes={**self.exit.attributes(), **result.changes})
        make = complete if self.decision.action is PolicyAction.COMPLETE else requeue
        return make(ad, self.exit, clock)


def frozen_attributes(decision: Decision) -> dict[str, Any]:
    """The attribute values a decision records, for logging and tests."""
    if decision.action is PolicyAction.HOLD:
        return {"HoldReason": decision.reason, "HoldReasonCode": decision.code,
                "HoldReasonSubCode": decision.subcode}
    if decision.action is PolicyAction.RELEASE:
        return {"ReleaseReason": decision.reason}
    if decision.action is PolicyAction.REMOVE:
        return {"RemoveReason": decision.reason}
    return {}


__all__ = ["PolicyAction", "Decision", "SystemPolicy", "periodic_decision", "exit_decision", "ExitStep",
           "frozen_attributes", "ERROR"]
