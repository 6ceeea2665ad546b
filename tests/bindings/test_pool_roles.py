"""Tests for `roost pool up -role`: which roles a central manager may combine."""

import pytest

from bindings.cli.pool_roles import RoleError, central_manager_config, parse_roles


def test_a_central_manager_may_also_submit_and_execute():
    """Roles are written as `use ROLE` names, in the order given, once each."""
    assert parse_roles("central-manager, execute,submit,execute") == ["CentralManager", "Execute", "Submit"]


@pytest.mark.parametrize("text, says", [("execute", "roost pool join"), ("central-manager,worker", "'worker'"),
                                        ("", "roost pool join")])
def test_roles_without_a_central_manager_or_unknown_ones_are_refused(text, says):
    """A submit or execute host joins; an unknown role is named."""
    with pytest.raises(RoleError, match=says):
        parse_roles(text)


def test_the_interface_is_set_before_the_roles_choose_one():
    """NETWORK_INTERFACE precedes `use ROLE` (which would otherwise pick `*`), and the
    central manager names itself as CONDOR_HOST."""
    text = central_manager_config(["CentralManager"], "198.18.0.2", "AUTH_SSL_SERVER_CAFILE = /x\n")
    lines = text.splitlines()
    assert lines[:3] == ["NETWORK_INTERFACE = 198.18.0.2", "use ROLE : CentralManager",
                         "CONDOR_HOST = https://198.18.0.2:9618"]
    assert lines[-1] == "AUTH_SSL_SERVER_CAFILE = /x"
