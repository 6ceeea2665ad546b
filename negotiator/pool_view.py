"""The pool as one cycle sees it, built from what the collector and the schedds
answer, and the MATCHES bodies sent back: pure functions over JSON ads, no I/O.

What is expected of the ads (HTCondor's attribute names):

* a Submitter ad has ``Name`` (the submitter, ``user@domain``, also the accounting
  customer), the schedd's address in ``ScheddIpAddr`` (else ``ScheddAddress``, else
  ``MyAddress``) written ``<host:port>``, and ``IdleJobs``; a submitter whose
  ``IdleJobs`` is 0 is not asked for requests; one whose ``AuthenticatedIdentity``
  (stamped by the collector) is ``flock@POOL`` belongs to that other pool, and is
  negotiated for only when POOL is trusted here;
* a Machine ad has ``Name``; its startd's address is ``StartdIpAddr`` (else
  ``MyAddress``); its private ad (same ``Name``) holds ``ClaimId`` (a claimed slot's
  is its current claim, which a preempting match names among its ``victims``); a
  claimed slot charges ``AccountingGroup`` (else ``RemoteOwner``) its ``SLOT_WEIGHT``;
* a resource request line (``RESOURCE_REQUESTS``) is read by
  :mod:`daemoncore.wire.resource_request`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from attrs import frozen

from classad import ClassAd, ExprTree
from daemoncore.wire.adcodec import ad_from_json
from daemoncore.wire.address import parse_address
from daemoncore.wire.errors import BadRequest
from daemoncore.wire.resource_request import ResourceRequest, request_from_json
from negotiator.cycle import Match
from negotiator.errors import NegotiatorError
from negotiator.flocked import TrustedPoolEntry, flocking_pool_of, untrusted_reason

SCHEDD_ADDRESS_ATTRIBUTES = ("ScheddIpAddr", "ScheddAddress", "MyAddress")
STARTD_ADDRESS_ATTRIBUTES = ("StartdIpAddr", "MyAddress")
MAX_REQUESTS_PER_SUBMITTER = 100_000


class ScheddAnswerError(NegotiatorError):
    """A schedd's answer to RESOURCE_REQUESTS is not what the route promises."""


@frozen
class SubmitterTarget:
    """A submitter to negotiate for: who, where its schedd answers, and the other
    pool it flocked in from (None for this pool's own)."""

    name: str
    schedd_address: str
    idle_jobs: int | None = None
    pool: str | None = None


@frozen
class PoolSlots:
    """The slots of one cycle: parsed ads, their JSON form, ClaimIds and startd addresses by Name."""

    ads: tuple[ClassAd, ...]
    wires: dict
    claim_ids: dict
    startd_addresses: dict


def attribute(wire: dict, name: str) -> object:
    """Attribute ``name`` of a JSON ad, names compared without case."""
    if name in wire:
        return wire[name]
    lowered = name.lower()
    return next((value for key, value in wire.items() if key.lower() == lowered), None)


def _first_address(wire: dict, names: Sequence[str]) -> str | None:
    for name in names:
        value = attribute(wire, name)
        if isinstance(value, str) and value.strip():
            try:
                parse_address(value)
            except ValueError:
                continue
            return value.strip()
    return None


def submitter_targets(wires: Iterable[dict], trusted: Mapping[str, TrustedPoolEntry] | None = None,
                      ) -> tuple[list[SubmitterTarget], list[str]]:
    """Submitters worth asking for requests, and why the others were skipped (a
    submitter of another pool that is not in ``trusted``, by name, among them)."""
    targets, skipped = [], []
    for wire in wires:
        name = attribute(wire, "Name")
        if not isinstance(name, str) or not name:
            skipped.append(f"a Submitter ad without a Name string: {sorted(wire)[:8]}")
            continue
        address = _first_address(wire, SCHEDD_ADDRESS_ATTRIBUTES)
        if address is None:
            skipped.append(f"Submitter {name}: no schedd address in any of {', '.join(SCHEDD_ADDRESS_ATTRIBUTES)}")
            continue
        idle = attribute(wire, "IdleJobs")
        idle = idle if isinstance(idle, int) and not isinstance(idle, bool) else None
        if idle == 0:
            continue
        identity = attribute(wire, "AuthenticatedIdentity")
        pool = flocking_pool_of(identity)
        why = untrusted_reason(pool, trusted or {}) if pool is not None else None
        if why is not None:
            skipped.append(f"Submitter {name} at {address} (advertised by {identity}) skipped: {why}")
            continue
        targets.append(SubmitterTarget(name, address, idle, pool))
    targets.sort(key=lambda t: (t.name, t.schedd_address))
    return targets, skipped


def idle_by_submitter(wires: Iterable[dict]) -> dict[str, int]:
    """Each submitter's ``IdleJobs`` (those without a whole number are left out)."""
    out = {}
    for wire in wires:
        name, idle = attribute(wire, "Name"), attribute(wire, "IdleJobs")
        if isinstance(name, str) and isinstance(idle, int) and not isinstance(idle, bool):
            out[name] = out.get(name, 0) + idle
    return out


def demand_grew(before: dict[str, int], now: dict[str, int]) -> bool:
    """True when some submitter has more idle jobs ``now`` than ``before``."""
    return any(idle > before.get(name, 0) for name, idle in now.items())


def pool_slots(public: Iterable[dict], private: Iterable[dict]) -> tuple[PoolSlots, list[str]]:
    """Slot ads joined with their private ads by Name, and the ads that could not be read."""
    claim_ids = {}
    for wire in private:
        name, claim = attribute(wire, "Name"), attribute(wire, "ClaimId")
        if isinstance(name, str) and isinstance(claim, str):
            claim_ids[name] = claim
    ads, wires, addresses, problems = [], {}, {}, []
    for wire in public:
        name = attribute(wire, "Name")
        try:
            ad = ad_from_json(wire, f"Machine ad {name!r}")
        except BadRequest as exc:
            problems.append(str(exc))
            continue
        ads.append(ad)
        if isinstance(name, str):
            wires[name] = wire
            address = _first_address(wire, STARTD_ADDRESS_ATTRIBUTES)
            if address is not None:
                addresses[name] = address
    return PoolSlots(tuple(ads), wires, claim_ids, addresses), problems


def resources_in_use(slots: Iterable[ClassAd], slot_weight: ExprTree) -> dict[str, float]:
    """What each customer has in use now: the weight of every Claimed slot, charged to
    its ``AccountingGroup`` (else ``RemoteOwner``)."""
    in_use: dict[str, float] = {}
    for ad in slots:
        state = ad.evaluate("State")
        if type(state) is not str or state.lower() != "claimed":
            continue
        customer = ad.evaluate("AccountingGroup")
        if type(customer) is not str or not customer:
            customer = ad.evaluate("RemoteOwner")
        if type(customer) is not str or not customer:
            continue
        weight = slot_weight.evaluate(ad)
        weight = float(weight) if type(weight) in (int, float) and weight > 0 else 1.0
        in_use[customer] = in_use.get(customer, 0.0) + weight
    return in_use


def resource_requests(lines: Iterable[object], target: SubmitterTarget) -> list[ResourceRequest]:
    """The requests in a schedd's RESOURCE_REQUESTS answer for ``target``.

    Raises:
        ScheddAnswerError: a line is not a request object, naming which and why.
    """
    found = []
    for index, line in enumerate(lines):
        where = f"resource request {index} from the schedd at {target.schedd_address} for {target.name}"
        if index >= MAX_REQUESTS_PER_SUBMITTER:
            raise ScheddAnswerError(f"{where}: more than {MAX_REQUESTS_PER_SUBMITTER} requests in one answer")
        try:
            found.append(request_from_json(line, target.name, target.schedd_address, where))
        except BadRequest as exc:
            raise ScheddAnswerError(str(exc)) from None
    return found


def matches_by_schedd(matches: Iterable[Match], slots: PoolSlots) -> tuple[dict[str, dict], list[str]]:
    """The MATCHES body for each schedd address, and the matches left out because
    their slot (or a victim) has no ClaimId, or no startd address. A preempting match
    carries ``victims``: ``[{"slot_name", "claim_id"}]``, the claims to end."""
    bodies: dict[str, dict] = {}
    left_out = []
    for match in matches:
        claim = match.claim_id or slots.claim_ids.get(match.slot_name)
        startd = slots.startd_addresses.get(match.slot_name)
        if not claim or not startd:
            missing = "ClaimId (no private ad)" if not claim else "startd address (StartdIpAddr/MyAddress)"
            left_out.append(f"match of {match.slot_name} for {match.submitter}: slot has no {missing}")
            continue
        victims = [{"slot_name": v, "claim_id": slots.claim_ids.get(v)} for v in match.victims]
        lost = [v["slot_name"] for v in victims if not v["claim_id"]]
        if lost:
            left_out.append(f"preempting match of {match.slot_name} for {match.submitter}: victim "
                            f"{', '.join(lost)} has no ClaimId (no private ad)")
            continue
        entry = {
            "request_id": match.request_id, "job_id": match.job_id, "slot_name": match.slot_name,
            "startd_address": startd, "claim_id": claim, "slot_ad": slots.wires.get(match.slot_name, {}),
        }
        if victims:
            entry["victims"] = victims
        bodies.setdefault(match.schedd_address, {"matches": []})["matches"].append(entry)
    return bodies, left_out
