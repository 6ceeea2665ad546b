"""Joining a host to a pool with one string: the central manager's address, the pool
CA's SHA-256 fingerprint and a short-lived bootstrap token that may only ask the
collector for a host identity (scope JOIN), for one role, once.

``roost pool join-token --role execute`` prints the string (:func:`encode_join_string`);
``roost pool join STRING`` reads it back (:func:`decode_join_string`). The collector's
join route checks each request with :class:`JoinLedger` and answers a daemon token for
``startd@host`` (execute) or ``schedd@host`` (submit). Pure logic, no I/O.
"""

from __future__ import annotations

import base64
import binascii
import json
import re

import attrs

from daemoncore.security.errors import SecurityError
from daemoncore.security.host_identity import host_identity
from daemoncore.security.levels import AuthorizationLevel
from daemoncore.security.tokens import Identity, issue_token

#: role -> the daemon whose identity a host of that role gets
ROLE_DAEMONS = {"execute": "startd", "submit": "schedd"}
JOIN_PREFIX = "roostjoin1."
DEFAULT_JOIN_LIFETIME = 3600.0
MAX_JOIN_LIFETIME = 7 * 24 * 3600.0
_JOIN_USER = re.compile(r"join-(?P<role>[a-z]+)")
_FINGERPRINT = re.compile(r"[0-9a-f]{64}")


class JoinError(SecurityError):
    """A join string or join request cannot be used; the message says why."""


@attrs.frozen
class JoinString:
    """What a new host needs to join: where the collector is, which CA to trust, and the bootstrap token."""

    collector: str
    ca_fingerprint: str
    token: str = attrs.field(repr=False)


def check_role(role: str) -> str:
    """``role`` when it is one a host can join as.

    Raises:
        JoinError: not ``execute`` or ``submit``.
    """
    if role not in ROLE_DAEMONS:
        raise JoinError(f"role {role!r} cannot be joined: expected one of {', '.join(ROLE_DAEMONS)}")
    return role


def issue_join_token(key: bytes, role: str, pool: str, lifetime: float = DEFAULT_JOIN_LIFETIME, *,
                     now: float | None = None) -> str:
    """A bootstrap token for one host of ``role``: identity ``join-<role>@<pool>``, scope JOIN only.

    Raises:
        JoinError: an unknown role, or a lifetime that is not between 1 s and 7 days.
    """
    check_role(role)
    if not 0 < lifetime <= MAX_JOIN_LIFETIME:
        raise JoinError(f"a join token lives between 1 second and 7 days, not {lifetime:g} s")
    return issue_token(key, f"join-{role}@{pool}", [AuthorizationLevel.JOIN], lifetime, issuer=pool, now=now)


def encode_join_string(join: JoinString) -> str:
    """The one string ``roost pool join`` takes: a prefix and the three parts as base64url JSON."""
    body = json.dumps({"collector": join.collector, "ca": join.ca_fingerprint, "token": join.token},
                      separators=(",", ":"))
    return JOIN_PREFIX + base64.urlsafe_b64encode(body.encode()).decode().rstrip("=")


def decode_join_string(text: str) -> JoinString:
    """The parts of a join string.

    Raises:
        JoinError: not a join string, or a part is missing or malformed.
    """
    text = text.strip()
    if not text.startswith(JOIN_PREFIX):
        raise JoinError(f"this is not a join string (it should start with {JOIN_PREFIX!r}); "
                        f"make one on the central manager with `roost pool join-token --role execute`")
    encoded = text[len(JOIN_PREFIX):]
    try:
        body = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
    except (binascii.Error, ValueError):
        raise JoinError("the join string is damaged (not base64url JSON after the prefix); copy it again") from None
    if not isinstance(body, dict) or not all(isinstance(body.get(name), str) for name in ("collector", "ca", "token")):
        raise JoinError("the join string lacks the collector address, the CA fingerprint or the token; copy it again")
    fingerprint = body["ca"].lower().replace(":", "")
    if not _FINGERPRINT.fullmatch(fingerprint):
        raise JoinError(f"the join string's CA fingerprint {body['ca']!r} is not 64 hex digits of SHA-256")
    return JoinString(body["collector"], fingerprint, body["token"])


def join_role(identity: Identity) -> str:
    """The role a bootstrap identity (``join-execute@pool``) was made for.

    Raises:
        JoinError: the identity is not a join identity, or lacks the JOIN scope.
    """
    found = _JOIN_USER.fullmatch(identity.user)
    if found is None or found.group("role") not in ROLE_DAEMONS or AuthorizationLevel.JOIN not in identity.scopes:
        raise JoinError(f"{identity.name} is not a join token: make one with `roost pool join-token`")
    return found.group("role")


@attrs.define
class JoinLedger:
    """The join tokens already used, so each joins one host only. Mutable: it records uses;
    it forgets a token once it has expired (it could not be used then anyway)."""

    used: dict[str, float | None] = attrs.field(factory=dict)

    def admit(self, identity: Identity, role: str, host: str, now: float) -> str:
        """Record the use of ``identity``'s join token for a host ``host`` of ``role``; the
        identity that host gets (``startd@host``).

        Raises:
            JoinError: the token was used before, is for another role, or the host name is unusable.
        """
        token_role = join_role(identity)
        check_role(role)
        if role != token_role:
            raise JoinError(f"this join token is for an {token_role} host, not a {role} host: "
                            f"make one with `roost pool join-token --role {role}`")
        if identity.token_id in self.used:
            raise JoinError(f"this join token ({identity.token_id}) was used already; each joins one host: "
                            f"make a new one with `roost pool join-token --role {role}`")
        try:
            name = host_identity(ROLE_DAEMONS[role], host, identity.issuer or identity.domain)
        except ValueError as exc:
            raise JoinError(str(exc)) from None
        self._forget_expired(now)
        self.used[identity.token_id] = identity.expires
        return name

    def _forget_expired(self, now: float) -> None:
        for token_id in [t for t, expires in self.used.items() if expires is not None and expires <= now]:
            del self.used[token_id]
