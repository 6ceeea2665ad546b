"""The TLS a daemon serves: its certificate and key from ``AUTH_SSL_SERVER_CERTFILE``
and ``AUTH_SSL_SERVER_KEYFILE``, checked against each other and against the pool CA
in ``AUTH_SSL_SERVER_CAFILE`` before the daemon opens its port, so a mistake stops
the daemon at start with a message instead of failing every client later."""

from __future__ import annotations

from twisted.internet import ssl

from daemoncore.security.tls import load_certificate_file, load_private_key_file, signed_by
from daemoncore.security.tls_client import PoolTrust, use_client_trust
from daemoncore.security.tls_errors import CertificateError
from daemoncore.security.tls_settings import TlsSettings


def server_options(settings: TlsSettings) -> ssl.CertificateOptions:
    """Twisted's TLS options serving the certificate ``settings`` names.

    Raises:
        CertificateError: a file is missing, unreadable or malformed, the key is readable
            by others or is not the certificate's, or the certificate is not signed by
            the CA file given.
    """
    certificate = load_certificate_file(settings.cert_file)
    key = load_private_key_file(settings.key_file)
    if key.public_key() != certificate.public_key():
        raise CertificateError(f"AUTH_SSL_SERVER_KEYFILE {settings.key_file} is not the key of "
                               f"AUTH_SSL_SERVER_CERTFILE {settings.cert_file}")
    if settings.ca_file:
        ca = load_certificate_file(settings.ca_file)
        if not signed_by(certificate, ca):
            raise CertificateError(f"AUTH_SSL_SERVER_CERTFILE {settings.cert_file} is not signed by the CA in "
                                   f"AUTH_SSL_SERVER_CAFILE {settings.ca_file}: issue it with "
                                   f"`roost pool ca issue` on the central manager")
    return ssl.CertificateOptions(  # cryptography's objects: pyOpenSSL's own X509 and PKey are deprecated
        privateKey=key,
        certificate=certificate,
        raiseMinimumTo=ssl.TLSVersion.TLSv1_2,
        enableSessions=True,
    )


def daemon_tls(settings: TlsSettings) -> ssl.CertificateOptions | None:
    """Prepare a daemon's TLS at start: the options its port serves with (None for
    plain HTTP), and, when a client CA file is named, that CA as the one every client
    in this process checks other daemons against.

    Raises:
        CertificateError: as :func:`server_options`, or the client CA file is unusable.
    """
    if settings.client_ca_file:
        use_client_trust(PoolTrust.from_file(settings.client_ca_file))
    return server_options(settings) if settings.serves_tls else None
