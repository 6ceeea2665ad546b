"""Remembering matches a startd refused, so a job is not matched to the same slot
every cycle in a loop.

The schedd claims the slot after the cycle, so the negotiator learns of a refusal from
the next cycle's view: the startd counts the claims it refused in each slot's
``ClaimRequestsRefused``, and a slot matched to a request whose count has grown since,
while the request still asks for as many jobs, refused it. Such a (request, slot) pair
is held back for a while — a minute, doubling with each repeat, at most an hour — and
forgotten as soon as the slot's resources change. A request is known across cycles by
what it asks, not by its id (ids are numbered per answer).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence

from attrs import frozen

from classad import ClassAd
from classad.unparse import unparse_expr

FIRST_HOLD = 60.0
LONGEST_HOLD = 3600.0
#: What a request asks, read from its ad to know it again in a later cycle.
REQUEST_ATTRIBUTES = (
    "Requirements", "RequestCpus", "RequestMemory", "RequestDisk", "RequestGPUs", "RequestGPUMemory",
    "RequestGPUMemoryPercent", "RequestGPUCores", "RequestGPUIds", "AvoidGPUIds", "RequestGPUTypes",
    "AvoidGPUTypes", "GPUNumaBind", "GPUPlacementPolicy",
)
#: What a slot has to give; a claim (or its end) changes one of these.
SLOT_ATTRIBUTES = ("State", "Cpus", "Memory", "Disk", "GPUs", "AvailableGPUs", "NumDynamicSlots")
CARD_PREFIX = "gpus_gpu_"


def request_identity(submitter: str, ad: ClassAd) -> tuple:
    """What a request asks, as a key that stays the same from one cycle to the next."""
    out: list[object] = [submitter]
    for attr in REQUEST_ATTRIBUTES:
        expr = ad.expression(attr)
        out.append(None if expr is None else unparse_expr(expr))
    return tuple(out)


def slot_fingerprint(wire: Mapping) -> str:
    """A slot's resources and state as text (its cards' nested ads included)."""
    lowered = {key.lower(): value for key, value in wire.items()}
    chosen = {attr: lowered.get(attr.lower()) for attr in SLOT_ATTRIBUTES}
    chosen.update({key: value for key, value in lowered.items() if key.startswith(CARD_PREFIX)})
    return json.dumps(chosen, sort_keys=True, default=str)


@frozen
class SentMatch:
    """A match sent to a schedd: the slot as it was and how much the request asked."""

    fingerprint: str
    refused: int
    asked: int


@frozen
class Held:
    """A (request, slot) pair held back until ``until``, after ``refusals`` refusals."""

    fingerprint: str
    until: float
    refusals: int


@frozen
class RequestKey:
    """A request of one cycle: its id and count now, and its identity across cycles."""

    request_id: str
    count: int
    identity: tuple


class RefusalMemory:
    """Matches sent in the last cycle and the pairs held back. Mutable: each cycle
    reviews what came of the last one's matches."""

    def __init__(self, first_hold: float = FIRST_HOLD, longest_hold: float = LONGEST_HOLD) -> None:
        self.first_hold = first_hold
        self.longest_hold = longest_hold
        self._sent: dict[tuple, SentMatch] = {}
        self._held: dict[tuple, Held] = {}

    def review(self, wires: Mapping[str, Mapping], requests: Sequence[RequestKey],
               now: float) -> tuple[frozenset[tuple[str, str]], list[str]]:
        """The ``(request id, slot name)`` pairs not to match this cycle, and a line for
        each pair newly found refused."""
        asking = {r.identity: r for r in requests}
        found = []
        for (identity, slot), sent in self._sent.items():
            wire, request = wires.get(slot), asking.get(identity)
            if wire is None or request is None or request.count < sent.asked:
                continue
            if _refused(wire) <= sent.refused:
                continue
            found.append(self._hold((identity, slot), slot_fingerprint(wire), now))
        self._sent = {}
        self._forget(wires, now)
        held = frozenset((asking[identity].request_id, slot) for (identity, slot), hold in self._held.items()
                         if identity in asking and hold.until > now)
        return held, found

    def _hold(self, pair: tuple, fingerprint: str, now: float) -> str:
        before = self._held.get(pair)
        refusals = before.refusals + 1 if before is not None else 1
        seconds = min(self.first_hold * 2 ** (refusals - 1), self.longest_hold)
        self._held[pair] = Held(fingerprint, now + seconds, refusals)
        return (f"slot {pair[1]} was matched to a request of {pair[0][0]} last cycle and its startd "
                f"refused the claim: not matching them again for {seconds:.0f} s")

    def _forget(self, wires: Mapping[str, Mapping], now: float) -> None:
        """Drop holds whose slot is gone or changed, and those that ran out longer ago
        than the longest hold (one that ran out recently still counts its refusals, so
        a repeat is held longer)."""
        self._held = {pair: held for pair, held in self._held.items()
                      if held.until + self.longest_hold > now and pair[1] in wires
                      and slot_fingerprint(wires[pair[1]]) == held.fingerprint}

    def note_sent(self, sent: Iterable[tuple[str, str]], wires: Mapping[str, Mapping],
                  requests: Sequence[RequestKey]) -> None:
        """Remember the ``(request id, slot name)`` pairs the schedds were sent."""
        by_id = {r.request_id: r for r in requests}
        for request_id, slot in sent:
            request, wire = by_id.get(request_id), wires.get(slot)
            if request is not None and wire is not None:
                self._sent[(request.identity, slot)] = SentMatch(slot_fingerprint(wire), _refused(wire), request.count)


def _refused(wire: Mapping) -> int:
    """The slot's count of claims its startd refused (0 when it does not say)."""
    value = next((v for k, v in wire.items() if k.lower() == "claimrequestsrefused"), 0)
    return value if type(value) is int else 0
