"""Tests for daemoncore.network_interface: which address NETWORK_INTERFACE picks."""

import pytest

from daemoncore.network_interface import (
    InterfaceAddress,
    NoInterfaceAddress,
    choose_address,
    resolve_network_interface,
)

HOST = [InterfaceAddress("lo", "127.0.0.1"), InterfaceAddress("eth0", "10.1.2.3"),
        InterfaceAddress("eth1", "198.18.0.7"), InterfaceAddress("wan0", "8.8.4.4")]


def test_star_picks_a_public_address_before_private_and_loopback():
    """``*`` ranks public above private above loopback, as HTCondor does."""
    assert choose_address("*", HOST) == "8.8.4.4"
    assert choose_address("*", HOST[:3]) == "10.1.2.3"
    assert choose_address("*", HOST[:1]) == "127.0.0.1"


def test_an_interface_name_or_a_pattern_narrows_the_choice():
    """``eth1`` and ``198.18.*`` each pick that interface's address."""
    assert choose_address("eth1", HOST) == "198.18.0.7"
    assert choose_address("198.18.*", HOST) == "198.18.0.7"


def test_a_list_is_read_in_order_of_preference():
    """The first entry of a comma list that matches anything wins."""
    assert choose_address("ib0, eth0, *", HOST) == "10.1.2.3"


def test_an_ip_address_is_taken_as_written():
    """An explicit address needs no interface of this host (binding will say if it is wrong)."""
    assert choose_address("192.0.2.9", HOST) == "192.0.2.9"
    assert resolve_network_interface("198.18.0.2") == "198.18.0.2"


def test_unset_means_loopback():
    """With NETWORK_INTERFACE unset a daemon stays on 127.0.0.1, as the personal pool does."""
    assert resolve_network_interface(None) == "127.0.0.1"
    assert resolve_network_interface("  ") == "127.0.0.1"


def test_a_setting_matching_nothing_names_what_there_is():
    """The error lists this host's addresses, so a person can pick one."""
    with pytest.raises(NoInterfaceAddress) as err:
        choose_address("ib0", HOST)
    assert "NETWORK_INTERFACE = ib0" in str(err.value) and "eth0 10.1.2.3" in str(err.value)


def test_this_hosts_primary_address_is_not_loopback_when_it_has_another():
    """``*`` on this machine picks a non-loopback address if the machine has one."""
    from daemoncore.network_interface import host_addresses

    addresses = host_addresses()
    chosen = resolve_network_interface("*")
    assert chosen in {a.ip for a in addresses}
    if any(not a.ip.startswith("127.") for a in addresses):
        assert not chosen.startswith("127.")
