"""Tests for startd.claim_ads: what a claimed slot says about its claim's job (issue 14 §1)."""

import classad
from daemoncore.config import Config
from startd.claim_ads import claim_attributes, retirement_time
from startd.slot_types import plan_slots
from startd.slots import SlotTable


def table_for(machine, clock, text="", **options):
    return SlotTable.from_plans(machine, plan_slots(Config.from_text(text, env={}), machine),
                                clock, **options)


def job(**attrs):
    return classad.ClassAd({"ClusterId": 1, "ProcId": 0, "Owner": "alice", "User": "alice@pool",
                            "RequestCpus": 1, "RequestMemory": 100, **attrs})


def test_a_claimed_slot_names_the_group_and_limits_of_its_job_before_it_runs(machine, clock):
    """From the claim on (not only once the job runs) the dynamic slot says AccountingGroup with
    the user's domain, RemoteGroup, ConcurrencyLimits lower-cased, JobPrio and CurrentRank."""
    table = table_for(machine, clock, rank="TARGET.JobPrio * 2")
    claim_id = table.private_ads()[0]["ClaimId"]
    ad = job(AccountingGroup="group_a.alice", AcctGroup="group_a", ConcurrencyLimits="License:2", JobPrio=5)
    grant = table.request_claim(claim_id, ad, remote_user="alice@pool")
    slot_ad = table.public_ad(table.slots[grant.slot_name])
    assert slot_ad["AccountingGroup"] == "group_a.alice@pool"
    assert slot_ad["RemoteGroup"] == slot_ad["RemoteNegotiatingGroup"] == "group_a"
    assert slot_ad["ConcurrencyLimits"] == "license:2"
    assert (slot_ad["JobPrio"], slot_ad["CurrentRank"], slot_ad["MaxJobRetirementTime"]) == (5, 10.0, 0)


def test_a_job_without_group_or_limits_says_none(machine, clock):
    """No AccountingGroup nor ConcurrencyLimits on the slot; RemoteGroup is <none>, CurrentRank 0.0."""
    table = table_for(machine, clock, "NUM_SLOTS = 2")
    claim_id = table.private_ads()[0]["ClaimId"]
    table.request_claim(claim_id, job(), remote_user="alice@pool")
    slot_ad = table.public_ads()[0]
    assert "AccountingGroup" not in slot_ad and "ConcurrencyLimits" not in slot_ad
    assert (slot_ad["RemoteGroup"], slot_ad["CurrentRank"], slot_ad["JobPrio"]) == ("<none>", 0.0, 0)


def test_the_attributes_go_when_the_claim_ends(machine, clock):
    """A released static slot no longer carries its old job's limits or group."""
    table = table_for(machine, clock, "NUM_SLOTS = 2")
    claim_id = table.private_ads()[0]["ClaimId"]
    table.request_claim(claim_id, job(ConcurrencyLimits="db", AccountingGroup="g.alice"), remote_user="alice@pool")
    table.release(claim_id)
    slot_ad = table.public_ads()[0]
    assert "ConcurrencyLimits" not in slot_ad and "RemoteGroup" not in slot_ad


def test_a_limits_expression_becomes_the_string_it_gives_on_this_slot(machine, clock):
    """ConcurrencyLimits = strcat("lic_", TARGET.Arch) is advertised as lic_x86_64."""
    table = table_for(machine, clock, "NUM_SLOTS = 2")
    claim_id = table.private_ads()[0]["ClaimId"]
    limits = classad.ExprTree('strcat("lic_", TARGET.Arch)')
    table.request_claim(claim_id, job(ConcurrencyLimits=limits), remote_user="alice@pool")
    assert table.public_ads()[0]["ConcurrencyLimits"] == "lic_x86_64"


def test_the_partitionable_slot_lists_its_childrens_claims(machine, clock):
    """ChildAccountingGroup, ChildCurrentRank, ChildJobStart and ChildName follow ChildRemoteUser's order."""
    table = table_for(machine, clock)
    claim_id = table.private_ads()[0]["ClaimId"]
    first = table.request_claim(claim_id, job(AccountingGroup="g.alice"), remote_user="alice@pool")
    clock.advance(7)
    second = table.request_claim(claim_id, job(Owner="bob", User="bob@pool"), remote_user="bob@pool")
    table.activate(second.claim_id, job(Owner="bob", User="bob@pool"))
    [parent] = [a for a in table.public_ads() if a["SlotType"] == "Partitionable"]
    assert parent["ChildRemoteUser"] == ["alice@pool", "bob@pool"]
    assert parent["ChildName"] == [first.slot_name, second.slot_name]
    assert parent["ChildAccountingGroup"] == ["g.alice@pool", ""]
    assert parent["ChildCurrentRank"] == [0.0, 0.0]
    assert parent["ChildJobStart"] == [0, int(clock.seconds())]


def test_retirement_is_the_smaller_of_the_startds_and_the_jobs():
    """MAXJOBRETIREMENTTIME = 600 and a job's 60 give 60; the job cannot raise the startd's 0."""
    slot = classad.ClassAd({"Name": "slot1@h"})
    assert retirement_time(job(MaxJobRetirementTime=60), slot, "600") == 60
    assert retirement_time(job(), slot, "TARGET.RequestCpus * 300") == 300
    assert retirement_time(job(MaxJobRetirementTime=60), slot, "0") == 0
    assert retirement_time(job(), slot, "not an expression (") == 0


def test_a_gang_piece_names_its_gang():
    """A job with a GangId puts it on the slot."""
    found = claim_attributes(job(GangId="schedd#7"), classad.ClassAd({"Name": "slot1@h"}), "alice@pool")
    assert found["GangId"] == "schedd#7"
