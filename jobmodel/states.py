"""The job state machine: HTCondor's JobStatus codes and the transitions between
them, as pure functions from a job ad and a time to the attribute changes to make.

Nothing here writes; :class:`schedd.queue.JobQueue` applies a :class:`Transition`
in one transaction, and the service writes its ``event`` to the job's event log.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import Any, Protocol, Union

import attrs

from classad import ClassAd
from classad.convert import python_to_node
from classad.nodes import is_node
from jobmodel.errors import InvalidTransitionError
from jobmodel.eventlog import Event, EventType


class JobStatus(enum.IntEnum):
    """HTCondor's ``JobStatus`` values."""

    IDLE = 1
    RUNNING = 2
    REMOVED = 3
    COMPLETED = 4
    HELD = 5
    TRANSFERRING_OUTPUT = 6
    SUSPENDED = 7


#: Names ``condor_q`` and the docs use for each status.
STATUS_NAMES = {
    JobStatus.IDLE: "Idle", JobStatus.RUNNING: "Running", JobStatus.REMOVED: "Removed",
    JobStatus.COMPLETED: "Completed", JobStatus.HELD: "Held",
    JobStatus.TRANSFERRING_OUTPUT: "Transferring Output", JobStatus.SUSPENDED: "Suspended",
}


class HoldCode(enum.IntEnum):
    """The ``HoldReasonCode`` values the schedd itself sets."""

    UserRequest = 1
    JobPolicy = 3
    JobPolicyUndefined = 5
    SubmittedOnHold = 15
    SystemPolicy = 26
    SystemPolicyUndefined = 27


#: States in which a job has (or is about to have) a shadow.
ACTIVE = frozenset({JobStatus.RUNNING, JobStatus.TRANSFERRING_OUTPUT, JobStatus.SUSPENDED})
#: States a job only leaves by leaving the queue.
FINISHED = frozenset({JobStatus.COMPLETED, JobStatus.REMOVED})

#: Marks an attribute a transition deletes from the job ad.
DELETE = None


class Clock(Protocol):
    """Anything with ``seconds()``, such as Twisted's reactor or ``task.Clock``."""

    def seconds(self) -> float: ...


ClockLike = Union[Clock, Callable[[], float]]


def now_from(clock: ClockLike) -> int:
    """Whole seconds from an injected clock (an object with ``seconds()`` or a callable)."""
    seconds = clock.seconds() if hasattr(clock, "seconds") else clock()
    return int(seconds)


@attrs.frozen(order=True)
class JobId:
    """A job's ``ClusterId.ProcId``, ordered as the queue lists jobs (cluster, then proc)."""

    cluster: int
    proc: int

    def __str__(self) -> str:
        return f"{self.cluster}.{self.proc}"

    @classmethod
    def parse(cls, text: str) -> "JobId":
        """``"12.3"`` as a JobId.

        Raises:
            ValueError: ``text`` is not two non-negative integers joined by a dot.
        """
        cluster, dot, proc = text.strip().partition(".")
        if not dot or not cluster.isdigit() or not proc.isdigit():
            raise ValueError(f"job id {text!r} is not of the form ClusterId.ProcId, such as 12.0")
        return cls(int(cluster), int(proc))


@attrs.frozen
class Transition:
    """What one action does to one job: attribute changes (``None`` deletes), whether
    its shadow must be told to stop, and the event to log."""

    job_id: JobId
    changes: Mapping[str, Any]
    event: Event | None = None
    stop_shadow: bool = False


def status_of(ad: ClassAd) -> JobStatus:
    """The job's status.

    Raises:
        InvalidTransitionError: ``JobStatus`` is missing or not one of 1-7.
    """
    value = ad.evaluate("JobStatus")
    try:
        return JobStatus(value)
    except ValueError:
        raise InvalidTransitionError(f"job {job_id_of(ad)} has JobStatus {value!r}, not one of 1-7") from None


def job_id_of(ad: ClassAd) -> JobId:
    """The ``ClusterId.ProcId`` of a job ad (-1 for a missing part)."""
    cluster, proc = ad.evaluate("ClusterId"), ad.evaluate("ProcId")
    return JobId(cluster if type(cluster) is int else -1, proc if type(proc) is int else -1)


def _event(kind: EventType, ad: ClassAd, now: int, attributes: dict[str, Any], job: JobId | None = None) -> Event:
    """The event of job ``job`` (read off ``ad`` when not given)."""
    job = job or job_id_of(ad)
    return Event(kind, job.cluster, job.proc, now, attributes)


def _int_attr(ad: ClassAd, name: str, default: int = 0) -> int:
    value = ad.evaluate(name)
    return value if type(value) is int else default


def _status_change(ad: ClassAd, new: JobStatus, now: int, old: JobStatus | None = None) -> dict[str, Any]:
    """The changes of a move to ``new`` from ``old`` (read off ``ad`` when not given)."""
    return {"JobStatus": int(new), "LastJobStatus": int(old or status_of(ad)), "EnteredCurrentStatus": now}


def _refuse(ad: ClassAd, action: str, why: str) -> InvalidTransitionError:
    status = STATUS_NAMES[status_of(ad)]
    return InvalidTransitionError(f"cannot {action} job {job_id_of(ad)}: it is {status}{why}")


def _holds_by_reason(ad: ClassAd, code: int) -> ClassAd:
    label = HoldCode(code).name if code in HoldCode._value2member_map_ else f"Code{code}"
    counts = ad.get("NumHoldsByReason")
    merged = ClassAd()
    if isinstance(counts, ClassAd):
        for name in counts:
            merged[name] = counts[name]
    merged[label] = (merged[label] if label in merged else 0) + 1
    return merged


def hold(ad: ClassAd, reason: str, clock: ClockLike, code: int = HoldCode.UserRequest,
         subcode: int = 0) -> Transition:
    """Put an idle, running or suspended job on hold; a running job's shadow is stopped.

    Raises:
        InvalidTransitionError: the job is already held, completed or removed.
    """
    status = status_of(ad)
    if status == JobStatus.HELD:
        raise _refuse(ad, "hold", " already")
    if status in FINISHED:
        raise _refuse(ad, "hold", "")
    now, job = now_from(clock), job_id_of(ad)
    changes = _status_change(ad, JobStatus.HELD, now, status)
    changes.update(HoldReason=reason, HoldReasonCode=int(code), HoldReasonSubCode=int(subcode),
                   NumHolds=_int_attr(ad, "NumHolds") + 1,
                   NumHoldsByReason=_holds_by_reason(ad, int(code)))
    event = _event(EventType.JOB_HELD, ad, now,
                  {"HoldReason": reason, "HoldReasonCode": int(code), "HoldReasonSubCode": int(subcode)}, job)
    return Transition(job, changes, event, stop_shadow=status in ACTIVE)


def release(ad: ClassAd, reason: str, clock: ClockLike) -> Transition:
    """Release a held job back to Idle, keeping its hold reason as ``LastHoldReason``.

    Raises:
        InvalidTransitionError: the job is not held.
    """
    if status_of(ad) != JobStatus.HELD:
        raise _refuse(ad, "release", ", not Held")
    now, job = now_from(clock), job_id_of(ad)
    changes = _status_change(ad, JobStatus.IDLE, now, JobStatus.HELD)
    for name in ("HoldReason", "HoldReasonCode", "HoldReasonSubCode"):
        if name in ad:
            changes["Last" + name] = ad.evaluate(name)
        changes[name] = DELETE
    changes["ReleaseReason"] = reason
    event = _event(EventType.JOB_RELEASED, ad, now, {"Reason": reason}, job)
    return Transition(job, changes, event)


@attrs.frozen
class JobFacts:
    """What the removal rules read of a job: its id, its status and where it runs (the
    ``RemoteHost`` and ``RemotePool`` strings, None when it has none). The queue reads
    them straight from a job's stored text when it can, without building its ad."""

    job_id: JobId
    status: JobStatus
    remote_host: str | None = None
    remote_pool: str | None = None


def facts_of(ad: ClassAd) -> JobFacts:
    """A job ad's :class:`JobFacts`.

    Raises:
        InvalidTransitionError: ``JobStatus`` is missing or not one of 1-7.
    """
    return JobFacts(job_id_of(ad), status_of(ad), *_where_it_runs(ad))


def remove(ad: ClassAd, reason: str, clock: ClockLike) -> Transition:
    """:func:`removal` of a job ad, now.

    Raises:
        InvalidTransitionError: the job is already Removed, or has no valid JobStatus.
    """
    return removal(facts_of(ad), reason, now_from(clock))


def removal(job: JobFacts, reason: str, now: int) -> Transition:
    """Mark a job Removed. An idle, held or completed job has no run left, so it drops any
    stale ``RemoteHost`` and leaves at once (unless ``LeaveJobInQueue`` keeps it); a running
    one waits for its shadow.

    Raises:
        InvalidTransitionError: the job is already Removed.
    """
    if job.status == JobStatus.REMOVED:
        raise InvalidTransitionError(f"cannot remove job {job.job_id}: it is {STATUS_NAMES[job.status]} already "
                                     "(waiting for its shadow to exit)")
    changes: dict[str, Any] = {"JobStatus": int(JobStatus.REMOVED), "LastJobStatus": int(job.status),
                               "EnteredCurrentStatus": now, "RemoveReason": reason}
    event = None
    if job.status not in ACTIVE:
        changes["RemoteHost"] = DELETE
        changes.update(_left(job.remote_host, job.remote_pool))
        event = Event(EventType.JOB_ABORTED, job.job_id.cluster, job.job_id.proc, now, {"Reason": reason})
    return Transition(job.job_id, changes, event, stop_shadow=job.status in ACTIVE)


def removal_alike(decided: Transition, job_id: JobId) -> Transition:
    """What :func:`removal` makes of job ``job_id`` when it is alike the job of ``decided``
    (a removal made by :func:`removal`: the same status and run, for the same reason at
    the same time): the same changes, and its own abort event when ``decided`` has one.
    A large removal decides once per cluster and status instead of once per job."""
    event = decided.event
    if event is not None:
        event = Event(event.type, job_id.cluster, job_id.proc, event.time, dict(event.attributes))
    return Transition(job_id, dict(decided.changes), event, decided.stop_shadow)


def removal_done(ad: ClassAd, clock: ClockLike) -> Transition:
    """The shadow of a Removed job has exited: log the abort; the job may now leave.

    Raises:
        InvalidTransitionError: the job is not Removed.
    """
    if status_of(ad) != JobStatus.REMOVED:
        raise _refuse(ad, "finish removing", ", not Removed")
    reason = ad.evaluate("RemoveReason")
    event = _event(EventType.JOB_ABORTED, ad, now_from(clock),
                  {"Reason": reason if type(reason) is str else ""})
    return Transition(job_id_of(ad), _off_machine(ad), event)


def _off_machine(ad: ClassAd) -> dict[str, Any]:
    """The job no longer runs anywhere: ``RemoteHost`` becomes ``LastRemoteHost`` (and the
    ``RemotePool`` of a flocked run ``LastRemotePool``)."""
    changes: dict[str, Any] = {"RemoteHost": DELETE}
    changes.update(left_machine(ad))
    return changes


def left_machine(ad: ClassAd) -> dict[str, Any]:
    """The changes of a job whose run ended: ``RemoteHost`` and ``RemotePool`` (a run in
    another pool, flocked there) become ``LastRemoteHost`` and ``LastRemotePool``."""
    return _left(*_where_it_runs(ad))


def _where_it_runs(ad: ClassAd) -> tuple[str | None, str | None]:
    """The job's ``RemoteHost`` and ``RemotePool`` strings (None for one that is not a string)."""
    values = (ad.evaluate(name) if name in ad else None for name in ("RemoteHost", "RemotePool"))
    host, pool = (value if type(value) is str else None for value in values)
    return host, pool


def _left(remote_host: str | None, remote_pool: str | None) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    for name, value in (("RemoteHost", remote_host), ("RemotePool", remote_pool)):
        if value is not None:
            changes[name] = DELETE
            changes[f"Last{name}"] = value
    return changes


def start(ad: ClassAd, execute_host: str, clock: ClockLike, slot_name: str | None = None,
          remote_pool: str | None = None) -> Transition:
    """An idle job starts running on ``execute_host`` (a sinful string), in pool
    ``remote_pool`` when it flocked to another pool (``RemotePool``).

    Raises:
        InvalidTransitionError: the job is not Idle.
    """
    if status_of(ad) != JobStatus.IDLE:
        raise _refuse(ad, "start", ", not Idle")
    now = now_from(clock)
    changes = _status_change(ad, JobStatus.RUNNING, now)
    changes.update(JobCurrentStartDate=now, NumJobStarts=_int_attr(ad, "NumJobStarts") + 1,
                   RemoteHost=slot_name or execute_host)
    if remote_pool:
        changes["RemotePool"] = remote_pool
    if "JobStartDate" not in ad:
        changes["JobStartDate"] = now
    attrs_ = {"ExecuteHost": execute_host}
    if slot_name:
        attrs_["SlotName"] = slot_name
    return Transition(job_id_of(ad), changes, _event(EventType.EXECUTE, ad, now, attrs_))


def vacate(ad: ClassAd, clock: ClockLike) -> Transition:
    """Evict a running job back to Idle, to be matched again.

    Raises:
        InvalidTransitionError: the job is not running or suspended.
    """
    if status_of(ad) not in ACTIVE:
        raise _refuse(ad, "vacate", ", not Running")
    now = now_from(clock)
    changes = _status_change(ad, JobStatus.IDLE, now)
    changes.update(_off_machine(ad))
    event = _event(EventType.JOB_EVICTED, ad, now, {"Checkpointed": False})
    return Transition(job_id_of(ad), changes, event, stop_shadow=True)


@attrs.frozen
class ExitRecord:
    """How a job's process ended, as its shadow reports it."""

    exit_code: int | None = None
    exit_by_signal: bool = False
    exit_signal: int | None = None

    def attributes(self) -> dict[str, Any]:
        """The job attributes HTCondor sets for this exit."""
        found: dict[str, Any] = {"ExitBySignal": self.exit_by_signal}
        if self.exit_by_signal:
            found["ExitSignal"] = self.exit_signal
            found["ExitCode"] = DELETE
        else:
            found["ExitCode"] = self.exit_code
        return found


def completions_after_exit(ad: ClassAd) -> int:
    """``NumJobCompletions`` once this exit is counted, as HTCondor counts it before
    evaluating ``OnExitRemove``."""
    value = ad.evaluate("NumJobCompletions")
    return (value if type(value) is int else 0) + 1


def complete(ad: ClassAd, exit: ExitRecord, clock: ClockLike) -> Transition:
    """A running job exited and its policy let it leave: it becomes Completed.

    Raises:
        InvalidTransitionError: the job is not running.
    """
    if status_of(ad) not in ACTIVE:
        raise _refuse(ad, "complete", ", not Running")
    now = now_from(clock)
    changes = _status_change(ad, JobStatus.COMPLETED, now)
    changes.update(exit.attributes())
    changes["NumJobCompletions"] = completions_after_exit(ad)
    changes.update(_off_machine(ad))
    changes["CompletionDate"] = now
    event_attrs: dict[str, Any] = {"TerminatedNormally": not exit.exit_by_signal}
    if exit.exit_by_signal:
        event_attrs["TerminatedBySignal"] = exit.exit_signal
    else:
        event_attrs["ReturnValue"] = exit.exit_code
    event = _event(EventType.JOB_TERMINATED, ad, now, event_attrs)
    return Transition(job_id_of(ad), changes, event)


def leave_in_queue(ad: ClassAd) -> bool:
    """Whether a job stays in the queue. Only a completed or removed job may leave:
    when its ``LeaveJobInQueue`` is not true and, if removed, its shadow is gone
    (it has no ``RemoteHost``)."""
    status = status_of(ad)
    if status not in FINISHED:
        return True
    if status == JobStatus.REMOVED and type(ad.evaluate("RemoteHost")) is str:
        return True
    return ad.evaluate("LeaveJobInQueue") is True


def apply_changes(ad: ClassAd, changes: Mapping[str, Any]) -> ClassAd:
    """A copy of ``ad`` with ``changes`` (Python values or expression nodes; ``None``
    deletes) made. The unchanged attributes are shared with ``ad``, not copied."""
    kept = [(name, value if is_node(value) else python_to_node(value))
            for name, value in changes.items() if value is not DELETE]
    result = ad.derive(kept, [name for name, value in changes.items() if value is DELETE])
    result.parent = None
    return result


def requeue(ad: ClassAd, exit: ExitRecord, clock: ClockLike) -> Transition:
    """A running job exited but its ``OnExitRemove`` was false: it goes back to Idle
    to run again, with its exit recorded and a termination event logged.

    Raises:
        InvalidTransitionError: the job is not running.
    """
    finished = complete(ad, exit, clock)
    changes = dict(finished.changes)
    changes["JobStatus"] = int(JobStatus.IDLE)
    changes.pop("CompletionDate", None)
    return Transition(finished.job_id, changes, finished.event)
