"""The schedd's side of negotiation: its idle jobs grouped into resource requests
(one per autocluster, with a count and a representative ad), and the matches the
negotiator sends back, checked and turned into (job, slot) pairs to claim.

Pure logic over job ads; :mod:`schedd.execution` serves it and claims the slots."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

from attrs import field, frozen

from classad import ClassAd
from classad.matching import symmetric_match
from daemoncore.wire.adcodec import ad_from_json
from daemoncore.wire.errors import BadRequest
from daemoncore.wire.resource_request import ResourceRequest
from jobmodel.states import JobId
from schedd.autocluster import build_autoclusters, resource_requests, significant_attributes

#: At most this many matches in one MATCHES request.
MAX_MATCHES = 100_000
#: At most this many victims in one match (the startd refuses more in one CLAIM).
MAX_VICTIMS = 256


def submitter_key(submitter: str) -> str:
    """Which of the queue's jobs a Submitter name stands for: the part before the last @
    of ``alice@pool`` (her jobs without an accounting group) or ``group_a.alice@pool``
    (the jobs whose ``AccountingGroup`` is "group_a.alice"), as the queue's submitter
    column holds it.

    Raises:
        BadRequest: the name is empty or not a string.
    """
    if not isinstance(submitter, str) or not submitter.strip():
        raise BadRequest(f"submitter must be a name such as \"alice@pool\", got {submitter!r}")
    return submitter.rsplit("@", 1)[0] if "@" in submitter else submitter


def requests_for(idle_jobs: Iterable[tuple[JobId, ClassAd]], submitter: str, schedd_address: str,
                 extra_significant: Iterable[str] = ()) -> list[ResourceRequest]:
    """One resource request per autocluster of ``idle_jobs`` (in queue order)."""
    significant = significant_attributes((), extra=extra_significant)
    clusters = build_autoclusters(((str(job_id), ad) for job_id, ad in idle_jobs), significant)
    return resource_requests(clusters, submitter, schedd_address)


@frozen
class Victim:
    """A claim a preempting match ends: its slot and its ClaimId."""

    slot_name: str
    claim_id: str = field(repr=False)


@frozen
class Match:
    """One match from the negotiator: a slot (with its ClaimId) for a request, and the
    claims it preempts (none for an idle slot)."""

    request_id: str
    job_id: JobId | None
    slot_name: str
    startd_address: str
    claim_id: str = field(repr=False)
    slot_ad: ClassAd = field(eq=False, repr=False)
    victims: tuple[Victim, ...] = ()


def _text(entry: Mapping, key: str, where: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value:
        raise BadRequest(f"{where}.{key} must be a non-empty string, got {value!r}")
    return value


def _job_id(entry: Mapping, where: str) -> JobId | None:
    value = entry.get("job_id")
    if value is None:
        return None
    try:
        return JobId.parse(value) if isinstance(value, str) else JobId.parse(str(value))
    except ValueError as exc:
        raise BadRequest(f"{where}.job_id: {exc}") from None


def _victims(entry: Mapping, where: str) -> tuple[Victim, ...]:
    value = entry.get("victims")
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_VICTIMS:
        raise BadRequest(f"{where}.victims must be a list of at most {MAX_VICTIMS} victims, got "
                         f"{len(value) if isinstance(value, list) else type(value).__name__}")
    found = []
    for index, victim in enumerate(value):
        inner = f"{where}.victims[{index}]"
        if not isinstance(victim, dict):
            raise BadRequest(f"{inner} must be an object, got {type(victim).__name__}")
        found.append(Victim(_text(victim, "slot_name", inner), _text(victim, "claim_id", inner)))
    return tuple(found)


def parse_matches(body: Mapping) -> list[Match]:
    """The matches of a MATCHES body ``{"matches": [...]}``.

    Raises:
        BadRequest: the body or one of its matches is malformed; the message names it.
    """
    entries = body.get("matches")
    if not isinstance(entries, list):
        raise BadRequest(f"matches must be a list of matches, got {type(entries).__name__}")
    if len(entries) > MAX_MATCHES:
        raise BadRequest(f"{len(entries)} matches is more than the {MAX_MATCHES} one request may carry")
    found = []
    for index, entry in enumerate(entries):
        where = f"$.matches[{index}]"
        if not isinstance(entry, dict):
            raise BadRequest(f"{where} must be an object, got {type(entry).__name__}")
        slot_ad = ad_from_json(entry.get("slot_ad"), f"{where}.slot_ad")
        found.append(Match(_text(entry, "request_id", where), _job_id(entry, where),
                           _text(entry, "slot_name", where), _text(entry, "startd_address", where),
                           _text(entry, "claim_id", where), slot_ad, _victims(entry, where)))
    return found


def pick_job(match: Match, candidates: Iterable[JobId], is_free: Callable[[JobId], ClassAd | None]) -> JobId | None:
    """The job to run on ``match``'s slot: the job the negotiator named if it is still
    free, else the first free job of the request that matches the slot. ``is_free``
    answers a job's ad when it is idle and not already being started, else None. A
    preempting match is not checked against the slot's ad: the slot fits the job only
    once its victims' resources are back, as the negotiator reckoned."""
    for job_id in _named_first(match.job_id, candidates):
        ad = is_free(job_id)
        if ad is not None and (match.victims or symmetric_match(ad, match.slot_ad)):
            return job_id
    return None


def _named_first(named: JobId | None, candidates: Iterable[JobId]) -> Iterator[JobId]:
    """``named`` (when given), then the other candidates, taken one at a time: the first
    free one usually comes early, and a request of thousands of jobs is not copied per match."""
    if named is not None:
        yield named
    for candidate in candidates:
        if candidate != named:
            yield candidate


__all__ = ["Match", "Victim", "submitter_key", "requests_for", "parse_matches", "pick_job",
           "MAX_MATCHES", "MAX_VICTIMS"]
