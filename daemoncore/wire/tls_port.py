"""A daemon's listening port with or without TLS. With TLS, a client that sends plain
HTTP (its first byte is not a TLS handshake record) gets a plain-HTTP 400 saying to
use ``https://``, and the connection is closed; the daemon logs it and serves on."""

from __future__ import annotations

from twisted.internet import ssl
from twisted.logger import Logger
from twisted.protocols.tls import BufferingTLSTransport, TLSMemoryBIOFactory
from twisted.web import server

from daemoncore.wire.address import Address
from daemoncore.wire.channel import TLS_HANDSHAKE_RECORD, error_response
from daemoncore.wire.errors import ApiError
from daemoncore.wire.prompt_port import listen_tcp

_log = Logger()

class TlsRequired(ApiError, status=400, code="tls_required"):
    """Plain HTTP arrived at a port that speaks only TLS (400)."""


def plain_http_refusal(address: Address) -> TlsRequired:
    """The error a plain-HTTP client of the TLS port at ``address`` gets."""
    return TlsRequired(f"plain HTTP sent to a TLS port: this daemon speaks HTTPS; use {address.url('/')} "
                       f"(the address {address.sinful()})")


class TlsOnlyTransport(BufferingTLSTransport):
    """Server-side TLS that answers a plain-HTTP first request with a clear 400."""

    _first_bytes_seen = False

    def dataReceived(self, data: bytes) -> None:  # noqa: N802 - Twisted's interface
        if not self._first_bytes_seen and data:
            self._first_bytes_seen = True
            if data[0] != TLS_HANDSHAKE_RECORD:
                self._refuse_plain(data)
                return
        super().dataReceived(data)

    def _refuse_plain(self, data: bytes) -> None:
        host = self.transport.getHost()
        peer = self.transport.getPeer()
        _log.info("refused plain HTTP from {peer} on TLS port {port} ({first!r})",
                  peer=getattr(peer, "host", peer), port=getattr(host, "port", "?"), first=data[:40])
        self.transport.write(error_response(plain_http_refusal(Address(host.host, host.port, tls=True))))
        self.transport.loseConnection()


class TlsOnlyFactory(TLSMemoryBIOFactory):
    """Wraps a ``Site`` in :class:`TlsOnlyTransport`."""

    protocol = TlsOnlyTransport


#: Connections the kernel queues for a daemon before it accepts them. Twisted's 50
#: overflowed when 500 slots' startd and schedd talked at once (296-391 overflows in one
#: 500-slot run, each a SYN retried after a second); the kernel caps it at somaxconn.
LISTEN_BACKLOG = 1024


def listen(reactor, port: int, site: server.Site, interface: str,
           tls: ssl.CertificateOptions | None = None):
    """Listen on ``interface:port`` for ``site``: HTTPS when ``tls`` is given, plain HTTP
    otherwise; the listening port (a :class:`~daemoncore.wire.prompt_port.PromptPort`,
    which reads a connection's request in the turn it accepts it)."""
    factory = site if tls is None else TlsOnlyFactory(tls, False, site)
    return listen_tcp(reactor, port, factory, LISTEN_BACKLOG, interface)
