"""Gangs in a negotiation cycle: all pieces or none.

A schedd sends a gang (a parallel universe job, or a vanilla cluster with
``gang_size``) as one resource request whose ad carries ``GangSize`` and ``GangId``.
The cycle reserves its matches one by one from the slot pool; when all of them fit
within the submitter's allowance they are kept, otherwise every reserved slot goes
back to the pool (as it was) and the request gets nothing this cycle, so no piece
holds a slot while the others wait (KAI's gang rule, HTCondor's dedicated scheduler's
outcome).
"""

from __future__ import annotations

import math

from attrs import frozen

from daemoncore.wire.resource_request import ResourceRequest
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
               prefilter: Prefilter | None = None) -> GangOutcome:
    """Reserve ``needed`` matches for the gang ``request``; keep them only when all
    were found and their weight fits ``allowance``, else undo every take."""
    mark = pool.checkpoint()
    found = match_request(pool, request, needed, math.inf, prefilter)
    weight = sum(match.weight for match in found)
    if len(found) == needed and weight <= allowance + 1e-9:
        pool.commit(mark)
        return GangOutcome(tuple(found))
    pool.restore(mark)
    size = gang_size(request)
    if len(found) < needed:
        return GangOutcome((), f"gang of {size}: only {len(found)} of {needed} pieces fit")
    return GangOutcome((), f"gang of {size}: its {weight:g} cores pass the submitter's share "
                           f"of {max(allowance, 0.0):g} left this cycle")
