"""What a claimed slot says about its claim's job: the accounting group it is charged to,
its concurrency limits, how much the slot likes it, and its retirement time.

Pure functions from the job's ad and the slot's ad to HTCondor's slot attributes
(``AccountingGroup``, ``RemoteGroup``, ``RemoteNegotiatingGroup``, ``ConcurrencyLimits``,
``CurrentRank``, ``JobPrio``, ``MaxJobRetirementTime``); the negotiator reads them to
count limits, charge groups and choose what to preempt.
"""

from __future__ import annotations

from collections.abc import Iterable

import classad
from classad.values import UNDEFINED

#: ``RemoteGroup`` of a job outside any accounting group (HTCondor's word).
NO_GROUP = "<none>"

#: Per-child lists a partitionable slot carries, from its dynamic slots' attributes.
CHILD_LISTS = (("ChildAccountingGroup", "AccountingGroup", ""), ("ChildCurrentRank", "CurrentRank", 0.0),
               ("ChildJobStart", "JobStart", 0), ("ChildName", "Name", ""))


def _string(job: classad.ClassAd, attr: str, target: classad.ClassAd | None = None) -> str | None:
    if attr not in job:
        return None
    value = job.evaluate(attr, target) if target is not None else job.evaluate(attr)
    return value if type(value) is str and value.strip() else None


def _number(value: object) -> float | None:
    return float(value) if type(value) in (int, float) else None


def accounting_group(job: classad.ClassAd, remote_user: str | None) -> str | None:
    """The name the claim is charged to: the job's ``AccountingGroup`` with the domain of
    its user (``group_a.alice@pool``, the Submitter's Name), None when the job has none."""
    group = _string(job, "AccountingGroup")
    if group is None:
        return None
    user = remote_user or _string(job, "User") or ""
    return f"{group}@{user.rsplit('@', 1)[1]}" if "@" in user and "@" not in group else group


def remote_group(job: classad.ClassAd) -> str:
    """The group part of the job's accounting group (``AcctGroup``, else what comes before
    the last dot of ``AccountingGroup``), or ``<none>``."""
    group = _string(job, "AcctGroup")
    if group is not None:
        return group
    name = _string(job, "AccountingGroup")
    return name.rsplit(".", 1)[0] if name is not None and "." in name else NO_GROUP


def concurrency_limits(job: classad.ClassAd, slot_ad: classad.ClassAd) -> str | None:
    """The job's ``ConcurrencyLimits`` evaluated with the slot as TARGET, lower-cased
    (an expression from ``concurrency_limits_expr`` becomes the string it gives here)."""
    limits = _string(job, "ConcurrencyLimits", slot_ad)
    return limits.lower() if limits is not None else None


def retirement_time(job: classad.ClassAd, slot_ad: classad.ClassAd, startd_expression: str) -> float:
    """``MaxJobRetirementTime`` of the claim: the smaller of the startd's
    ``MAXJOBRETIREMENTTIME`` (evaluated against the job) and the job's own; 0 when neither."""
    try:
        mine = _number(classad.ExprTree(startd_expression).evaluate(slot_ad, job)) or 0.0
    except ValueError:
        mine = 0.0
    own = _number(job.evaluate("MaxJobRetirementTime", slot_ad)) if "MaxJobRetirementTime" in job else None
    return max(0.0, min(mine, own) if own is not None else mine)


def claim_attributes(job: classad.ClassAd, slot_ad: classad.ClassAd, remote_user: str | None,
                     startd_retirement: str = "0") -> dict[str, object]:
    """The attributes a slot claimed for ``job`` adds to its ad ``slot_ad``."""
    found: dict[str, object] = {}
    group = accounting_group(job, remote_user)
    if group is not None:
        found["AccountingGroup"] = group
    found["RemoteGroup"] = found["RemoteNegotiatingGroup"] = remote_group(job)
    limits = concurrency_limits(job, slot_ad)
    if limits is not None:
        found["ConcurrencyLimits"] = limits
    rank = slot_ad.evaluate("Rank", job) if "Rank" in slot_ad else UNDEFINED
    found["CurrentRank"] = _number(rank) or 0.0
    prio = _number(job.evaluate("JobPrio")) if "JobPrio" in job else None
    found["JobPrio"] = int(prio) if prio is not None else 0
    retirement = retirement_time(job, slot_ad, startd_retirement)
    found["MaxJobRetirementTime"] = int(retirement) if retirement.is_integer() else retirement
    gang = _string(job, "GangId")
    if gang is not None:
        found["GangId"] = gang
    return found


def child_claim_lists(child_ads: Iterable[classad.ClassAd]) -> dict[str, list]:
    """A partitionable slot's per-child lists (same order as ``ChildRemoteUser``)."""
    ads = list(child_ads)
    return {name: [_child_value(ad, attr, empty) for ad in ads] for name, attr, empty in CHILD_LISTS}


def _child_value(ad: classad.ClassAd, attr: str, empty: object) -> object:
    value = ad.evaluate(attr) if attr in ad else None
    return value if type(value) is type(empty) else empty
