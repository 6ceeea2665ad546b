"""Which certificate a daemon serves and which CA a client trusts, from HTCondor's
knobs: ``AUTH_SSL_SERVER_CERTFILE``, ``AUTH_SSL_SERVER_KEYFILE``,
``AUTH_SSL_SERVER_CAFILE`` and ``AUTH_SSL_CLIENT_CAFILE`` (default: the server's CA
file). A daemon with no certificate file serves plain HTTP, as a personal pool does."""

from __future__ import annotations

from attrs import frozen

from daemoncore.config import Config
from daemoncore.security.tls_errors import CertificateError


@frozen
class TlsSettings:
    """The TLS files of one daemon or client; empty strings where none is set."""

    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
    client_ca_file: str = ""

    @property
    def serves_tls(self) -> bool:
        """Whether the daemon serves HTTPS (it has a certificate)."""
        return bool(self.cert_file)

    @classmethod
    def from_config(cls, config: Config) -> TlsSettings:
        """The TLS knobs of ``config``.

        Raises:
            CertificateError: a certificate without its key, or a key without its certificate.
            ConfigError: the configuration has an error.
        """
        cert = (config.param("AUTH_SSL_SERVER_CERTFILE") or "").strip()
        key = (config.param("AUTH_SSL_SERVER_KEYFILE") or "").strip()
        ca = (config.param("AUTH_SSL_SERVER_CAFILE") or "").strip()
        client_ca = (config.param("AUTH_SSL_CLIENT_CAFILE") or "").strip() or ca
        if bool(cert) != bool(key):
            given, missing = ("AUTH_SSL_SERVER_CERTFILE", "AUTH_SSL_SERVER_KEYFILE") if cert else \
                ("AUTH_SSL_SERVER_KEYFILE", "AUTH_SSL_SERVER_CERTFILE")
            raise CertificateError(f"{given} is set but {missing} is not: a daemon serving TLS needs both "
                                   f"its certificate and its key")
        return cls(cert_file=cert, key_file=key, ca_file=ca, client_ca_file=client_ca)
