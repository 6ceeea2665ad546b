"""Matching one resource request against the pool's slots within a cycle.

Both sides' Requirements must accept; candidates are ordered by
``NEGOTIATOR_PRE_JOB_RANK``, then the job's Rank, then ``NEGOTIATOR_POST_JOB_RANK``,
best first. A partitionable slot is consumed piece by piece (Cpus, Memory, Disk,
GPUs, rounded as the startd rounds them), so one cycle can place many jobs on it.
A job asking for GPUs must also fit the slot's cards, card by card
(:mod:`negotiator.gpu_matching`), and a node placement policy, when one applies, is
the first term of the order.

For scale, slots are grouped into classes: slots whose attributes that any
expression can read are equal give the same answer for the same request, so each
request is evaluated once per class, after a cheap pre-filter on the literal
``TARGET.x op value`` clauses of its Requirements.

A GPU slot names its cards (``GPUs_GPU_<id>``, ``AvailableGPUs``), so classing by
attribute names would give every GPU machine a class of its own. When no expression
reads a card attribute or ``AvailableGPUs`` by name (nor anything by computed name),
the only reader of the cards is the card model, which looks at their contents; the
card attributes then enter the signature by position and contents, so identical
machines share a class. Which cards a match gets is worked out again for the slot
taken (:meth:`SlotPool.slot_answer`), and a request that pins cards by id
(``RequestGPUIds``, ``AvoidGPUIds``) splits each class by its slots' card ids.
"""

from __future__ import annotations

import heapq
import math
import operator
from collections.abc import Iterable

import attrs
from attrs import define, frozen

from classad import NOT_CONSTANT, ClassAd, ExprTree
from classad import operators as ops
from classad.matching import rank as job_rank
from classad.matching import requirements_accept
from classad.nodes import AttrRef, Binary, Call, ListExpr, Literal, Paren, Select
from classad.references import references
from classad.signature import ExpressionTexts, attribute_key
from classad.values import ERROR, UNDEFINED
from daemoncore.wire.resource_request import ResourceRequest
from gpushare.errors import GpuRequestError
from gpushare.placement import DEFAULT_POLICY, Grant
from negotiator.gpu_matching import (
    CARD_ATTR_LOWER_PREFIX,
    JobGpuView,
    NamedCards,
    job_gpu_view,
    node_rank,
    slot_cards,
    slot_grants,
    take_cards,
)
from negotiator.slot_terms import SlotTerms, expression_children, expression_nodes, looks_up_by_value, number

DEFAULT_PRE_JOB_RANK = (
    "(10000000 * My.Rank) + (1000000 * (RemoteOwner =?= UNDEFINED)) - (100000 * Cpus) - Memory"
)
DEFAULT_POST_JOB_RANK = (
    "(RemoteOwner =?= UNDEFINED) * (ifThenElse(isUndefined(KFlops), 1000, KFlops)"
    " - ifThenElse(isUndefined(SlotID), 0, SlotID) - 1.0e10 * (Offline =?= true))"
)
CONSUMED = (("Cpus", "RequestCpus", 1), ("Memory", "RequestMemory", 0),
            ("Disk", "RequestDisk", 0), ("GPUs", "RequestGPUs", 0))
_COMPARISONS = frozenset({"==", "!=", "<", "<=", ">", ">=", "=?=", "=!="})
#: Python's comparisons, which agree with ClassAd's for two ints, two floats or two
#: case-folded strings
_DIRECT = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
           ">": operator.gt, ">=": operator.ge}
#: literal types whose values key a class as they are (others by type name and repr)
_SCALARS = frozenset({int, float, str, bool})
#: slot attributes whose values name cards (besides the card attributes themselves)
_CARD_LISTS = frozenset({"availablegpus"})
_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!=",
            "=?=": "=?=", "=!=": "=!="}


@frozen
class MatchSettings:
    """The matchmaker's knobs, read once per cycle."""

    pre_job_rank: ExprTree | None = attrs.field(factory=lambda: ExprTree(DEFAULT_PRE_JOB_RANK))
    post_job_rank: ExprTree | None = attrs.field(factory=lambda: ExprTree(DEFAULT_POST_JOB_RANK))
    slot_weight: ExprTree = attrs.field(factory=lambda: ExprTree("Cpus"))
    quantum: tuple[tuple[str, int], ...] = (("Cpus", 1), ("Memory", 128), ("Disk", 1024), ("GPUs", 1))
    gpu_policy: tuple[str, ...] = DEFAULT_POLICY
    node_policy: str | None = None

    def rank_expressions(self) -> list[ExprTree]:
        return [x for x in (self.pre_job_rank, self.post_job_rank, self.slot_weight) if x is not None]


@frozen
class SlotMatch:
    """One slot (or piece of a partitionable slot) given to a request; ``slot_ad`` is
    the slot's ad as the collector sent it."""

    slot_name: str
    slot_ad: ClassAd = attrs.field(eq=False)
    weight: float
    consumed: tuple[tuple[str, float], ...] = ()
    grants: tuple[Grant, ...] = ()


@frozen
class Answer:
    """How one slot class answers one request: its sort key (smallest is best), what a
    match takes from a partitionable slot, and the cards it gives."""

    key: tuple
    consumed: tuple[tuple[str, float], ...] = ()
    grants: tuple[Grant, ...] = ()


# --- slots and their classes -------------------------------------------------

def _value(slot: ClassAd, key: str):
    """``slot``'s attribute ``key`` (lower-case): a literal's value read as stored,
    anything else evaluated."""
    entry = slot.entries_by_key().get(key)
    if entry is None:
        return UNDEFINED
    return entry.const if entry.const is not NOT_CONSTANT else slot.evaluate(key)


def is_partitionable(slot: ClassAd) -> bool:
    """True for a partitionable slot (``PartitionableSlot`` or ``SlotType``)."""
    if _value(slot, "partitionableslot") is True:
        return True
    kind = _value(slot, "slottype")
    return type(kind) is str and kind.lower() == "partitionable"


def is_idle(slot: ClassAd) -> bool:
    """True for a slot a match may take without preemption: Unclaimed, or partitionable."""
    state = _value(slot, "state")
    return state is UNDEFINED or (type(state) is str and state.lower() == "unclaimed") \
        or is_partitionable(slot)


@define
class Slot:
    """One slot during a cycle. Mutable: a partitionable slot shrinks as it is consumed."""

    name: str
    ad: ClassAd
    partitionable: bool
    #: the slot's class: a small int naming its attribute signature (see SlotPool._signature)
    signature: int = -1
    source: ClassAd | None = None
    cards: NamedCards | None = None

    def named_cards(self) -> NamedCards:
        """The slot's cards as they are now in the cycle, read from its ad once."""
        if self.cards is None:
            self.cards = slot_cards(self.ad)
        return self.cards


class SlotPool:
    """The slots of one cycle, grouped into classes, and the answers already worked
    out for (request, class). Mutable: matches take slots out of it."""

    def __init__(self, slots: Iterable[ClassAd], job_ads: Iterable[ClassAd] = (),
                 settings: MatchSettings | None = None,
                 held: frozenset[tuple[str, str]] = frozenset(), cards_by_contents: bool = True) -> None:
        """Group ``slots`` (the idle ones) into classes for ``job_ads``' requests;
        ``cards_by_contents`` False keeps a GPU slot's card names in its class (one
        class per GPU machine), the reference the contents classes are checked against."""
        self.settings = settings or MatchSettings()
        self._cards_by_contents = cards_by_contents
        #: ``(request id, slot name)`` pairs not to match this cycle (a refused claim).
        self.held = held
        self.slots: list[Slot] = []
        for ad in slots:
            if is_idle(ad):
                name = _value(ad, "name")
                self.slots.append(Slot(name if type(name) is str else f"<slot {len(self.slots)}>",
                                       ad, is_partitionable(ad)))
        self._texts = ExpressionTexts()
        self._generation: dict[int, int] = {}
        #: indices of the slots with card attributes, when gathered (None: not known)
        self._card_slots: list[int] | None = None
        self._by_contents = False
        self._significant = self._significant_names(job_ads)
        self._card_set = frozenset(self._card_slots or ())
        self._significant_order = sorted(self._significant)
        self._weights: dict[int, float] = {}
        #: class id -> its member slots' indices (a dict for insertion order)
        self.classes: dict[int, dict[int, None]] = {}
        #: signature -> class id, and each class id's shape (see _shape)
        self._class_ids: dict[tuple, int] = {}
        self._shapes: list[int] = []
        self._shape_ids: dict[tuple, int] = {}
        self._answers: dict[tuple[str, int], Answer | None] = {}
        self._gpu_views: dict[str, JobGpuView | None] = {}
        self.bad_requests: dict[str, str] = {}
        self.evaluations = 0
        self._terms = SlotTerms()
        #: slots as they were before each take since the first open checkpoint
        self._journal: list[tuple[int, ClassAd, ClassAd | None, NamedCards | None]] | None = None
        self._stamps = [0] * len(self.slots)
        self._clock = 0
        for index, slot in enumerate(self.slots):
            self._classify(index)

    # --- classes -------------------------------------------------------------
    def _significant_names(self, job_ads: Iterable[ClassAd]) -> frozenset[str]:
        """Slot attribute names any expression of a match can read."""
        names = {"requirements", "rank", "cpus", "memory", "disk", "gpus", "state",
                 "slottype", "partitionableslot"}
        seen: set[int] = set()
        gpus_asked = False
        #: names some expression reads (not gathered because cards matter)
        explicit: set[str] = set()
        job_by_value = False

        cards_read = False

        def add_refs(ad, node, own_side: bool, into: set[str] = explicit) -> None:
            nonlocal cards_read
            internal, external = references(ad, node)
            for name in internal if own_side else external:
                if name[:7].lower() == "target.":
                    name = name[7:]
                name = name.split(".")[0].lower()
                into.add(name)
                if into is explicit and not cards_read:
                    cards_read = name.startswith(CARD_ATTR_LOWER_PREFIX) or \
                        (name in _CARD_LISTS and _reads_card_list(node))

        for job in job_ads:
            for entry in job.entries_by_key().values():
                if type(entry.expr) is not Literal and id(entry.expr) not in seen:
                    seen.add(id(entry.expr))
                    add_refs(job, entry.expr, own_side=False)
                    job_by_value = job_by_value or looks_up_by_value(entry.expr)
            gpus_asked = gpus_asked or _asks_for_gpus(job)
        if gpus_asked:  # the slots' card attributes, gathered once however many jobs ask
            names.add("availablegpus")
            self._card_slots = []
            for index, slot in enumerate(self.slots):
                cards = [key for key in slot.ad.entries_by_key() if key.startswith(CARD_ATTR_LOWER_PREFIX)]
                if cards:
                    names.update(cards)
                    self._card_slots.append(index)
        for expr in self.settings.rank_expressions():
            explicit.update(_all_names(expr.node))
            job_by_value = job_by_value or looks_up_by_value(expr.node)
        texts: set[str] = set()
        self._unique = False
        for slot in self.slots:
            for key, entry in slot.ad.entries_by_key().items():
                node = entry.expr
                if type(node) is Literal:
                    continue
                text = self._texts.text(node)
                if text in texts:
                    continue
                texts.add(text)
                if looks_up_by_value(node):
                    self._unique = True
                # a card list's names of its own cards are read only where the list is
                into = names if key in _CARD_LISTS or key.startswith(CARD_ATTR_LOWER_PREFIX) else explicit
                add_refs(slot.ad, node, own_side=True, into=into)
                add_refs(slot.ad, node, own_side=False, into=into)  # a name another slot may define
        names.update(explicit)
        self._by_contents = self._cards_by_contents and self._card_slots is not None and not job_by_value \
            and not cards_read
        return frozenset(names)

    def _signature(self, index: int) -> tuple:
        """The slot's class: each significant attribute it has, in name order, as
        ``(name, type, value)`` for a literal and ``(name, "expr", text)`` otherwise."""
        if self._unique:  # one class per slot, renewed each time a take changes the slot
            return ("#slot", index, self._generation.get(index, 0))
        attrs_ = self.slots[index].ad.entries_by_key()
        if len(attrs_) < len(self._significant_order):  # card names make the significant list long
            significant = self._significant
            names = sorted(key for key in attrs_ if key in significant)
        else:
            names = self._significant_order
        by_contents = self._by_contents and index in self._card_set
        out = []
        for key in names:
            entry = attrs_.get(key)
            if entry is None:
                continue
            if by_contents and (key.startswith(CARD_ATTR_LOWER_PREFIX) or key in _CARD_LISTS):
                continue
            const = entry.const
            kind = type(const)
            if kind in _SCALARS:
                out.append((key, kind, const))
            elif const is NOT_CONSTANT:
                out.append((key, "expr", self._texts.text(entry.expr)))
            else:
                out.append(attribute_key(key, entry.expr, self._texts))
        if by_contents:
            out.extend(self._card_contents(index))
        return tuple(out)

    def _card_contents(self, index: int) -> list[tuple]:
        """The slot's cards as signature parts named by position, each with what the
        card model reads of it but its ids, and ``AvailableGPUs`` as the positions of
        the cards it lists (a member naming no card of the slot, by its text)."""
        slot = self.slots[index]
        named = slot.named_cards()
        out = [(f"#card{n}", "card", attrs.evolve(card, uuid="", id=""))
               for n, (_, card) in enumerate(named)]
        positions = {name.lower(): n for n, (name, _) in enumerate(named)}
        for key in _CARD_LISTS:
            entry = slot.ad.entries_by_key().get(key)
            if entry is None:
                continue
            node = entry.expr
            if type(node) is ListExpr:
                items = tuple(positions.get(item.name.lower(), self._texts.text(item))
                              if type(item) is AttrRef else self._texts.text(item) for item in node.items)
                out.append((key, "cards", items))
            else:
                out.append((key, "expr", self._texts.text(node)))
        return out

    def card_ids(self, index: int) -> tuple:
        """The ids of slot ``index``'s cards in order: what a request naming cards
        (``RequestGPUIds``, ``AvoidGPUIds``) reads besides their contents."""
        return tuple((card.uuid, card.id) for _, card in self.slots[index].named_cards())

    def _classify(self, index: int) -> int:
        """Put slot ``index`` in the class of its signature; returns the class id.
        Classes are named by small ints so that per-(request, class) caches hash an int,
        not a tuple of every significant attribute."""
        signature = self._signature(index)
        self._stamps[index] = self._clock
        self._clock += 1
        class_id = self._class_ids.get(signature)
        if class_id is None:
            class_id = self._class_ids[signature] = len(self._shapes)
            shape = _shape(signature)
            self._shapes.append(self._shape_ids.setdefault(shape, len(self._shape_ids)))
        self.slots[index].signature = class_id
        self.classes.setdefault(class_id, {})[index] = None
        return class_id

    def _declassify(self, index: int) -> None:
        signature = self.slots[index].signature
        members = self.classes[signature]
        del members[index]
        if not members:
            del self.classes[signature]

    # --- groups: the classes as one request sees them --------------------------
    def names_cards(self, request: ResourceRequest) -> bool:
        """True when ``request``'s answer may differ between slots of one class: it
        names cards by id while classes hold cards by their contents."""
        view = self.gpu_view(request)
        return self._by_contents and view is not None and view.request is not None \
            and bool(view.request.use_ids or view.request.avoid_ids)

    def groups(self, request: ResourceRequest) -> list:
        """The groups of slots that answer ``request`` alike: the classes, or for a
        request naming cards, each class split by its slots' card ids (``(class, ids)``)."""
        if not self.names_cards(request):
            return list(self.classes)
        out: dict = {}
        for class_id, members in self.classes.items():
            for index in members:
                out[(class_id, self.card_ids(index))] = None
        return list(out)

    def group_of(self, request: ResourceRequest, index: int):
        """The group of slot ``index`` for ``request`` (see :meth:`groups`)."""
        class_id = self.slots[index].signature
        return (class_id, self.card_ids(index)) if self.names_cards(request) else class_id

    def stamp(self, index: int) -> int:
        """When slot ``index`` joined its class: the pool's order of slots, which a
        class's members keep (a slot taken from joins its new class last)."""
        return self._stamps[index]

    def _members(self, group) -> Iterable[int]:
        if type(group) is int:
            return self.classes.get(group, ())
        class_id, ids = group
        return (index for index in self.classes.get(class_id, ()) if self.card_ids(index) == ids)

    # --- evaluating one request against one class ---------------------------
    def answer(self, request: ResourceRequest, signature, prefilter) -> Answer | None:
        """How the group (a class, see :meth:`groups`) answers the request, or None
        when its slots do not match it."""
        key = (request.request_id, signature)
        if key in self._answers:
            return self._answers[key]
        first = next(iter(self._members(signature)), None)
        view = self.gpu_view(request)
        if first is None or view is None:
            return None
        result = self._evaluate(request.ad, view, self.slots[first], prefilter)
        self._answers[key] = result
        return result

    def slot_answer(self, request: ResourceRequest, index: int, answer: Answer) -> Answer:
        """``answer`` (its group's) as slot ``index`` gives it: the same cards by
        contents, but the slot's own, when classes hold cards by contents."""
        if not self._by_contents or not answer.grants:
            return answer
        grants = slot_grants(self.gpu_view(request).request, self.slots[index].named_cards())
        return attrs.evolve(answer, grants=grants)

    def largest_card_mib(self) -> int:
        """The memory of the pool's largest card (0 when no slot advertises cards);
        only slots with card attributes are read."""
        if self._card_slots is None:
            self._card_slots = [index for index, slot in enumerate(self.slots)
                                if any(key.startswith(CARD_ATTR_LOWER_PREFIX) for key in slot.ad.entries_by_key())]
        return max((card.memory_total for index in self._card_slots
                    for _, card in self.slots[index].named_cards()), default=0)

    def gpu_view(self, request: ResourceRequest) -> JobGpuView | None:
        """The request's GPU view, worked out once; None (and a line in
        ``bad_requests``) when its GPU attributes are malformed."""
        if request.request_id not in self._gpu_views:
            try:
                view = job_gpu_view(request.ad, self.settings.gpu_policy, self.settings.node_policy)
            except GpuRequestError as exc:
                view = None
                self.bad_requests[request.request_id] = str(exc)
            self._gpu_views[request.request_id] = view
        return self._gpu_views[request.request_id]

    def _evaluate(self, job: ClassAd, view: JobGpuView, slot: Slot, prefilter) -> Answer | None:
        if not prefilter.passes(slot.ad):
            return None
        self.evaluations += 1
        ad = slot.ad
        if not (requirements_accept(job, ad) and requirements_accept(ad, job)):
            return None
        grants: tuple[Grant, ...] = ()
        if view.request is not None:
            grants = slot_grants(view.request, slot.named_cards())
            if grants is None:
                return None
        consumed = ()
        if slot.partitionable:
            share = view.request is not None and not view.request.whole
            consumed = _consumption(job, ad, self.settings, count_gpus=not share)
            if consumed is None:
                return None
        shape = self._shapes[slot.signature]
        pre = self._terms.value(0, self.settings.pre_job_rank, slot.signature, ad, job, shape)
        post = self._terms.value(1, self.settings.post_job_rank, slot.signature, ad, job, shape)
        node = node_rank(view.node_policy, slot.named_cards() if view.request is not None else (),
                         ad.evaluate("Cpus"), view.request, grants)
        return Answer((*node, -pre, -job_rank(job, ad), -post), consumed, grants)

    def available_weight(self) -> float:
        """``SLOT_WEIGHT`` summed over the pool's slots as they are now."""
        return sum(self._weight(slot) for slot in self.slots)

    def _weight(self, slot: Slot) -> float:
        """``SLOT_WEIGHT`` of a slot, worked out once per class."""
        weight = self._weights.get(slot.signature)
        if weight is None:
            weight = self._weights[slot.signature] = number(self.settings.slot_weight, slot.ad, None, 0.0)
        return weight

    # --- taking slots ----------------------------------------------------------
    def first_free(self, request: ResourceRequest, signature) -> int | None:
        """The first slot of the group (see :meth:`groups`) not held back from
        ``request``, or None."""
        for index in self._members(signature):
            if not self.held or (request.request_id, self.slots[index].name) not in self.held:
                return index
        return None

    def take(self, index: int, answer: Answer | None = None) -> SlotMatch:
        """Give slot ``index`` away, or what ``answer`` consumes of it when partitionable."""
        answer = answer or Answer(())
        slot = self.slots[index]
        weight_before = self._weight(slot)
        if self._journal is not None:
            kept = slot.ad.copy() if slot.source is not None else slot.ad
            self._journal.append((index, kept, slot.source, slot.cards))
        self._declassify(index)
        if not slot.partitionable:
            return SlotMatch(slot.name, slot.ad, weight_before, grants=answer.grants)
        if slot.source is None:
            slot.source = slot.ad
            slot.ad = slot.ad.copy()
        for attr, amount in answer.consumed:
            slot.ad.set_expr(attr, Literal(_shrunk(slot.ad.evaluate(attr), amount)))
        slot.cards = take_cards(slot.ad, slot.named_cards(), answer.grants)
        self._generation[index] = self._generation.get(index, 0) + 1
        self._classify(index)
        weight_after = self._weight(slot)
        return SlotMatch(slot.name, slot.source, max(weight_before - weight_after, 0.0), answer.consumed,
                         answer.grants)


    # --- undoing takes (a gang's reservations) --------------------------------
    def checkpoint(self) -> int:
        """Start remembering takes so :meth:`restore` can undo them; returns the mark
        to restore to or to :meth:`commit`."""
        if self._journal is None:
            self._journal = []
        return len(self._journal)

    def restore(self, mark: int) -> None:
        """Put every slot taken since ``mark`` back as it was, then forget the mark."""
        journal = self._journal or []
        while len(journal) > mark:
            index, ad, source, cards = journal.pop()
            slot = self.slots[index]
            if index in self.classes.get(slot.signature, ()):
                self._declassify(index)
            slot.ad, slot.source, slot.cards = ad, source, cards
            self._generation[index] = self._generation.get(index, 0) + 1
            self._classify(index)
        self.commit(mark)

    def commit(self, mark: int) -> None:
        """Keep the takes since ``mark``; the outermost commit stops remembering."""
        if self._journal is not None:
            del self._journal[mark:]
            if mark == 0:
                self._journal = None


def _shape(signature: tuple) -> tuple:
    """What of a class's signature decides which attributes its expressions read:
    the names it has and its non-literal expressions, not the literal values (a
    partitionable slot keeps its shape as it shrinks)."""
    if signature[:1] == ("#slot",):
        return signature
    return tuple(part if part[1] == "expr" else part[0] for part in signature)


def _asks_for_gpus(job: ClassAd) -> bool:
    """True when a job may ask for GPUs (its slots' cards then matter to the answer)."""
    return any(attr in job for attr in ("RequestGPUs", "RequestGPUMemory", "RequestGPUMemoryPercent",
                                        "RequestGPUCores"))


def _reads_card_list(node) -> bool:
    """True when ``node`` reads a card list (``AvailableGPUs``) other than through
    ``size()``: its members are card ads, whose ids would then be seen."""
    pending = [(node, None)]
    while pending:
        node, parent = pending.pop()
        if type(node) in (AttrRef, Select) and node.name.lower() in _CARD_LISTS and \
                not (type(parent) is Call and parent.name.lower() == "size"):
            return True
        pending.extend((child, node) for child in expression_children(node))
    return False


def _all_names(node) -> list[str]:
    out = []
    for n in expression_nodes(node):
        if type(n) is AttrRef:
            out.append(n.name.lower())
        elif type(n) is Select:
            out.append(n.name.lower())
    return out


def _shrunk(left, amount: float):
    if type(left) is int and float(amount).is_integer():
        return left - int(amount)
    return (left if type(left) in (int, float) else 0) - amount


def _consumption(job: ClassAd, slot: ClassAd, settings: MatchSettings, count_gpus: bool = True):
    """What one match of ``job`` takes from partitionable ``slot``, rounded up to the
    startd's quanta, or None when the slot has not that much left. A GPU share takes
    pieces of cards, not whole ``GPUs`` (``count_gpus`` False): its cards are taken
    by :func:`negotiator.gpu_matching.take_cards`."""
    quantum = dict(settings.quantum)
    out = []
    for attr, request_attr, default in CONSUMED:
        if attr == "GPUs" and not count_gpus:
            continue
        want = job.evaluate(request_attr, slot)
        if type(want) not in (int, float) or type(want) is bool:
            want = default
        step = quantum.get(attr, 1)
        if step > 0 and want > 0:
            want = math.ceil(want / step) * step
        if want <= 0:
            continue
        left = slot.evaluate(attr)
        if type(left) not in (int, float) or type(left) is bool or left < want:
            return None
        out.append((attr, want))
    return tuple(out)


# --- the pre-filter --------------------------------------------------------

@frozen
class _Clause:
    """``slot.attr op value`` with the job side already evaluated. ``direct`` is the
    Python comparison that gives ClassAd's answer when the slot's value has the same
    type as ``value`` (int, float or str; strings compared folded as ``folded``), so
    the common case needs no call into :mod:`classad.operators`."""

    attr: str
    op: str
    value: object
    direct: object = attrs.field(eq=False, repr=False, default=None)
    folded: object = attrs.field(eq=False, repr=False, default=None)

    @classmethod
    def of(cls, attr: str, op: str, value: object) -> _Clause:
        """The clause with its direct comparison filled in when there is one."""
        kind = type(value)
        direct = _DIRECT.get(op) if kind in (int, float, str) else None
        return cls(attr, op, value, direct, ops.fold_case(value) if kind is str else value)

    def holds(self, value) -> bool:
        """True when the clause holds for the slot's literal ``value``."""
        if self.direct is not None and type(value) is type(self.value):
            return self.direct(ops.fold_case(value) if type(value) is str else value, self.folded)
        if self.op == "=?=":
            return ops.identical(value, self.value) is True
        if self.op == "=!=":
            return ops.not_identical(value, self.value) is True
        return ops.compare(self.op, value, self.value) is True


@frozen
class Prefilter:
    """Literal clauses of a job's Requirements, checked against a slot's literal
    attributes before any evaluation; a slot failing one can never match."""

    clauses: tuple[_Clause, ...] = ()

    def passes(self, slot: ClassAd) -> bool:
        attrs_ = slot.entries_by_key()
        for clause in self.clauses:
            entry = attrs_.get(clause.attr)
            if entry is None:
                value = UNDEFINED
            elif entry.const is NOT_CONSTANT:
                continue
            else:
                value = entry.const
            if not clause.holds(value):
                return False
        return True


def _conjuncts(node):
    """The clauses of a top-level ``&&`` chain, left to right, without recursion (a
    machine list can be thousands of terms long)."""
    pending = [node]
    while pending:
        node = pending.pop()
        while type(node) is Paren:
            node = node.inner
        if type(node) is Binary and node.op == "&&":
            pending += (node.right, node.left)
        else:
            yield node


def _slot_attr(job: ClassAd, node) -> str | None:
    """The slot attribute ``node`` names (``TARGET.x``, or ``x`` the job lacks)."""
    while type(node) is Paren:
        node = node.inner
    if type(node) is Select and type(node.base) is AttrRef and node.base.name.lower() == "target":
        return node.name.lower()
    if type(node) is AttrRef and not node.absolute and node.name.lower() not in job \
            and node.name.lower() not in ("my", "target", "parent"):
        return node.name.lower()
    return None


def build_prefilter(job: ClassAd) -> Prefilter:
    """The pre-filter for ``job``: each top-level ``&&`` clause comparing a slot
    attribute with an expression the job alone decides."""
    node = job.expression("Requirements")
    if node is None:
        return Prefilter()
    clauses = []
    for clause in _conjuncts(node):
        if type(clause) is not Binary or clause.op not in _COMPARISONS:
            continue
        for slot_side, job_side, op in ((clause.left, clause.right, clause.op),
                                        (clause.right, clause.left, _FLIPPED[clause.op])):
            attr = _slot_attr(job, slot_side)
            if attr is None or references(job, job_side)[1]:
                continue
            value = ExprTree.from_node(job_side).evaluate(job)
            if value is UNDEFINED or value is ERROR or type(value) is list or isinstance(value, ClassAd):
                continue
            clauses.append(_Clause.of(attr, op, value))
            break
    return Prefilter(tuple(clauses))


# --- matching one request ------------------------------------------------------

def match_request(pool: SlotPool, request: ResourceRequest, max_matches: int,
                  allowance: float = math.inf, prefilter: Prefilter | None = None) -> list[SlotMatch]:
    """Up to ``max_matches`` slots for ``request``, best first, stopping once the
    matches' weight reaches ``allowance`` (a match is allowed while under it)."""
    if max_matches <= 0 or allowance <= 0:
        return []
    prefilter = prefilter if prefilter is not None else build_prefilter(request.ad)
    heap: list = []
    queued: set = set()

    def queue(signature, key) -> None:
        """Queue the group behind its first free slot's stamp, so that equally ranked
        slots are taken in the pool's order however they are grouped."""
        index = pool.first_free(request, signature)
        if index is not None:
            heapq.heappush(heap, (key, pool.stamp(index), signature))
            queued.add(signature)

    for signature in pool.groups(request):
        answer = pool.answer(request, signature, prefilter)
        if answer is not None:
            queue(signature, answer.key)
    matches: list[SlotMatch] = []
    used = 0.0
    while heap and len(matches) < max_matches and used < allowance:
        key, _, signature = heapq.heappop(heap)
        queued.discard(signature)
        index = pool.first_free(request, signature)
        if index is None:
            continue
        match = pool.take(index, pool.slot_answer(request, index, pool.answer(request, signature, prefilter)))
        matches.append(match)
        used += match.weight
        if signature not in queued:
            queue(signature, key)
        new_signature = pool.group_of(request, index)
        if pool.slots[index].partitionable and new_signature not in queued:
            new_answer = pool.answer(request, new_signature, prefilter)
            if new_answer is not None:
                queue(new_signature, new_answer.key)
    return matches
