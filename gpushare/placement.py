"""Fitting a GPU request onto a machine's cards.

A request asks for ``count`` cards. Without a share it takes each card whole (only a
card no one holds). With a share it asks for some device memory (MiB, or a percent of
the card) and some compute (percent of the card's SMs) on each; a card holds one more
share when it has that much memory and compute left and fewer than its split count of
shares. A compute share of 100 is exclusive, like a whole card. The policy orders the
cards that fit: ``binpack`` (fullest first), ``spread`` (emptiest first), ``numa`` (all
of a job's cards on one NUMA node when one node can hold them), chained as HAMi chains
them (``"numa,binpack"``). Everything here is pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs
from attrs import frozen

from gpushare.errors import GpuRequestError

FULL_CORES = 100
DEFAULT_SPLIT_COUNT = 10
POLICY_WORDS = ("binpack", "spread", "numa")
DEFAULT_POLICY = ("spread",)
#: Why a card cannot take a share, in the order they are checked (``explain`` counts them).
CLAUSES = ("uuid", "type", "exclusive", "split count", "cores", "memory")


def _non_negative(instance, attribute, value) -> None:
    if value < 0:
        raise ValueError(f"{attribute.name} must be 0 or more, not {value!r}")


@frozen
class Card:
    """One physical GPU as placement sees it: identity, place and what is taken."""

    uuid: str
    id: str
    index: int
    name: str = ""
    numa_node: int = 0
    memory_total: int = attrs.field(default=0, validator=_non_negative)
    memory_used: int = attrs.field(default=0, validator=_non_negative)
    cores_used: int = attrs.field(default=0, validator=_non_negative)
    tasks: int = attrs.field(default=0, validator=_non_negative)
    split_count: int = DEFAULT_SPLIT_COUNT

    @property
    def memory_free(self) -> int:
        return max(self.memory_total - self.memory_used, 0)

    @property
    def cores_free(self) -> int:
        return max(FULL_CORES - self.cores_used, 0)

    @property
    def untouched(self) -> bool:
        """No claim holds any of this card."""
        return self.tasks == 0

    @property
    def fullness(self) -> float:
        """How taken the card is, 0 (idle) to 1: the mean of its memory and compute given
        out, or its share count's fraction used when that is more (a card at its split
        count is full, whatever memory it has left)."""
        memory = self.memory_used / self.memory_total if self.memory_total else 1.0
        shares = self.tasks / self.split_count if self.split_count > 0 else 1.0
        return max((memory + self.cores_used / FULL_CORES) / 2, shares)


@frozen
class ShareRequest:
    """What one job asks of the cards: how many, how much of each, which, where and how."""

    count: int = 1
    memory_mib: int | None = None
    memory_percent: int | None = None
    cores: int | None = None
    use_ids: tuple[str, ...] = ()
    avoid_ids: tuple[str, ...] = ()
    use_types: tuple[str, ...] = ()
    avoid_types: tuple[str, ...] = ()
    policy: tuple[str, ...] = DEFAULT_POLICY
    numa_bind: bool = False

    def __attrs_post_init__(self) -> None:
        if self.count < 1:
            raise GpuRequestError(f"RequestGPUs must be at least 1 for a GPU request, not {self.count}")
        if self.memory_mib is not None and self.memory_percent is not None:
            raise GpuRequestError("give RequestGPUMemory (MiB) or RequestGPUMemoryPercent, not both")
        if self.memory_mib is not None and self.memory_mib < 1:
            raise GpuRequestError(f"RequestGPUMemory must be at least 1 MiB, not {self.memory_mib}")
        if self.memory_percent is not None and not 0 < self.memory_percent <= 100:
            raise GpuRequestError(
                f"RequestGPUMemoryPercent must be between 1 and 100, not {self.memory_percent}")
        if self.cores is not None and not 0 <= self.cores <= FULL_CORES:
            raise GpuRequestError(f"RequestGPUCores must be between 0 and 100, not {self.cores}")
        _check_policy(self.policy)

    @property
    def whole(self) -> bool:
        """True when the job asks for whole cards (no memory or compute share given)."""
        return self.memory_mib is None and self.memory_percent is None and self.cores is None

    @property
    def exclusive(self) -> bool:
        """True when no other share may sit beside this one on a card."""
        return self.whole or self.cores == FULL_CORES

    def memory_on(self, card: Card) -> int:
        """The MiB this request takes on ``card``: its MiB, its percent, or (as HAMi's
        default of 100%) the whole card's memory when it gives neither."""
        if self.memory_mib is not None:
            return self.memory_mib
        if self.memory_percent is not None:
            return card.memory_total * self.memory_percent // 100
        return card.memory_total

    def cores_on(self, card: Card) -> int:
        """The percent of ``card``'s SMs this request takes."""
        return FULL_CORES if self.whole else (self.cores or 0)


@frozen
class Grant:
    """The part of one card given to a job."""

    uuid: str
    id: str
    index: int
    memory_mib: int
    cores: int
    whole: bool = False


def _check_policy(words: Iterable[str]) -> None:
    for word in words:
        if word not in POLICY_WORDS:
            raise GpuRequestError(
                f"GPUPlacementPolicy {word!r} is not one of {', '.join(POLICY_WORDS)} "
                "(chain them with commas: numa,binpack)")


def parse_policy(text: str) -> tuple[str, ...]:
    """A policy chain such as ``"numa,binpack"`` as its words; empty means spread.

    Raises:
        GpuRequestError: a word is not binpack, spread or numa, or binpack and spread are both given.
    """
    words = tuple(w.strip().lower() for w in text.split(","))
    if any(not w for w in words) and text.strip():
        raise GpuRequestError(f"GPUPlacementPolicy {text!r} has an empty entry between commas")
    words = tuple(w for w in words if w)
    _check_policy(words)
    if "binpack" in words and "spread" in words:
        raise GpuRequestError(f"GPUPlacementPolicy {text!r} asks for both binpack and spread")
    return words or DEFAULT_POLICY


def _named(card: Card, ids: Iterable[str]) -> bool:
    wanted = {i.strip().lower() for i in ids}
    return bool(wanted & {card.uuid.lower(), card.id.lower(), str(card.index)})


def _typed(card: Card, types: Iterable[str]) -> bool:
    name = card.name.lower()
    return any(t.strip().lower() in name for t in types if t.strip())


def card_refusal(card: Card, request: ShareRequest) -> str | None:
    """Why ``card`` cannot take one share of ``request`` (a word of :data:`CLAUSES`),
    or None when it can."""
    if (request.use_ids and not _named(card, request.use_ids)) or \
            (request.avoid_ids and _named(card, request.avoid_ids)):
        return "uuid"
    if (request.use_types and not _typed(card, request.use_types)) or \
            (request.avoid_types and _typed(card, request.avoid_types)):
        return "type"
    if card.tasks and (request.exclusive or card.cores_used >= FULL_CORES):
        return "exclusive"
    if card.tasks >= card.split_count:
        return "split count"
    if request.cores_on(card) > card.cores_free:
        return "cores"
    if request.memory_on(card) > card.memory_free:
        return "memory"
    return None


def _binpack(policy: tuple[str, ...]) -> bool:
    return next((w for w in policy if w in ("binpack", "spread")), "spread") == "binpack"


def _card_order(cards: Iterable[Card], policy: tuple[str, ...]) -> list[Card]:
    sign = -1 if _binpack(policy) else 1
    return sorted(cards, key=lambda c: (sign * c.fullness, c.index))


def _numa_groups(cards: list[Card], policy: tuple[str, ...]) -> list[list[Card]]:
    """The cards grouped by NUMA node, nodes in policy order (fullest node first for
    binpack, emptiest for spread)."""
    nodes: dict[int, list[Card]] = {}
    for card in cards:
        nodes.setdefault(card.numa_node, []).append(card)
    sign = -1 if _binpack(policy) else 1

    def node_key(item: tuple[int, list[Card]]) -> tuple:
        node, members = item
        return (sign * sum(c.fullness for c in members) / len(members), node)

    return [_card_order(members, policy) for _, members in sorted(nodes.items(), key=node_key)]


def fit(cards: Sequence[Card], request: ShareRequest) -> tuple[Grant, ...] | None:
    """The cards (and how much of each) ``request`` gets from ``cards``, or None when
    they cannot hold it. With ``numa`` in the policy all cards come from one NUMA node
    when one node can hold them; ``numa_bind`` makes that a requirement."""
    eligible = [card for card in cards if card_refusal(card, request) is None]
    if len(eligible) < request.count:
        return None
    chosen: list[Card] | None = None
    if request.numa_bind or "numa" in request.policy:
        chosen = next((group[:request.count] for group in _numa_groups(eligible, request.policy)
                       if len(group) >= request.count), None)
        if chosen is None and request.numa_bind:
            return None
    if chosen is None:
        chosen = _card_order(eligible, request.policy)[:request.count]
    return tuple(Grant(c.uuid, c.id, c.index, request.memory_on(c), request.cores_on(c), request.whole)
                 for c in chosen)


def explain(cards: Sequence[Card], request: ShareRequest) -> dict[str, int]:
    """How many of ``cards`` each clause refused, and how many could hold a share (``fit``)."""
    counts = dict.fromkeys((*CLAUSES, "fit"), 0)
    for card in cards:
        counts[card_refusal(card, request) or "fit"] += 1
    return counts


def _apply(cards: Sequence[Card], grants: Iterable[Grant], sign: int) -> tuple[Card, ...]:
    by_uuid = {g.uuid: g for g in grants}
    out = []
    for card in cards:
        grant = by_uuid.get(card.uuid)
        if grant is None:
            out.append(card)
            continue
        out.append(attrs.evolve(
            card,
            memory_used=max(card.memory_used + sign * grant.memory_mib, 0),
            cores_used=max(card.cores_used + sign * grant.cores, 0),
            tasks=max(card.tasks + sign, 0),
        ))
    return tuple(out)


def take(cards: Sequence[Card], grants: Iterable[Grant]) -> tuple[Card, ...]:
    """The cards once ``grants`` are given out of them."""
    return _apply(cards, grants, +1)


def give_back(cards: Sequence[Card], grants: Iterable[Grant]) -> tuple[Card, ...]:
    """The cards once ``grants`` are returned to them."""
    return _apply(cards, grants, -1)


def grants_hold(request: ShareRequest, grants: Sequence[Grant], cards: Sequence[Card]) -> bool:
    """True when a job asking ``request`` can run on a claim that holds ``grants`` (of
    ``cards``): as many cards, whole ones for a whole request, and for a share the same
    memory and compute on each card as the claim was given (the limits the job runs
    under are the claim's), on cards the job accepts."""
    if len(grants) != request.count:
        return False
    by_uuid = {card.uuid: card for card in cards}
    for grant in grants:
        card = by_uuid.get(grant.uuid)
        if card is None or (request.exclusive and not grant.whole and grant.cores < FULL_CORES):
            return False
        if grant.whole and not request.whole:
            return False  # a share on a whole card's claim would leave the rest of the card idle
        # Judge the card as if this claim's piece were free again, so only the other
        # refusal clauses (uuid, type) and the grant's own size decide.
        alone = attrs.evolve(card, memory_used=0, cores_used=0, tasks=0)
        if card_refusal(alone, request) is not None:
            return False
        if request.memory_on(card) != grant.memory_mib or request.cores_on(card) != grant.cores:
            return False  # a larger share would overrun the claim, a smaller one strand the rest
    if request.numa_bind and len({by_uuid[g.uuid].numa_node for g in grants}) > 1:
        return False
    return True
