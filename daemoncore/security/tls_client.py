"""How a client checks the daemon it talks to over TLS: the certificate must be signed
by the pool's CA and name the host or address it connected to (checked with
``service_identity``), else the connection is refused with a reason that says which.

:class:`PoolTrust` holds the CA; it gives Twisted's ``Agent`` a policy
(:class:`PoolTlsPolicy`) and the blocking client an ``ssl.SSLContext``. A process
that is given no trust (the CLI, the bindings) reads ``AUTH_SSL_CLIENT_CAFILE``, else
``AUTH_SSL_SERVER_CAFILE``, from its configuration the first time it meets a TLS
address (:func:`client_trust`); a daemon sets its own with :func:`use_client_trust`.
Beside its own CA a process trusts the CA of every pool it flocks with
(:data:`daemoncore.security.pool_trust.PROCESS_TRUSTED_POOLS`): a daemon of such a pool
is accepted when that pool's CA signed its certificate.
"""

from __future__ import annotations

import datetime
import socket
import ssl
from collections.abc import Callable

from attrs import field, frozen
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from OpenSSL import SSL
from service_identity import VerificationError
from service_identity.cryptography import verify_certificate_hostname, verify_certificate_ip_address
from twisted.internet import ssl as twisted_ssl
from twisted.internet.abstract import isIPAddress, isIPv6Address
from twisted.internet.interfaces import IOpenSSLClientConnectionCreator
from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web.iweb import IPolicyForHTTPS
from zope.interface import implementer

from daemoncore.config import Config
from daemoncore.security.errors import SecurityError
from daemoncore.security.pool_trust import PROCESS_TRUSTED_POOLS, TrustedPools
from daemoncore.security.tls import issuer_text, load_certificate_file, parse_certificate, signed_by, subject_names
from daemoncore.security.tls_errors import PeerRefused
from daemoncore.security.tls_settings import TlsSettings

_log = Logger()

NOT_POOL_CA = "certificate not signed by this pool's CA (it was issued by {issuer}; the pool's CA is {ca})"
NOT_TRUSTED_CA = ("certificate not signed by this pool's CA nor by a trusted pool's CA (it was issued by {issuer}; "
                  "the CAs tried are {cas})")
HOST_MISMATCH = "host name mismatch: certificate is for {names}, connected to {host}"
EXPIRED = "certificate of {host} expired on {when:%Y-%m-%d %H:%M} UTC"
NOT_YET_VALID = "certificate of {host} is not valid before {when:%Y-%m-%d %H:%M} UTC (is a clock wrong?)"
TLS_TO_PLAIN_PORT = ("TLS sent to a plain-HTTP port: the daemon at {address} does not speak TLS "
                     "(write its address as <host:port>, without ?tls=1)")
NO_POOL_CA = ("{address} speaks TLS but no pool CA is configured to check it: set AUTH_SSL_CLIENT_CAFILE "
              "(or AUTH_SSL_SERVER_CAFILE) to the pool's pool_ca.crt")
#: OpenSSL's words when a TLS client meets a server that answers in plain text.
_PLAIN_ANSWER_SIGNS = ("wrong version number", "packet length too long", "http request", "record layer failure",
                       "unknown protocol")


def _is_ip(host: str) -> bool:
    return isIPAddress(host) or isIPv6Address(host)


def refusal_reason(peer: x509.Certificate, host: str, ca: x509.Certificate,
                   now: datetime.datetime | None = None) -> str | None:
    """Why a client connected to ``host`` must refuse ``peer``'s certificate given the
    pool CA ``ca``, or None when it may trust it."""
    if not signed_by(peer, ca):
        return NOT_POOL_CA.format(issuer=issuer_text(peer), ca=ca.subject.rfc4514_string())
    now = now or datetime.datetime.now(datetime.timezone.utc)
    if now > peer.not_valid_after_utc:
        return EXPIRED.format(host=host, when=peer.not_valid_after_utc)
    if now < peer.not_valid_before_utc:
        return NOT_YET_VALID.format(host=host, when=peer.not_valid_before_utc)
    try:
        if _is_ip(host):
            verify_certificate_ip_address(peer, host)
        else:
            verify_certificate_hostname(peer, host)
    except VerificationError:
        return HOST_MISMATCH.format(names=", ".join(subject_names(peer)) or "no name", host=host)
    return None


def refusal_reason_among(peer: x509.Certificate, host: str, cas: tuple[x509.Certificate, ...],
                         now: datetime.datetime | None = None) -> str | None:
    """:func:`refusal_reason` against the first of ``cas`` (this pool's) or any other
    (the trusted pools'): the one that signed ``peer`` judges it; none did, the
    refusal names every CA tried."""
    if len(cas) == 1:
        return refusal_reason(peer, host, cas[0], now)
    signer = next((ca for ca in cas if signed_by(peer, ca)), None)
    if signer is None:
        return NOT_TRUSTED_CA.format(issuer=issuer_text(peer),
                                     cas="; ".join(ca.subject.rfc4514_string() for ca in cas))
    return refusal_reason(peer, host, signer, now)


def answered_in_plain_text(error_text: str) -> bool:
    """Whether an OpenSSL handshake error says the server answered without TLS."""
    text = error_text.lower()
    return any(sign in text for sign in _PLAIN_ANSWER_SIGNS)


@frozen
class PoolTrust:
    """The pool CA a client checks daemons against, and where it was read from; ``others``
    are the CAs of the pools this one flocks with, trusted beside it."""

    ca: x509.Certificate
    source: str = "the pool CA"
    others: tuple[x509.Certificate, ...] = ()
    _cache: dict = field(factory=dict, init=False, eq=False, repr=False)

    @classmethod
    def from_file(cls, path: str) -> PoolTrust:
        """The CA in the PEM file ``path``.

        Raises:
            CertificateError: missing, unreadable or not a certificate.
        """
        return cls(load_certificate_file(path), path)

    @classmethod
    def from_pem(cls, pem: bytes, source: str = "the pool CA") -> PoolTrust:
        """The CA in ``pem``.

        Raises:
            CertificateError: not a PEM certificate.
        """
        return cls(parse_certificate(pem, source), source)

    def with_others(self, pems: tuple[str, ...]) -> PoolTrust:
        """This CA, trusting beside it the CAs in ``pems`` (the trusted pools'); one that
        does not parse is left out and logged."""
        others = []
        for pem in pems:
            try:
                others.append(parse_certificate(pem.encode("ascii", "replace"), "a trusted pool's CA"))
            except SecurityError as exc:
                _log.warn("not trusting a pool's CA: {why}", why=exc)
        return PoolTrust(self.ca, self.source, tuple(others))

    @property
    def authorities(self) -> tuple[x509.Certificate, ...]:
        """Every CA trusted: this pool's first."""
        return (self.ca, *self.others)

    def pem(self) -> bytes:
        """The CA certificates, PEM (this pool's first)."""
        return b"".join(ca.public_bytes(serialization.Encoding.PEM) for ca in self.authorities)

    def ssl_context(self) -> ssl.SSLContext:
        """A client context that trusts only these CAs and checks host names (made once)."""
        if "ssl" not in self._cache:
            context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cadata=self.pem().decode("ascii"))
            context.minimum_version = ssl.TLSVersion.TLSv1_2
            self._cache["ssl"] = context
        return self._cache["ssl"]

    def twisted_options(self) -> twisted_ssl.CertificateOptions:
        """Twisted's options trusting only these CAs (one OpenSSL context for every connection)."""
        if "twisted" not in self._cache:
            roots = [twisted_ssl.Certificate.loadPEM(ca.public_bytes(serialization.Encoding.PEM))
                     for ca in self.authorities]
            self._cache["twisted"] = twisted_ssl.CertificateOptions(
                trustRoot=twisted_ssl.trustRootFromCertificates(roots),
                raiseMinimumTo=twisted_ssl.TLSVersion.TLSv1_2)
        return self._cache["twisted"]

    def reason_to_refuse(self, peer: x509.Certificate, host: str) -> str | None:
        """:func:`refusal_reason_among` these CAs."""
        return refusal_reason_among(peer, host, self.authorities)


@implementer(IOpenSSLClientConnectionCreator)
class PoolClientTls:
    """Makes each TLS connection to ``host`` check the peer as :func:`refusal_reason`
    does; a refused peer fails the connection with :class:`PeerRefused`."""

    def __init__(self, trust: PoolTrust, host: str) -> None:
        self._trust = trust
        self._host = host

    def clientConnectionForTLS(self, tls_protocol) -> SSL.Connection:  # noqa: N802 - Twisted's interface
        connection = SSL.Connection(self._trust.twisted_options().getContext(), None)
        connection.set_app_data(tls_protocol)
        if not _is_ip(self._host):
            connection.set_tlsext_host_name(self._host.encode("idna"))
        connection.set_verify(SSL.VERIFY_PEER | SSL.VERIFY_FAIL_IF_NO_PEER_CERT,
                              _verifier(tls_protocol, self._trust, self._host))
        return connection


def _verifier(tls_protocol, trust: PoolTrust, host: str) -> Callable:
    """OpenSSL's verify callback: OpenSSL judges the chain, this adds the host name
    and turns a refusal into a :class:`PeerRefused` naming the reason."""
    state = {"protocol": tls_protocol}

    def verify(_connection, certificate, error: int, depth: int, ok: int) -> bool:
        protocol = state["protocol"]
        if protocol is None:  # already refused
            return False
        try:
            if ok and depth > 0:
                return True
            reason = trust.reason_to_refuse(certificate.to_cryptography(), host)
            if ok and reason is None:
                return True
            reason = reason or f"certificate of {host} refused (OpenSSL verify error {error})"
        except Exception:  # an exception escaping an OpenSSL callback would be lost
            _log.failure("checking the certificate of {host}", host=host)
            reason = f"certificate of {host} could not be checked"
        state["protocol"] = None
        protocol.failVerification(Failure(PeerRefused(reason)))
        return False

    return verify


@implementer(IPolicyForHTTPS)
class PoolTlsPolicy:
    """The ``Agent`` policy for ``https://`` addresses: the pool CA ``trust()`` gives."""

    def __init__(self, trust: Callable[[], PoolTrust | None]) -> None:
        self._trust = trust

    def creatorForNetloc(self, hostname: bytes, port: int) -> PoolClientTls:  # noqa: N802
        """The connection creator for ``hostname:port``.

        Raises:
            PeerRefused: no pool CA is configured.
        """
        host = hostname.decode("ascii")
        trust = self._trust()
        if trust is None:
            raise PeerRefused(NO_POOL_CA.format(address=f"{host}:{port}"))
        return PoolClientTls(trust, host)


# --- the process's own trust ---

_PROCESS_TRUST: dict[str, object] = {}


def use_client_trust(trust: PoolTrust | None) -> None:
    """Make ``trust`` the CA this process's clients check daemons against (None: read
    the configuration again when next needed)."""
    _PROCESS_TRUST.clear()
    if trust is not None:
        _PROCESS_TRUST["trust"] = trust


def client_trust(trusted: TrustedPools = PROCESS_TRUSTED_POOLS) -> PoolTrust | None:
    """The CAs this process checks daemons against: the one set by
    :func:`use_client_trust`, else the file the configuration names (read once), else
    None; with the CAs of the pools in ``trusted`` beside it.

    Raises:
        CertificateError: the configured CA file is missing or not a certificate.
        ConfigError: the configuration has an error.
    """
    if "trust" not in _PROCESS_TRUST:
        path = TlsSettings.from_config(Config.load()).client_ca_file
        _PROCESS_TRUST["trust"] = PoolTrust.from_file(path) if path else None
    own = _PROCESS_TRUST["trust"]
    if own is None or not trusted.current:
        return own
    key = (id(own), id(trusted), trusted.version)
    if _PROCESS_TRUST.get("key") != key:
        _PROCESS_TRUST["key"], _PROCESS_TRUST["with_pools"] = key, own.with_others(trusted.ca_pems())
    return _PROCESS_TRUST["with_pools"]


def unverified_peer_certificate(host: str, port: int, timeout: float) -> x509.Certificate | None:
    """The certificate the daemon at ``host:port`` shows, fetched without checking it,
    to say why it was refused; None when it cannot be had."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with socket.create_connection((host, port), timeout=timeout) as raw:
            with context.wrap_socket(raw, server_hostname=None if _is_ip(host) else host) as wrapped:
                der = wrapped.getpeercert(binary_form=True)
    except OSError:
        return None
    return x509.load_der_x509_certificate(der) if der else None


def blocking_refusal(error: ssl.SSLError, trust: PoolTrust, host: str, port: int, timeout: float) -> str:
    """Why the standard library's TLS refused the daemon at ``host:port``, in the same
    words as the Twisted client's."""
    if isinstance(error, ssl.SSLCertVerificationError):
        peer = unverified_peer_certificate(host, port, timeout)
        reason = trust.reason_to_refuse(peer, host) if peer is not None else None
        return reason or f"certificate of {host} refused: {error.verify_message}"
    if answered_in_plain_text(str(error)):
        return TLS_TO_PLAIN_PORT.format(address=f"{host}:{port}")
    return f"TLS handshake failed: {error.reason or error}"
