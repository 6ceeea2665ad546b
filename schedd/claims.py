"""The schedd's claims on startd slots: which slot at which startd, the ClaimId that
proves the claim, whose jobs may run on it, and whether it is busy. With
``CLAIM_WORKLIFE`` a claim whose job ended runs the owner's next matching idle job
instead of going back to the negotiator. Pure bookkeeping: no network, no clock
reads (times are passed in)."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator

import attrs
from attrs import field, frozen

from classad import ClassAd
from classad.matching import symmetric_match
from classad.unparse import unparse_expr
from gpushare.errors import GpuRequestError
from gpushare.job_request import request_from_job
from gpushare.placement import grants_hold
from gpushare.slot_cards import cards_from_slot_ad, grants_from_slot_ad
from jobmodel.states import JobId

#: HTCondor's default ``CLAIM_WORKLIFE``: a claim takes no new job after 20 minutes.
DEFAULT_CLAIM_WORKLIFE = 1200.0
#: HTCondor's default ``ALIVE_INTERVAL``: how often a schedd renews its claims.
DEFAULT_ALIVE_INTERVAL = 300.0


class ClaimState(enum.Enum):
    """Where a claim is in its life at the schedd."""

    IDLE = "idle"  # claimed, no job on it
    BUSY = "busy"  # a job has been activated on it
    RELEASED = "released"  # given back to the startd


@frozen
class Claim:
    """One claimed slot. ``claim_id`` is the capability the startd checks; it never
    appears in a repr or a log line."""

    claim_id: str = field(repr=False)
    slot_name: str
    startd_address: str
    owner: str
    slot_ad: ClassAd = field(eq=False, repr=False)
    claimed_at: float
    state: ClaimState = ClaimState.IDLE
    job_id: JobId | None = None
    jobs_run: int = 0
    #: How often the startd hears that this claim is alive, and when it last did.
    alive_period: float = DEFAULT_ALIVE_INTERVAL
    alive_at: float | None = None
    #: The other pool the slot belongs to when its match came from that pool's negotiator
    #: (the job flocked there; the startd is called with that pool's token), else None.
    pool: str | None = None
    #: For a claim granted by preempting others (pending at the startd until they end):
    #: when the schedd stops asking to activate it and gives it back; None for any other claim.
    ready_by: float | None = None
    #: The claimed job's ``AccountingGroup`` and ``ConcurrencyLimits`` (see
    #: :func:`claim_terms`): another job runs on the claim only with the same.
    accounting_group: str | None = None
    concurrency_limits: str | None = None


def claim_terms(job: ClassAd) -> dict:
    """Whose a claim made for ``job`` is, as :class:`Claim` keywords: its ``Owner``, its
    ``AccountingGroup`` (the submitter it was negotiated for) and its ``ConcurrencyLimits``
    (lower-cased; an expression as its text), each None when the job has none."""
    return {"owner": job.evaluate("Owner") if "Owner" in job else None,
            "accounting_group": _text_of(job, "AccountingGroup", lower=False),
            "concurrency_limits": _text_of(job, "ConcurrencyLimits", lower=True)}


def _text_of(job: ClassAd, name: str, lower: bool) -> str | None:
    if name not in job:
        return None
    value = job.evaluate(name)
    if isinstance(value, str):
        text = value.strip()
    else:  # an expression (concurrency_limits_expr): the same expression, not its value
        text = unparse_expr(job.expression(name))
    return (text.lower() if lower else text) or None


def alive_period_for(lease: float, alive_interval: float = DEFAULT_ALIVE_INTERVAL) -> float:
    """How often to renew a claim whose job has ``lease`` seconds: every ``ALIVE_INTERVAL``,
    but at least three times per lease (and no more than once a second)."""
    return max(1.0, min(alive_interval, lease / 3))


def alives_due(claims: Iterable[Claim], now: float) -> dict[str, list[Claim]]:
    """The claims whose keep-alive is due at ``now``, by startd address."""
    due: dict[str, list[Claim]] = {}
    for claim in claims:
        last = claim.alive_at if claim.alive_at is not None else claim.claimed_at
        if now - last >= claim.alive_period:
            due.setdefault(claim.startd_address, []).append(claim)
    return due


def accepts_more_jobs(claim: Claim, now: float, worklife: float) -> bool:
    """Whether ``claim`` may take another job: ``worklife`` -1 means forever, 0 one
    job per claim, otherwise until ``worklife`` seconds after it was claimed."""
    if claim.state is ClaimState.RELEASED:
        return False
    if worklife < 0:
        return True
    if worklife == 0:
        return claim.jobs_run == 0
    return now - claim.claimed_at < worklife


def job_fits_claim(claim: Claim, job: ClassAd) -> bool:
    """Whether ``job`` may run on ``claim``: the same submitter (owner and AccountingGroup)
    and the same ConcurrencyLimits as the job it was claimed for (HTCondor's schedd reuses
    a claim only so: usage and limits were counted for those), both ads' Requirements
    accept each other, and the job's GPU request fits inside the cards the claim holds."""
    terms = claim_terms(job)
    same = (terms["owner"], terms["accounting_group"], terms["concurrency_limits"]) == \
        (claim.owner, claim.accounting_group, claim.concurrency_limits)
    return same and symmetric_match(job, claim.slot_ad) and gpus_fit_claim(claim.slot_ad, job)


def gpus_fit_claim(slot: ClassAd, job: ClassAd) -> bool:
    """Whether ``job``'s GPU request fits the pieces of cards the claimed ``slot`` holds:
    a whole-card job never on a share, a larger share never on a smaller one (the
    Requirements alone cannot say, since share jobs no longer count whole GPUs). A job
    asking for no GPU fits, as in HTCondor; an unreadable request fits nothing."""
    try:
        request = request_from_job(job, slot)
    except GpuRequestError:
        return False
    if request is None:
        return True
    return grants_hold(request, grants_from_slot_ad(slot), cards_from_slot_ad(slot))


def next_job_for(claim: Claim, idle_jobs: Iterable[tuple[JobId, ClassAd]]) -> tuple[JobId, ClassAd] | None:
    """The first of ``idle_jobs`` (``(job id, ad)`` pairs) that fits ``claim``, or None."""
    for job_id, ad in idle_jobs:
        if job_fits_claim(claim, ad):
            return job_id, ad
    return None


class ClaimTable:
    """The schedd's live claims by ClaimId and by the job running on each."""

    def __init__(self) -> None:
        self._claims: dict[str, Claim] = {}
        self._by_job: dict[JobId, str] = {}

    def add(self, claim: Claim) -> Claim:
        """Remember a new claim.

        Raises:
            ValueError: a claim with that ClaimId is already held.
        """
        if claim.claim_id in self._claims:
            raise ValueError(f"the claim on {claim.slot_name} is already held")
        self._claims[claim.claim_id] = claim
        if claim.job_id is not None:
            self._by_job[claim.job_id] = claim.claim_id
        return claim

    def get(self, claim_id: str) -> Claim | None:
        """The claim with ``claim_id``, or None."""
        return self._claims.get(claim_id)

    def for_job(self, job_id: JobId) -> Claim | None:
        """The claim ``job_id`` runs on, or None."""
        claim_id = self._by_job.get(job_id)
        return self._claims.get(claim_id) if claim_id is not None else None

    def assign(self, claim_id: str, job_id: JobId) -> Claim:
        """Mark the claim busy with ``job_id``.

        Raises:
            KeyError: no such claim.
            ValueError: the claim is busy with another job or released.
        """
        claim = self._claims[claim_id]
        if claim.state is not ClaimState.IDLE:
            raise ValueError(f"the claim on {claim.slot_name} is {claim.state.value}, not idle")
        updated = attrs.evolve(claim, state=ClaimState.BUSY, job_id=job_id, jobs_run=claim.jobs_run + 1)
        self._claims[claim_id] = updated
        self._by_job[job_id] = claim_id
        return updated

    def update(self, claim_id: str, **changes: object) -> Claim | None:
        """Change a held claim's bookkeeping (``alive_at``, ``alive_period``); None if it is gone."""
        claim = self._claims.get(claim_id)
        if claim is None:
            return None
        self._claims[claim_id] = attrs.evolve(claim, **changes)
        return self._claims[claim_id]

    def job_done(self, claim_id: str) -> Claim | None:
        """Mark the claim idle again once its job has ended; None if it is gone."""
        claim = self._claims.get(claim_id)
        if claim is None:
            return None
        if claim.job_id is not None:
            self._by_job.pop(claim.job_id, None)
        updated = attrs.evolve(claim, state=ClaimState.IDLE, job_id=None)
        self._claims[claim_id] = updated
        return updated

    def remove(self, claim_id: str) -> Claim | None:
        """Forget the claim (it was released or lost); returns it marked released."""
        claim = self._claims.pop(claim_id, None)
        if claim is None:
            return None
        if claim.job_id is not None:
            self._by_job.pop(claim.job_id, None)
        return attrs.evolve(claim, state=ClaimState.RELEASED)

    def __iter__(self) -> Iterator[Claim]:
        return iter(list(self._claims.values()))

    def __len__(self) -> int:
        return len(self._claims)


__all__ = ["ClaimState", "Claim", "ClaimTable", "accepts_more_jobs", "claim_terms", "gpus_fit_claim", "job_fits_claim", "next_job_for",
           "alive_period_for", "alives_due", "DEFAULT_CLAIM_WORKLIFE", "DEFAULT_ALIVE_INTERVAL"]
