"""The ads the schedd advertises: one Submitter ad per owner with jobs, saying how
many are idle, running and held, and the schedd's own Scheduler ad with the totals.
Pure functions from the queue's counts to JSON-form ads."""

from __future__ import annotations

from collections.abc import Mapping

from jobmodel.states import JobStatus

Totals = Mapping[str | None, Mapping[JobStatus, int]]

#: JobStatus values counted as running in the ads (a job with a shadow).
RUNNING_STATES = (JobStatus.RUNNING, JobStatus.TRANSFERRING_OUTPUT, JobStatus.SUSPENDED)


def _counts(by_status: Mapping[JobStatus, int]) -> tuple[int, int, int]:
    idle = by_status.get(JobStatus.IDLE, 0)
    running = sum(by_status.get(status, 0) for status in RUNNING_STATES)
    held = by_status.get(JobStatus.HELD, 0)
    return idle, running, held


def user_name(owner: str, uid_domain: str) -> str:
    """The name a user is known by in the pool, ``owner@UID_DOMAIN`` (HTCondor's rule):
    the ``User`` of its jobs, the Name of its Submitter ad, and so the name the
    accountant charges (a claimed slot's ``RemoteOwner`` is the job's ``User``)."""
    return f"{owner}@{uid_domain}"


def submitter_ads(totals: Totals, schedd_name: str, address: str, domain: str) -> list[dict]:
    """One Submitter ad per owner that has idle, running or held jobs, named by
    :func:`user_name` with this schedd's ``UID_DOMAIN`` ``domain``, as its jobs'
    ``User`` is; ``address`` is the schedd's ``host:port``."""
    ads = []
    for owner in sorted(name for name in totals if name):
        idle, running, held = _counts(totals[owner])
        if not (idle or running or held):
            continue
        ads.append({
            "MyType": "Submitter",
            "Name": user_name(owner, domain),
            "Owner": owner,
            "ScheddName": schedd_name,
            "ScheddIpAddr": f"<{address}>",
            "MyAddress": f"<{address}>",
            "IdleJobs": idle,
            "RunningJobs": running,
            "HeldJobs": held,
        })
    return ads


def scheduler_totals(totals: Totals) -> dict:
    """The Scheduler ad's totals over every owner."""
    idle = running = held = 0
    for by_status in totals.values():
        i, r, h = _counts(by_status)
        idle, running, held = idle + i, running + r, held + h
    users = sum(1 for owner, by_status in totals.items() if owner and any(_counts(by_status)))
    return {"TotalIdleJobs": idle, "TotalRunningJobs": running, "TotalHeldJobs": held,
            "TotalJobAds": sum(sum(by_status.values()) for by_status in totals.values()),
            "NumUsers": users}
