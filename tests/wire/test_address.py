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
