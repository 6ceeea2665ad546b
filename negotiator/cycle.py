"""One negotiation cycle: share the pool's idle slots among submitters fairly.

Groups are served in starvation order (least usage for their quota first, ``<none>``
last), each within its allocation. Inside a group the submitters split it by the
inverse of their effective priorities, best first. This pie is spun again with what
is left while slots and matching demand remain, so shares nobody can use go to
others. Submitters below their floor are served before anyone. The result is a list
of :class:`Match` values for the daemon to send to schedds.

A submitter's requests are served in the schedd's order, except that its GPU requests
trade places among themselves so that, at equal ``JobPrio``, the largest (in cards'
worth) goes first: small shares then fill what large ones leave, as first-fit
decreasing packs, instead of taking a card's split count before a large share comes.

Once every idle slot was offered, requests still wanting jobs may take claimed slots
(:mod:`negotiator.preempting`): reclaim for groups below their quota, then priority and
startd-Rank preemption; such a match names its ``victims``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs
from attrs import frozen

from classad import ClassAd
from daemoncore.wire.resource_request import ResourceRequest
from gpushare.placement import Grant
from negotiator.accountant import NO_GROUP, Accountant, group_of
from negotiator.concurrency import ConcurrencyLedger, ConcurrencySettings, usage_from_slots
from negotiator.gangs import gang_size, serve_gang
from negotiator.gpu_matching import card_fraction
from negotiator.groups import GroupSettings, allocations
from negotiator.matchmaking import MatchSettings, SlotPool, build_prefilter
from negotiator.preempting import PreemptionPhase
from negotiator.preemption import PreemptionSettings


@frozen
class Submitter:
    """One submitter ad: who, which schedd, and that schedd's resource requests."""

    name: str
    schedd_address: str
    requests: tuple[ResourceRequest, ...] = ()


@frozen
class Match:
    """One slot (or a piece of a partitionable one) matched to one submitter's request."""

    submitter: str
    schedd_address: str
    request_id: str
    job_id: str | None
    slot_name: str
    weight: float
    consumed: tuple[tuple[str, float], ...] = ()
    claim_id: str = attrs.field(default="", repr=False)
    grants: tuple[Grant, ...] = ()
    #: Slot names whose claims end for this match (a preemption); empty for an idle slot.
    victims: tuple[str, ...] = ()


@frozen
class CycleSettings:
    """Knobs of a whole cycle."""

    match: MatchSettings = attrs.field(factory=MatchSettings)
    groups: GroupSettings = attrs.field(factory=GroupSettings)
    preemption: PreemptionSettings = attrs.field(factory=PreemptionSettings)
    concurrency: ConcurrencySettings = attrs.field(factory=ConcurrencySettings)
    max_spins: int = 1000


@frozen
class CycleResult:
    """What one cycle did."""

    matches: tuple[Match, ...]
    spins: int
    evaluations: int
    slots_considered: int
    unmatched: dict = attrs.field(factory=dict)
    bad_requests: dict = attrs.field(factory=dict)
    #: Why a request got less than it asked, by (submitter, request id).
    unmatched_reasons: dict = attrs.field(factory=dict)
    #: Each concurrency limit's use after the cycle's matches.
    concurrency_in_use: dict = attrs.field(factory=dict)


def _request_weight(request: ResourceRequest) -> float:
    cpus = request.ad.evaluate("RequestCpus")
    return float(cpus) if type(cpus) in (int, float) and cpus > 0 else 1.0


class _CycleState:
    """Bookkeeping while one cycle runs. Mutable: counts go down as matches are made."""

    def __init__(self, pool: SlotPool, submitters: Sequence[Submitter], accountant: Accountant,
                 limits: ConcurrencyLedger | None = None) -> None:
        self.pool = pool
        self.limits = limits or ConcurrencyLedger(ConcurrencySettings())
        self.accountant = accountant
        self.left = {(s.name, r.request_id): r.count for s in submitters for r in s.requests}
        self.given = {(s.name, r.request_id): 0 for s in submitters for r in s.requests}
        self.used = {s.name: accountant.resources_in_use(s.name) for s in submitters}
        self.prefilters = {r.request_id: build_prefilter(r.ad) for s in submitters for r in s.requests}
        self.matches: list[Match] = []
        self.spins = 0
        #: why a gang request got nothing, by (submitter, request id); the last try wins
        self.gang_reasons: dict[tuple[str, str], str] = {}

    def demand_left(self, submitter: Submitter) -> bool:
        return any(self.left[(submitter.name, r.request_id)] > 0 for r in submitter.requests)

    def idle_fits(self, request: ResourceRequest) -> bool:
        """True when an idle slot (or what is left of a partitionable one) still matches ``request``."""
        prefilter = self.prefilters[request.request_id]
        return any(self.pool.answer(request, signature, prefilter) is not None
                   and self.pool.first_free(request, signature) is not None
                   for signature in self.pool.groups(request))

    def preempt(self, slots: Sequence[ClassAd], submitters: Sequence[Submitter], settings: CycleSettings,
                idle_weight: float) -> PreemptionPhase:
        """Run the preemption phase after the idle pie; its matches join the cycle's."""
        gained = {s.name: self.used[s.name] - self.accountant.resources_in_use(s.name) for s in submitters}
        parents = {s.name: s.ad for s in self.pool.slots if s.partitionable}
        phase = PreemptionPhase(slots, parents, submitters, self.left, gained, self.accountant, settings,
                                idle_weight, self.accountant.clock.seconds(), self.idle_fits, self.limits)
        for granted in phase.run():
            key = (granted.submitter.name, granted.request.request_id)
            index = self.given[key]
            job_ids = granted.request.job_ids
            self.matches.append(Match(granted.submitter.name, granted.submitter.schedd_address, key[1],
                                      job_ids[index] if index < len(job_ids) else None,
                                      granted.match.slot_name, granted.match.weight, granted.match.consumed,
                                      victims=granted.match.victims))
            self.given[key] += 1
        return phase

    def serve(self, submitter: Submitter, allowance: float) -> float:
        """Match ``submitter``'s requests in order until its allowance is used; returns
        the weight matched."""
        ceiling = self.accountant.ceiling(submitter.name)
        if ceiling is not None:
            allowance = min(allowance, ceiling - self.used[submitter.name])
        got = 0.0
        for request in submitter.requests:
            key = (submitter.name, request.request_id)
            if self.left[key] <= 0 or got >= allowance:
                continue
            if gang_size(request) > 1:
                outcome = serve_gang(self.pool, request, self.left[key], allowance - got,
                                     self.prefilters[request.request_id], self.limits)
                found = outcome.matches
                if outcome.reason:
                    self.gang_reasons[key] = outcome.reason
            else:
                found = self.limits.match(self.pool, request, self.left[key], allowance - got,
                                          self.prefilters[request.request_id])
            for slot_match in found:
                index = self.given[key]
                job_id = request.job_ids[index] if index < len(request.job_ids) else None
                self.matches.append(Match(submitter.name, submitter.schedd_address, request.request_id,
                                          job_id, slot_match.slot_name, slot_match.weight,
                                          slot_match.consumed, grants=slot_match.grants))
                self.given[key] += 1
                self.left[key] -= 1
                got += slot_match.weight
        self.used[submitter.name] += got
        return got


def _spin_pie(state: _CycleState, submitters: list[Submitter], limit: float, max_spins: int) -> float:
    """Share ``limit`` cores among ``submitters`` by inverse effective priority, spinning
    again with what is left; returns the weight matched."""
    accountant = state.accountant
    ordered = sorted(submitters, key=lambda s: (accountant.effective_priority(s.name), s.name))
    matched = 0.0
    for submitter in ordered:  # floors first
        floor = accountant.floor(submitter.name)
        if floor is not None and state.used[submitter.name] < floor and limit - matched > 0:
            matched += state.serve(submitter, min(floor - state.used[submitter.name], limit - matched))
    active = [s for s in ordered if state.demand_left(s)]
    first = True
    while active and limit - matched > 1e-9 and state.spins < max_spins:
        state.spins += 1
        weights = {s.name: 1.0 / max(accountant.effective_priority(s.name), 1e-12) for s in active}
        total_weight = sum(weights.values())
        pie = limit - matched
        if first:
            pie += sum(state.used[s.name] for s in active)
        spun = 0.0
        still = []
        for submitter in active:
            allowance = pie * weights[submitter.name] / total_weight
            if first:
                allowance -= state.used[submitter.name]
            allowance = min(allowance, limit - matched - spun)
            if allowance <= 0:
                still.append(submitter)
                continue
            got = state.serve(submitter, allowance)
            spun += got
            if got > 0 and state.demand_left(submitter):
                still.append(submitter)
        matched += spun
        if spun <= 0 and not first:
            break
        first = False
        active = still
    return matched


def _largest_gpu_requests_first(pool: SlotPool, submitter: Submitter, card_mib: int) -> Submitter:
    """``submitter`` with its GPU requests reordered among their own places: higher
    ``JobPrio`` first, then larger; its other requests keep their places."""
    sized = {}
    for index, request in enumerate(submitter.requests):
        view = pool.gpu_view(request)
        if view is not None and view.request is not None:
            prio = request.ad.evaluate("JobPrio")
            prio = prio if type(prio) in (int, float) else 0
            sized[index] = (-prio, -card_fraction(view.request, card_mib), index)
    if len(sized) < 2:
        return submitter
    requests = list(submitter.requests)
    for place, (_, _, index) in zip(sorted(sized), sorted(sized.values()), strict=True):
        requests[place] = submitter.requests[index]
    return attrs.evolve(submitter, requests=tuple(requests))


def _group_key(group: str, usage: float, quota: float) -> tuple:
    if group == NO_GROUP:
        return (1, 0.0, group)
    return (0, usage / quota if quota > 0 else math.inf, group)


def negotiate(slots: Sequence[ClassAd], submitters: Sequence[Submitter], accountant: Accountant,
              settings: CycleSettings | None = None,
              held: frozenset[tuple[str, str]] = frozenset()) -> CycleResult:
    """Run one negotiation cycle over idle ``slots`` for ``submitters``' requests,
    leaving out the ``(request id, slot name)`` pairs ``held`` back."""
    settings = settings or CycleSettings()
    job_ads = [r.ad for s in submitters for r in s.requests]
    pool = SlotPool(slots, job_ads, settings.match, held)
    card_mib = pool.largest_card_mib()
    submitters = [_largest_gpu_requests_first(pool, s, card_mib) for s in submitters]
    ledger = ConcurrencyLedger(settings.concurrency, usage_from_slots(slots))
    state = _CycleState(pool, submitters, accountant, ledger)
    available = pool.available_weight()
    total = available + sum(state.used.values())
    names = settings.groups.active
    by_group: dict[str, list[Submitter]] = {}
    for submitter in submitters:
        by_group.setdefault(group_of(submitter.name, names), []).append(submitter)
    demand = {g: sum(state.used[s.name] + sum(r.count * _request_weight(r) for r in s.requests)
                     for s in members) for g, members in by_group.items()}
    limits = allocations(settings.groups, total, demand) if names else {NO_GROUP: total}
    usage = {g: sum(state.used[s.name] for s in members) for g, members in by_group.items()}
    order = sorted(by_group, key=lambda g: _group_key(g, usage[g], limits.get(g, 0.0)))
    for group in order:
        members = by_group[group]
        _spin_pie(state, members, limits.get(group, 0.0) - usage[group], settings.max_spins)
    regrouped = [s for g in order if settings.groups.autoregroups(g) for s in by_group[g]]
    if regrouped:  # HTCondor's autoregroup: one more turn as if in <none>, for what is left
        again = by_group.get(NO_GROUP, []) + regrouped
        _spin_pie(state, [s for s in again if state.demand_left(s)], pool.available_weight(), settings.max_spins)
    phase = state.preempt(slots, submitters, settings, available)
    unmatched = {k: v for k, v in state.left.items() if v > 0}
    reasons = phase.explain()
    reasons.update(state.gang_reasons)
    reasons.update((key, ledger.reasons[key[1]]) for key in unmatched if key[1] in ledger.reasons)
    return CycleResult(tuple(state.matches), state.spins, pool.evaluations, len(pool.slots), unmatched,
                       dict(pool.bad_requests), reasons, dict(ledger.used))
