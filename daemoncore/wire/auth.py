"""Who is calling: the bearer token of a request, checked against the route's
authorization level (401 without a valid token, 403 when the level is too low).

The token check itself belongs to ``daemoncore.security``; a server is handed a
``verify(token) -> Identity`` callable (``token_verifier``) and an identity answers
``allows(level)``.
"""

from __future__ import annotations

from collections.abc import Callable

from attrs import frozen

from daemoncore.security import AuthorizationLevel, Identity, verify_token
from daemoncore.security.errors import MalformedTokenError, TokenRevokedError, TokenSignatureError
from daemoncore.security.revocation_watch import PROCESS_REVOCATIONS, RevocationHolder
from daemoncore.wire.errors import Forbidden, Unauthenticated

TokenVerifier = Callable[[str], object]

NO_TOKEN = (
    "this request needs a token with {level} authorization; "
    "set ROOST_TOKEN or create one with `roost token create`"
)


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or ``None``."""
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def authenticate(authorization: str | None, verify: TokenVerifier | None, level: str) -> object:
    """The identity behind the request's token.

    Raises:
        Unauthenticated: no token, or ``verify`` rejects it, or the daemon has no key.
    """
    token = bearer_token(authorization)
    if token is None:
        raise Unauthenticated(NO_TOKEN.format(level=level))
    if verify is None:
        raise Unauthenticated("this daemon has no signing key and accepts no tokens")
    try:
        return verify(token)
    except Exception as exc:  # any failure of the verifier means "not authenticated"
        raise Unauthenticated(f"token rejected: {exc}") from None


#: Verifier failures that mean "a token of another pool" (not this pool's key or kind),
#: as opposed to this pool's own token expired or revoked, which a capability never excuses.
FOREIGN_TOKEN_ERRORS = (TokenSignatureError, MalformedTokenError)


@frozen
class CapabilityHolder:
    """A caller admitted on a route by its capability (see ``Route.capability``) because
    its token is another pool's: the starter of a flocked job holding the token of the
    pool it runs in. It holds no authorization level, so any further ``require`` fails;
    the route's handler must check the capability itself."""

    capability: str
    why: str

    @property
    def name(self) -> str:
        """How logs and refusals name the caller."""
        return f"a holder of a {self.capability} with another pool's token"

    def allows(self, level: AuthorizationLevel) -> bool:
        """Never: the capability stands in for a token only on its own route."""
        return False


def authenticate_or_capability(authorization: str | None, verify: TokenVerifier | None, level: str,
                               capability: str) -> object:
    """The identity behind the request's token, or, when the token is well-formed but
    another pool's, a :class:`CapabilityHolder` for ``capability`` (which the caller has
    presented; the handler checks it).

    Raises:
        Unauthenticated: no token, no verifier, or a token of this pool that is expired
            or revoked.
    """
    token = bearer_token(authorization)
    if token is None or verify is None:
        return authenticate(authorization, verify, level)
    try:
        return verify(token)
    except FOREIGN_TOKEN_ERRORS as exc:
        return CapabilityHolder(capability, str(exc))
    except Exception as exc:  # any other failure of the verifier means "not authenticated"
        raise Unauthenticated(f"token rejected: {exc}") from None


def require_level(identity: object, level: str, action: str) -> None:
    """Check that ``identity`` holds ``level`` for ``action``.

    Raises:
        Forbidden: the identity's scopes do not reach ``level``.
    """
    if not identity.allows(AuthorizationLevel[level]):
        who = getattr(identity, "name", None) or str(identity)
        raise Forbidden(f"{who} lacks {level} authorization, which {action} needs")


#: How many verified tokens a verifier remembers (daemons reuse a handful).
VERIFIED_CACHE_SIZE = 256


def token_verifier(key: bytes, clock, issuer: str | None = None,
                   revocations: RevocationHolder = PROCESS_REVOCATIONS) -> TokenVerifier:
    """A verifier checking tokens against the pool's ``key`` at ``clock``'s time, and
    against the revocations in force. A token already verified is not checked again
    until it expires or the revocations change: the signature check is a measurable
    part of every daemon-to-daemon call.

    The verifier raises ``TokenError`` (``TokenRevokedError`` for a revoked token).
    """
    verified: dict[str, tuple[Identity, int, str | None]] = {}

    def verify(token: str) -> Identity:
        now = clock.seconds()
        known = verified.get(token)
        if known is None or known[1] != revocations.version or (
                known[0].expires is not None and now >= known[0].expires):
            identity = verify_token(key, token, now=now, issuer=issuer)
            if len(verified) >= VERIFIED_CACHE_SIZE:
                verified.clear()
            known = verified[token] = (identity, revocations.version, revocations.current.reason(identity))
        if known[2] is not None:
            raise TokenRevokedError(known[2])
        return known[0]

    return verify
