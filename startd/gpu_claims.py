"""Carving a claim's GPUs out of a slot's cards with gpushare's model, and saying why not.

The negotiator places a job with the same :func:`gpushare.placement.fit` on the cards the
slot advertised, so a refusal here means the two views differ (an ad older than a claim,
or a bug): :class:`GpuClaimRefused` carries both, the job's request and each card's free
memory, cores and shares, for the startd's log.
"""

from __future__ import annotations

from collections.abc import Sequence

from daemoncore.config import Config, ConfigError
from gpushare.errors import GpuRequestError
from gpushare.placement import DEFAULT_SPLIT_COUNT, Card, Grant, ShareRequest, card_refusal, fit, parse_policy
from startd.errors import ClaimRefused

#: The smallest share there is: a card that cannot hold it has no room left.
_SMALLEST_SHARE = ShareRequest(memory_mib=1, cores=0)


class GpuClaimRefused(ClaimRefused):
    """No choice of the slot's cards holds the job's GPU request.

    ``request_view`` and ``card_views`` say what the job asked and what each card had.
    """

    def __init__(self, message: str, request_view: str, card_views: tuple[str, ...]) -> None:
        super().__init__(message)
        self.request_view = request_view
        self.card_views = card_views


def placement_options(config: Config) -> dict[str, object]:
    """The slot table's GPU knobs: ``GPU_SPLIT_COUNT`` (most shares on one card, default 10)
    and ``GPU_PLACEMENT_POLICY`` (the policy of jobs that name none, default spread).

    Raises:
        ConfigError: the split count is not a whole number of at least 1, or the policy
            has a word other than binpack, spread and numa.
    """
    split_count = config.param_int("GPU_SPLIT_COUNT", DEFAULT_SPLIT_COUNT)
    if split_count is None or split_count < 1:
        raise ConfigError(f"GPU_SPLIT_COUNT = {split_count}: expected a whole number of at least 1 "
                          "(the most jobs that may share one card)")
    text = config.param("GPU_PLACEMENT_POLICY") or ""
    try:
        policy = parse_policy(text)
    except GpuRequestError as exc:
        raise ConfigError(f"GPU_PLACEMENT_POLICY = {text}: {exc}") from None
    return {"split_count": split_count, "gpu_policy": policy}


def has_room(card: Card) -> bool:
    """Whether ``card`` can still take some share (it is not held whole, full, or at its split count)."""
    return card_refusal(card, _SMALLEST_SHARE) is None


def describe_request(request: ShareRequest) -> str:
    """The job's GPU request in its attributes' words, for a log line or an error."""
    if request.whole:
        parts = [f"{request.count} whole card(s)"]
    else:
        memory = (f"{request.memory_mib} MiB" if request.memory_mib is not None else
                  f"{request.memory_percent}% of the memory" if request.memory_percent is not None else
                  "all the memory")
        parts = [f"{request.count} card(s) with {memory} and {request.cores or 0}% cores each"]
    for words, label in ((request.use_ids, "RequestGPUIds"), (request.avoid_ids, "AvoidGPUIds"),
                         (request.use_types, "RequestGPUTypes"), (request.avoid_types, "AvoidGPUTypes")):
        if words:
            parts.append(f"{label} = {','.join(words)}")
    parts.append(f"GPUPlacementPolicy = {','.join(request.policy)}")
    if request.numa_bind:
        parts.append("GPUNumaBind = true")
    return ", ".join(parts)


def describe_card(card: Card, why: str | None) -> str:
    """One card's free memory, cores and shares, and why it could not take the share."""
    state = (f"{card.id} (index {card.index}, NUMA node {card.numa_node}): "
             f"{card.memory_free} of {card.memory_total} MiB, {card.cores_free}% cores free, "
             f"{card.tasks} of {card.split_count} shares")
    return f"{state}; {'fits' if why is None else f'refused for {why}'}"


def carve(cards: Sequence[Card], request: ShareRequest, allowed: set[str] | None,
          slot_name: str) -> tuple[Grant, ...]:
    """The grants ``request`` gets from ``cards`` (only those whose id is in ``allowed``,
    the job's ``RequireGPUs``, when given).

    Raises:
        GpuClaimRefused: the cards cannot hold the request, with both views.
    """
    eligible = [c for c in cards if allowed is None or c.id in allowed]
    grants = fit(eligible, request)
    if grants is not None:
        return grants
    reasons = [("RequireGPUs" if allowed is not None and c.id not in allowed else card_refusal(c, request))
               for c in cards]
    views = tuple(describe_card(c, why) for c, why in zip(cards, reasons, strict=True))
    wanted = describe_request(request)
    fitting = sum(why is None for why in reasons)
    summary = ", ".join(f"{reasons.count(w)} for {w}" for w in dict.fromkeys(reasons) if w is not None)
    detail = f"{fitting} of {len(cards)} cards could take a share" + (f"; refused: {summary}" if summary else "")
    if request.numa_bind and fitting >= request.count:
        detail += f", but no NUMA node has {request.count} of them and GPUNumaBind is true"
    raise GpuClaimRefused(f"{slot_name} cannot give {wanted}: {detail}", wanted, views)
