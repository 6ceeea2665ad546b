"""HTCondor's roles and addresses: what ``use ROLE : ...``, ``CONDOR_HOST``,
``NETWORK_INTERFACE`` and ``BIND_ALL_INTERFACES`` make of a daemon's settings, and
where a daemon then listens and what it advertises."""

import pytest
from twisted.internet.testing import MemoryReactorClock

from daemoncore.config import Config, ConfigError
from daemoncore.daemon import DaemonService, DaemonSettings
from daemoncore.master.service import configured_ports, supervised_daemons

KEY = b"roles-test-signing-key-0123456789abcdef"


def settings(text: str, daemon: str = "STARTD", ad_type: str = "Machine") -> DaemonSettings:
    """The settings daemon ``daemon`` reads from config ``text``."""
    return DaemonSettings.from_config(Config.from_text(text).for_subsystem(daemon), daemon, ad_type)


def test_roles_combine_into_the_daemon_list():
    """CentralManager runs collector and negotiator, Submit the schedd, Execute the startd."""
    config = Config.from_text("use ROLE : CentralManager, Submit, Execute\n")
    assert supervised_daemons(config) == ["COLLECTOR", "NEGOTIATOR", "SCHEDD", "STARTD"]
    assert supervised_daemons(Config.from_text("use ROLE : Execute\n")) == ["STARTD"]


def test_the_central_managers_collector_listens_on_9618():
    """On a central manager the collector's port is 9618; elsewhere daemons take any free port."""
    manager = Config.from_text("use ROLE : CentralManager\n")
    assert configured_ports(manager, supervised_daemons(manager)) == {"COLLECTOR": 9618}
    assert settings("use ROLE : CentralManager\n", "COLLECTOR", "Collector").port == 9618
    assert settings("use ROLE : Execute\n").port == 0
    assert configured_ports(Config.from_text("use ROLE : Personal\n"), ["COLLECTOR"]) == {}


def test_a_collector_port_set_by_hand_wins_over_the_role():
    """``COLLECTOR_PORT`` set before or after the role line is kept."""
    assert settings("COLLECTOR_PORT = 9700\nuse ROLE : CentralManager\n", "COLLECTOR", "Collector").port == 9700
    assert settings("use ROLE : CentralManager\nCOLLECTOR_PORT = 9701\n", "COLLECTOR", "Collector").port == 9701


def test_condor_host_without_a_port_means_9618():
    """``CONDOR_HOST = host`` names the collector at host:9618; a port given is kept."""
    assert settings("use ROLE : Execute\nCONDOR_HOST = 198.18.0.2\n").collector_host == "198.18.0.2:9618"
    assert settings("COLLECTOR_HOST = cm.example:9700\n").collector_host == "cm.example:9700"
    assert settings("").collector_host is None


def test_a_bad_collector_host_is_a_config_error():
    """A collector address that is not host[:port] fails before the daemon starts, naming the line."""
    with pytest.raises(ConfigError) as err:
        settings("COLLECTOR_HOST = cm.example:http\n")
    assert "COLLECTOR_HOST" in str(err.value) and "line 1" in str(err.value)


def test_network_interface_set_before_the_role_is_kept():
    """The roles make NETWORK_INTERFACE ``*`` only when it was not set before them."""
    config = Config.from_text("NETWORK_INTERFACE = 198.18.0.9\nuse ROLE : Submit\n")
    assert config.param("NETWORK_INTERFACE") == "198.18.0.9"
    assert Config.from_text("use ROLE : Submit\n").param("NETWORK_INTERFACE") == "*"


def test_the_personal_pool_stays_on_loopback():
    """``use ROLE : Personal`` and no configuration at all both give 127.0.0.1, bound there."""
    assert settings("use ROLE : Personal\n").interface == "127.0.0.1"
    assert settings("").interface == "127.0.0.1"
    assert not settings("").bind_all


def test_a_network_interface_matching_nothing_is_a_config_error():
    """An interface name this host lacks is reported with the line that set it."""
    with pytest.raises(ConfigError) as err:
        settings("NETWORK_INTERFACE = no-such-nic0\n")
    assert "no-such-nic0" in str(err.value) and "line 1" in str(err.value)


@pytest.mark.parametrize(("bind_all", "bound"), [("false", "198.18.0.4"), ("true", "0.0.0.0")])
def test_bind_all_interfaces_listens_everywhere_but_advertises_the_chosen_address(tmp_path, bind_all, bound):
    """With BIND_ALL_INTERFACES the listener is on 0.0.0.0; MyAddress and the address
    file still carry the NETWORK_INTERFACE address."""
    reactor = MemoryReactorClock()
    chosen = settings(f"LOG = {tmp_path}\nNETWORK_INTERFACE = 198.18.0.4\nBIND_ALL_INTERFACES = {bind_all}\n")
    daemon = DaemonService(chosen, reactor, key=KEY)
    daemon.startService()
    port, _factory, _backlog, interface = reactor.tcpServers[0]
    assert interface == bound
    assert daemon.own_ad()["MyAddress"].startswith("<198.18.0.4:")
    assert (tmp_path / ".startd_address").read_text().startswith("<198.18.0.4:")
    daemon.stopService()
