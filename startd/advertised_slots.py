"""Which slot ads the collector may still hold, so the startd withdraws a slot's ad
only once no update that carried it can still arrive.

An update sent while the network was cut can reach the collector after the link
returns (a connection that was still opening, a retransmitted request). If it carried
a dynamic slot that has since gone, and arrived after the INVALIDATE that withdrew the
slot, the collector would show the claim for ``CLASSAD_LIFETIME``. So a gone slot
counts as withdrawn only when an INVALIDATE succeeds that was sent while no update
carrying that slot was still in flight; until then every round withdraws it again.
"""

from __future__ import annotations

from collections.abc import Iterable

from attrs import define, field


@define
class AdvertisedSlots:
    """The slot names the collector may hold, and the updates still in flight."""

    _held: set[str] = field(factory=set)
    _in_flight: dict[int, frozenset[str]] = field(factory=dict)
    _next_round: int = 0

    def begin(self, names: Iterable[str]) -> int:
        """An update carrying ``names`` is being sent; the round's number for :meth:`settle`."""
        carried = frozenset(names)
        self._next_round += 1
        self._in_flight[self._next_round] = carried
        self._held |= carried
        return self._next_round

    def settle(self, round_number: int) -> None:
        """The update of ``round_number`` has succeeded, failed or been given up on."""
        self._in_flight.pop(round_number, None)

    def to_withdraw(self, current: Iterable[str]) -> list[str]:
        """The names the collector may hold that are no longer slots here."""
        return sorted(self._held - set(current))

    def unsafe_to_forget(self, names: Iterable[str]) -> frozenset[str]:
        """Which of ``names`` an update still in flight carries (taken when an INVALIDATE
        is sent: those may arrive after it and must be withdrawn again)."""
        carried = frozenset().union(*self._in_flight.values()) if self._in_flight else frozenset()
        return frozenset(names) & carried

    def withdrawn(self, names: Iterable[str], unsafe: frozenset[str]) -> None:
        """An INVALIDATE of ``names`` succeeded; forget those no in-flight update carried."""
        self._held -= set(names) - unsafe
