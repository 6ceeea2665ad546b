"""Tests for the startd's GPU claims (startd.gpu_claims and the slot table): cards carved with
gpushare's model, given back on release, advertised per card, and refusals that say why."""

import pytest

import classad
from daemoncore.config import Config, ConfigError
from gpushare.errors import GpuRequestError
from gpushare.slot_cards import cards_from_slot_ad, grants_from_slot_ad
from startd.gpu_claims import GpuClaimRefused, placement_options
from startd.slot_types import plan_slots
from startd.slots import SlotTable
from tests.startd.conftest import make_machine


def table_for(clock, gpus="2xA100:40G", knobs=""):
    machine = make_machine(gpus=gpus)
    config = Config.from_text(knobs, env={})
    return SlotTable.from_plans(machine, plan_slots(config, machine), clock, **placement_options(config))


def job(**attrs):
    return classad.ClassAd({"ClusterId": 1, "ProcId": 0, "Owner": "alice", **attrs})


def claim(table, **attrs):
    """Claim the partitionable slot for a job; the dynamic slot it made."""
    grant = table.request_claim(table.private_ads()[0]["ClaimId"], job(**attrs))
    return table.slots[grant.slot_name]


def indexes(slot):
    return [g.index for g in slot.resources.gpus]


def pslot_ad(table):
    return table.public_ad(table.slots["slot1@node1"])


def test_four_10000_mib_shares_fill_one_40_gb_card_and_a_fifth_waits_for_one_to_end(clock):
    """One 40960-MiB card holds four 10000-MiB shares; the fifth is refused until one is released."""
    table = table_for(clock, "1xA100:40G")
    held = [claim(table, RequestGPUMemory=10000) for _ in range(4)]
    assert all(indexes(s) == [0] for s in held)
    with pytest.raises(GpuClaimRefused, match="0 of 1 cards could take a share; refused: 1 for memory"):
        claim(table, RequestGPUMemory=10000)
    table.release(held[0].claim_id)
    assert indexes(claim(table, RequestGPUMemory=10000)) == [0]


def test_gpu_split_count_caps_the_shares_on_a_card(clock):
    """GPU_SPLIT_COUNT = 3: a fourth share never lands on the card, though memory is left."""
    table = table_for(clock, "1xA100:40G", "GPU_SPLIT_COUNT = 3")
    for _ in range(3):
        claim(table, RequestGPUMemory=1000)
    with pytest.raises(GpuClaimRefused, match="split count") as refused:
        claim(table, RequestGPUMemory=1000)
    assert "3 of 3 shares" in refused.value.card_views[0]
    card = pslot_ad(table)[make_machine(gpus="1xA100:40G").gpus[0].attr_name]
    assert (card["Shares"], card["SplitCount"], card["FreeMemoryMb"]) == (3, 3, 40960 - 3000)
    assert pslot_ad(table)["AvailableGPUs"] == []


def test_startd_policy_is_the_default_and_the_jobs_policy_wins(clock):
    """GPU_PLACEMENT_POLICY = binpack packs shares on the fuller card; a job's spread takes the emptier."""
    table = table_for(clock, knobs="GPU_PLACEMENT_POLICY = binpack")
    assert indexes(claim(table, RequestGPUMemory=1000)) == [0]
    assert indexes(claim(table, RequestGPUMemory=1000)) == [0]
    assert indexes(claim(table, RequestGPUMemory=1000, GPUPlacementPolicy="spread")) == [1]
    spread = table_for(clock)
    assert [indexes(claim(spread, RequestGPUMemory=1000)) for _ in range(3)] == [[0], [1], [0]]


def test_release_gives_a_share_back_and_the_card_is_untouched_again(clock):
    """After its only share is released a card counts in GPUs again, with all its memory free."""
    table = table_for(clock)
    held = claim(table, RequestGPUMemory=5000, RequestGPUCores=30)
    assert pslot_ad(table)["GPUs"] == 1
    table.release(held.claim_id)
    ad = pslot_ad(table)
    assert ad["GPUs"] == 2
    assert [(c.memory_used, c.cores_used, c.tasks) for c in cards_from_slot_ad(ad)] == [(0, 0, 0), (0, 0, 0)]


def test_a_whole_card_job_takes_only_an_untouched_card(clock):
    """A whole-card request skips a shared card; with both cards touched it is refused for exclusive."""
    table = table_for(clock)
    claim(table, RequestGPUMemory=1000, GPUPlacementPolicy="binpack")
    whole = claim(table, RequestGPUs=1)
    assert indexes(whole) == [1] and whole.resources.gpus[0].whole
    with pytest.raises(GpuClaimRefused, match="2 for exclusive"):
        claim(table, RequestGPUs=1)


def test_a_100_percent_cores_share_is_exclusive(clock):
    """RequestGPUCores = 100 takes an untouched card and nothing else joins it."""
    table = table_for(clock, "1xA100:40G")
    claim(table, RequestGPUMemory=1000, RequestGPUCores=100)
    assert pslot_ad(table)["AvailableGPUs"] == []
    with pytest.raises(GpuClaimRefused, match="exclusive"):
        claim(table, RequestGPUMemory=1000, RequestGPUCores=10)


def test_memory_percent_is_a_share_of_the_cards_memory(clock):
    """RequestGPUMemoryPercent = 25 gives a quarter of a 40960-MiB card; a fifth quarter does not fit."""
    table = table_for(clock, "1xA100:40G")
    for _ in range(4):
        assert claim(table, RequestGPUMemoryPercent=25).resources.gpus[0].memory_mib == 10240
    with pytest.raises(GpuClaimRefused, match="25% of the memory"):
        claim(table, RequestGPUMemoryPercent=25)


def test_use_and_avoid_ids_and_types_choose_the_cards(clock):
    """RequestGPUIds / AvoidGPUIds by short id or index, RequestGPUTypes / AvoidGPUTypes by model."""
    table = table_for(clock)
    second = table.machine.gpus[1]
    assert indexes(claim(table, RequestGPUMemory=100, RequestGPUIds=second.id)) == [1]
    assert indexes(claim(table, RequestGPUMemory=100, AvoidGPUIds="0", GPUPlacementPolicy="binpack")) == [1]
    assert indexes(claim(table, RequestGPUMemory=100, RequestGPUTypes="a100")) == [0]
    with pytest.raises(GpuClaimRefused, match="2 for type"):
        claim(table, RequestGPUMemory=100, AvoidGPUTypes="A100")


def test_numa_bind_refuses_cards_on_two_nodes(clock):
    """Two cards on two NUMA nodes cannot serve a 2-card GPUNumaBind request; without it they can."""
    table = table_for(clock)
    assert {g.numa_node for g in table.machine.gpus} == {0, 1}
    with pytest.raises(GpuClaimRefused, match="no NUMA node has 2"):
        claim(table, RequestGPUs=2, RequestGPUMemory=100, GPUNumaBind=True)
    assert indexes(claim(table, RequestGPUs=2, RequestGPUMemory=100, GPUPlacementPolicy="numa")) == [0, 1]


def test_require_gpus_filters_the_cards_and_is_named_in_the_refusal(clock):
    """RequireGPUs keeps HTCondor's meaning, a constraint on each card's properties."""
    table = table_for(clock)
    first = table.machine.gpus[0].id
    pinned = dict(RequestGPUMemory=30000, RequireGPUs=classad.ExprTree(f'Id == "{first}"'))
    assert indexes(claim(table, **pinned)) == [0]
    with pytest.raises(GpuClaimRefused) as refused:
        claim(table, **pinned)
    assert "1 for memory" in str(refused.value) and "1 for RequireGPUs" in str(refused.value)
    assert "10960 of 40960 MiB" in refused.value.card_views[0]


def test_a_share_dynamic_slot_says_what_it_holds(clock):
    """AssignedGPUs, AssignedGPUMemoryMb, AssignedGPUCores and GPUShareWhole read back as the grants."""
    table = table_for(clock)
    share = claim(table, RequestGPUMemory=8192, RequestGPUCores=20)
    ad = table.public_ad(share)
    assert (ad["AssignedGPUMemoryMb"], ad["AssignedGPUCores"], ad["GPUShareWhole"]) == (8192, 20, False)
    assert grants_from_slot_ad(ad) == share.resources.gpus
    whole = table.public_ad(claim(table, RequestGPUs=1))
    assert whole["GPUShareWhole"] is True and "AssignedGPUMemoryMb" not in whole
    assert grants_from_slot_ad(whole) == table.slots[whole["Name"]].resources.gpus


def test_within_resource_limits_counts_cards_with_room_for_share_jobs(clock):
    """With both cards shared, GPUs is 0: a whole-card job no longer matches, a share job still does."""
    table = table_for(clock)
    claim(table, RequestGPUMemory=1000)
    claim(table, RequestGPUMemory=1000)
    ad = pslot_ad(table)
    assert (ad["GPUs"], len(ad["AvailableGPUs"])) == (0, 2)
    assert not job(RequestGPUs=1).matches(ad)
    assert job(RequestGPUMemory=1000).matches(ad)
    assert job(RequestGPUs=2, RequestGPUMemoryPercent=10).matches(ad)
    assert not job(RequestGPUs=3, RequestGPUCores=10).matches(ad)
    assert job().matches(ad), "a job without GPUs is not held back"


def test_a_malformed_gpu_request_is_refused_and_changes_nothing(clock):
    """RequestGPUCores = 150 is a GpuRequestError naming it; no slot is carved."""
    table = table_for(clock)
    with pytest.raises(GpuRequestError, match="RequestGPUCores"):
        claim(table, RequestGPUCores=150)
    assert list(table.slots) == ["slot1@node1"] and pslot_ad(table)["GPUs"] == 2


@pytest.mark.parametrize(("knobs", "named"), [
    ("GPU_SPLIT_COUNT = 0", "GPU_SPLIT_COUNT"),
    ("GPU_SPLIT_COUNT = many", "GPU_SPLIT_COUNT"),
    ("GPU_PLACEMENT_POLICY = best-fit", "GPU_PLACEMENT_POLICY"),
])
def test_bad_gpu_knobs_are_config_errors(knobs, named):
    """A split count below 1 or an unknown policy word stops the startd with the knob named."""
    with pytest.raises(ConfigError, match=named):
        placement_options(Config.from_text(knobs, env={}))
