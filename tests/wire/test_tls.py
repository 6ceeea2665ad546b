"""TLS between hosts, on real loopback ports with the real reactor: a daemon with a
certificate serves HTTPS that clients holding the pool CA reach; a certificate from
another CA, a wrong host name, plain HTTP to the TLS port and TLS to a plain port are
each refused with an error naming which, and the daemon serves on."""

from __future__ import annotations

import os
import socket

import attrs
import pytest
from twisted.internet import defer, reactor, threads
from twisted.trial import unittest

from daemoncore.daemon import DaemonService
from daemoncore.security.tls import create_authority, issue_host_certificate, make_authority, write_host_certificate
from daemoncore.security.tls_client import PoolTrust
from daemoncore.security.tls_server import server_options
from daemoncore.security.tls_settings import TlsSettings
from daemoncore.wire.address import Address, parse_address
from daemoncore.wire.async_client import AsyncClient, DirectHttp
from daemoncore.wire.auth import token_verifier
from daemoncore.wire.blocking_client import BlockingClient
from daemoncore.wire.daemon_routes import PING
from daemoncore.wire.errors import RemoteError, Unreachable
from daemoncore.wire.server import ApiResource, make_site
from daemoncore.wire.tls_port import listen
from tests.support.daemon_settings import daemon_settings
from tests.wire.toy_api import ECHO, KEY, TOY_HANDLERS, token

pytestmark = pytest.mark.integration  # runs the global reactor and servers


def _host_files(directory: str, authority, names, addresses, stem: str) -> TlsSettings:
    cert, key = os.path.join(directory, f"{stem}.crt"), os.path.join(directory, f"{stem}.key")
    write_host_certificate(issue_host_certificate(authority, names, addresses), cert, key)
    return TlsSettings(cert_file=cert, key_file=key)


class TlsTests(unittest.TestCase):
    def setUp(self):
        self.dir = self.mktemp()
        os.makedirs(self.dir)
        self.authority = create_authority(os.path.join(self.dir, "ca"))
        self.trust = PoolTrust.from_pem(self.authority.certificate_pem(), "test CA")
        self.http = DirectHttp(reactor, trust=self.trust)
        self.addCleanup(lambda: self.http._agent_now()._pool.closeCachedConnections())

    def serve(self, settings: TlsSettings | None) -> Address:
        site = make_site(ApiResource(TOY_HANDLERS, token_verifier(KEY, reactor)))
        port = listen(reactor, 0, site, "127.0.0.1", server_options(settings) if settings else None)
        self.addCleanup(port.stopListening)
        return Address("127.0.0.1", port.getHost().port, tls=settings is not None)

    def good_server(self) -> Address:
        return self.serve(_host_files(self.dir, self.authority, ["localhost"], ["127.0.0.1"], "good"))

    def async_call(self, address: Address, http=None):
        client = AsyncClient(address, token=token("alice@pool", "READ"), http=http or self.http, timeout=10)
        return client.call(ECHO, {"n": 1}, word="hi")

    def blocking_call(self, address: Address, trust=None):
        client = BlockingClient(address, token=token("alice@pool", "READ"), timeout=10, trust=trust or self.trust)
        return threads.deferToThread(client.call, ECHO, {"n": 1}, word="hi")

    @defer.inlineCallbacks
    def test_daemon_with_a_certificate_serves_https_to_clients_holding_the_ca(self):
        """Both clients reach the TLS port; the daemons' client keeps one connection for many calls."""
        address = self.good_server()
        for _ in range(3):
            answer = yield self.async_call(address)
            self.assertEqual(answer["who"], "alice@pool")
        self.assertEqual(len(self.http._agent_now()._pool._connections), 1)
        answer = yield self.blocking_call(address)
        self.assertEqual(answer["body"], {"n": 1})

    @defer.inlineCallbacks
    def test_a_host_name_in_the_certificate_is_checked_too(self):
        """Connecting by name works when the certificate carries that name."""
        address = attrs.evolve(self.good_server(), host="localhost")
        answer = yield self.async_call(address)
        self.assertEqual(answer["word"], "hi")
        answer = yield self.blocking_call(address)
        self.assertEqual(answer["word"], "hi")

    @defer.inlineCallbacks
    def test_certificate_from_another_ca_is_refused(self):
        """A daemon whose certificate another CA signed is refused by both clients, naming that."""
        stranger = make_authority("Other pool CA")
        address = self.serve(_host_files(self.dir, stranger, ["localhost"], ["127.0.0.1"], "other"))
        for call in (self.async_call, self.blocking_call):
            with self.assertRaises(Unreachable) as caught:
                yield call(address)
            message = str(caught.exception)
            self.assertIn("certificate not signed by this pool's CA", message)
            self.assertIn("CN=Other pool CA", message)

    @defer.inlineCallbacks
    def test_wrong_host_name_is_refused(self):
        """A certificate for another host is refused by both clients, naming both hosts."""
        address = self.serve(_host_files(self.dir, self.authority, ["exec9.example.org"], ["198.18.0.9"], "wrong"))
        for call in (self.async_call, self.blocking_call):
            with self.assertRaises(Unreachable) as caught:
                yield call(address)
            self.assertIn("host name mismatch: certificate is for exec9.example.org, 198.18.0.9, "
                          "connected to 127.0.0.1", str(caught.exception))

    @defer.inlineCallbacks
    def test_plain_http_to_the_tls_port_is_refused_and_the_daemon_serves_on(self):
        """Plain HTTP gets a 400 saying to use https://; TLS clients still get answers after it."""
        address = self.good_server()
        plain = attrs.evolve(address, tls=False)
        for call in (self.async_call, self.blocking_call):
            with self.assertRaises(RemoteError) as caught:
                yield call(plain)
            self.assertEqual((caught.exception.status, caught.exception.code), (400, "tls_required"))
            self.assertIn("plain HTTP sent to a TLS port", caught.exception.message)
            self.assertIn(f"https://127.0.0.1:{address.port}/", caught.exception.message)
        raw = yield threads.deferToThread(_raw_exchange, address.port, b"\x00\x01garbage\r\n\r\n")
        self.assertTrue(raw.startswith(b"HTTP/1.1 400 "))
        answer = yield self.async_call(address)
        self.assertEqual(answer["word"], "hi")

    @defer.inlineCallbacks
    def test_tls_to_a_plain_port_is_refused_naming_it(self):
        """A client told the daemon speaks TLS when it does not says so, not a handshake riddle."""
        address = attrs.evolve(self.serve(None), tls=True)
        for call in (self.async_call, self.blocking_call):
            with self.assertRaises(Unreachable) as caught:
                yield call(address)
            self.assertIn("TLS sent to a plain-HTTP port", str(caught.exception))

    @defer.inlineCallbacks
    def test_daemon_service_with_auth_ssl_knobs_serves_https_and_publishes_a_tls_address(self):
        """A daemon given AUTH_SSL_SERVER_* serves HTTPS and writes <ip:port?tls=1> to its address file."""
        tls = attrs.evolve(_host_files(self.dir, self.authority, ["localhost"], ["127.0.0.1"], "daemon"),
                           ca_file=os.path.join(self.dir, "ca", "pool_ca.crt"))
        settings = daemon_settings(self.dir, "schedd", "Scheduler", tls=tls)
        daemon = DaemonService(settings, reactor, key=KEY)
        daemon.startService()
        self.addCleanup(daemon.stopService)
        with open(settings.address_file, encoding="utf-8") as handle:
            written = handle.read().strip()
        self.assertRegex(written, r"^<127\.0\.0\.1:\d+\?tls=1>$")
        answer = yield threads.deferToThread(BlockingClient(written, trust=self.trust, timeout=10).call, PING)
        self.assertEqual(answer["address"], str(parse_address(written)))


def _raw_exchange(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(4096):
            chunks.append(chunk)
    return b"".join(chunks)
