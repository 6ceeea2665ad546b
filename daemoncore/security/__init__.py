"""Roost's security: the pool signing key, identity tokens and authorization levels.

A daemon loads the key with :func:`load_signing_key` and checks each request's
bearer token with :func:`verify_token`, which returns an :class:`Identity`; a route
then asks ``identity.allows(AuthorizationLevel.WRITE)``. A client finds its token with
:func:`find_token`. Every failure is a :class:`SecurityError` (a ValueError) whose
message a person can act on; token failures are :class:`TokenError` subclasses.

The names are loaded on first use (PEP 562): a client that only reads its token
(every ``roost`` command) loads neither the key code nor ``cryptography`` and ``jwt``,
which only signing, verifying and TLS need.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

#: public name -> the module defining it
_HOMES = {
    **dict.fromkeys(("MalformedTokenError", "SecurityError", "SigningKeyError", "TokenError",
                     "TokenExpiredError", "TokenSignatureError"), "daemoncore.security.errors"),
    "AuthorizationLevel": "daemoncore.security.levels",
    **dict.fromkeys(("create_signing_key", "ensure_signing_key", "load_signing_key"),
                    "daemoncore.security.signing_key"),
    **dict.fromkeys(("TOKEN_ENV", "FoundToken", "default_token_dir", "find_token", "list_tokens", "write_token"),
                    "daemoncore.security.token_files"),
    **dict.fromkeys(("Identity", "issue_token", "parse_identity", "read_unverified", "verify_token"),
                    "daemoncore.security.tokens"),
}

__all__ = [
    "TOKEN_ENV", "AuthorizationLevel", "FoundToken", "Identity", "MalformedTokenError",
    "SecurityError", "SigningKeyError", "TokenError", "TokenExpiredError", "TokenSignatureError",
    "create_signing_key", "default_token_dir", "ensure_signing_key", "find_token", "issue_token",
    "list_tokens", "load_signing_key", "parse_identity", "read_unverified", "verify_token",
    "write_token",
]

if TYPE_CHECKING:
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


def __getattr__(name: str) -> object:
    """The public name ``name``, imported from its module the first time it is asked for.

    Raises:
        AttributeError: ``name`` is not a public name of this package (submodules are
            loaded by importing them, as usual).
    """
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later lookups find it directly
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
