"""The startd's leases on its claims: how long a claim lives without word from its schedd.

A claim that was made but never activated is given back after ``MATCH_TIMEOUT``; an
idle claim that has run jobs lives for the claim lease (HTCondor's ``ALIVE_INTERVAL``
times ``MAX_CLAIM_ALIVES_MISSED``); a claim running a job lives for the job's
``JobLeaseDuration``. Each keep-alive from the schedd, and each report of the job's
that reached it, renews the lease. Pure bookkeeping over times passed in.
"""

from __future__ import annotations

import enum

import attrs

import classad

#: HTCondor's ``MATCH_TIMEOUT``: a claim never activated is given back after this long.
DEFAULT_MATCH_TIMEOUT = 120.0
#: HTCondor's ``ALIVE_INTERVAL`` (how often a schedd says its claims are alive) ...
DEFAULT_ALIVE_INTERVAL = 300.0
#: ... and ``MAX_CLAIM_ALIVES_MISSED``: the claim lease is their product.
DEFAULT_MAX_ALIVES_MISSED = 6
#: HTCondor's default ``JobLeaseDuration``, for a job ad without one.
DEFAULT_JOB_LEASE = 2400.0


class LeaseKind(str, enum.Enum):
    """What a lease covers, which sets its length."""

    MATCH = "match"  # claimed, never activated: MATCH_TIMEOUT
    CLAIM = "claim"  # idle between jobs: the claim lease
    JOB = "job"  # running a job: its JobLeaseDuration


@attrs.frozen
class Lease:
    """One claim's lease: what it covers, how long it lasts, and when it was last renewed."""

    kind: LeaseKind
    duration: float = attrs.field(validator=attrs.validators.gt(0))
    renewed_at: float

    @property
    def deadline(self) -> float:
        """When the lease runs out unless renewed."""
        return self.renewed_at + self.duration


@attrs.frozen
class LeaseTerms:
    """The startd's lease lengths (``MATCH_TIMEOUT``, ``ALIVE_INTERVAL`` x ``MAX_CLAIM_ALIVES_MISSED``)."""

    match_timeout: float = DEFAULT_MATCH_TIMEOUT
    claim_lease: float = DEFAULT_ALIVE_INTERVAL * DEFAULT_MAX_ALIVES_MISSED


def job_lease_of(job: classad.ClassAd) -> float:
    """The job's ``JobLeaseDuration`` when it is a positive number, else HTCondor's 2400 s."""
    value = job.evaluate("JobLeaseDuration") if "JobLeaseDuration" in job else None
    return float(value) if type(value) in (int, float) and value > 0 else DEFAULT_JOB_LEASE


# Mutable: the live leases of one startd, which claims add, renew and end.
@attrs.define
class LeaseBook:
    """The lease of every live claim, by ClaimId."""

    terms: LeaseTerms = attrs.Factory(LeaseTerms)
    leases: dict[str, Lease] = attrs.Factory(dict)

    def claimed(self, claim_id: str, now: float) -> Lease:
        """A new claim: it has ``MATCH_TIMEOUT`` to be activated."""
        return self._set(claim_id, Lease(LeaseKind.MATCH, self.terms.match_timeout, now))

    def activated(self, claim_id: str, job: classad.ClassAd, now: float) -> Lease:
        """The claim runs ``job``: it lives for the job's lease."""
        return self._set(claim_id, Lease(LeaseKind.JOB, job_lease_of(job), now))

    def job_done(self, claim_id: str, now: float) -> Lease | None:
        """The claim's job ended: it waits for the next one under the claim lease."""
        if claim_id not in self.leases:
            return None
        return self._set(claim_id, Lease(LeaseKind.CLAIM, self.terms.claim_lease, now))

    def renew(self, claim_id: str, now: float) -> bool:
        """The schedd is alive for this claim: the lease starts over. False when it has none."""
        lease = self.leases.get(claim_id)
        if lease is None:
            return False
        self.leases[claim_id] = attrs.evolve(lease, renewed_at=max(now, lease.renewed_at))
        return True

    def forget(self, claim_id: str) -> None:
        """The claim ended."""
        self.leases.pop(claim_id, None)

    def expired(self, now: float) -> list[tuple[str, Lease]]:
        """The claims whose lease ran out by ``now`` (deadline reached), soonest first."""
        gone = [(claim_id, lease) for claim_id, lease in self.leases.items() if lease.deadline <= now]
        return sorted(gone, key=lambda item: item[1].deadline)

    def _set(self, claim_id: str, lease: Lease) -> Lease:
        self.leases[claim_id] = lease
        return lease


__all__ = ["LeaseBook", "Lease", "LeaseKind", "LeaseTerms", "job_lease_of", "DEFAULT_MATCH_TIMEOUT",
           "DEFAULT_ALIVE_INTERVAL", "DEFAULT_MAX_ALIVES_MISSED", "DEFAULT_JOB_LEASE"]
