"""Tests for collector.ownership: a host-bound identity changes only its host's ads."""

import pytest

from collector.errors import AdNotOwned
from collector.ownership import check_ads_owned, check_constraint_allowed
from daemoncore.security import issue_token, verify_token

KEY = b"ownership-test-signing-key-0123456789ab"


def identity(name):
    return verify_token(KEY, issue_token(KEY, name, ["DAEMON"], issuer="pool", now=0), now=1)


def test_a_startd_advertises_its_own_hosts_slots():
    """startd@hostB may send Machine ads whose Machine and Name are on hostB (any case)."""
    ads = [("$.ads[0]", {"Name": "slot1@hostB", "Machine": "hostB"}),
           ("$.ads[1]", {"name": "slot1_1@HOSTB", "machine": "hostb"})]
    check_ads_owned(identity("startd@hostB"), "Machine", ads)


@pytest.mark.parametrize("ad, attribute", [
    ({"Name": "slot1@hostA", "Machine": "hostB"}, "Name"),
    ({"Name": "slot1@hostB", "Machine": "hostA"}, "Machine"),
    ({"Name": "slot1@hostB"}, "Machine"),
])
def test_a_startd_may_not_advertise_another_hosts_slot(ad, attribute):
    """An ad whose Machine or Name's host is another host is refused, naming identity, ad and attribute."""
    with pytest.raises(AdNotOwned) as refused:
        check_ads_owned(identity("startd@hostB"), "Machine", [("$.ads[3]", ad)])
    message = str(refused.value)
    assert "startd@hostB" in message and "$.ads[3]" in message and attribute in message


def test_a_startd_may_not_advertise_other_types():
    """A startd identity bound to a host cannot send Scheduler ads at all."""
    with pytest.raises(AdNotOwned, match="only Machine and DaemonMaster ads of host hostB, not Scheduler"):
        check_ads_owned(identity("startd@hostB"), "Scheduler", [("$.ads[0]", {"Name": "hostB"})])


@pytest.mark.parametrize("daemon", ["startd", "schedd"])
def test_a_host_bound_daemon_sends_its_own_hosts_master_ad_only(daemon):
    """The master of a joined host sends its DaemonMaster ad with the host's token; another host's is refused."""
    check_ads_owned(identity(f"{daemon}@hostB"), "DaemonMaster", [("$.ads[0]", {"Name": "master@hostB",
                                                                               "Machine": "hostB"})])
    with pytest.raises(AdNotOwned, match="hostC"):
        check_ads_owned(identity(f"{daemon}@hostB"), "DaemonMaster", [("$.ads[0]", {"Name": "master@hostC",
                                                                                   "Machine": "hostC"})])


def test_a_schedd_advertises_its_scheduler_and_submitters():
    """schedd@hostB sends its Scheduler ad (Name hostB) and Submitter ads whose ScheddName is hostB."""
    schedd = identity("schedd@hostB")
    check_ads_owned(schedd, "Scheduler", [("$.ads[0]", {"Name": "hostB", "Machine": "hostB"})])
    check_ads_owned(schedd, "Submitter", [("$.ads[0]", {"Name": "alice@pool", "ScheddName": "hostB"})])


def test_a_schedd_may_not_advertise_another_schedds_submitters_or_slots():
    """Submitter ads of another schedd, and Machine ads, are refused to schedd@hostB."""
    schedd = identity("schedd@hostB")
    with pytest.raises(AdNotOwned, match="ScheddName 'hostA'"):
        check_ads_owned(schedd, "Submitter", [("$.ads[0]", {"Name": "alice@pool", "ScheddName": "hostA"})])
    with pytest.raises(AdNotOwned, match="not Machine ads"):
        check_ads_owned(schedd, "Machine", [("$.ads[0]", {"Name": "slot1@hostB", "Machine": "hostB"})])


def test_pool_wide_and_other_identities_keep_what_they_had():
    """startd@pool (the pool key's own daemons), the master and users are not restricted here."""
    ad = [("$.ads[0]", {"Name": "slot1@hostA", "Machine": "hostA"})]
    for name in ("startd@pool", "master@hostB", "alice@pool"):
        check_ads_owned(identity(name), "Machine", ad)
    check_ads_owned(None, "Machine", ad)


def test_a_host_bound_identity_may_not_invalidate_by_constraint():
    """Invalidation by constraint could reach other hosts' ads: refused to bound identities only."""
    with pytest.raises(AdNotOwned, match="by Name"):
        check_constraint_allowed(identity("startd@hostB"))
    check_constraint_allowed(identity("startd@pool"))
