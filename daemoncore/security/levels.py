"""Authorization levels, HTCondor's names, and which level implies which.

The order is partial, as in HTCondor::

    READ  <  WRITE  <  ADMINISTRATOR
             WRITE  <  DAEMON

So WRITE can query, ADMINISTRATOR and DAEMON can do what WRITE can, but an
ADMINISTRATOR token cannot advertise ads or read private ads, and a DAEMON token
cannot act on other users' jobs or shut daemons down.

JOIN stands apart: a bootstrap token of ``roost pool join-token`` may only ask the
collector for a host identity, and no other level implies it.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

from daemoncore.security.errors import MalformedTokenError


class AuthorizationLevel(enum.Enum):
    """What an identity may do: query, submit, administer or act as a daemon."""

    READ = "READ"
    WRITE = "WRITE"
    ADMINISTRATOR = "ADMINISTRATOR"
    DAEMON = "DAEMON"
    JOIN = "JOIN"

    def implied(self) -> frozenset[AuthorizationLevel]:
        """This level and every level it implies."""
        return _IMPLIED[self]

    def implies(self, other: AuthorizationLevel) -> bool:
        """True when holding this level grants ``other``."""
        return other in _IMPLIED[self]

    @classmethod
    def parse(cls, text: str) -> AuthorizationLevel:
        """A level from its name in any case (``write``, ``WRITE``).

        Raises:
            ValueError: not a level; the message lists the names.
        """
        try:
            return cls[text.strip().upper()]
        except KeyError:
            names = ", ".join(level.name for level in cls)
            raise ValueError(f"unknown authorization level {text!r}: expected one of {names}") from None


_IMPLIED: dict[AuthorizationLevel, frozenset[AuthorizationLevel]] = {
    AuthorizationLevel.READ: frozenset({AuthorizationLevel.READ}),
    AuthorizationLevel.WRITE: frozenset({AuthorizationLevel.READ, AuthorizationLevel.WRITE}),
    AuthorizationLevel.ADMINISTRATOR: frozenset(
        {AuthorizationLevel.READ, AuthorizationLevel.WRITE, AuthorizationLevel.ADMINISTRATOR}),
    AuthorizationLevel.DAEMON: frozenset(
        {AuthorizationLevel.READ, AuthorizationLevel.WRITE, AuthorizationLevel.DAEMON}),
    AuthorizationLevel.JOIN: frozenset({AuthorizationLevel.JOIN}),
}

#: how levels appear in a token's ``scope`` claim, after HTCondor's ``condor:/READ``
SCOPE_PREFIX = "roost:/"


def scope_claim(levels: Iterable[AuthorizationLevel]) -> str:
    """The space-separated ``scope`` claim for ``levels``: ``roost:/READ roost:/WRITE``."""
    return " ".join(SCOPE_PREFIX + level.name for level in sorted(set(levels), key=_rank))


def parse_scope_claim(claim: object) -> frozenset[AuthorizationLevel]:
    """The levels named in a token's ``scope`` claim.

    Raises:
        MalformedTokenError: the claim is not a string of ``roost:/LEVEL`` words.
    """
    if not isinstance(claim, str):
        raise MalformedTokenError("the token's scope claim is not a string")
    levels = set()
    for word in claim.split():
        if not word.startswith(SCOPE_PREFIX):
            raise MalformedTokenError(f"the token has scope {word!r}: expected {SCOPE_PREFIX}LEVEL")
        try:
            levels.add(AuthorizationLevel.parse(word[len(SCOPE_PREFIX):]))
        except ValueError as err:
            raise MalformedTokenError(f"the token has {err}") from None
    return frozenset(levels)


def _rank(level: AuthorizationLevel) -> int:
    return list(AuthorizationLevel).index(level)
