"""Identity tokens: JWTs signed with the pool key, in the spirit of HTCondor's IDTOKENS.

The pool key is Ed25519 (JWT algorithm EdDSA): the central manager signs with the
private key and every daemon verifies with the public one. A pool made before that
has a shared secret instead (bytes, HS256), which still signs and verifies its own
tokens. The algorithm follows the key a verifier holds, never the token's header, so
a token of the other kind is refused.

Claims: ``sub`` is ``user@domain``, ``scope`` lists authorization levels
(``roost:/READ roost:/WRITE``), ``iss`` names the pool, ``iat`` and the optional
``exp`` are Unix times, ``jti`` is a random id. Time is passed in as ``now``
(daemons pass ``clock.seconds()``); only when it is None is the wall clock read.

``jwt`` and ``cryptography`` are imported by the functions that sign or decode, not
with this module: a client that only reads its token file and sends it needs neither.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterable
from typing import TYPE_CHECKING

import attrs

from daemoncore.security.errors import (
    MalformedTokenError,
    SigningKeyError,
    TokenError,
    TokenExpiredError,
    TokenSignatureError,
)
from daemoncore.security.levels import AuthorizationLevel, parse_scope_claim, scope_claim

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

#: The algorithm of pool keys (Ed25519), and that of the shared secrets of older pools.
ALGORITHM = "EdDSA"
SHARED_SECRET_ALGORITHM = "HS256"
REQUIRED_CLAIMS = ("sub", "iss", "iat", "jti", "scope")
_IDENTITY = re.compile(r"([^@\s]+)@([^@\s]+)")


@attrs.frozen
class Identity:
    """Who a verified token speaks for, and the levels it was granted."""

    user: str
    domain: str
    scopes: frozenset[AuthorizationLevel]
    issuer: str | None = None
    issued: float | None = None
    expires: float | None = None
    token_id: str | None = None

    @property
    def name(self) -> str:
        """``user@domain``, the form HTCondor uses for an authenticated user."""
        return f"{self.user}@{self.domain}"

    def allows(self, level: AuthorizationLevel) -> bool:
        """True when some granted scope implies ``level`` (WRITE allows READ, and so on)."""
        return any(scope.implies(level) for scope in self.scopes)


def parse_identity(text: str) -> tuple[str, str]:
    """Split ``alice@pool`` into ``("alice", "pool")``.

    Raises:
        ValueError: not of the form ``user@domain``.
    """
    match = _IDENTITY.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"identity {text!r} is not of the form user@domain (for example alice@pool)")
    return match.group(1), match.group(2)


def issue_token(key: Ed25519PrivateKey | bytes, identity: str, scopes: Iterable[AuthorizationLevel | str],
                lifetime: float | None = None, issuer: str | None = None, *,
                now: float | None = None) -> str:
    """Sign a token for ``identity`` (``user@domain``) granting ``scopes``.

    Args:
        key: the pool signing key (Ed25519, or an older pool's shared secret).
        identity: ``user@domain``.
        scopes: levels, or their names in any case; at least one.
        lifetime: seconds until it expires; None for a token that never expires.
        issuer: the pool's name (its ``TRUST_DOMAIN``); default the identity's domain.
        now: the issue time (Unix seconds); None reads the wall clock.

    Raises:
        ValueError: a bad identity, no or unknown scopes, or a lifetime that is not positive.
        SigningKeyError: ``key`` is a public key, which cannot sign.
    """
    import jwt
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    if isinstance(key, Ed25519PublicKey):
        raise SigningKeyError("this host holds only the pool's public key, which checks tokens but cannot "
                              "issue them: issue tokens on the central manager")
    _, domain = parse_identity(identity)
    levels = [s if isinstance(s, AuthorizationLevel) else AuthorizationLevel.parse(s) for s in scopes]
    if not levels:
        raise ValueError("a token needs at least one scope: READ, WRITE, ADMINISTRATOR or DAEMON")
    if lifetime is not None and lifetime <= 0:
        raise ValueError(f"token lifetime {lifetime} is not positive: expected seconds > 0, or none")
    issued = int(time.time() if now is None else now)
    claims: dict[str, object] = {
        "sub": identity.strip(), "iss": issuer or domain, "iat": issued,
        "jti": uuid.uuid4().hex, "scope": scope_claim(levels),
    }
    if lifetime is not None:
        claims["exp"] = issued + int(round(lifetime))
    return jwt.encode(claims, key, algorithm=algorithm_of(key))


def algorithm_of(key: Ed25519PrivateKey | Ed25519PublicKey | bytes) -> str:
    """The JWT algorithm of tokens ``key`` signs or checks: EdDSA, or HS256 for a shared secret.

    Raises:
        SigningKeyError: ``key`` is neither an Ed25519 key nor bytes.
    """
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

    if isinstance(key, (Ed25519PrivateKey, Ed25519PublicKey)):
        return ALGORITHM
    if isinstance(key, bytes):
        return SHARED_SECRET_ALGORITHM
    raise SigningKeyError(f"a pool key is an Ed25519 key or a shared secret, not a {type(key).__name__}")


def verify_token(key: Ed25519PublicKey | Ed25519PrivateKey | bytes, token: str, *, now: float | None = None,
                 issuer: str | None = None) -> Identity:
    """Check ``token``'s signature, claims and expiry and say whom it identifies.

    Args:
        key: the pool's public key (or its signing key, or an older pool's shared secret).
        token: the JWT text.
        now: the current time (Unix seconds); None reads the wall clock.
        issuer: if given, the token must have been issued by this pool.

    Raises:
        TokenSignatureError: not signed with ``key``.
        TokenExpiredError: past its ``exp``.
        MalformedTokenError: not a JWT, not of ``key``'s algorithm, or a claim is missing or wrong.
    """
    claims = _decode(token, key)
    identity = _identity_from_claims(claims)
    current = time.time() if now is None else now
    if identity.expires is not None and current >= identity.expires:
        raise TokenExpiredError(f"the token for {identity.name} expired at {_utc(identity.expires)}: "
                                f"ask for a new one ('roost token create')")
    if issuer is not None and identity.issuer != issuer:
        raise TokenSignatureError(f"the token for {identity.name} was issued by {identity.issuer!r}, "
                                  f"not by this pool ({issuer!r})")
    return identity


def read_unverified(token: str) -> Identity:
    """What a token claims, without checking its signature or expiry (for listing tokens).

    Raises:
        MalformedTokenError: not a JWT, or a claim is missing or wrong.
    """
    return _identity_from_claims(_decode(token, None))


def _decode(token: str, key: Ed25519PublicKey | Ed25519PrivateKey | bytes | None) -> dict:
    import jwt
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    options = {"verify_signature": key is not None, "verify_exp": False, "verify_iat": False,
               "verify_nbf": False, "require": list(REQUIRED_CLAIMS)}
    algorithms = [ALGORITHM, SHARED_SECRET_ALGORITHM] if key is None else [algorithm_of(key)]
    if isinstance(key, Ed25519PrivateKey):
        key = key.public_key()
    try:
        header = jwt.get_unverified_header(token)
        if header.get("alg") not in algorithms:
            raise MalformedTokenError(_wrong_algorithm(header.get("alg"), algorithms[0]))
        return jwt.decode(token, key or b"", algorithms=algorithms, options=options)
    except jwt.InvalidSignatureError:
        raise TokenSignatureError("the token's signature does not match this pool's signing key") from None
    except jwt.MissingRequiredClaimError as err:
        raise MalformedTokenError(f"the token has no {err.claim!r} claim") from None
    except jwt.InvalidTokenError as err:
        raise MalformedTokenError(f"the text is not a valid token: {err}") from None


def _wrong_algorithm(found: object, expected: str) -> str:
    if found == SHARED_SECRET_ALGORITHM:
        return ("the token is signed with a shared secret (HS256), as pools made before Ed25519 keys were: "
                "this pool signs with Ed25519 (EdDSA); ask its administrator for a new token")
    if found == ALGORITHM:
        return ("the token is signed with an Ed25519 key (EdDSA), but this pool still has an old shared-secret "
                "key (HS256): the token is from another pool")
    return f"the token is signed with {found!r}: expected {expected}"


def _identity_from_claims(claims: dict) -> Identity:
    try:
        user, domain = parse_identity(str(claims["sub"]))
    except ValueError as err:
        raise MalformedTokenError(f"the token's subject: {err}") from None
    return Identity(
        user=user, domain=domain, scopes=parse_scope_claim(claims["scope"]),
        issuer=str(claims["iss"]), issued=_number(claims, "iat"),
        expires=_number(claims, "exp") if "exp" in claims else None, token_id=str(claims["jti"]),
    )


def _number(claims: dict, name: str) -> float:
    value = claims[name]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MalformedTokenError(f"the token's {name!r} claim is {value!r}: expected a Unix time")
    return float(value)


def _utc(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(seconds))


__all__ = ["Identity", "TokenError", "algorithm_of", "issue_token", "parse_identity", "read_unverified", "verify_token"]
