"""Gangs in a negotiation cycle: all pieces or none.

A schedd sends a gang (a parallel universe job, or a vanilla cluster with
``gang_size``) as one resource request whose ad carries ``GangSize`` and ``GangId``.
The cycle reserves its matches one by one from the slot pool; when all of them fit
within the submitter's allowance they are kept, otherwise every reserved slot goes
back to the pool (as it was) and the request gets nothing this cycle, so no piece
holds a slot while the others wait (KAI's gang rule, HTCondor's dedicated scheduler's
outcome). Concurrency limits count per piece, as HTCondor counts each proc of a
parallel job: a gang is kept only when the limits have room for all its pieces.
"""

from __future__ import annotations

import math

from attrs import frozen

from daemoncore.wire.resource_request import ResourceRequest
from negotiator.concurrency import ConcurrencyLedger
from negotiator.matchmaking import Prefilter, SlotMatch, SlotPool, match_request


@frozen
class GangOutcome:
    """The matches a gang got (all of them, or none) and, when none, why."""

    matches: tuple[SlotMatch, ...]
    reason: str = ""


def gang_size(request: ResourceRequest) -> int:
    """The request's ``GangSize`` when it is a gang of more than one piece, else 1."""
    size = request.ad.evaluate("GangSize")
    return size if type(size) is int and size > 1 else 1


def serve_gang(pool: SlotPool, request: ResourceRequest, needed: int, allowance: float,
               prefilter: Prefilter | None = None, ledger: ConcurrencyLedger | None = None) -> GangOutcome:
    """Reserve ``needed`` matches for the gang ``request``; keep them only when all
    were found, their weight fits ``allowance`` and ``ledger`` has room for every
    piece's concurrency limits (then they are counted there), else undo every take."""
    size = gang_size(request)
    if ledger is not None and (why := ledger.gang_shortfall_unmatched(request, needed)):
        return GangOutcome((), f"gang of {size}: {why}")
    mark = pool.checkpoint()
    found = match_request(pool, request, needed, math.inf, prefilter)
    weight = sum(match.weight for match in found)
    why = _shortfall(found, needed, weight, allowance, size)
    if not why and ledger is not None:
        why = ledger.gang_shortfall(request, [match.slot_ad for match in found])
        why = f"gang of {size}: {why}" if why else ""
    if why:
        pool.restore(mark)
        return GangOutcome((), why)
    pool.commit(mark)
    if ledger is not None:
        ledger.take_gang(request, [match.slot_ad for match in found])
    return GangOutcome(tuple(found))


def _shortfall(found: list[SlotMatch], needed: int, weight: float, allowance: float, size: int) -> str:
    """Why the pieces ``found`` are not enough for the gang ("" when they are)."""
    if len(found) < needed:
        return f"gang of {size}: only {len(found)} of {needed} pieces fit"
    if weight > allowance + 1e-9:
        return (f"gang of {size}: its {weight:g} cores pass the submitter's share "
                f"of {max(allowance, 0.0):g} left this cycle")
    return ""
