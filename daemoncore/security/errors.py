"""Errors raised by Roost's security layer: signing keys and tokens."""

from __future__ import annotations


class SecurityError(ValueError):
    """Base of every security error; its message says what to do about it."""


class SigningKeyError(SecurityError):
    """The pool signing key is missing, unreadable, too short or readable by others."""


class TokenError(SecurityError):
    """A token cannot be used: it is malformed, badly signed or expired."""


class MalformedTokenError(TokenError):
    """The text is not a Roost token (not a JWT, wrong algorithm, missing or bad claims)."""


class TokenSignatureError(TokenError):
    """The token was not signed with this pool's key."""


class TokenExpiredError(TokenError):
    """The token's ``exp`` time has passed."""


class TokenRevokedError(TokenError):
    """The token matches the pool's revocation list (``SEC_TOKEN_REVOCATION_EXPR`` or ``roost token revoke``)."""
