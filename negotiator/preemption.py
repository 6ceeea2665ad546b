"""Which running jobs the negotiator may preempt, and for whom: pure decisions.

HTCondor's rules (anchors §1.5): a claimed slot is a candidate for an idle job when the
slot's ``Rank`` prefers the job to the one it runs (reason "Rank"), or when the job's
submitter has a better effective priority than the running user and
``PREEMPTION_REQUIREMENTS`` (MY = the slot, TARGET = the job) is true ("Priority").
Victims go in ``PREEMPTION_RANK`` order, highest first: the worst-priority user, then
its youngest job. Reclaim (KAI's, anchors §8.3) lets a group below its quota take
slots from a group above its quota, never cutting into that group's quota.

Never a victim: a job that ran less than ``PREEMPTION_MIN_RUNTIME`` (or the group's
``PREEMPTION_MIN_RUNTIME_<group>``), a slot of the candidate's own submitter, a piece
of a gang. A dynamic slot with retirement time left is never taken for a
partitionable-slot preemption (``ALLOW_PSLOT_PREEMPTION``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import attrs
from attrs import frozen

from classad import ClassAd, ExprTree
from classad.matching import rank as job_rank
from classad.matching import requirements_accept
from classad.nodes import Literal
from negotiator.accountant import NO_GROUP, group_of
from negotiator.matchmaking import MatchSettings, _consumption, is_partitionable

DEFAULT_PREEMPTION_RANK = (
    "(RemoteUserPrio * 1000000) - ifThenElse(isUndefined(TotalJobRuntime), 0, TotalJobRuntime)"
)
RANK = "Rank"
PRIORITY = "Priority"
RECLAIM = "Reclaim"
_RESOURCES = ("Cpus", "Memory", "Disk")


@frozen
class PreemptionSettings:
    """The negotiator's preemption knobs (HTCondor's names and defaults)."""

    consider: bool = True
    requirements: ExprTree = attrs.field(factory=lambda: ExprTree("false"))
    rank: ExprTree = attrs.field(factory=lambda: ExprTree(DEFAULT_PREEMPTION_RANK))
    min_runtime: float = 0.0
    group_min_runtime: Mapping[str, float] = attrs.field(factory=dict)
    allow_pslot: bool = False
    reclaim: bool = True

    def min_runtime_for(self, group: str) -> float:
        """``PREEMPTION_MIN_RUNTIME_<group>``, else ``PREEMPTION_MIN_RUNTIME``."""
        return self.group_min_runtime.get(group.lower(), self.min_runtime)


@frozen
class Running:
    """A claimed slot running a job, as one cycle sees it."""

    name: str
    ad: ClassAd = attrs.field(eq=False)
    customer: str
    group: str
    weight: float
    job_start: float | None = None
    retirement: float = 0.0
    parent: str | None = None
    gang: bool = False

    def runtime(self, now: float) -> float:
        """Seconds the job has run (``TotalJobRuntime``); 0 when JobStart is unknown."""
        return max(now - self.job_start, 0.0) if self.job_start is not None else 0.0

    def retirement_left(self, now: float) -> float:
        """``RetirementTimeRemaining``: max(0, MaxJobRetirementTime - runtime)."""
        return max(self.retirement - self.runtime(now), 0.0)


@frozen
class Standing:
    """Who has what at the start of the cycle: each customer's effective priority and
    cores in use, each group's cores in use and quota."""

    priority: Mapping[str, float] = attrs.field(factory=dict)
    in_use: Mapping[str, float] = attrs.field(factory=dict)
    group_in_use: Mapping[str, float] = attrs.field(factory=dict)
    group_quota: Mapping[str, float] = attrs.field(factory=dict)

    def priority_of(self, customer: str) -> float:
        return self.priority.get(customer, 0.5)


def _text(ad: ClassAd, name: str) -> str | None:
    value = ad.evaluate(name)
    return value if type(value) is str and value else None


def _seconds(ad: ClassAd, name: str) -> float | None:
    value = ad.evaluate(name)
    return float(value) if type(value) in (int, float) else None


def customer_of(ad: ClassAd) -> str | None:
    """Who a claimed slot's usage is charged to: ``AccountingGroup``, else ``RemoteUser``
    (or ``RemoteOwner``). An AccountingGroup without a domain takes the user's, so it
    names the group user's Submitter (``group_a.alice@domain``)."""
    user = _text(ad, "RemoteUser") or _text(ad, "RemoteOwner")
    group = _text(ad, "AccountingGroup")
    if group is None:
        return user
    if "@" not in group and user is not None and "@" in user:
        return f"{group}@{user.rsplit('@', 1)[1]}"
    return group


def running_claims(slots: Iterable[ClassAd], slot_weight: ExprTree,
                   group_names: tuple[str, ...]) -> list[Running]:
    """The claimed static and dynamic slots of ``slots`` that run a job for someone."""
    out = []
    for ad in slots:
        state = _text(ad, "State")
        if state is None or state.lower() != "claimed":  # most of a pool: read nothing more
            continue
        name, customer = _text(ad, "Name"), customer_of(ad)
        if is_partitionable(ad) or not name or not customer:
            continue
        if (_text(ad, "Activity") or "").lower() in _LEAVING_ACTIVITIES:
            continue
        weight = slot_weight.evaluate(ad)
        group = _text(ad, "RemoteGroup")
        if group is None or group.lower() == NO_GROUP or group.lower() not in group_names:
            group = group_of(customer, group_names)
        dynamic = ad.evaluate("DynamicSlot") is True or (_text(ad, "SlotType") or "").lower() == "dynamic"
        out.append(Running(name, ad, customer, group.lower() if group != NO_GROUP else NO_GROUP,
                           float(weight) if type(weight) in (int, float) and weight > 0 else 1.0,
                           _seconds(ad, "JobStart"), _seconds(ad, "MaxJobRetirementTime") or 0.0,
                           _text(ad, "ParentSlot") if dynamic else None, _text(ad, "GangId") is not None))
    return out


def slot_view(running: Running, standing: Standing, now: float) -> ClassAd:
    """A copy of the running slot's ad with the negotiation-time attributes."""
    ad = running.ad.copy()
    ad["RemoteUserPrio"] = standing.priority_of(running.customer)
    ad["RemoteUserResourcesInUse"] = standing.in_use.get(running.customer, 0.0)
    ad["RemoteGroupResourcesInUse"] = standing.group_in_use.get(running.group, 0.0)
    ad["RemoteGroupQuota"] = standing.group_quota.get(running.group, 0.0)
    if _text(ad, "RemoteGroup") is None:
        ad["RemoteGroup"] = running.group
    if running.job_start is not None:
        ad["TotalJobRuntime"] = running.runtime(now)
    ad["RetirementTimeRemaining"] = running.retirement_left(now)
    return ad


def job_view(job: ClassAd, submitter: str, group: str, standing: Standing) -> ClassAd:
    """A copy of a request's job ad with the submitter's negotiation-time attributes."""
    ad = job.copy()
    ad["SubmitterUserPrio"] = standing.priority_of(submitter)
    ad["SubmitterUserResourcesInUse"] = standing.in_use.get(submitter, 0.0)
    ad["SubmitterGroup"] = group
    ad["SubmitterGroupResourcesInUse"] = standing.group_in_use.get(group, 0.0)
    ad["SubmitterGroupQuota"] = standing.group_quota.get(group, 0.0)
    return ad


def protection(running: Running, submitter: str, now: float, settings: PreemptionSettings) -> str | None:
    """Why ``running`` can never be a victim for ``submitter``'s job, or None."""
    if running.customer == submitter or running.customer.split("@")[0] == submitter.split("@")[0]:
        return "it is the submitter's own"
    if running.gang:
        return "it is a piece of a gang"
    least = settings.min_runtime_for(running.group)
    if running.runtime(now) < least:
        return f"it has run {running.runtime(now):.0f} s of its PREEMPTION_MIN_RUNTIME {least:.0f} s"
    return None


def preemption_rank(slot: ClassAd, job: ClassAd, settings: PreemptionSettings) -> float:
    """``PREEMPTION_RANK`` of a victim slot for a job: higher is taken first."""
    value = settings.rank.evaluate(slot, job)
    return float(value) if type(value) in (int, float, bool) else float("-inf")


def preemption_reason(slot: ClassAd, job: ClassAd, submitter_prio: float, running_prio: float,
                      settings: PreemptionSettings) -> str | None:
    """"Rank" when the slot's Rank prefers ``job`` to its CurrentRank, "Priority" when the
    submitter's priority is better and PREEMPTION_REQUIREMENTS holds, else None."""
    current = slot.evaluate("CurrentRank")
    current = float(current) if type(current) in (int, float) else 0.0
    if job_rank(slot, job) > current:
        return RANK
    if submitter_prio < running_prio and settings.requirements.evaluate(slot, job) is True:
        return PRIORITY
    return None


def _constant_false(node) -> bool:
    return type(node) is Literal and node.value is not True


def _rank_may_prefer(slot: ClassAd) -> bool:
    """False when the slot's Rank is a constant no greater than its CurrentRank."""
    node = slot.expression("Rank")
    if node is None or type(node) is not Literal:
        return node is not None
    current = slot.evaluate("CurrentRank")
    current = float(current) if type(current) in (int, float) else 0.0
    return type(node.value) in (int, float) and node.value > current


def accepts(slot: ClassAd, job: ClassAd) -> bool:
    """Both sides' Requirements accept each other."""
    return requirements_accept(job, slot) and requirements_accept(slot, job)


def with_resources_of(parent: ClassAd, victims: Iterable[Running]) -> ClassAd:
    """A copy of a partitionable slot's ad with the victims' Cpus, Memory and Disk given back."""
    ad = parent.copy()
    for victim in victims:
        for attr in _RESOURCES:
            have, more = ad.evaluate(attr), victim.ad.evaluate(attr)
            if type(have) in (int, float) and type(more) in (int, float):
                ad.set_expr(attr, Literal(have + more))
    return ad


def pslot_victims(parent: ClassAd, children: list[Running], job: ClassAd, match: MatchSettings,
                  ) -> tuple[list[Running], tuple] | None:
    """The fewest of ``children`` (already in the order to take them) whose resources,
    with the parent's free ones, let ``job`` match the parent; with what the match
    consumes. None when even all of them are not enough."""
    chosen: list[Running] = []
    for child in [None, *children]:
        if child is not None:
            chosen.append(child)
        ad = with_resources_of(parent, chosen)
        if not accepts(ad, job):
            continue
        consumed = _consumption(job, ad, match)
        if consumed is not None:
            return (chosen, consumed) if chosen else None
    return None


def over_quota(group: str, standing: Standing, taken: Mapping[str, float]) -> float:
    """Cores ``group`` runs above its quota, less what was already reclaimed from it."""
    if group not in standing.group_quota:
        return 0.0
    return standing.group_in_use.get(group, 0.0) - taken.get(group, 0.0) - standing.group_quota[group]


def own_usage(running: Iterable[Running]) -> tuple[dict[str, float], dict[str, float]]:
    """Cores in use by each customer and by each group, from the running claims."""
    users: dict[str, float] = {}
    groups: dict[str, float] = {}
    for claim in running:
        users[claim.customer] = users.get(claim.customer, 0.0) + claim.weight
        groups[claim.group] = groups.get(claim.group, 0.0) + claim.weight
    return users, groups


@frozen
class PreemptingMatch:
    """A slot given to a request by ending the claims of ``victims`` (slot names): a
    static slot (its own claim the victim), or a partitionable parent (victims its
    dynamic slots)."""

    slot_name: str
    victims: tuple[str, ...]
    weight: float
    reason: str
    consumed: tuple[tuple[str, float], ...] = ()


_REASON_ORDER = {RANK: 0, RECLAIM: 1, PRIORITY: 2}
#: Refused candidates explained per request: enough to say why, bounded in cost.
MAX_REFUSALS = 20
#: A slot already being preempted (or vacated) is no candidate again.
_LEAVING_ACTIVITIES = frozenset({"retiring", "vacating", "killing"})


class Preemptor:
    """The running claims of one cycle that requests may preempt. Mutable: a victim
    leaves once taken, and a group's reclaimed cores are counted."""

    def __init__(self, running: Iterable[Running], parents: Mapping[str, ClassAd], standing: Standing,
                 now: float, settings: PreemptionSettings, match: MatchSettings) -> None:
        self.running = {r.name: r for r in running}
        self.parents = dict(parents)
        self.standing = standing
        self.now = now
        self.settings = settings
        self.match = match
        #: Cores reclaimed from each group so far this cycle.
        self.taken: dict[str, float] = {}
        self._views: dict[str, ClassAd] = {}
        #: Whether priority or Rank preemption can happen at all this cycle (a constant
        #: false PREEMPTION_REQUIREMENTS and constant slot Ranks rule each out cheaply).
        self.priority_possible = not _constant_false(settings.requirements.node)
        self.rank_possible = any(_rank_may_prefer(r.ad) for r in self.running.values())

    def view(self, running: Running) -> ClassAd:
        """The running slot's ad with the negotiation-time attributes, made once."""
        if running.name not in self._views:
            self._views[running.name] = slot_view(running, self.standing, self.now)
        return self._views[running.name]

    def _reason(self, running: Running, job: ClassAd, submitter: str, group: str, reclaim: bool) -> str | None:
        if reclaim:
            if running.group == group or over_quota(running.group, self.standing, self.taken) < running.weight - 1e-9:
                return None
            return RECLAIM
        return preemption_reason(self.view(running), job, self.standing.priority_of(submitter),
                                 self.standing.priority_of(running.customer), self.settings)

    def _candidates(self, job: ClassAd, submitter: str, group: str, reclaim: bool, why: list[str]) -> list:
        """Static claimed slots ``job`` may take, best first. Those the rules would give
        it but a protection keeps (min runtime, a gang) say why in ``why`` (the first
        few: each costs a match evaluation)."""
        out = []
        for running in self.running.values():
            if running.parent is not None:
                continue
            reason = self._reason(running, job, submitter, group, reclaim)
            if reason is None:
                continue
            blocked = protection(running, submitter, self.now, self.settings)
            if blocked is not None:
                if len(why) < MAX_REFUSALS and accepts(self.view(running), job):
                    why.append(blocked)
                continue
            view = self.view(running)
            if not accepts(view, job):
                continue
            key = (_REASON_ORDER[reason], -job_rank(job, view), -preemption_rank(view, job, self.settings))
            out.append((key, running.name, reason))
        out.sort()
        return out

    def find(self, job: ClassAd, submitter: str, group: str, max_matches: int, allowance: float,
             reclaim: bool = False, group_room: float = math.inf) -> tuple[list[PreemptingMatch], list[str]]:
        """Up to ``max_matches`` preempting matches for ``job`` (a :func:`job_view`)
        while their weight stays under ``allowance``; with why candidates were refused.
        ``reclaim`` takes only from groups above their quota, without their quota.
        Victims of other groups than ``group`` add to its use: at most ``group_room`` cores."""
        why: list[str] = []
        found: list[PreemptingMatch] = []
        used = 0.0
        if max_matches <= 0 or allowance <= 0:
            return found, why
        if not reclaim and not (self.priority_possible or self.rank_possible):
            return found, why
        for _, name, reason in self._candidates(job, submitter, group, reclaim, why):
            if len(found) >= max_matches or used >= allowance:
                return found, why
            running = self.running[name]
            if reclaim and over_quota(running.group, self.standing, self.taken) < running.weight - 1e-9:
                continue
            if running.group != group:
                if running.weight > group_room + 1e-9:
                    why.append(f"group {group} would pass its allocation")
                    continue
                group_room -= running.weight
            found.append(self._take([running], name, running.weight, reason))
            used += running.weight
        while len(found) < max_matches and used < allowance:
            match = self._pslot(job, submitter, group, reclaim, why)
            if match is None:
                break
            found.append(match)
            used += match.weight
        return found, why

    def _take(self, victims: list[Running], slot_name: str, weight: float, reason: str,
              consumed: tuple = ()) -> PreemptingMatch:
        for victim in victims:
            del self.running[victim.name]
            if reason == RECLAIM:
                self.taken[victim.group] = self.taken.get(victim.group, 0.0) + victim.weight
        return PreemptingMatch(slot_name, tuple(v.name for v in victims), weight, reason, consumed)

    def _pslot(self, job: ClassAd, submitter: str, group: str, reclaim: bool, why: list[str]) -> PreemptingMatch | None:
        """The first partitionable slot whose dynamic slots (PREEMPTION_RANK order, none
        with retirement time left) can be given to ``job``: several of them together with
        ``ALLOW_PSLOT_PREEMPTION``, else one dynamic slot alone (a claimed dynamic slot
        is a candidate like a static one, as in HTCondor)."""
        children: dict[str, list[tuple[float, Running]]] = {}
        for running in self.running.values():
            if running.parent is None or running.parent not in self.parents:
                continue
            if self._reason(running, job, submitter, group, reclaim) is None:
                continue
            blocked = protection(running, submitter, self.now, self.settings)
            if blocked is None and running.retirement_left(self.now) > 0:
                blocked = f"it has {running.retirement_left(self.now):.0f} s of retirement time left"
            if blocked is not None:
                if len(why) < MAX_REFUSALS:
                    why.append(blocked)
                continue
            children.setdefault(running.parent, []).append(
                (-preemption_rank(self.view(running), job, self.settings), running))
        for parent, kids in sorted(children.items()):
            kids.sort(key=lambda pair: (pair[0], pair[1].name))
            ordered = [r for _, r in kids]
            if self.settings.allow_pslot:
                picked = pslot_victims(self.parents[parent], ordered, job, self.match)
            else:
                picked = next(filter(None, (pslot_victims(self.parents[parent], [kid], job, self.match)
                                            for kid in ordered if accepts(self.view(kid), job))), None)
            if picked is None or (reclaim and not self._within_over_quota(picked[0])):
                continue
            victims, consumed = picked
            freed = with_resources_of(self.parents[parent], victims)
            for attr, amount in consumed:
                have = freed.evaluate(attr)
                freed.set_expr(attr, Literal(have - amount))
            self.parents[parent] = freed
            weight = next((amount for attr, amount in consumed if attr == "Cpus"), 1.0)
            return self._take(victims, parent, float(weight), RECLAIM if reclaim else PRIORITY, consumed)
        return None

    def _within_over_quota(self, victims: list[Running]) -> bool:
        taking: dict[str, float] = {}
        for victim in victims:
            taking[victim.group] = taking.get(victim.group, 0.0) + victim.weight
        return all(over_quota(g, self.standing, self.taken) >= amount - 1e-9 for g, amount in taking.items())
