"""What clients and daemons check without a network: why a peer certificate is
refused, which TLS knobs a daemon reads, what a daemon refuses to start with, and
what a TLS port answers a plain-HTTP client (and a plain port a TLS client)."""

from __future__ import annotations

import datetime
import os

import pytest
from twisted.internet.protocol import Factory, Protocol
from twisted.internet.testing import StringTransport

from daemoncore.config import Config
from daemoncore.security.tls import issue_host_certificate, make_authority, parse_certificate, write_host_certificate
from daemoncore.security.tls_client import answered_in_plain_text, refusal_reason
from daemoncore.security.tls_errors import CertificateError
from daemoncore.security.tls_server import server_options
from daemoncore.security.tls_settings import TlsSettings
from daemoncore.wire.channel import BoundedChannel
from daemoncore.wire.tls_port import TlsOnlyFactory

NOW = datetime.datetime(2030, 1, 2, tzinfo=datetime.timezone.utc)
CA = make_authority("Pool A CA", now=NOW)


def _peer(names, addresses=(), authority=CA):
    return parse_certificate(issue_host_certificate(authority, names, addresses, now=NOW).certificate_pem)


def test_a_certificate_of_this_pool_for_the_host_is_trusted():
    """Signed by the CA and naming the name or address connected to: no reason to refuse."""
    peer = _peer(["cm.example.org"], ["198.18.0.1"])
    assert refusal_reason(peer, "cm.example.org", CA.certificate, NOW) is None
    assert refusal_reason(peer, "198.18.0.1", CA.certificate, NOW) is None


def test_another_cas_certificate_is_refused_naming_its_issuer():
    """The reason names the issuer and this pool's CA."""
    reason = refusal_reason(_peer(["h"], authority=make_authority("Pool B CA", now=NOW)), "h", CA.certificate, NOW)
    assert reason == "certificate not signed by this pool's CA (it was issued by CN=Pool B CA; the pool's CA is " \
                     "CN=Pool A CA)"


@pytest.mark.parametrize("host", ["exec2.example.org", "198.18.0.2"])
def test_a_certificate_for_another_host_is_refused_naming_both(host):
    """Name or address, the reason says whom the certificate is for and where we connected."""
    reason = refusal_reason(_peer(["exec1.example.org"], ["198.18.0.1"]), host, CA.certificate, NOW)
    assert reason == f"host name mismatch: certificate is for exec1.example.org, 198.18.0.1, connected to {host}"


def test_an_expired_certificate_is_refused_with_its_date():
    """Past its end the certificate is refused, with the date."""
    later = NOW + datetime.timedelta(days=3000)
    assert "expired on" in refusal_reason(_peer(["h"]), "h", CA.certificate, later)


def test_plain_answers_are_recognised_in_openssl_errors():
    """OpenSSL's 'wrong version number' means the server answered in plain text."""
    assert answered_in_plain_text("[('SSL routines', '', 'wrong version number')]")
    assert not answered_in_plain_text("certificate verify failed")


def test_tls_settings_from_htcondor_knobs():
    """AUTH_SSL_SERVER_* are read; the client CA defaults to the server's."""
    settings = TlsSettings.from_config(Config.from_text(
        "AUTH_SSL_SERVER_CERTFILE = /c\nAUTH_SSL_SERVER_KEYFILE = /k\nAUTH_SSL_SERVER_CAFILE = /ca\n"))
    assert settings == TlsSettings("/c", "/k", "/ca", "/ca")
    assert settings.serves_tls
    assert not TlsSettings.from_config(Config.from_text("")).serves_tls


def test_tls_settings_refuse_a_certificate_without_its_key():
    """A certificate with no key is named as the mistake."""
    with pytest.raises(CertificateError, match="AUTH_SSL_SERVER_KEYFILE is not"):
        TlsSettings.from_config(Config.from_text("AUTH_SSL_SERVER_CERTFILE = /c\n"))


def _files(tmp_path, authority=CA, stem="host"):
    cert, key = str(tmp_path / f"{stem}.crt"), str(tmp_path / f"{stem}.key")
    write_host_certificate(issue_host_certificate(authority, ["localhost"], ["127.0.0.1"]), cert, key)
    ca = tmp_path / "ca.crt"
    ca.write_bytes(CA.certificate_pem())
    return TlsSettings(cert, key, str(ca), str(ca))


def test_server_options_serve_a_certificate_of_the_pool(tmp_path):
    """Good files give TLS options with a usable context."""
    assert server_options(_files(tmp_path)).getContext() is not None


def test_server_refuses_to_start_with_another_cas_certificate(tmp_path):
    """A certificate the configured CA did not sign stops the daemon at start, saying so."""
    with pytest.raises(CertificateError, match="is not signed by the CA in AUTH_SSL_SERVER_CAFILE"):
        server_options(_files(tmp_path, make_authority(now=NOW)))


def test_server_refuses_a_key_of_another_certificate(tmp_path):
    """A key that is not the certificate's is named."""
    settings = _files(tmp_path)
    other = _files(tmp_path, stem="other")
    with pytest.raises(CertificateError, match="is not the key of"):
        server_options(TlsSettings(settings.cert_file, other.key_file))


def test_server_refuses_a_key_others_can_read(tmp_path):
    """A server key with mode 0644 is refused with the chmod that fixes it."""
    settings = _files(tmp_path)
    os.chmod(settings.key_file, 0o644)
    with pytest.raises(CertificateError, match="chmod 600"):
        server_options(settings)


def test_tls_port_answers_plain_http_with_a_400_naming_https(tmp_path):
    """Plain HTTP on a TLS port gets a plain 400 with the https:// address, then the connection closes."""
    factory = TlsOnlyFactory(server_options(_files(tmp_path)), False, Factory.forProtocol(Protocol))
    protocol = factory.buildProtocol(None)
    transport = StringTransport()
    protocol.makeConnection(transport)
    protocol.dataReceived(b"GET /v1/ping HTTP/1.1\r\nHost: x\r\n\r\n")
    answer = transport.value()
    assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert b"plain HTTP sent to a TLS port" in answer and b"https://10.0.0.1:12345/" in answer
    assert transport.disconnecting


def test_plain_port_answers_a_tls_handshake_with_a_400():
    """A TLS ClientHello on a plain port is answered at once, not left waiting for a line end."""
    channel = BoundedChannel()
    transport = StringTransport()
    channel.makeConnection(transport)
    channel.dataReceived(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")
    assert transport.value().startswith(b"HTTP/1.1 400 ")
    assert b"TLS sent to a plain-HTTP port" in transport.value()
    channel.connectionLost(None)
