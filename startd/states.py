"""Slot State and Activity, and the transitions between them, as pure functions of time.

The pairs and moves follow HTCondor's startd: a slot is Unclaimed until matched
or claimed, Claimed/Idle until a job is activated (Busy), Retiring when asked to
finish peacefully, Preempting/Vacating or Killing while its job is stopped, and
Drained while an administrator keeps new work away.
"""

from __future__ import annotations

import enum

import attrs

from startd.errors import SlotStateError


class State(str, enum.Enum):
    """HTCondor's slot ``State`` values (Backfill is not offered)."""

    OWNER = "Owner"
    UNCLAIMED = "Unclaimed"
    MATCHED = "Matched"
    CLAIMED = "Claimed"
    PREEMPTING = "Preempting"
    DRAINED = "Drained"


class Activity(str, enum.Enum):
    """HTCondor's slot ``Activity`` values."""

    IDLE = "Idle"
    BUSY = "Busy"
    SUSPENDED = "Suspended"
    RETIRING = "Retiring"
    VACATING = "Vacating"
    KILLING = "Killing"
    BENCHMARKING = "Benchmarking"


Pair = tuple[State, Activity]
S, A = State, Activity

VALID_PAIRS: frozenset[Pair] = frozenset({
    (S.OWNER, A.IDLE), (S.UNCLAIMED, A.IDLE), (S.UNCLAIMED, A.BENCHMARKING),
    (S.MATCHED, A.IDLE), (S.CLAIMED, A.IDLE), (S.CLAIMED, A.BUSY), (S.CLAIMED, A.SUSPENDED),
    (S.CLAIMED, A.RETIRING), (S.PREEMPTING, A.VACATING), (S.PREEMPTING, A.KILLING),
    (S.DRAINED, A.IDLE), (S.DRAINED, A.RETIRING),
})

_CLAIMED_WITH_JOB = [(S.CLAIMED, A.BUSY), (S.CLAIMED, A.SUSPENDED), (S.CLAIMED, A.RETIRING)]

#: event -> (pairs it may start from, pair it leads to)
TRANSITIONS: dict[str, tuple[list[Pair], Pair]] = {
    "match": ([(S.UNCLAIMED, A.IDLE)], (S.MATCHED, A.IDLE)),
    "match_timeout": ([(S.MATCHED, A.IDLE)], (S.UNCLAIMED, A.IDLE)),
    "claim": ([(S.UNCLAIMED, A.IDLE), (S.MATCHED, A.IDLE)], (S.CLAIMED, A.IDLE)),
    "activate": ([(S.CLAIMED, A.IDLE)], (S.CLAIMED, A.BUSY)),
    "suspend": ([(S.CLAIMED, A.BUSY)], (S.CLAIMED, A.SUSPENDED)),
    "resume": ([(S.CLAIMED, A.SUSPENDED)], (S.CLAIMED, A.BUSY)),
    "retire": ([(S.CLAIMED, A.BUSY), (S.CLAIMED, A.SUSPENDED)], (S.CLAIMED, A.RETIRING)),
    "job_exit": (_CLAIMED_WITH_JOB, (S.CLAIMED, A.IDLE)),
    "vacate": ([(S.CLAIMED, A.IDLE), *_CLAIMED_WITH_JOB], (S.PREEMPTING, A.VACATING)),
    "kill": ([(S.CLAIMED, A.IDLE), *_CLAIMED_WITH_JOB, (S.PREEMPTING, A.VACATING)],
             (S.PREEMPTING, A.KILLING)),
    "release": ([(S.MATCHED, A.IDLE), (S.CLAIMED, A.IDLE), (S.PREEMPTING, A.VACATING),
                 (S.PREEMPTING, A.KILLING)], (S.UNCLAIMED, A.IDLE)),
    "drain": ([(S.OWNER, A.IDLE), (S.UNCLAIMED, A.IDLE), (S.MATCHED, A.IDLE)], (S.DRAINED, A.IDLE)),
    "drain_busy": ([(S.CLAIMED, A.IDLE), *_CLAIMED_WITH_JOB], (S.DRAINED, A.RETIRING)),
    "drain_done": ([(S.DRAINED, A.RETIRING)], (S.DRAINED, A.IDLE)),
    "cancel_drain": ([(S.DRAINED, A.IDLE), (S.DRAINED, A.RETIRING)], (S.UNCLAIMED, A.IDLE)),
}


def _check_pair(instance: object, attribute: object, value: object) -> None:
    pair = (instance.state, instance.activity)  # type: ignore[attr-defined]
    if pair not in VALID_PAIRS:
        raise SlotStateError(f"{pair[0].value}/{pair[1].value} is not a valid slot state")


@attrs.frozen
class SlotStatus:
    """A slot's State and Activity with the times it entered each (``EnteredCurrent*``)."""

    state: State
    activity: Activity = attrs.field(validator=_check_pair)
    entered_state: float
    entered_activity: float

    @classmethod
    def unclaimed(cls, now: float) -> SlotStatus:
        """A fresh slot: Unclaimed/Idle since ``now``."""
        return cls(S.UNCLAIMED, A.IDLE, now, now)

    def describe(self) -> str:
        """``Claimed/Busy``."""
        return f"{self.state.value}/{self.activity.value}"


def apply_event(status: SlotStatus, event: str, now: float, slot: str = "slot") -> SlotStatus:
    """The status after ``event`` at time ``now``; entry times move only for what changed.

    Raises:
        SlotStateError: ``event`` is unknown or not allowed from ``status``, naming the slot.
    """
    if event not in TRANSITIONS:
        raise SlotStateError(f"{slot}: unknown slot event {event!r}; expected one of "
                             f"{', '.join(sorted(TRANSITIONS))}")
    sources, (state, activity) = TRANSITIONS[event]
    if (status.state, status.activity) not in sources:
        allowed = ", ".join(f"{s.value}/{a.value}" for s, a in sources)
        raise SlotStateError(f"{slot}: cannot {event.replace('_', ' ')} in {status.describe()}; "
                             f"allowed from {allowed}")
    state_changed = state != status.state
    return SlotStatus(
        state, activity,
        entered_state=now if state_changed else status.entered_state,
        entered_activity=now if state_changed or activity != status.activity
        else status.entered_activity)
