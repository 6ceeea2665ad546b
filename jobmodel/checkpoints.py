"""What a self-checkpointing job's checkpoints do to its job ad, as pure queue changes.

HTCondor's rules (condor_shadow's handling of the starter's update after a
checkpoint; the job ClassAd attributes in the manual): the starter numbers each
checkpoint (``CheckpointNumber``, 0 for the first) and says when it was taken
(``LastCheckpointTime``) and how long the job ran since it started or last
checkpointed (``NewlyCommittedTime``), which is added to ``CommittedTime``: work a
later eviction can no longer lose. When the job exits, the rest of its run is
committed too, and ``CommittedSlotTime`` adds that time weighted by the slot's
``SlotWeight``. Roost also counts the checkpoints kept on the submit side in
``NumCheckpoints``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from classad import ClassAd
from jobmodel.errors import InvalidTransitionError
from jobmodel.eventlog import Event, EventType
from jobmodel.states import Transition, job_id_of, now_from

#: HTCondor's FileTransferEvent types (condor_event.h ``FileTransferEventType``).
OUT_STARTED = 5
OUT_FINISHED = 6


@attrs.frozen
class CheckpointReport:
    """One successful checkpoint, as the starter reports it."""

    number: int
    taken_at: int
    newly_committed: int

    @classmethod
    def from_attributes(cls, attrs_: Mapping[str, Any]) -> "CheckpointReport":
        """The report in a starter's ``checkpoint`` update.

        Raises:
            InvalidTransitionError: a number is missing, not whole, or negative.
        """
        return cls(*(_whole(attrs_, name) for name in ("CheckpointNumber", "LastCheckpointTime",
                                                        "NewlyCommittedTime")))


def _whole(attrs_: Mapping[str, Any], name: str) -> int:
    value = attrs_.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or value != int(value):
        raise InvalidTransitionError(f"a checkpoint report needs {name} as a whole number >= 0, got {value!r}")
    return int(value)


def _number(ad: ClassAd, name: str) -> float:
    value = ad.evaluate(name) if name in ad else None
    return value if type(value) in (int, float) else 0


def record_checkpoint(ad: ClassAd, report: CheckpointReport, clock) -> Transition:
    """The queue change for one kept checkpoint: its number and time, the time it
    committed, and one more ``NumCheckpoints``."""
    changes = {
        "CheckpointNumber": report.number,
        "LastCheckpointTime": report.taken_at,
        "CommittedTime": int(_number(ad, "CommittedTime")) + report.newly_committed,
        "NumCheckpoints": int(_number(ad, "NumCheckpoints")) + 1,
    }
    return Transition(job_id_of(ad), changes)


def commit_run(ad: ClassAd, seconds: float, clock) -> Transition:
    """The queue change when a run ends by the job's own exit: the ``seconds`` of it
    no checkpoint committed go to ``CommittedTime``, and weighted by the slot's
    weight (``MachineAttrSlotWeight0``, 1 when unknown) to ``CommittedSlotTime``."""
    seconds = max(0.0, float(seconds))
    weight = _number(ad, "MachineAttrSlotWeight0") if "MachineAttrSlotWeight0" in ad else 1
    changes = {"CommittedTime": int(_number(ad, "CommittedTime")) + int(seconds),
               "CommittedSlotTime": float(_number(ad, "CommittedSlotTime")) + seconds * weight}
    return Transition(job_id_of(ad), changes)


def output_transfer_event(ad: ClassAd, kind: int, clock) -> Transition:
    """A 040 event alone: the submit side started (``OUT_STARTED``) or finished
    (``OUT_FINISHED``) taking in files the job sent, such as its checkpoint."""
    job_id = job_id_of(ad)
    event = Event(EventType.FILE_TRANSFER, job_id.cluster, job_id.proc, now_from(clock), {"Type": kind})
    return Transition(job_id, {}, event)


__all__ = ["CheckpointReport", "record_checkpoint", "commit_run", "output_transfer_event",
           "OUT_STARTED", "OUT_FINISHED"]
