"""Slot State and Activity, and the transitions between them, as pure functions of time.

The pairs and moves follow HTCondor's startd: a slot is Unclaimed until matched
or claimed, Claimed/Idle until a job is activated (Busy), Retiring when asked to
finish peacefully, Preempting/Vacating or Killing while its job is stopped, and
Drained while an administrator keeps new work away (Drained/Retiring while its job
still runs, Drained/Idle once it is empty).
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
#: a draining slot whose job (or, for a partitionable slot, whose dynamic slots' jobs) still run
_DRAINING = (S.DRAINED, A.RETIRING)


def _to(target: Pair, *sources: Pair) -> dict[Pair, Pair]:
    return {source: target for source in sources}


#: event -> {pair it may start from: pair it leads to from there}
TRANSITIONS: dict[str, dict[Pair, Pair]] = {
    "match": _to((S.MATCHED, A.IDLE), (S.UNCLAIMED, A.IDLE)),
    "match_timeout": _to((S.UNCLAIMED, A.IDLE), (S.MATCHED, A.IDLE)),
    "claim": _to((S.CLAIMED, A.IDLE), (S.UNCLAIMED, A.IDLE), (S.MATCHED, A.IDLE)),
    "activate": _to((S.CLAIMED, A.BUSY), (S.CLAIMED, A.IDLE)),
    "suspend": _to((S.CLAIMED, A.SUSPENDED), (S.CLAIMED, A.BUSY)),
    "resume": _to((S.CLAIMED, A.BUSY), (S.CLAIMED, A.SUSPENDED)),
    "retire": _to((S.CLAIMED, A.RETIRING), (S.CLAIMED, A.BUSY), (S.CLAIMED, A.SUSPENDED)),
    # a draining slot's job ending leaves the slot Drained: its claim ends with the job
    "job_exit": {**_to((S.CLAIMED, A.IDLE), *_CLAIMED_WITH_JOB), _DRAINING: (S.DRAINED, A.IDLE)},
    "vacate": _to((S.PREEMPTING, A.VACATING), (S.CLAIMED, A.IDLE), *_CLAIMED_WITH_JOB, _DRAINING),
    "kill": _to((S.PREEMPTING, A.KILLING), (S.CLAIMED, A.IDLE), *_CLAIMED_WITH_JOB, _DRAINING,
                (S.PREEMPTING, A.VACATING)),
    "release": _to((S.UNCLAIMED, A.IDLE), (S.MATCHED, A.IDLE), (S.CLAIMED, A.IDLE), (S.PREEMPTING, A.VACATING),
                   (S.PREEMPTING, A.KILLING)),
    "drain": _to((S.DRAINED, A.IDLE), (S.OWNER, A.IDLE), (S.UNCLAIMED, A.IDLE), (S.MATCHED, A.IDLE)),
    # a slot with a job retires it (so does a partitionable slot, Unclaimed itself, for its dynamic slots)
    "drain_busy": _to(_DRAINING, (S.UNCLAIMED, A.IDLE), *_CLAIMED_WITH_JOB),
    "drain_done": _to((S.DRAINED, A.IDLE), _DRAINING),
    "cancel_drain": _to((S.UNCLAIMED, A.IDLE), (S.DRAINED, A.IDLE), _DRAINING),
    # cancelling the drain of a slot whose job still runs: the job carries on, claimed as before
    "cancel_drain_busy": _to((S.CLAIMED, A.BUSY), _DRAINING),
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
    moves = TRANSITIONS[event]
    target = moves.get((status.state, status.activity))
    if target is None:
        allowed = ", ".join(f"{s.value}/{a.value}" for s, a in moves)
        raise SlotStateError(f"{slot}: cannot {event.replace('_', ' ')} in {status.describe()}; "
                             f"allowed from {allowed}")
    state, activity = target
    state_changed = state != status.state
    return SlotStatus(
        state, activity,
        entered_state=now if state_changed else status.entered_state,
        entered_activity=now if state_changed or activity != status.activity
        else status.entered_activity)
