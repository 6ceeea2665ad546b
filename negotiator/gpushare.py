"""Fitting a job's GPU share request onto a machine's cards, the way HAMi does.

A request asks for ``count`` cards, each with some device memory (MiB, or a
percentage of the card) and some compute (percent of the card's SMs). A card fits
when it has that much memory and compute left and room for one more task. Without a
memory share the job takes the whole card's memory; a compute share of 100 means an
exclusive card. The policy orders the cards that fit: ``binpack`` (fullest first),
``spread`` (emptiest first), ``numa`` (all of a job's cards on one NUMA node when
possible), chained as in HAMi (``"numa,binpack"``). Everything here is pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs
from attrs import frozen

from classad.values import Value
from negotiator.errors import GpuRequestError

FULL_CORES = 100
DEFAULT_SPLIT_COUNT = 10
POLICY_WORDS = ("binpack", "spread", "numa")


def _non_negative(instance, attribute, value) -> None:
    if value < 0:
        raise ValueError(f"{attribute.name} must be 0 or more, not {value!r}")


@frozen
class Card:
    """One physical GPU as the matchmaker sees it: identity, place and what is taken."""

    uuid: str
    index: int
    numa_node: int = 0
    memory_total: int = attrs.field(default=0, validator=_non_negative)
    memory_used: int = attrs.field(default=0, validator=_non_negative)
    cores_used: int = attrs.field(default=0, validator=_non_negative)
    tasks: int = attrs.field(default=0, validator=_non_negative)
    split_count: int = DEFAULT_SPLIT_COUNT

    @property
    def memory_free(self) -> int:
        return self.memory_total - self.memory_used

    @property
    def fullness(self) -> float:
        """How taken the card is, 0 (idle) to 2 (memory and compute all taken)."""
        memory = self.memory_used / self.memory_total if self.memory_total else 1.0
        return memory + self.cores_used / FULL_CORES


@frozen
class GpuShareRequest:
    """What one job asks of the cards: how many, how much of each, where and how."""

    count: int = 1
    memory_mib: int | None = None
    memory_percent: int | None = None
    cores: int = 0
    use_ids: tuple[str, ...] = ()
    avoid_ids: tuple[str, ...] = ()
    policy: tuple[str, ...] = ("spread",)
    numa_bind: bool = False

    def __attrs_post_init__(self) -> None:
        if self.count < 1:
            raise GpuRequestError(f"RequestGPUs must be at least 1 for a GPU share, not {self.count}")
        if self.memory_mib is not None and self.memory_percent is not None:
            raise GpuRequestError("give RequestGPUMemory (MiB) or RequestGPUMemoryPercent, not both")
        if self.memory_mib is not None and self.memory_mib < 0:
            raise GpuRequestError(f"RequestGPUMemory must be 0 or more MiB, not {self.memory_mib}")
        if self.memory_percent is not None and not 0 < self.memory_percent <= 100:
            raise GpuRequestError(
                f"RequestGPUMemoryPercent must be between 1 and 100, not {self.memory_percent}")
        if not 0 <= self.cores <= FULL_CORES:
            raise GpuRequestError(f"RequestGPUCores must be between 0 and 100, not {self.cores}")
        for word in self.policy:
            if word not in POLICY_WORDS:
                raise GpuRequestError(
                    f"GPUPlacementPolicy {word!r} is not one of {', '.join(POLICY_WORDS)}")

    def memory_on(self, card: Card) -> int:
        """The MiB this request takes on ``card``; the whole card when no share is given."""
        if self.memory_mib:
            return self.memory_mib
        percent = self.memory_percent if self.memory_percent is not None else 100
        return card.memory_total * percent // 100


@frozen
class CardGrant:
    """The part of one card given to a job."""

    uuid: str
    index: int
    memory_mib: int
    cores: int


def parse_policy(text: str) -> tuple[str, ...]:
    """A policy chain such as ``"numa,binpack"`` as its words; unknown words raise.

    Raises:
        GpuRequestError: a word is not binpack, spread or numa.
    """
    words = tuple(w.strip().lower() for w in text.split(",") if w.strip())
    for word in words:
        if word not in POLICY_WORDS:
            raise GpuRequestError(
                f"GPUPlacementPolicy {word!r} is not one of {', '.join(POLICY_WORDS)}")
    return words or ("spread",)


def card_fits(card: Card, request: GpuShareRequest) -> bool:
    """True when ``card`` has the memory, compute and task room for one share."""
    if card.tasks >= card.split_count:
        return False
    if request.cores >= FULL_CORES and card.tasks > 0:
        return False
    if card.cores_used >= FULL_CORES:
        return False
    if card.cores_used + request.cores > FULL_CORES:
        return False
    return request.memory_on(card) <= card.memory_free


def _named(card: Card, ids: Iterable[str]) -> bool:
    wanted = {i.strip().lower() for i in ids}
    return card.uuid.lower() in wanted or str(card.index) in wanted


def _eligible(cards: Sequence[Card], request: GpuShareRequest) -> list[Card]:
    """Cards the request may use (named ones only, none of the avoided) that fit it."""
    out = []
    for card in cards:
        if request.use_ids and not _named(card, request.use_ids):
            continue
        if request.avoid_ids and _named(card, request.avoid_ids):
            continue
        if card_fits(card, request):
            out.append(card)
    return out


def _card_order(cards: list[Card], policy: tuple[str, ...]) -> list[Card]:
    binpack = next((w for w in policy if w in ("binpack", "spread")), "spread") == "binpack"
    sign = -1 if binpack else 1
    return sorted(cards, key=lambda c: (sign * c.fullness, c.index))


def _numa_groups(cards: list[Card], policy: tuple[str, ...]) -> list[list[Card]]:
    """Cards grouped by NUMA node, the groups in policy order (fullest node first
    for binpack, emptiest for spread)."""
    nodes: dict[int, list[Card]] = {}
    for card in cards:
        nodes.setdefault(card.numa_node, []).append(card)
    binpack = next((w for w in policy if w in ("binpack", "spread")), "spread") == "binpack"
    sign = -1 if binpack else 1

    def node_key(item):
        node, members = item
        return (sign * sum(c.fullness for c in members) / len(members), node)

    return [_card_order(members, policy) for _, members in sorted(nodes.items(), key=node_key)]


def fit_share(cards: Sequence[Card], request: GpuShareRequest) -> tuple[CardGrant, ...] | None:
    """The cards (and how much of each) a request gets, or None when it does not fit.

    Named cards (``use_ids``, by UUID or index) limit the choice. With ``numa`` in
    the policy (or ``numa_bind``) all cards come from one NUMA node when one node can
    hold them; ``numa_bind`` makes that a requirement.
    """
    eligible = _eligible(cards, request)
    if len(eligible) < request.count:
        return None
    chosen: list[Card] | None = None
    if request.numa_bind or "numa" in request.policy:
        for group in _numa_groups(eligible, request.policy):
            if len(group) >= request.count:
                chosen = group[: request.count]
                break
        if chosen is None and request.numa_bind:
            return None
    if chosen is None:
        chosen = _card_order(eligible, request.policy)[: request.count]
    return tuple(CardGrant(c.uuid, c.index, request.memory_on(c), request.cores) for c in chosen)


def apply_grants(cards: Sequence[Card], grants: Iterable[CardGrant]) -> tuple[Card, ...]:
    """The cards after ``grants`` are taken from them (for the next fit in a cycle)."""
    by_uuid = {g.uuid: g for g in grants}
    out = []
    for card in cards:
        grant = by_uuid.get(card.uuid)
        if grant is None:
            out.append(card)
            continue
        out.append(attrs.evolve(
            card,
            memory_used=card.memory_used + grant.memory_mib,
            cores_used=card.cores_used + grant.cores,
            tasks=card.tasks + 1,
        ))
    return tuple(out)


def _ids_of(value) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, (list, tuple)):
        return tuple(str(v) for v in value)
    return tuple(p.strip() for p in str(value).split(",") if p.strip())


def request_from_job(job) -> GpuShareRequest | None:
    """The GPU share a job ad asks for, or None when it asks for no GPU.

    Reads ``RequestGPUs``, ``RequestGPUMemory`` (MiB per card),
    ``RequestGPUMemoryPercent``, ``RequestGPUCores`` (percent), ``RequestGPUIds``
    (UUIDs or indices, a list or a comma string), ``AvoidGPUIds``,
    ``GPUPlacementPolicy`` and ``GPUNumaBind``. A memory or cores share alone implies
    one card, as HAMi's default GPU count does.

    Raises:
        GpuRequestError: a value has the wrong type or is out of range, naming it.
    """
    def number(attr: str):
        value = job.evaluate(attr)
        if value is None or isinstance(value, Value):
            return None
        if type(value) is bool or not isinstance(value, (int, float)):
            raise GpuRequestError(f"{attr} must be a number, not {value!r}")
        return int(value)

    count = number("RequestGPUs")
    memory = number("RequestGPUMemory")
    percent = number("RequestGPUMemoryPercent")
    cores = number("RequestGPUCores")
    if not count and memory is None and percent is None and cores is None:
        return None
    policy = job.evaluate("GPUPlacementPolicy")
    bind = job.evaluate("GPUNumaBind")
    return GpuShareRequest(
        count=count or 1,
        memory_mib=memory,
        memory_percent=percent,
        cores=cores or 0,
        use_ids=_ids_of(_plain(job.evaluate("RequestGPUIds"))),
        avoid_ids=_ids_of(_plain(job.evaluate("AvoidGPUIds"))),
        policy=parse_policy(policy) if type(policy) is str else ("spread",),
        numa_bind=bind is True,
    )


def _plain(value):
    return None if isinstance(value, Value) else value
