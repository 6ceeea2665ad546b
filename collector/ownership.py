"""Which ads an identity may change: a startd bound to host B advertises and withdraws
only Machine ads of host B, a schedd bound to host B only its own Scheduler and
Submitter ads; either may also send host B's DaemonMaster ad (the host's master sends
the token the host was given). The schedds of another pool (``flock@poolA``) may send
only Submitter ads, only while this pool trusts theirs, and only for a schedd that
``FLOCK_FROM`` lists (:class:`FlockPolicy`). Every other identity keeps what its level allows.

Pure checks over ads in JSON form; the routes turn a refusal into a 403, before
anything reaches the store.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable

import attrs

from collector.errors import AdNotOwned
from collector.store import wire_attribute
from daemoncore.security.host_identity import bound_host, flocking_pool, host_of_name, same_host
from daemoncore.security.tokens import Identity

#: For each host-bound daemon: the ad types it may change, and per type the attributes
#: that must name its host (a daemon or slot name's host part after ``@``).
_OWN_ADS = {
    "startd": {"Machine": ("Machine", "Name"), "DaemonMaster": ("Machine", "Name")},
    "schedd": {"Scheduler": ("Name",), "Submitter": ("ScheddName",), "DaemonMaster": ("Machine", "Name")},
}


@attrs.frozen
class FlockPolicy:
    """Who may flock in: ``FLOCK_FROM``'s schedd names (``*`` wildcards, no case) and
    whether a pool is trusted now (asked at each request: ``roost pool trust -remove``
    takes effect at the next re-read)."""

    flock_from: tuple[str, ...] = ()
    trusts: Callable[[str], bool] = lambda _pool: False

    def lists(self, schedd_name: str) -> bool:
        """Whether ``FLOCK_FROM`` lists the schedd ``schedd_name`` (its full name or its host)."""
        candidates = {schedd_name.lower(), host_of_name(schedd_name).lower().rstrip(".")}
        return any(fnmatch.fnmatchcase(candidate, pattern.lower().rstrip("."))
                   for pattern in self.flock_from for candidate in candidates)


#: A collector that was told nothing about flocking: every flock@ identity is refused.
NO_FLOCKING = FlockPolicy()


def check_ads_owned(identity: Identity | None, ad_type: str, ads: Iterable[tuple[str, dict]],
                    flock: FlockPolicy = NO_FLOCKING) -> None:
    """Refuse unless ``identity`` may change every ad of ``ads`` (pairs of a place such as
    ``$.ads[0]`` and the ad's JSON form), all of type ``ad_type``.

    Raises:
        AdNotOwned: an ad belongs to another host, or the type is not the daemon's, or
            another pool's schedd is not let in; the message names the identity and the ad.
    """
    if flocking_pool(identity) is not None:
        check_flocked_ads(identity, ad_type, ads, flock)
        return
    host = bound_host(identity)
    if host is None:
        return
    attributes = _OWN_ADS[identity.user.lower()].get(ad_type)
    if attributes is None:
        allowed = " and ".join(_OWN_ADS[identity.user.lower()])
        raise AdNotOwned(f"{identity.name} may change only {allowed} ads of host {host}, not {ad_type} ads")
    for where, wire in ads:
        for attribute in attributes:
            value = wire_attribute(wire, attribute)
            if not isinstance(value, str) or not same_host(host_of_name(value), host):
                raise AdNotOwned(f"{identity.name} may change only ads of host {host}: {where} "
                                 f"({ad_type} ad {_label(wire)}) has {attribute} {value!r}")


def check_flocked_ads(identity: Identity, ad_type: str, ads: Iterable[tuple[str, dict]],
                      flock: FlockPolicy) -> None:
    """Refuse unless the pool of ``flock@poolA`` is trusted, the ads are Submitter ads
    and ``FLOCK_FROM`` lists each one's ``ScheddName``.

    Raises:
        AdNotOwned: naming the identity, the ad and the reason.
    """
    pool = flocking_pool(identity)
    if not flock.trusts(pool):
        raise AdNotOwned(f"{identity.name} is refused: pool {pool} is not trusted by this pool "
                         f"(see roost pool trust -list on this central manager)")
    if ad_type != "Submitter":
        raise AdNotOwned(f"{identity.name} (a schedd of pool {pool} flocking here) may send only Submitter ads, "
                         f"not {ad_type} ads")
    for where, wire in ads:
        schedd = wire_attribute(wire, "ScheddName")
        if not isinstance(schedd, str) or not flock.lists(schedd):
            listed = ", ".join(flock.flock_from) or "nothing"
            raise AdNotOwned(f"{identity.name} is refused: {where} (Submitter ad {_label(wire)}) has ScheddName "
                             f"{schedd!r}, which this pool's FLOCK_FROM does not list (FLOCK_FROM = {listed})")


def check_withdrawal(identity: Identity | None, stored_ad_type: str, where: str, wire: dict,
                     flock: FlockPolicy = NO_FLOCKING) -> None:
    """Refuse unless ``identity`` may withdraw the stored ad ``wire``: as it could advertise
    it, and for another pool's schedds only an ad they advertised themselves.

    Raises:
        AdNotOwned: naming the identity and the ad.
    """
    check_ads_owned(identity, stored_ad_type, [(where, wire)], flock)
    advertiser = wire_attribute(wire, "AuthenticatedIdentity")
    name = identity.name if identity is not None else None
    if flocking_pool(identity) is not None and advertiser != name:
        raise AdNotOwned(f"{name} may withdraw only the Submitter ads it advertised, not {where}")
    if isinstance(advertiser, str) and advertiser.startswith("flock@") and advertiser != name:
        raise AdNotOwned(f"{name or 'an anonymous caller'} may not withdraw {where}: another pool's schedd "
                         f"({advertiser}) advertised it")


def check_constraint_allowed(identity: Identity | None) -> None:
    """Refuse invalidation by constraint to a host-bound identity and to another pool's
    schedds: either could reach ads that are not its own.

    Raises:
        AdNotOwned: ``identity`` is bound to a host or is a ``flock@`` identity.
    """
    if flocking_pool(identity) is not None:
        raise AdNotOwned(f"{identity.name} may invalidate only its own Submitter ads, by Name; not by constraint")
    host = bound_host(identity)
    if host is not None:
        raise AdNotOwned(f"{identity.name} may invalidate only its own ads of host {host}, by Name; "
                         f"not by constraint")


def _label(wire: dict) -> str:
    name = wire_attribute(wire, "Name")
    return repr(name) if isinstance(name, str) else "without a Name"
