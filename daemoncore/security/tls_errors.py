"""Errors of the pool's TLS: its certificate authority, host certificates and the
checks a client makes of the daemon it connects to."""

from __future__ import annotations

from daemoncore.security.errors import SecurityError


class CertificateError(SecurityError):
    """A CA or host certificate or key cannot be made, written, read or used."""


class AuthorityExistsError(CertificateError):
    """A pool CA is already there; it is never overwritten."""


class PeerRefused(SecurityError):
    """The daemon at the other end is not one this pool trusts: its certificate is
    not signed by the pool's CA, or names another host, or it does not speak TLS."""
