"""Which pool a submitter belongs to, and the token its schedd is called with.

A schedd of another pool that flocks here advertises its Submitter ads with the
token this pool gave it, ``flock@<its pool>``; the collector stamps each stored ad
with ``AuthenticatedIdentity``. The negotiator calls such a schedd (RESOURCE_REQUESTS,
MATCHES) with the token that pool gave this one (its TrustedPool entry), and the
process-wide TLS trust accepts that pool's CA. Home submitters keep the negotiator's
own DAEMON token. Pure functions; the trusted pools are given as a mapping by name.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Protocol

from daemoncore.security.host_identity import FLOCK_USER


class TrustedPoolEntry(Protocol):
    """What the negotiator reads of a trusted pool (``daemoncore.security.pool_trust.TrustedPool``)."""

    name: str
    token: str


def flocking_pool_of(identity: object) -> str | None:
    """The pool name of a ``flock@<pool>`` identity, else None (a home daemon's identity,
    or no identity at all)."""
    if not isinstance(identity, str):
        return None
    user, at, pool = identity.strip().partition("@")
    if not at or user.lower() != FLOCK_USER or not pool:
        return None
    return pool


def untrusted_reason(pool: str, trusted: Mapping[str, TrustedPoolEntry]) -> str | None:
    """Why a submitter of ``pool`` cannot be negotiated for here, or None when it can."""
    entry = trusted.get(pool)
    if entry is None:
        known = ", ".join(sorted(trusted)) or "none"
        return (f"pool {pool} is not one of this pool's trusted pools ({known}); "
                f"run `roost pool trust` on both central managers")
    if not entry.token:
        return f"the trusted pool entry of {pool} holds no token to call its schedds with"
    return None


def schedd_token(pool: str | None, trusted: Mapping[str, TrustedPoolEntry]) -> str | None:
    """The token to call a submitter's schedd with: None for a home submitter (the
    negotiator's own DAEMON token), the trusted pool's token for a flocked one.

    Raises:
        KeyError: ``pool`` is not trusted here (callers skip such submitters first,
            with :func:`untrusted_reason`).
    """
    if pool is None:
        return None
    return trusted[pool].token


def user_domain(name: str) -> str | None:
    """The domain of a ``user@domain`` submitter name, lower-cased; None without one."""
    user, at, domain = name.rpartition("@")
    return domain.lower() if at and user and domain else None


class _Asked(Protocol):
    """A submitter with its requests as the cycle holds it (``negotiator.cycle.Submitter``)."""

    name: str
    schedd_address: str
    requests: tuple


def flocked_customers(submitters: Iterable[_Asked], flocked: Collection[tuple[str, str]]) -> set[str]:
    """The names submitters flocked in are charged by: each Submitter ad's Name and each
    of its requests' job ``User`` (a claimed slot's RemoteOwner, which the accountant
    charges). A Roost schedd makes the two the same (``Owner@UID_DOMAIN``); both are
    taken because another pool's schedd chooses them and might not.
    ``flocked`` holds the (name, schedd address) pairs of the submitters of other pools."""
    names = set()
    for submitter in submitters:
        if (submitter.name, submitter.schedd_address) not in flocked:
            continue
        names.add(submitter.name)
        for request in submitter.requests:
            user = request.ad.evaluate("User") if "User" in request.ad else None
            if isinstance(user, str) and user:
                names.add(user)
    return names
