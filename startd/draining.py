"""Draining a machine (HTCondor's condor_drain): what a drain request says and what it
does to the jobs still running, as pure functions.

A drained machine takes no new claims. Its running jobs are treated by the request's
schedule: ``graceful`` lets them finish (vacating one only when its
``MaxJobRetirementTime`` is over), ``quick`` vacates them at once with their vacate
time, ``fast`` kills them at once. HTCondor's graceful drain treats a missing
retirement time as zero; Roost waits for such jobs to finish.
"""

from __future__ import annotations

import enum

import attrs

import classad

#: What a drained slot's ``Start`` becomes: no job may start there.
DRAINED_START = "false"


class DrainSchedule(str, enum.Enum):
    """condor_drain's ``-graceful`` (the default), ``-quick`` and ``-fast``."""

    GRACEFUL = "graceful"
    QUICK = "quick"
    FAST = "fast"


@attrs.frozen
class DrainRequest:
    """One drain of the machine: its id, schedule, reason and start time."""

    request_id: str
    schedule: DrainSchedule
    reason: str
    started_at: float


def retirement_time(job: classad.ClassAd, slot_ad: classad.ClassAd) -> float | None:
    """The job's ``MaxJobRetirementTime`` in seconds when it is a number (at least 0),
    evaluated against the slot; None when the job has none (it may run to its end)."""
    if "MaxJobRetirementTime" not in job:
        return None
    value = job.evaluate("MaxJobRetirementTime", slot_ad)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return max(0.0, float(value))


def retirement_over(job: classad.ClassAd, slot_ad: classad.ClassAd, started_at: float, now: float) -> bool:
    """Whether a graceful drain should now vacate ``job``, running since ``started_at``."""
    limit = retirement_time(job, slot_ad)
    return limit is not None and now >= started_at + limit


def drain_attributes(request: DrainRequest | None, last_stop: float | None) -> dict[str, object]:
    """The machine attributes every slot ad carries about draining (HTCondor's names)."""
    found: dict[str, object] = {"Draining": request is not None}
    if request is not None:
        found.update({"DrainingRequestId": request.request_id, "DrainReason": request.reason,
                      "LastDrainStartTime": int(request.started_at)})
    if last_stop is not None:
        found["LastDrainStopTime"] = int(last_stop)
    return found
