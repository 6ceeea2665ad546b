"""Per-host daemon identities: a token for ``startd@hostB`` speaks for host B only.

A pool's own daemons on the central manager (and every daemon of a personal pool)
sign their tokens with the pool key and name the pool (``startd@pool``); a host that
joined holds a token naming itself (``startd@hostB``, issued by the pool). Such a
host-bound identity may advertise only its own host's ads and act only on its own
slots; the collector and the startd ask :func:`bound_host` who that host is.

A pool that flocks here holds a token this pool issued for ``flock@<its pool>``: that
identity is bound to no host; :func:`flocking_pool` names the pool it speaks for.
"""

from __future__ import annotations

import re

from daemoncore.security.tokens import Identity

#: The daemons whose identities are bound to a host when their domain names one.
HOST_BOUND_DAEMONS = ("startd", "schedd")
#: The user part of the identity another pool's schedds present here (``flock@poolA``).
FLOCK_USER = "flock"

_HOST_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?")


def bound_host(identity: Identity | None) -> str | None:
    """The host ``identity`` may act for, or None when it is not bound to one.

    An identity is bound when it is a startd or schedd whose domain is not the pool
    that issued it: ``startd@hostB`` issued by ``pool`` is bound to ``hostB``, while
    ``startd@pool`` (a daemon holding the pool key) is not.
    """
    if identity is None or identity.user.lower() not in HOST_BOUND_DAEMONS:
        return None
    if identity.issuer is None or identity.domain == identity.issuer:
        return None
    return identity.domain


def flocking_pool(identity: Identity | None) -> str | None:
    """The pool a ``flock@<pool>`` identity speaks for (the schedds of a pool that flocks
    here), or None for any other identity."""
    if identity is None or identity.user.lower() != FLOCK_USER:
        return None
    return identity.domain


def flock_identity(pool: str) -> str:
    """The identity this pool issues to the schedds of ``pool`` when it trusts it: ``flock@poolA``."""
    return f"{FLOCK_USER}@{pool}"


def host_identity(daemon: str, host: str, pool: str) -> str:
    """The identity of ``daemon`` (``startd`` or ``schedd``) on ``host``: ``startd@hostB``.

    Raises:
        ValueError: an unknown daemon, a host that is not a DNS name or address, or a
            host named like the pool (its identity would not be bound to the host).
    """
    if daemon not in HOST_BOUND_DAEMONS:
        raise ValueError(f"{daemon!r} has no per-host identity: expected one of {', '.join(HOST_BOUND_DAEMONS)}")
    if not _HOST_NAME.fullmatch(host or ""):
        raise ValueError(f"host name {host!r} is not a DNS name or an IP address")
    if host == pool:
        raise ValueError(f"host {host!r} has the pool's own name (TRUST_DOMAIN); rename the host or the pool")
    return f"{daemon}@{host}"


def host_of_name(name: str) -> str:
    """The host part of a daemon or slot name: ``slot1_2@hostB`` gives ``hostB``, and a
    bare ``hostB`` is its own host."""
    return name.rpartition("@")[2]


def same_host(first: str, second: str) -> bool:
    """Whether two host names are the same host: DNS names compare without case or a trailing dot."""
    return first.rstrip(".").lower() == second.rstrip(".").lower()


def slot_refusal(identity: Identity | None, own_host: str) -> str | None:
    """Why ``identity`` may not act on the slots of the startd on ``own_host``, or None.

    A startd identity bound to another host has no business with this startd's claims;
    schedds (bound or not) reach a slot only with its ClaimId, which the route checks.
    """
    host = bound_host(identity)
    if host is None or identity.user.lower() != "startd" or same_host(host, own_host):
        return None
    return (f"{identity.name} may act only on the slots of host {host}, "
            f"and this startd's slots are on {own_host}")
