"""The startd's slots: static, partitionable and dynamic, their claims, and their ads.

:class:`SlotTable` is pure logic over an injected clock: the service layer calls
:meth:`~SlotTable.request_claim`, :meth:`~SlotTable.activate`,
:meth:`~SlotTable.job_exited` and :meth:`~SlotTable.release` as the schedd and the
starter move a job along, and publishes :meth:`~SlotTable.public_ads` and
:meth:`~SlotTable.private_ads`. A claim on a partitionable slot carves a dynamic
slot of the job's requested size (``slot1_1@host``); releasing it returns the size.
A job's GPUs are carved with gpushare's model (:mod:`startd.gpu_claims`) from each card's
state, which the table keeps in :attr:`SlotTable.cards`.
"""

from __future__ import annotations

import enum
import math
import secrets
from collections.abc import Callable, Iterable, Mapping

import attrs

import classad
from gpushare.job_request import request_from_job
from gpushare.placement import DEFAULT_POLICY, DEFAULT_SPLIT_COUNT, Card, Grant, give_back, take
from startd.claim_ads import child_claim_lists, claim_attributes
from startd.discovery import Machine
from startd.draining import DRAINED_START, DrainRequest, drain_attributes
from startd.errors import ClaimError, ClaimRefused
from startd.gpu_claims import carve, has_room
from startd.gpus import GpuDevice
from startd.resources import Resources, card_of, whole_grant
from startd.slot_ads import (
    REQUIREMENTS,
    WITHIN_RESOURCE_LIMITS,
    SharedEntries,
    gpu_property_ad,
    machine_attributes,
    private_ad,
    set_expression,
    share_attributes,
)
from startd.slot_types import SlotPlan
from startd.states import Activity, SlotStatus, State, apply_event

UNKNOWN_CLAIM = "no slot holds this ClaimId (it was never issued, or the claim has ended)"


class SlotKind(str, enum.Enum):
    """HTCondor's ``SlotType`` values."""

    STATIC = "Static"
    PARTITIONABLE = "Partitionable"
    DYNAMIC = "Dynamic"


def new_claim_id() -> str:
    """A fresh, unguessable ClaimId."""
    return secrets.token_urlsafe(32)


@attrs.frozen
class Slot:
    """One slot: its size, state, and the claim (if any) it answers to."""

    name: str
    slot_id: int
    sub_id: int
    kind: SlotKind
    resources: Resources
    status: SlotStatus
    claim_id: str = attrs.field(repr=False)
    remote_user: str | None = None
    job_ad: classad.ClassAd | None = attrs.field(default=None, eq=False, repr=False)
    parent: str | None = None
    claimed_at: float | None = None
    #: The job the claim was made for (then the one running): its §1 attributes stay on
    #: the slot's ad from the claim on, so the negotiator counts its limits at once.
    claim_job: classad.ClassAd | None = attrs.field(default=None, eq=False, repr=False)


@attrs.frozen
class ClaimGrant:
    """What a successful claim gives the schedd: the slot's name and the ClaimId to use from now."""

    slot_name: str
    claim_id: str = attrs.field(repr=False)
    resources: Resources


def _number(job: classad.ClassAd, attr: str, slot_ad: classad.ClassAd, default: float | None) -> float | None:
    if attr not in job:
        return default
    value = job.evaluate(attr, slot_ad)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ClaimRefused(f"the job's {attr} = {job.lookup(attr)} is not a number "
                           f"(it evaluates to {value!r})")
    return value


# Mutable: it holds the machine's live slots, which claims add, change and remove.
@attrs.define
class SlotTable:
    """The slots of one startd, their claims and their ads."""

    machine: Machine
    clock: object  # IReactorTime
    start: str = "true"
    rank: str = "0"
    #: ``MAXJOBRETIREMENTTIME``, evaluated against each claim's job.
    max_job_retirement_time: str = "0"
    domains: Mapping[str, str] = attrs.Factory(dict)
    make_claim_id: Callable[[], str] = new_claim_id
    slots: dict[str, Slot] = attrs.Factory(dict)
    split_count: int = DEFAULT_SPLIT_COUNT
    gpu_policy: tuple[str, ...] = DEFAULT_POLICY
    cards: dict[str, Card] = attrs.Factory(dict)
    draining: DrainRequest | None = None
    last_drain_stop: float | None = None
    _next_sub: dict[int, int] = attrs.Factory(dict)
    #: Claims refused per slot name (``ClaimRequestsRefused`` in its ad).
    refusals: dict[str, int] = attrs.Factory(dict)
    #: What every slot's ad shares, with what it was made of (see :meth:`_shared_ad`).
    _shared: tuple | None = attrs.field(default=None, init=False, eq=False, repr=False)
    #: The entries of plain values the slot ads share (see :class:`SharedEntries`).
    _entries: SharedEntries = attrs.field(factory=SharedEntries, init=False, eq=False, repr=False)

    @classmethod
    def from_plans(cls, machine: Machine, plans: Iterable[SlotPlan], clock: object,
                   **options: object) -> SlotTable:
        """A table of the slots ``plans`` lay out; cards go to slots in index order.
        ``split_count`` (``GPU_SPLIT_COUNT``) and ``gpu_policy`` (``GPU_PLACEMENT_POLICY``)
        come in ``options`` with the other fields."""
        table = cls(machine, clock, **options)  # type: ignore[arg-type]
        cards = list(machine.gpus)
        now = clock.seconds()  # type: ignore[attr-defined]
        for plan in plans:
            mine, cards = cards[:plan.gpu_count], cards[plan.gpu_count:]
            whole = tuple(whole_grant(g) for g in mine)
            kind = SlotKind.PARTITIONABLE if plan.partitionable else SlotKind.STATIC
            name = f"slot{plan.slot_id}@{machine.hostname}"
            table.slots[name] = Slot(name, plan.slot_id, 0, kind,
                                     Resources(plan.cpus, plan.memory_mb, plan.disk_kb, whole),
                                     SlotStatus.unclaimed(now), table.make_claim_id())
            for g in mine:
                table.cards[g.id] = card_of(g, table.split_count)
        return table

    # --- looking up ---

    def by_claim_id(self, claim_id: str) -> Slot:
        """The slot answering to ``claim_id``.

        Raises:
            ClaimError: no slot holds it.
        """
        for slot in self.slots.values():
            if secrets.compare_digest(slot.claim_id, claim_id):
                return slot
        raise ClaimError(UNKNOWN_CLAIM)

    def children(self, parent: str) -> list[Slot]:
        """The dynamic slots carved from partitionable slot ``parent``."""
        return [s for s in self.slots.values() if s.parent == parent]

    def free(self, slot: Slot) -> Resources:
        """What ``slot`` can still give: all of it, less its dynamic slots for a partitionable one."""
        size = slot.resources
        for child in self.children(slot.name):
            size = size.minus(child.resources)
        return size

    # --- claims ---

    def request_claim(self, claim_id: str, job: classad.ClassAd, remote_user: str | None = None) -> ClaimGrant:
        """Claim the slot holding ``claim_id`` for ``job``; a partitionable slot carves a dynamic one.

        Raises:
            ClaimError: the ClaimId is unknown or the slot is not free to claim.
            ClaimRefused: START is not true for the job, or the job does not fit.
        """
        slot = self.by_claim_id(claim_id)
        if slot.kind is SlotKind.DYNAMIC or slot.status.state not in (State.UNCLAIMED, State.MATCHED):
            raise ClaimError(f"{slot.name} is {slot.status.describe()}, not free to claim")
        try:
            return self._claim(slot, job, remote_user)
        except ClaimRefused:
            # Counted in the slot's ad, so the negotiator learns the match it made was
            # refused and holds that pair back instead of matching it every cycle.
            self.refusals[slot.name] = self.refusals.get(slot.name, 0) + 1
            raise

    def claim_pending(self, slot_name: str, job: classad.ClassAd, remote_user: str | None,
                      claim_id: str) -> ClaimGrant:
        """Grant the claim ``claim_id``, issued while its slot's victims were preempted, now
        that they are gone: ``slot_name`` is taken (static) or carved (partitionable) for ``job``.

        Raises:
            ClaimError: the slot is gone or not free to claim.
            ClaimRefused: START is not true for the job, or it does not fit what is free.
        """
        slot = self.slots.get(slot_name)
        if slot is None or slot.status.state not in (State.UNCLAIMED, State.MATCHED):
            where = slot.status.describe() if slot is not None else "gone"
            raise ClaimError(f"{slot_name} is {where}, not free to claim")
        return self._claim(slot, job, remote_user, claim_id)

    def _claim(self, slot: Slot, job: classad.ClassAd, remote_user: str | None,
               claim_id: str | None = None) -> ClaimGrant:
        ad = self.public_ad(slot)
        started = ad.evaluate("Start", job)
        if started is not True:
            raise ClaimRefused(f"{slot.name}: START ({self.start}) is {started!r} for this job, not true")
        wanted = self._requested(job, ad)
        free = self.free(slot)
        if not wanted.fits_in(free):
            raise ClaimRefused(f"{slot.name} has {free.cpus} CPUs, {free.memory_mb} MiB memory and "
                               f"{free.disk_kb} KiB disk free; the job asks for {wanted.cpus}, "
                               f"{wanted.memory_mb} and {wanted.disk_kb}")
        now = self.clock.seconds()  # type: ignore[attr-defined]
        if slot.kind is SlotKind.STATIC:
            claimed = attrs.evolve(slot, status=apply_event(slot.status, "claim", now, slot.name),
                                   remote_user=remote_user, claimed_at=now, claim_id=claim_id or slot.claim_id)
            self.slots[slot.name] = claimed = attrs.evolve(claimed, claim_job=job)
            return ClaimGrant(slot.name, claimed.claim_id, claimed.resources)
        shares = self._take_gpus(job, ad, slot)
        sub = self._next_sub.get(slot.slot_id, 0) + 1
        self._next_sub[slot.slot_id] = sub
        name = f"slot{slot.slot_id}_{sub}@{self.machine.hostname}"
        child = Slot(name, slot.slot_id, sub, SlotKind.DYNAMIC, attrs.evolve(wanted, gpus=shares),
                     apply_event(SlotStatus.unclaimed(now), "claim", now, name), claim_id or self.make_claim_id(),
                     remote_user=remote_user, parent=slot.name, claimed_at=now)
        self.slots[name] = child = attrs.evolve(child, claim_job=job)
        return ClaimGrant(name, child.claim_id, child.resources)

    def _requested(self, job: classad.ClassAd, ad: classad.ClassAd) -> Resources:
        cpus = _number(job, "RequestCpus", ad, 1)
        memory = _number(job, "RequestMemory", ad, 0)
        disk = _number(job, "RequestDisk", ad, 0)
        return Resources(math.ceil(cpus), math.ceil(memory), math.ceil(disk))

    def _take_gpus(self, job: classad.ClassAd, ad: classad.ClassAd, slot: Slot) -> tuple[Grant, ...]:
        """The job's GPUs carved from ``slot``'s cards, which are then that much fuller.

        Raises:
            GpuRequestError: the job's GPU attributes are malformed or out of range.
            GpuClaimRefused: the cards cannot hold the request.
        """
        request = request_from_job(job, ad, self.gpu_policy)
        if request is None:
            return ()
        cards = [self.cards[i] for i in slot.resources.gpu_ids]
        grants = carve(cards, request, self._allowed_cards(job, cards), slot.name)
        for card in take(cards, grants):
            self.cards[card.id] = card
        return grants

    def _allowed_cards(self, job: classad.ClassAd, cards: list[Card]) -> set[str] | None:
        """Cards whose property ad satisfies the job's ``RequireGPUs``; None when it has none."""
        if "RequireGPUs" not in job:
            return None
        text = str(job.lookup("RequireGPUs"))
        return {card.id for card in cards
                if classad.ExprTree(text).eval(self._card_ad(card), job) is True}

    def _card_ad(self, card: Card) -> classad.ClassAd:
        return gpu_property_ad(self._device(card.id), card)

    def _device(self, card_id: str) -> GpuDevice:
        return next(g for g in self.machine.gpus if g.id == card_id)

    def _move(self, claim_id: str, event: str, **changes: object) -> Slot:
        slot = self.by_claim_id(claim_id)
        now = self.clock.seconds()  # type: ignore[attr-defined]
        moved = attrs.evolve(slot, status=apply_event(slot.status, event, now, slot.name), **changes)
        self.slots[slot.name] = moved
        return moved

    def activate(self, claim_id: str, job: classad.ClassAd) -> Slot:
        """The claimed slot starts running ``job`` (Claimed/Busy).

        Raises:
            ClaimError: unknown ClaimId. SlotStateError: the slot is not Claimed/Idle.
        """
        return self._move(claim_id, "activate", job_ad=job, claim_job=job)

    def job_exited(self, claim_id: str) -> Slot:
        """The job of the claim ended; the slot waits for the next one (Claimed/Idle), or,
        on a draining machine, the claim ends with the job and the slot is Drained."""
        slot = self._move(claim_id, "job_exit", job_ad=None)
        if slot.status.state is State.DRAINED:
            return self._end_claim(slot)
        return slot

    def retire(self, claim_id: str) -> Slot:
        """The claim is preempted and its job runs on for its retirement time (Claimed/Retiring)."""
        return self._move(claim_id, "retire")

    def vacate(self, claim_id: str) -> Slot:
        """The claim's job is being stopped gracefully (Preempting/Vacating)."""
        return self._move(claim_id, "vacate")

    def kill(self, claim_id: str) -> Slot:
        """The claim's job is being killed (Preempting/Killing)."""
        return self._move(claim_id, "kill")

    def release(self, claim_id: str) -> Slot:
        """End the claim: a dynamic slot goes, returning its size; a static one is Unclaimed
        again (Drained on a draining machine) with a new ClaimId, so the old one no longer works.

        Raises:
            ClaimError: unknown ClaimId. SlotStateError: the slot still runs a job.
        """
        slot = self._move(claim_id, "release", job_ad=None)
        if self.draining is not None and slot.kind is not SlotKind.DYNAMIC:
            slot = self._apply(slot, "drain")
        return self._end_claim(slot)

    def _end_claim(self, slot: Slot) -> Slot:
        """The claim of ``slot`` is over: a dynamic slot goes (its parent is Drained/Idle once
        a drain has no dynamic slot left), a static one gets a fresh ClaimId."""
        if slot.kind is SlotKind.DYNAMIC:
            del self.slots[slot.name]
            held = [self.cards[i] for i in slot.resources.gpu_ids]
            for card in give_back(held, slot.resources.gpus):
                self.cards[card.id] = card
            parent = self.slots.get(slot.parent or "")
            if parent is not None and parent.status.state is State.DRAINED and not self.children(parent.name):
                self._apply(parent, "drain_done")
            return slot
        fresh = attrs.evolve(slot, claim_id=self.make_claim_id(), remote_user=None, claimed_at=None,
                             claim_job=None)
        self.slots[slot.name] = fresh
        return fresh

    def _apply(self, slot: Slot, event: str) -> Slot:
        now = self.clock.seconds()  # type: ignore[attr-defined]
        moved = attrs.evolve(slot, status=apply_event(slot.status, event, now, slot.name))
        self.slots[slot.name] = moved
        return moved

    # --- draining ---

    def drain(self, request: DrainRequest) -> list[str]:
        """Keep new claims away from every slot: empty ones are Drained/Idle at once, idle
        claims end, slots running a job (and partitionable slots with dynamic ones) are
        Drained/Retiring until it ends. A second drain replaces the first's schedule and
        reason. Returns the ClaimIds of the idle claims it ended."""
        self.draining = request
        ended = []
        for slot in sorted(self.slots.values(), key=lambda s: s.kind is SlotKind.PARTITIONABLE):
            pair = (slot.status.state, slot.status.activity)
            if pair == (State.CLAIMED, Activity.IDLE):
                ended.append(slot.claim_id)
                self.release(slot.claim_id)
            elif slot.status.state is State.CLAIMED:
                self._apply(slot, "drain_busy")
            elif slot.status.state in (State.UNCLAIMED, State.MATCHED, State.OWNER):
                busy = slot.kind is SlotKind.PARTITIONABLE and self.children(slot.name)
                self._apply(slot, "drain_busy" if busy else "drain")
        return ended

    def cancel_drain(self) -> bool:
        """Take new claims again: Drained slots are Unclaimed, a job still running carries on
        Claimed/Busy. False when the machine was not draining."""
        if self.draining is None:
            return False
        self.draining = None
        self.last_drain_stop = self.clock.seconds()  # type: ignore[attr-defined]
        for slot in list(self.slots.values()):
            if slot.status.state is State.DRAINED:
                self._apply(slot, "cancel_drain_busy" if slot.job_ad is not None else "cancel_drain")
        return True

    # --- ads ---

    def public_ad(self, slot: Slot, extra: Mapping[str, object] | None = None) -> classad.ClassAd:
        """``slot``'s ad for the collector, with HTCondor's attribute names, and ``extra``
        (what the caller adds: the startd's address). Its entries are shared with the
        other ads made here wherever their values are the same (:class:`SharedEntries`)."""
        ad = self._entries.ad(self._shared_ad(), {**self._slot_values(slot), **(extra or {})})
        if slot.claim_job is None:
            return ad
        return self._entries.ad(ad, claim_attributes(slot.claim_job, ad, slot.remote_user,
                                                     self.max_job_retirement_time))

    def _slot_values(self, slot: Slot) -> dict[str, object]:
        """What ``slot``'s ad says of the slot itself, its claim and its job."""
        ad: dict[str, object] = {}
        free = self.free(slot) if slot.kind is SlotKind.PARTITIONABLE else slot.resources
        ad["Name"] = slot.name
        ad["SlotID"] = slot.slot_id
        ad["SlotType"] = slot.kind.value
        ad["PartitionableSlot"] = slot.kind is SlotKind.PARTITIONABLE
        ad["DynamicSlot"] = slot.kind is SlotKind.DYNAMIC
        if slot.kind is SlotKind.DYNAMIC:
            ad["DSlotId"] = slot.sub_id
            ad["ParentSlot"] = slot.parent
        ad["State"] = slot.status.state.value
        ad["Activity"] = slot.status.activity.value
        ad["EnteredCurrentState"] = int(slot.status.entered_state)
        ad["EnteredCurrentActivity"] = int(slot.status.entered_activity)
        ad["Cpus"], ad["Memory"], ad["Disk"] = free.cpus, free.memory_mb, free.disk_kb
        ad["TotalSlotCpus"] = slot.resources.cpus
        ad["TotalSlotMemory"] = slot.resources.memory_mb
        ad["TotalSlotDisk"] = slot.resources.disk_kb
        ad["TotalSlotGPUs"] = len(slot.resources.gpu_ids)
        ad["TotalSlots"] = len(self.slots)
        ad["ClaimRequestsRefused"] = self.refusals.get(slot.name, 0)
        ad.update(self._gpu_attributes(slot))
        for name, value in drain_attributes(self.draining, self.last_drain_stop).items():
            ad[name] = value
        if slot.kind is SlotKind.PARTITIONABLE:
            kids = self.children(slot.name)
            ad["NumDynamicSlots"] = len(kids)
            ad["ChildState"] = [k.status.state.value for k in kids]
            ad["ChildRemoteUser"] = [k.remote_user or "" for k in kids]
            for name, values in child_claim_lists(self.public_ad(k) for k in kids).items():
                ad[name] = values
        if slot.remote_user:
            ad["RemoteUser"] = ad["RemoteOwner"] = slot.remote_user
        if slot.claimed_at is not None:
            ad["JobStart" if slot.job_ad is not None else "ClaimStart"] = int(slot.claimed_at)
        if slot.job_ad is not None:
            for attr, mine in (("GlobalJobId", "GlobalJobId"), ("ClusterId", "JobCluster"),
                               ("ProcId", "JobProc")):
                if attr in slot.job_ad:
                    ad[mine] = slot.job_ad[attr]
            if "ClusterId" in slot.job_ad and "ProcId" in slot.job_ad:
                ad["JobId"] = f"{slot.job_ad['ClusterId']}.{slot.job_ad['ProcId']}"
        return ad

    def _shared_ad(self) -> classad.ClassAd:
        """The ad holding what every slot's ad says alike (the machine, and the Start,
        Rank and Requirements expressions): made once while those stay the same, its
        entries shared by every ad made from it (and their printed lines with them).
        Never changed: ads are made from it with :meth:`SharedEntries.ad`."""
        start = self.start if self.draining is None else DRAINED_START
        made_of = (self.machine, id(self.domains), start, self.rank)
        if self._shared is None or self._shared[0] != made_of:
            ad = classad.ClassAd()
            for name, value in machine_attributes(self.machine, self.domains).items():
                ad[name] = value
            set_expression(ad, "Start", start)
            set_expression(ad, "Rank", self.rank)
            set_expression(ad, "WithinResourceLimits", WITHIN_RESOURCE_LIMITS)
            set_expression(ad, "Requirements", REQUIREMENTS)
            self._shared = (made_of, ad)
        return self._shared[1]

    def ad_inputs(self, slot: Slot) -> tuple | None:
        """Everything besides the (frozen) ``slot`` itself that its public ad is made of, for
        a cache of the ad: the same slot object with equal inputs has the same ad. None
        for a slot whose ad also depends on others (a partitionable slot's children and
        free resources) or on mutable card state (GPUs): build those each time."""
        if slot.kind is SlotKind.PARTITIONABLE or slot.resources.gpu_ids:
            return None
        return (self.machine, id(self.domains), len(self.slots), self.refusals.get(slot.name, 0), self.start,
                self.draining, self.last_drain_stop, self.rank, self.max_job_retirement_time)

    def _gpu_attributes(self, slot: Slot) -> dict[str, object]:
        ad: dict[str, object] = {}
        cards = [self.cards[i] for i in slot.resources.gpu_ids]
        refs = {card.id: classad.ExprTree(self._device(card.id).attr_name) for card in cards}
        for card in cards:
            ad[self._device(card.id).attr_name] = self._card_ad(card)
        if slot.kind is SlotKind.DYNAMIC:
            ad["GPUs"] = len(cards)
            ad["AssignedGPUs"] = ",".join(slot.resources.gpu_ids)
            ad["AvailableGPUs"] = list(refs.values())
            ad.update(share_attributes(slot.resources.gpus))
            return ad
        ad["GPUs"] = sum(card.untouched for card in cards)
        ad["AvailableGPUs"] = [refs[card.id] for card in cards if has_room(card)]
        if slot.kind is SlotKind.STATIC:
            ad["AssignedGPUs"] = ",".join(slot.resources.gpu_ids)
        return ad

    def public_ads(self) -> list[classad.ClassAd]:
        """Every slot's public ad, by name."""
        return [self.public_ad(self.slots[n]) for n in sorted(self.slots)]

    def private_ads(self) -> list[classad.ClassAd]:
        """Every slot's private ad with its current ClaimId, by name."""
        return [private_ad(s.name, self.machine.hostname, s.claim_id)
                for s in (self.slots[n] for n in sorted(self.slots))]
