"""Tests for the collector's routes with per-host identities: refusals are 403s that change nothing."""

from daemoncore.security import issue_token
from tests.collector.conftest import KEY

HOST_B = issue_token(KEY, "startd@hostB", ["DAEMON"], issuer="pool", now=0)
SCHEDD_B = issue_token(KEY, "schedd@hostB", ["DAEMON"], issuer="pool", now=0)


def names(call, ad_type="Machine"):
    return sorted(ad["Name"] for ad in call(f"/v1/ads/{ad_type}/query", {}, token="READ").lines())


def test_startd_of_host_b_advertises_its_slots(call):
    """startd@hostB's own slots are stored."""
    response = call("/v1/ads/Machine", {"ads": [{"Name": "slot1@hostB", "Machine": "hostB"}]}, token=HOST_B)
    assert response.status == 200
    assert names(call) == ["slot1@hostB"]


def test_startd_of_host_b_cannot_advertise_for_host_a(call):
    """One ad for hostA among hostB's makes the whole update a 403 naming both, and nothing is stored."""
    ads = [{"Name": "slot1@hostB", "Machine": "hostB"}, {"Name": "slot1@hostA", "Machine": "hostA"}]
    response = call("/v1/ads/Machine", {"ads": ads}, token=HOST_B)
    assert response.status == 403
    message = response.json()["message"]
    assert "startd@hostB" in message and "'slot1@hostA'" in message and "$.ads[1]" in message
    assert names(call) == []


def test_private_ads_are_checked_too(call):
    """A private ad (the ClaimId) for another host is refused as well."""
    ads = [{"Name": "slot1@hostA", "Machine": "hostA", "Capability": "x"}]
    assert call("/v1/ads/Machine", {"ads": ads, "private": True}, token=HOST_B).status == 403


def test_startd_of_host_b_cannot_withdraw_host_a_slots(call):
    """Invalidating another host's slot by Name is a 403 and the slot stays; by constraint, too."""
    call("/v1/ads/Machine", {"ads": [{"Name": "slot1@hostA", "Machine": "hostA"}]})
    refused = call("/v1/ads/Machine/invalidate", {"names": ["slot1@hostA"]}, token=HOST_B)
    assert refused.status == 403 and "'slot1@hostA'" in refused.json()["message"]
    assert call("/v1/ads/Machine/invalidate", {"constraint": "true"}, token=HOST_B).status == 403
    assert names(call) == ["slot1@hostA"]


def test_startd_of_host_b_withdraws_its_own_slots(call):
    """Its own slot goes away when withdrawn by Name; names it never had are no error."""
    call("/v1/ads/Machine", {"ads": [{"Name": "slot1@hostB", "Machine": "hostB"}]}, token=HOST_B)
    response = call("/v1/ads/Machine/invalidate", {"names": ["slot1@hostB", "slot9@hostA"]}, token=HOST_B)
    assert (response.status, response.json()) == (200, {"invalidated": 1})


def test_schedd_of_host_b_cannot_overwrite_another_schedds_submitter(call):
    """A Submitter ad claiming another schedd's ScheddName is refused to schedd@hostB."""
    ad = {"Name": "alice@pool", "ScheddName": "hostA"}
    response = call("/v1/ads/Submitter", {"ads": [ad]}, token=SCHEDD_B)
    assert response.status == 403 and "schedd@hostB" in response.json()["message"]
    ad = {"Name": "alice@pool", "ScheddName": "hostB"}
    assert call("/v1/ads/Submitter", {"ads": [ad]}, token=SCHEDD_B).status == 200
