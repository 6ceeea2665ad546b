"""Which ads an identity may change: a startd bound to host B advertises and withdraws
only Machine ads of host B, a schedd bound to host B only its own Scheduler and
Submitter ads; either may also send host B's DaemonMaster ad (the host's master sends
the token the host was given). Every other identity keeps what its level allows.

Pure checks over ads in JSON form; the routes turn a refusal into a 403, before
anything reaches the store.
"""

from __future__ import annotations

from collections.abc import Iterable

from collector.errors import AdNotOwned
from collector.store import wire_attribute
from daemoncore.security.host_identity import bound_host, host_of_name, same_host
from daemoncore.security.tokens import Identity

#: For each host-bound daemon: the ad types it may change, and per type the attributes
#: that must name its host (a daemon or slot name's host part after ``@``).
_OWN_ADS = {
    "startd": {"Machine": ("Machine", "Name"), "DaemonMaster": ("Machine", "Name")},
    "schedd": {"Scheduler": ("Name",), "Submitter": ("ScheddName",), "DaemonMaster": ("Machine", "Name")},
}


def check_ads_owned(identity: Identity | None, ad_type: str, ads: Iterable[tuple[str, dict]]) -> None:
    """Refuse unless ``identity`` may change every ad of ``ads`` (pairs of a place such as
    ``$.ads[0]`` and the ad's JSON form), all of type ``ad_type``.

    Raises:
        AdNotOwned: an ad belongs to another host, or the type is not the daemon's;
            the message names the identity and the ad.
    """
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


def check_constraint_allowed(identity: Identity | None) -> None:
    """Refuse invalidation by constraint to a host-bound identity: it could reach other hosts' ads.

    Raises:
        AdNotOwned: ``identity`` is bound to a host.
    """
    host = bound_host(identity)
    if host is not None:
        raise AdNotOwned(f"{identity.name} may invalidate only its own ads of host {host}, by Name; "
                         f"not by constraint")


def _label(wire: dict) -> str:
    name = wire_attribute(wire, "Name")
    return repr(name) if isinstance(name, str) else "without a Name"
