"""Tests for startd.slots: slot ads, claims, dynamic slots carved and returned."""

import pytest

import classad
from daemoncore.config import Config
from startd.errors import ClaimError, ClaimRefused, SlotStateError
from startd.slot_types import plan_slots
from startd.slots import SlotTable


def table_for(machine, clock, text="", **options):
    return SlotTable.from_plans(machine, plan_slots(Config.from_text(text, env={}), machine),
                                clock, **options)


def job(**attrs):
    return classad.ClassAd({"ClusterId": 1, "ProcId": 0, "Owner": "alice", **attrs})


def pslot_claim_id(table):
    return table.private_ads()[0]["ClaimId"]


def test_partitionable_slot_ad_has_htcondor_attributes(machine, clock):
    """The default slot advertises the whole machine under HTCondor's names."""
    [ad] = table_for(machine, clock).public_ads()
    assert ad["Name"] == "slot1@node1" and ad["MyType"] == "Machine"
    assert ad["SlotType"] == "Partitionable" and ad["PartitionableSlot"] is True
    assert (ad["State"], ad["Activity"]) == ("Unclaimed", "Idle")
    assert (ad["Cpus"], ad["Memory"], ad["Disk"], ad["GPUs"]) == (8, 16384, 1_000_000, 2)
    assert ad["OpSysAndVer"] == "Ubuntu22" and ad["Arch"] == "X86_64"
    assert ad["EnteredCurrentState"] == int(clock.seconds())
    assert ad["HasFileTransfer"] is True


def test_gpus_are_nested_property_ads_referenced_from_available_gpus(machine, clock):
    """Each card has a GPUs_GPU_<id> ad; AvailableGPUs refers to them, as HTCondor 23 does."""
    ad = table_for(machine, clock).public_ads()[0]
    card = machine.gpus[0]
    assert ad[card.attr_name]["Id"] == card.id
    assert ad[card.attr_name]["GlobalMemoryMb"] == 40960
    assert ad.evaluate("AvailableGPUs")[0]["Capability"] == 8.0
    assert card.attr_name in str(ad.lookup("AvailableGPUs"))


def test_slot_requirements_check_start_and_size(machine, clock):
    """A job that fits matches the slot's Requirements; one that is too big does not."""
    ad = table_for(machine, clock).public_ads()[0]
    assert job(RequestCpus=2, RequestMemory=1024).matches(ad)
    assert not job(RequestCpus=64).matches(ad)
    assert not job(RequestGPUs=3).matches(ad)


def test_card_ads_can_be_counted_by_their_properties(machine, clock):
    """countMatches over AvailableGPUs sees each card's nested ad."""
    ad = table_for(machine, clock).public_ads()[0]
    assert len(ad.evaluate("AvailableGPUs")) == 2
    assert classad.ExprTree("countMatches(Capability >= 8.0, MY.AvailableGPUs)").eval(ad) == 2
    assert classad.ExprTree("countMatches(Capability >= 9.0, MY.AvailableGPUs)").eval(ad) == 0


def test_submit_gpu_clause_counts_cards_meeting_require_gpus(machine, clock):
    """The clause condor_submit writes, countMatches(MY.RequireGPUs, TARGET.AvailableGPUs), counts cards."""
    ad = table_for(machine, clock).public_ads()[0]
    wanted = job(RequireGPUs=classad.ExprTree("Capability >= 8.0"), RequestGPUs=1)
    wanted["Count"] = classad.ExprTree("countMatches(MY.RequireGPUs, TARGET.AvailableGPUs)")
    assert wanted.evaluate("Count", ad) == 2


def test_claim_carves_a_dynamic_slot_of_the_requested_size(machine, clock):
    """Claiming the partitionable slot makes slot1_1 with the job's size and a new ClaimId."""
    table = table_for(machine, clock)
    grant = table.request_claim(pslot_claim_id(table), job(RequestCpus=2, RequestMemory=2048,
                                                           RequestDisk=1000), "alice@x")
    assert grant.slot_name == "slot1_1@node1"
    assert grant.claim_id != pslot_claim_id(table)
    ads = {ad["Name"]: ad for ad in table.public_ads()}
    dslot, pslot = ads["slot1_1@node1"], ads["slot1@node1"]
    assert (dslot["SlotType"], dslot["State"], dslot["Cpus"], dslot["Memory"]) == \
        ("Dynamic", "Claimed", 2, 2048)
    assert dslot["RemoteUser"] == "alice@x"
    assert (pslot["Cpus"], pslot["Memory"], pslot["NumDynamicSlots"]) == (6, 16384 - 2048, 1)


def test_release_returns_the_dynamic_slot_to_the_partitionable_one(machine, clock):
    """When the claim ends the dynamic slot goes and its CPUs and GPUs come back."""
    table = table_for(machine, clock)
    grant = table.request_claim(pslot_claim_id(table), job(RequestCpus=3, RequestGPUs=1))
    assert table.public_ads()[0]["GPUs"] == 1
    table.release(grant.claim_id)
    [ad] = table.public_ads()
    assert (ad["Cpus"], ad["GPUs"], ad["NumDynamicSlots"]) == (8, 2, 0)
    with pytest.raises(ClaimError, match="no slot holds this ClaimId"):
        table.activate(grant.claim_id, job())


def test_whole_gpu_claim_assigns_cards(machine, clock):
    """RequestGPUs = 2 gives the dynamic slot both cards, named in AssignedGPUs."""
    table = table_for(machine, clock)
    grant = table.request_claim(pslot_claim_id(table), job(RequestGPUs=2))
    dslot = table.public_ad(table.slots[grant.slot_name])
    assert dslot["AssignedGPUs"] == ",".join(g.id for g in machine.gpus)
    assert dslot["GPUs"] == 2
    with pytest.raises(ClaimRefused, match="cannot give 1 whole card"):
        table.request_claim(pslot_claim_id(table), job(RequestGPUs=1))


def test_fractional_gpu_claims_share_one_card(machine, clock):
    """Two 16 GiB shares fit one 40 GiB card under binpack; the card is then not whole."""
    table = table_for(machine, clock)
    share = dict(RequestGPUs=1, RequestGPUMemory=16384, RequestGPUCores=30,
                 GPUPlacementPolicy="binpack")
    first = table.request_claim(pslot_claim_id(table), job(**share))
    second = table.request_claim(pslot_claim_id(table), job(**share))
    a = table.slots[first.slot_name].resources.gpus[0]
    b = table.slots[second.slot_name].resources.gpus[0]
    assert a.id == b.id and (a.memory_mib, a.cores, a.whole) == (16384, 30, False)
    pslot = table.public_ad(table.slots["slot1@node1"])
    assert pslot["GPUs"] == 1
    room = pslot[machine.gpus[0].attr_name]
    assert (room["FreeMemoryMb"], room["FreeCores"], room["Shares"]) == (40960 - 2 * 16384, 40, 2)
    dslot = table.public_ad(table.slots[first.slot_name])
    assert (dslot["AssignedGPUMemoryMb"], dslot["AssignedGPUCores"]) == (16384, 30)


def test_require_gpus_pins_the_claim_to_named_cards(machine, clock):
    """RequireGPUs naming one card's Id gives exactly that card."""
    table = table_for(machine, clock)
    wanted = machine.gpus[1].id
    grant = table.request_claim(pslot_claim_id(table), job(
        RequestGPUs=1, RequireGPUs=classad.ExprTree(f'Id == "{wanted}"')))
    assert table.slots[grant.slot_name].resources.gpu_ids == (wanted,)


def test_start_false_refuses_the_claim(machine, clock):
    """A slot whose START rejects the job refuses the claim, naming START."""
    table = table_for(machine, clock, start='TARGET.Owner == "bob"')
    with pytest.raises(ClaimRefused, match="START"):
        table.request_claim(pslot_claim_id(table), job())


def test_too_big_a_request_is_refused_with_what_is_free(machine, clock):
    """Asking for more than is free says what is free."""
    table = table_for(machine, clock)
    with pytest.raises(ClaimRefused, match="8 CPUs"):
        table.request_claim(pslot_claim_id(table), job(RequestCpus=9))


def test_each_refused_claim_is_counted_in_the_slots_ad(machine, clock):
    """ClaimRequestsRefused tells the negotiator the match it made was refused."""
    table = table_for(machine, clock)
    name = next(iter(table.slots))
    assert table.public_ad(table.slots[name])["ClaimRequestsRefused"] == 0
    for _ in range(2):
        with pytest.raises(ClaimRefused):
            table.request_claim(pslot_claim_id(table), job(RequestCpus=9))
    assert table.public_ad(table.slots[name])["ClaimRequestsRefused"] == 2
    table.request_claim(pslot_claim_id(table), job())
    assert table.public_ad(table.slots[name])["ClaimRequestsRefused"] == 2


def test_non_numeric_request_is_refused():
    """A RequestMemory that is not a number is a clear refusal."""
    from twisted.internet.task import Clock

    from tests.startd.conftest import make_machine
    table = table_for(make_machine(), Clock())
    with pytest.raises(ClaimRefused, match="RequestMemory"):
        table.request_claim(pslot_claim_id(table), job(RequestMemory="lots"))


def test_unknown_claim_id_is_refused_without_echoing_it(machine, clock):
    """A wrong ClaimId is refused, and the error does not repeat the secret."""
    table = table_for(machine, clock)
    with pytest.raises(ClaimError) as caught:
        table.request_claim("forged-claim-id", job())
    assert "forged" not in str(caught.value)


def test_claim_ids_do_not_show_in_repr(machine, clock):
    """ClaimIds are secrets: a slot's or grant's repr leaves them out."""
    table = table_for(machine, clock)
    grant = table.request_claim(pslot_claim_id(table), job())
    assert grant.claim_id not in repr(grant)
    assert grant.claim_id not in repr(table.slots[grant.slot_name])


def test_job_runs_through_the_claim_and_the_state_times_follow_the_clock(machine, clock):
    """activate and job_exited move Busy and Idle, stamping the clock's time."""
    table = table_for(machine, clock)
    grant = table.request_claim(pslot_claim_id(table), job())
    clock.advance(5)
    table.activate(grant.claim_id, job())
    ad = table.public_ad(table.slots[grant.slot_name])
    assert (ad["Activity"], ad["EnteredCurrentActivity"], ad["JobId"]) == \
        ("Busy", int(clock.seconds()), "1.0")
    with pytest.raises(SlotStateError, match="cannot release in Claimed/Busy"):
        table.release(grant.claim_id)
    table.job_exited(grant.claim_id)
    assert table.slots[grant.slot_name].status.describe() == "Claimed/Idle"


def test_static_slot_claim_and_release_rotates_its_claim_id(machine, clock):
    """A static slot is claimed in place; releasing it issues a new ClaimId."""
    table = table_for(machine, clock, "NUM_SLOTS = 2")
    first = table.private_ads()[0]["ClaimId"]
    grant = table.request_claim(first, job())
    assert grant.slot_name == "slot1@node1" and grant.claim_id == first
    table.release(first)
    assert table.private_ads()[0]["ClaimId"] != first
    assert table.public_ads()[0]["State"] == "Unclaimed"


def test_private_ads_carry_one_claim_id_per_slot(machine, clock):
    """Each slot's private ad has Name and ClaimId and nothing about the job."""
    table = table_for(machine, clock, "NUM_SLOTS = 2")
    ads = table.private_ads()
    assert [a["Name"] for a in ads] == ["slot1@node1", "slot2@node1"]
    assert len({a["ClaimId"] for a in ads}) == 2
