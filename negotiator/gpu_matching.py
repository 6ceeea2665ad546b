"""How the matchmaker sees a slot's GPU cards within a cycle.

A job asking for GPUs matches a slot only when :func:`gpushare.placement.fit` finds
cards for it among the slot's nested card ads (``GPUs_GPU_*``), the same model the
startd carves claims with, so a match made here is one the startd accepts. A match
on a partitionable slot takes its grants out of the cycle's working copy of the ad
(each card's ``FreeMemoryMb``, ``FreeCores``, ``Shares``; the slot's ``GPUs`` =
untouched cards and ``AvailableGPUs`` = cards with room), so the next match in the
same cycle sees what is left. ``NODE_PLACEMENT_POLICY`` (or a job's
``NodePlacementPolicy``) becomes a rank term: binpack puts first the machine where
the share strands least card memory, then the one with the least free (GPUs, then
cpus); spread the most free.
"""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from classad import ClassAd, ExprTree
from gpushare.errors import GpuRequestError
from gpushare.job_request import request_from_job
from gpushare.placement import DEFAULT_POLICY, Card, Grant, ShareRequest, card_refusal, fit, take
from gpushare.slot_cards import card_ad_attributes, card_attribute_names, card_from_ad

NODE_POLICY_WORDS = ("binpack", "spread")
CARD_ATTR_LOWER_PREFIX = "gpus_gpu_"
SMALLEST_SHARE = ShareRequest(memory_mib=1, cores=0)


@frozen
class JobGpuView:
    """What one request asks of GPUs and machines: its card request (None when it asks
    for no GPU) and its node placement policy (None when neither job nor pool names one)."""

    request: ShareRequest | None = None
    node_policy: str | None = None


def parse_node_policy(text: str, where: str) -> str:
    """``binpack`` or ``spread`` from ``text``.

    Raises:
        GpuRequestError: any other word, naming ``where`` it came from.
    """
    word = text.strip().lower()
    if word not in NODE_POLICY_WORDS:
        raise GpuRequestError(f"{where} {text!r} is not one of {', '.join(NODE_POLICY_WORDS)}")
    return word


def job_gpu_view(job: ClassAd, gpu_policy: tuple[str, ...] = DEFAULT_POLICY,
                 node_policy: str | None = None) -> JobGpuView:
    """The GPU view of ``job``: its request (``GPU_PLACEMENT_POLICY`` = ``gpu_policy``
    when it names no GPUPlacementPolicy) and its node policy (its own, else the pool's,
    else spread for a GPU job; a job without GPUs and without a policy is ranked as
    before node placement existed).

    Raises:
        GpuRequestError: a GPU attribute or NodePlacementPolicy is malformed, naming it.
    """
    request = request_from_job(job, None, gpu_policy)
    own = job.evaluate("NodePlacementPolicy") if "NodePlacementPolicy" in job else None
    if type(own) is str and own.strip():
        node_policy = parse_node_policy(own, "NodePlacementPolicy")
    elif own is not None and type(own) is not str and "NodePlacementPolicy" in job:
        raise GpuRequestError(f"NodePlacementPolicy must be the string binpack or spread, not {own!r}")
    if node_policy is None and request is not None:
        node_policy = "spread"
    return JobGpuView(request, node_policy)


NamedCards = tuple[tuple[str, Card], ...]
"""A slot's cards, each with the slot attribute its nested ad lives in, in index order."""


def slot_cards(slot: ClassAd) -> NamedCards:
    """The slot's cards with the attribute each lives in, in index order."""
    named = [(name, card_from_ad(slot.get(name), n))
             for n, name in enumerate(sorted(card_attribute_names(slot)))]
    named.sort(key=lambda item: (item[1].index, item[1].id))
    return tuple(named)


def slot_grants(request: ShareRequest, named: NamedCards) -> tuple[Grant, ...] | None:
    """The cards a slot with ``named`` cards would give ``request``, or None when it
    cannot hold it. A whole-card request on a slot that advertises no card ads is left
    to its ``GPUs`` count (``()``), as before cards were advertised; a share needs cards."""
    if not named:
        return () if request.whole else None
    return fit([card for _, card in named], request)


def has_room(card: Card) -> bool:
    """True when the card can still take some share (what ``AvailableGPUs`` lists, as
    the startd lists it: the smallest share fits)."""
    return card_refusal(card, SMALLEST_SHARE) is None


def take_cards(slot: ClassAd, named: NamedCards, grants: Sequence[Grant]) -> NamedCards:
    """Take ``grants`` out of the card ads of ``slot`` (a cycle's working copy), set its
    ``GPUs`` (untouched cards) and ``AvailableGPUs`` (cards with room) to match, and
    return its cards as they now are."""
    if not named or not grants:
        return named
    after = tuple(zip((name for name, _ in named), take([card for _, card in named], grants), strict=True))
    for (name, before), (_, card) in zip(named, after, strict=True):
        if card != before:
            nested = slot.get(name).copy()
            for attr, value in card_ad_attributes(card).items():
                nested[attr] = value
            slot[name] = nested
    slot["GPUs"] = sum(card.untouched for _, card in after)
    slot["AvailableGPUs"] = [ExprTree(name) for name, card in after if has_room(card)]
    return after


def stranded(card: Card, request: ShareRequest) -> float:
    """The fraction of ``card``'s memory one share of ``request`` would strand: what is
    left once the card's remaining share count (none after an exclusive share, or once
    its compute is all given) is filled with shares no larger than this one. Requests
    are served largest first, so later shares are no larger; 0 when the card can still
    fill up, or is empty of memory."""
    if not card.memory_total:
        return 0.0
    memory = request.memory_on(card)
    left = card.memory_free - memory
    shares_left = card.split_count - card.tasks - 1
    if request.exclusive or card.cores_free - request.cores_on(card) <= 0:
        shares_left = 0
    return max(left - max(shares_left, 0) * memory, 0) / card.memory_total


def node_rank(policy: str | None, named: NamedCards, cpus: object,
              request: ShareRequest | None = None, grants: Sequence[Grant] = ()) -> tuple[float, float, float]:
    """The node placement term of a slot with ``named`` cards and ``cpus`` free that
    would give ``request`` its ``grants`` (smaller is better). binpack puts first the
    machine whose cards the share strands least memory on (best fit over memory, compute
    and share count; a 3000-MiB share goes to a 24 GB card, not to an 80 GB card it
    would close with 50 GB unused), then the least free (GPU capacity for a GPU job,
    then cpus); spread the most free. ``(0, 0, 0)`` when no policy applies."""
    if policy is None:
        return (0.0, 0.0, 0.0)
    free_gpus = sum(1.0 - card.fullness for _, card in named) if request is not None else 0.0
    cpus = float(cpus) if type(cpus) in (int, float) else 0.0
    if policy != "binpack":
        return (0.0, -free_gpus, -cpus)
    cards = {card.uuid: card for _, card in named}
    waste = sum(stranded(cards[g.uuid], request) for g in grants if g.uuid in cards) if request else 0.0
    return (waste, free_gpus, cpus)


def card_fraction(request: ShareRequest, card_mib: int) -> float:
    """How many cards of ``card_mib`` MiB of memory ``request`` takes: the size the
    cycle orders GPU requests by (largest first, so small shares fill what large ones
    leave). Memory alone decides, as first-fit decreasing packs: a compute share holds
    little memory and, placed late, joins cards whose memory is mostly given."""
    if not card_mib:
        return float(request.count)
    return request.count * request.memory_on(Card("", "", 0, memory_total=card_mib)) / card_mib
