"""Roost's security: the pool signing key, identity tokens and authorization levels.

A daemon loads the key with :func:`load_signing_key` and checks each request's
bearer token with :func:`verify_token`, which returns an :class:`Identity`; a route
then asks ``identity.allows(AuthorizationLevel.WRITE)``. A client finds its token with
:func:`find_token`. Every failure is a :class:`SecurityError` (a ValueError) whose
message a person can act on; token failures are :class:`TokenError` subclasses.
"""

from daemoncore.security.errors import (
    MalformedTokenError,
    SecurityError,
    SigningKeyError,
    TokenError,
    TokenExpiredError,
    TokenSignatureError,
)
from daemoncore.security.levels import AuthorizationLevel
from daemoncore.security.signing_key import create_signing_key, ensure_signing_key, load_signing_key
from daemoncore.security.token_files import (
    TOKEN_ENV,
    FoundToken,
    default_token_dir,
    find_token,
    list_tokens,
    write_token,
)
from daemoncore.security.tokens import Identity, issue_token, parse_identity, read_unverified, verify_token

__all__ = [
    "TOKEN_ENV", "AuthorizationLevel", "FoundToken", "Identity", "MalformedTokenError",
    "SecurityError", "SigningKeyError", "TokenError", "TokenExpiredError", "TokenSignatureError",
    "create_signing_key", "default_token_dir", "ensure_signing_key", "find_token", "issue_token",
    "list_tokens", "load_signing_key", "parse_identity", "read_unverified", "verify_token",
    "write_token",
]
