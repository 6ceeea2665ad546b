"""The cycle's preemption phase: requests left unserved once every idle slot was
offered may take running claims.

It runs after the idle pie (:func:`negotiator.cycle.negotiate`), so a preemption is
never proposed for a request an idle slot can still serve. First reclaim
(``NEGOTIATOR_RECLAIM``): each group below its quota takes, up to its quota, claims of
groups above theirs, never their in-quota part. Then priority and startd-Rank
preemption: the pie is spun over the whole pool (idle and claimed cores), each group
within its allocation (quota, weighted surplus, ``GROUP_LIMIT``), each submitter up to
its slice by inverse effective priority. Victims are chosen by
:class:`negotiator.preemption.Preemptor`. Users in no group (``<none>``) have no quota:
they neither reclaim nor are reclaimed from, only preempted for priority or Rank.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from attrs import frozen

from classad import ClassAd
from daemoncore.wire.resource_request import ResourceRequest
from jobmodel.concurrency_limits import LimitSyntaxError
from negotiator.accountant import NO_GROUP, Accountant, group_of
from negotiator.concurrency import ConcurrencyLedger, job_limits
from negotiator.concurrency import _depends_on_slot as depends_on_slot
from negotiator.gangs import gang_size
from negotiator.groups import allocations, quotas
from negotiator.preemption import (
    PreemptingMatch,
    Preemptor,
    Standing,
    job_view,
    own_usage,
    running_claims,
)

if TYPE_CHECKING:
    from negotiator.cycle import CycleSettings, Submitter

Key = tuple[str, str]


@frozen
class Granted:
    """One preempting match for one request of one submitter."""

    submitter: Submitter
    request: ResourceRequest
    match: PreemptingMatch


def request_weight(request: ResourceRequest) -> float:
    """Cores one job of ``request`` asks for (``RequestCpus``, 1 when unset)."""
    cpus = request.ad.evaluate("RequestCpus")
    return float(cpus) if type(cpus) in (int, float) and cpus > 0 else 1.0


def summarize(why: Sequence[str], limit: int = 2) -> str:
    """The commonest reasons candidates were refused, with counts."""
    counts = Counter(why).most_common(limit)
    return "; ".join(f"{n} slot{'s' if n > 1 else ''}: {text}" for text, n in counts)


class PreemptionPhase:
    """One cycle's preemption phase. Mutable: counts of what is left go down."""

    def __init__(self, slots: Sequence[ClassAd], parents: Mapping[str, ClassAd],
                 submitters: Sequence[Submitter], left: dict[Key, int], gained: Mapping[str, float],
                 accountant: Accountant, settings: CycleSettings, idle_weight: float, now: float,
                 idle_fits: Callable[[ResourceRequest], bool], ledger: ConcurrencyLedger | None = None) -> None:
        self.settings = settings
        self.ledger = ledger
        self.names = settings.groups.active
        self.left = left
        self.idle_fits = idle_fits
        running = running_claims(slots, settings.match.slot_weight, self.names)
        self.users, self.group_use = own_usage(running)
        self.total = idle_weight + sum(r.weight for r in running)
        quota = quotas(settings.groups, self.total) if self.names else {}
        quota.pop(NO_GROUP, None)
        customers = {*self.users, *(s.name for s in submitters)}
        self.priority = {c: accountant.effective_priority(c) for c in customers}
        self.standing = Standing(self.priority, self.users, self.group_use, quota)
        self.preemptor = Preemptor(running, parents, self.standing, now, settings.preemption, settings.match)
        self.by_group: dict[str, list[Submitter]] = {}
        for submitter in sorted(submitters, key=lambda s: (self.priority[s.name], s.name)):
            self.by_group.setdefault(group_of(submitter.name, self.names), []).append(submitter)
        self.got = {s.name: gained.get(s.name, 0.0) for s in submitters}
        self.reasons: dict[Key, str] = {}
        self.granted: list[Granted] = []

    # --- bookkeeping -----------------------------------------------------------
    def _group_now(self, group: str) -> float:
        return self.group_use.get(group, 0.0) + sum(self.got[s.name] for s in self.by_group.get(group, ()))

    def _demand_left(self, submitter: Submitter) -> float:
        return sum(self.left[(submitter.name, r.request_id)] * request_weight(r) for r in submitter.requests)

    def serve(self, submitter: Submitter, group: str, allowance: float, reclaim: bool,
              group_room: float = math.inf) -> float:
        """Preempt for ``submitter``'s requests in order while under ``allowance``."""
        done = 0.0
        for request in submitter.requests:
            key = (submitter.name, request.request_id)
            if self.left[key] <= 0:
                continue
            if done >= allowance:
                continue
            if gang_size(request) > 1 or self.idle_fits(request):
                continue
            limits = self._limits(request)
            if limits is None:
                continue
            count = self.left[key] if self.ledger is None else int(min(self.left[key], self.ledger.room_for(limits)))
            job = job_view(request.ad, submitter.name, group, self.standing)
            found, why = self.preemptor.find(job, submitter.name, group, count, allowance - done,
                                             reclaim, group_room - done)
            for match in found:
                if self.ledger is not None:
                    self.ledger.take(limits)
                self.granted.append(Granted(submitter, request, match))
                self.left[key] -= 1
                done += match.weight
            if not found and why and not reclaim:
                self.reasons[key] = f"no idle slot matches it and no running job may be preempted ({summarize(why)})"
        self.got[submitter.name] += done
        return done

    def _limits(self, request: ResourceRequest) -> tuple | None:
        """The request's concurrency limits, or None when preemption must leave it alone
        (limits that depend on the slot, or that do not parse: the idle pass said why)."""
        if self.ledger is None or "ConcurrencyLimits" not in request.ad:
            return ()
        if depends_on_slot(request.ad):
            return None
        try:
            return job_limits(request.ad)
        except LimitSyntaxError:
            return None

    # --- the two steps -----------------------------------------------------------
    def reclaim(self) -> None:
        """Groups below their quota (most starved first) take over-quota claims of others."""
        quota = self.standing.group_quota
        starved = [g for g in self.by_group if g in quota and quota[g] > 0]
        starved.sort(key=lambda g: (self._group_now(g) / quota[g], g))
        for group in starved:
            for submitter in self.by_group[group]:
                budget = min(quota[group], self.settings.groups.limit(group)) - self._group_now(group)
                if budget <= 1e-9:
                    break
                self.serve(submitter, group, budget, reclaim=True)

    def preempt(self) -> None:
        """Priority and Rank preemption within each group's allocation, by the pie."""
        demand = {g: self._group_now(g) + sum(self._demand_left(s) for s in members)
                  for g, members in self.by_group.items()}
        for group, use in self.group_use.items():
            demand.setdefault(group, use)
        limits = allocations(self.settings.groups, self.total, demand) if self.names else {NO_GROUP: self.total}
        for group, members in self.by_group.items():
            active = [s for s in members if self._demand_left(s) > 0]
            weights = {s.name: 1.0 / max(self.priority[s.name], 1e-12) for s in active}
            limit = limits.get(group, 0.0)
            for submitter in active:
                share = limit * weights[submitter.name] / sum(weights.values())
                used = self.users.get(submitter.name, 0.0) + self.got[submitter.name]
                self.serve(submitter, group, share - used, reclaim=False, group_room=limit - self._group_now(group))

    def run(self) -> list[Granted]:
        """Reclaim, then preempt (when ``NEGOTIATOR_CONSIDER_PREEMPTION``); the
        preempting matches made."""
        if self.settings.preemption.consider:
            if self.names and self.settings.preemption.reclaim:
                self.reclaim()
            self.preempt()
        return self.granted

    def explain(self) -> dict[Key, str]:
        """Why preemption could not serve a request still wanting jobs, by (submitter,
        request id): only requests whose candidates were all refused."""
        return {key: why for key, why in self.reasons.items() if self.left[key] > 0}
