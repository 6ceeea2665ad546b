"""Activations that ride back on the answer to an exit report.

When a startd reports that a job exited on a claim the schedd keeps for the owner's
next job, that job's ACTIVATE body goes back inside the answer to the report instead
of as a request of its own: one request less per job for both daemons, and the startd
starts the next job as soon as it reads the answer. The startd asks for this in its
report (``takes_activation``), so one that does not know the answer's ``activate``
field keeps getting requests.

A ride the schedd never hears about (the answer lost on its way, or the claim ended
on the startd meanwhile) is sent again as an ordinary ACTIVATE after
:data:`FALLBACK_SECONDS`; the startd starts one activation (one transfer key) at most
once, so a late request for a job the ride started already changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import attrs

#: How long a ride may go unheard of before the activation is sent as a request. Any
#: report or transfer of the job's run counts as heard; a run reports its start within
#: the startd's execute-report delay (50 ms) after its input arrived.
FALLBACK_SECONDS = 5.0

#: ``send(claim, shadow, body, counts)``: the ordinary ACTIVATE request.
Send = Callable[[Any, Any, dict, "dict | None"], None]


@attrs.define
class _Ride:
    claim: Any
    shadow: Any
    body: dict
    counts: dict | None
    fallback: Any = None


class RidingActivations:
    """The activations riding on exit answers, until their runs are heard from."""

    def __init__(self, clock, send: Send) -> None:
        self._clock = clock
        self._send = send
        self._answering: str | None = None  # the ClaimId whose exit report is being answered
        self._boarded: _Ride | None = None
        self._rides: dict[Any, _Ride] = {}  # by JobId

    @contextmanager
    def answering_exit(self, claim_id: str) -> Iterator[Callable[[], dict | None]]:
        """While the exit report of ``claim_id`` is handled, an activation on that claim
        may board the answer; the yielded function gives the boarded body (or None). An
        exception from the handling sends a boarded activation as a request at once."""
        self._answering, self._boarded = claim_id, None
        try:
            yield lambda: self._boarded.body if self._boarded is not None else None
        except BaseException:
            if self._boarded is not None:
                self._fall_back(self._boarded.shadow.job_id)
            raise
        finally:
            self._answering, self._boarded = None, None

    def board(self, claim, shadow, body: dict, counts: dict | None) -> bool:
        """Put an activation on the exit answer being made, when it is for that answer's
        claim and the claim is ready (a claim still pending its victims is retried as a
        request); False when it must go as a request."""
        if claim.claim_id != self._answering or self._boarded is not None or claim.ready_by is not None:
            return False
        ride = _Ride(claim, shadow, body, counts)
        ride.fallback = self._clock.callLater(FALLBACK_SECONDS, self._fall_back, shadow.job_id)
        self._rides[shadow.job_id] = self._boarded = ride
        return True

    def heard_from(self, shadow) -> None:
        """The run of ``shadow``'s job spoke to the schedd: its ride arrived, and the
        input that came with it (``counts``) was taken."""
        ride = self._rides.get(shadow.job_id)
        if ride is None or ride.shadow is not shadow:
            return
        del self._rides[shadow.job_id]
        if ride.fallback.active():
            ride.fallback.cancel()
        if ride.counts is not None:
            shadow.input_taken(ride.counts)

    def stop(self) -> None:
        """Cancel the fallbacks (the schedd is stopping; the claims' leases carry on)."""
        for ride in self._rides.values():
            if ride.fallback.active():
                ride.fallback.cancel()
        self._rides.clear()

    def _fall_back(self, job_id) -> None:
        ride = self._rides.pop(job_id, None)
        if ride is None:
            return
        if ride.fallback.active():
            ride.fallback.cancel()
        self._send(ride.claim, ride.shadow, ride.body, ride.counts)
