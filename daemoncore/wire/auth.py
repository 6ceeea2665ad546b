"""Who is calling: the bearer token of a request, checked against the route's
authorization level (401 without a valid token, 403 when the level is too low).

The token check itself belongs to ``daemoncore.security``; a server is handed a
``verify(token) -> Identity`` callable (``token_verifier``) and an identity answers
``allows(level)``.
"""

from __future__ import annotations

from collections.abc import Callable

from daemoncore.security import AuthorizationLevel, Identity, verify_token
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


def token_verifier(key: bytes, clock, issuer: str | None = None) -> TokenVerifier:
    """A verifier checking tokens against the pool's ``key`` at ``clock``'s time. A
    token already verified is not checked again until it expires: the signature
    check is a measurable part of every daemon-to-daemon call."""
    verified: dict[str, Identity] = {}

    def verify(token: str) -> Identity:
        now = clock.seconds()
        known = verified.get(token)
        if known is not None and (known.expires is None or now < known.expires):
            return known
        identity = verify_token(key, token, now=now, issuer=issuer)
        if len(verified) >= VERIFIED_CACHE_SIZE:
            verified.clear()
        verified[token] = identity
        return identity

    return verify
