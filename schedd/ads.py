"""The ads the schedd advertises: one Submitter ad per submitter with jobs (an
accounting group user such as ``group_a.alice``, else an owner), saying how many are
idle, running and held, and the schedd's own Scheduler ad with the totals.
Pure functions from the queue's counts to JSON-form ads."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from jobmodel.states import JobStatus

Totals = Mapping[str | None, Mapping[JobStatus, int]]
#: Per submitter, per owner of its jobs, how many are in each status.
SubmitterTotals = Mapping[str | None, Totals]

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


def submitter_ads(totals: SubmitterTotals, schedd_name: str, address: str, domain: str) -> list[dict]:
    """One Submitter ad per submitter that has idle, running or held jobs, named
    ``<submitter>@UID_DOMAIN`` with this schedd's ``domain`` (HTCondor's rule: the jobs'
    ``AccountingGroup``, else their ``Owner``, so a user's plain jobs and her jobs of
    each group are separate submitters); ``address`` is the schedd's ``host:port``.
    A group user's ad carries ``AccountingGroup``; ``Owner`` when one owner has the jobs."""
    ads = []
    for submitter in sorted(name for name in totals if name):
        by_owner = totals[submitter]
        idle, running, held = _counts(_summed(by_owner.values()))
        if not (idle or running or held):
            continue
        owners = sorted(owner for owner in by_owner if owner)
        ad = {"MyType": "Submitter", "Name": user_name(submitter, domain)}
        if owners != [submitter]:
            ad["AccountingGroup"] = submitter
        if len(owners) == 1:
            ad["Owner"] = owners[0]
        ads.append({**ad, "ScheddName": schedd_name, "ScheddIpAddr": f"<{address}>", "MyAddress": f"<{address}>",
                    "IdleJobs": idle, "RunningJobs": running, "HeldJobs": held})
    return ads


def _summed(counts: Iterable[Mapping[JobStatus, int]]) -> dict[JobStatus, int]:
    summed: dict[JobStatus, int] = {}
    for by_status in counts:
        for status, count in by_status.items():
            summed[status] = summed.get(status, 0) + count
    return summed


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
