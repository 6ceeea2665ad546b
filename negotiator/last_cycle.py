"""What the last negotiation cycle left waiting, and why: the record behind
``GET /v1/negotiator/last-cycle`` that ``roost q -better-analyze`` and
``roost userprio -quotas`` read.

Pure: :func:`explain_cycle` takes a cycle's inputs and :class:`~negotiator.cycle.CycleResult`
and returns a :class:`LastCycle`. Each request left with jobs idle gets a reason, a
clause that follows "Job 3.0 waits: ": the cycle's own (``unmatched_reasons``,
written where the decision is made: concurrency limits, gangs, groups), else one read
from the numbers here: its group's limit or quota, users ahead of it by priority, or
a slot that matches.
"""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from classad import ClassAd
from negotiator.accountant import Accountant, group_of
from negotiator.cycle import CycleResult, CycleSettings, Submitter
from negotiator.groups import GroupSettings, quotas

#: Requests listed in one answer, job ids listed per request, characters per reason,
#: and users named as ahead in a priority reason: the route's answer stays bounded.
MAX_WAITING = 2000
MAX_JOB_IDS = 500
MAX_REASON = 1000
MAX_AHEAD = 3

#: The request ad's attributes each waiting request carries, evaluated, so that a client
#: can tell which request holds a job when the schedd sent no job ids (Roost's schedd
#: names none: requests are autoclusters).
FINGERPRINT = ("RequestCpus", "RequestMemory", "RequestDisk", "RequestGPUs", "RequestGPUMemory",
               "ConcurrencyLimits", "GangId", "JobUniverse")

#: The reason of a request nothing else explains.
NO_SLOT = "no idle slot matched its request in the last cycle"


@frozen
class Waiting:
    """One resource request that still had idle jobs when the cycle ended."""

    submitter: str
    schedd: str
    request_id: str
    job_ids: tuple[str, ...]
    left: int
    reason: str
    fingerprint: tuple[tuple[str, object], ...] = ()


@frozen
class SubmitterShare:
    """A submitter of the cycle: its priority, what it had in use and what it was given (cores)."""

    name: str
    group: str
    effective_priority: float
    in_use: float
    matched: float


@frozen
class GroupUse:
    """An accounting group's quota, ceiling and use in the cycle (cores)."""

    name: str
    config_quota: float | None
    quota: float
    limit: float | None
    surplus_weight: float
    accept_surplus: bool
    in_use: float
    matched: float

    @property
    def used(self) -> float:
        """In use before the cycle plus matched in it."""
        return self.in_use + self.matched


@frozen
class LastCycle:
    """The last cycle's waiting requests with their reasons, its submitters and groups."""

    started: float
    ended: float
    waiting: tuple[Waiting, ...]
    submitters: tuple[SubmitterShare, ...]
    groups: tuple[GroupUse, ...]


def fingerprint(ad: ClassAd) -> tuple[tuple[str, object], ...]:
    """The :data:`FINGERPRINT` attributes of ``ad`` that evaluate to a number, a boolean
    or a short string."""
    found = []
    for name in FINGERPRINT:
        value = ad.evaluate(name) if name in ad else None
        if type(value) in (int, float, bool) or (type(value) is str and len(value) <= 256):
            found.append((name, value))
    return tuple(found)


def surplus_weight(settings: GroupSettings, group: str, quota: float) -> float:
    """``GROUP_SURPLUS_WEIGHT_<group>``, by default the group's quota (HTCondor's proportional rule)."""
    return float(settings.surplus_weights.get(group, quota))


def explain_cycle(result: CycleResult, slots: Sequence[ClassAd], submitters: Sequence[Submitter],
                  accountant: Accountant, settings: CycleSettings, started: float, ended: float) -> LastCycle:
    """The record of one cycle: who waits, why, and the groups' use."""
    shares = _shares(result, submitters, accountant, settings.groups)
    groups = _groups(settings.groups, shares, _pool_total(slots, shares, settings))
    reasons = result.unmatched_reasons
    by_name = {share.name: share for share in shares}
    by_group = {group.name: group for group in groups}
    waiting = []
    for submitter in submitters:
        for request in submitter.requests:
            key = (submitter.name, request.request_id)
            left = result.unmatched.get(key, 0)
            if left <= 0:
                continue
            share = by_name[submitter.name]
            reason = reasons.get(key) or derived_reason(share, by_group.get(share.group), shares)
            idle = request.job_ids[len(request.job_ids) - left:] if left <= len(request.job_ids) else request.job_ids
            waiting.append(Waiting(submitter.name, submitter.schedd_address, request.request_id,
                                   tuple(idle), left, str(reason)[:MAX_REASON], fingerprint(request.ad)))
    return LastCycle(started, ended, tuple(waiting), shares, groups)


def derived_reason(share: SubmitterShare, group: GroupUse | None, shares: Sequence[SubmitterShare]) -> str:
    """Why a request of ``share``'s submitter got nothing, read from the cycle's numbers:
    its group's limit or quota, else the users ahead of it, else no slot matched."""
    if group is not None:
        if group.limit is not None and group.used >= group.limit - 1e-9:
            return f"its group {group.name} is at its limit: {_cores_of(group)}"
        if not group.accept_surplus and group.used >= group.quota - 1e-9:
            return f"its group {group.name} is at its quota and does not accept surplus: {_cores_of(group)}"
    ahead = [s for s in shares if s.name != share.name and s.effective_priority < share.effective_priority
             and s.in_use + s.matched > 0]
    if ahead:
        named = ", ".join(f"{s.name} ({s.effective_priority:.2f}, {_number(s.in_use + s.matched)} in use)"
                          for s in ahead[:MAX_AHEAD])
        more = f" and {len(ahead) - MAX_AHEAD} more" if len(ahead) > MAX_AHEAD else ""
        return (f"{len(ahead)} user(s) ahead of {share.name} (effective priority {share.effective_priority:.2f}) "
                f"hold the slots it could use: {named}{more}")
    return NO_SLOT


def _cores_of(group: GroupUse) -> str:
    limit = "no limit" if group.limit is None else f"limit {_number(group.limit)}"
    return f"{_number(group.used)} in use / quota {_number(group.quota)} / {limit} (cores)"


def _number(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _shares(result: CycleResult, submitters: Sequence[Submitter], accountant: Accountant,
            groups: GroupSettings) -> tuple[SubmitterShare, ...]:
    matched: dict[str, float] = {}
    for match in result.matches:
        matched[match.submitter] = matched.get(match.submitter, 0.0) + match.weight
    names = groups.active
    shares = [SubmitterShare(s.name, group_of(s.name, names), accountant.effective_priority(s.name),
                             accountant.resources_in_use(s.name), matched.get(s.name, 0.0)) for s in submitters]
    return tuple(sorted(shares, key=lambda s: (s.effective_priority, s.name)))


def _pool_total(slots: Sequence[ClassAd], shares: Sequence[SubmitterShare], settings: CycleSettings) -> float:
    """Idle slots' weight plus what the submitters hold: the pool the quotas divide."""
    idle = 0.0
    for slot in slots:
        value = settings.match.slot_weight.evaluate(slot)
        idle += float(value) if type(value) in (int, float) else 0.0
    return idle + sum(share.in_use for share in shares)


def _groups(settings: GroupSettings, shares: Sequence[SubmitterShare], total: float) -> tuple[GroupUse, ...]:
    if not settings.active:
        return ()
    effective = quotas(settings, total)
    out = []
    for name in settings.active:
        members = [s for s in shares if s.group == name]
        quota = effective.get(name, 0.0)
        out.append(GroupUse(name, settings.static_quotas.get(name), quota, settings.limits.get(name),
                            surplus_weight(settings, name, quota), settings.accepts_surplus(name),
                            sum(s.in_use for s in members), sum(s.matched for s in members)))
    return tuple(out)


def to_wire(cycle: LastCycle | None, submitter: str | None = None, job: str | None = None) -> dict:
    """The route's answer: ``cycle`` as JSON, its waiting requests narrowed to ``submitter``
    and to the request holding ``job``, at most :data:`MAX_WAITING` of them."""
    if cycle is None:
        return {"started": None, "ended": None, "waiting": [], "submitters": [], "groups": [], "truncated": False}
    waiting = [w for w in cycle.waiting if (submitter is None or w.submitter == submitter)
               and (job is None or job in w.job_ids)]
    return {
        "started": cycle.started, "ended": cycle.ended,
        "waiting": [{"submitter": w.submitter, "schedd": w.schedd, "request_id": w.request_id,
                     "job_ids": list(w.job_ids[:MAX_JOB_IDS]), "left": w.left, "reason": w.reason,
                     "fingerprint": dict(w.fingerprint)}
                    for w in waiting[:MAX_WAITING]],
        "submitters": [{"name": s.name, "group": s.group, "effective_priority": s.effective_priority,
                        "in_use": s.in_use, "matched": s.matched} for s in cycle.submitters[:MAX_WAITING]],
        "groups": [{"name": g.name, "config_quota": g.config_quota, "quota": g.quota, "limit": g.limit,
                    "surplus_weight": g.surplus_weight, "accept_surplus": g.accept_surplus,
                    "in_use": g.in_use, "matched": g.matched} for g in cycle.groups],
        "truncated": len(waiting) > MAX_WAITING or len(cycle.submitters) > MAX_WAITING
                     or any(len(w.job_ids) > MAX_JOB_IDS for w in waiting[:MAX_WAITING]),
    }
