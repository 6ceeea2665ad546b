"""Tests for daemoncore.wire.address."""

import pytest

from daemoncore.wire.address import Address, parse_address


@pytest.mark.parametrize("text", ["127.0.0.1:9618", "http://127.0.0.1:9618/", "<127.0.0.1:9618?sock=x>"])
def test_address_forms(text):
    """host:port, a URL and HTCondor's sinful string all name the same address."""
    assert parse_address(text) == Address("127.0.0.1", 9618)


@pytest.mark.parametrize("text", ["localhost", ":9618", "host:0", "host:http"])
def test_bad_address_says_what_is_expected(text):
    """An address without a usable port is refused with the expected form."""
    with pytest.raises(ValueError, match="HOST:PORT"):
        parse_address(text)


@pytest.mark.parametrize("text", ["<198.18.0.2:9618?tls=1>", "https://198.18.0.2:9618", "198.18.0.2:9618?tls=1",
                                  "<198.18.0.2:9618?alias=cm.example&tls=true>", "HTTPS://198.18.0.2:9618/"])
def test_tls_address_forms(text):
    """A sinful string with tls=1 and an https:// URL both say the daemon speaks TLS."""
    assert parse_address(text) == Address("198.18.0.2", 9618, tls=True)


def test_tls_address_round_trips_through_its_text_forms():
    """str() and sinful() keep the TLS mark, so an address read back is the same address."""
    address = Address("cm.example.org", 9618, tls=True)
    assert str(address) == "cm.example.org:9618?tls=1"
    assert address.sinful() == "<cm.example.org:9618?tls=1>"
    assert parse_address(str(address)) == address
    assert parse_address(address.sinful()) == address
    assert address.url("/v1/ping") == "https://cm.example.org:9618/v1/ping"


def test_plain_address_keeps_htcondors_form():
    """Without TLS nothing changes: <host:port> and http:// as before."""
    address = Address("127.0.0.1", 9618)
    assert address.sinful() == "<127.0.0.1:9618>"
    assert address.url("/x") == "http://127.0.0.1:9618/x"
    assert parse_address("<127.0.0.1:9618?tls=0>") == address


def test_ipv6_url_brackets_the_host():
    """An IPv6 host is bracketed in a URL."""
    assert Address("::1", 9618, tls=True).url("/") == "https://[::1]:9618/"


def test_unknown_scheme_is_refused():
    """ftp://host:port is no daemon address."""
    with pytest.raises(ValueError, match="scheme 'ftp'"):
        parse_address("ftp://host:21")
