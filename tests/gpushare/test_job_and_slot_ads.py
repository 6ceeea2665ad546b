"""Reading a GPU request from a job ad, and cards and grants from slot ads."""

import pytest

from classad import ClassAd
from gpushare.errors import GpuRequestError
from gpushare.job_request import request_from_job
from gpushare.placement import Card, ShareRequest, fit, take
from gpushare.slot_cards import card_ad_attributes, cards_from_slot_ad, grants_from_slot_ad


def test_a_job_ad_gives_count_shares_named_cards_types_and_policy():
    job = ClassAd('[ RequestGPUs = 2; RequestGPUMemory = 8192; RequestGPUCores = 30; '
                  'RequestGPUIds = "GPU-aaaa, 3"; AvoidGPUTypes = "T4"; GPUPlacementPolicy = "numa,binpack";'
                  ' GPUNumaBind = true ]')
    assert request_from_job(job) == ShareRequest(count=2, memory_mib=8192, cores=30, use_ids=("GPU-aaaa", "3"),
                                                 avoid_types=("T4",), policy=("numa", "binpack"), numa_bind=True)


def test_a_share_without_a_count_means_one_card_and_no_gpu_attributes_means_none():
    assert request_from_job(ClassAd("[ RequestGPUMemoryPercent = 50 ]")).count == 1
    assert request_from_job(ClassAd("[ RequestCpus = 1 ]")) is None
    assert request_from_job(ClassAd("[ RequestGPUs = 0 ]")) is None


def test_the_pool_default_policy_applies_when_the_job_names_none():
    assert request_from_job(ClassAd("[ RequestGPUs = 1 ]"), default_policy=("binpack",)).policy == ("binpack",)


def test_bad_job_values_name_the_attribute():
    with pytest.raises(GpuRequestError, match="RequestGPUMemory must be a number"):
        request_from_job(ClassAd('[ RequestGPUs = 1; RequestGPUMemory = "lots" ]'))
    with pytest.raises(GpuRequestError, match="RequestGPUCores"):
        request_from_job(ClassAd("[ RequestGPUCores = 150 ]"))


def slot_with(cards):
    slot = ClassAd("[ Name = \"slot1@host\"; PartitionableSlot = true ]")
    for c in cards:
        nested = ClassAd()
        nested.update({"Id": c.id, "UUID": c.uuid, "DeviceName": c.name, "GlobalMemoryMb": c.memory_total,
                       "NumaNode": c.numa_node, **card_ad_attributes(c)})
        slot[f"GPUs_{c.id.replace('-', '_')}"] = nested
    return slot


def test_cards_round_trip_through_a_slot_ad():
    cards = (Card("GPU-aaaa-1", "GPU-aaaa", 0, "A100", 0, 40000),
             Card("GPU-bbbb-2", "GPU-bbbb", 1, "A100", 1, 40000, 10000, 30, 1, 3))
    assert cards_from_slot_ad(slot_with(cards)) == cards


def test_a_claimed_slots_grants_come_from_its_assigned_attributes():
    cards = (Card("GPU-aaaa-1", "GPU-aaaa", 0, "A100", 0, 40000),)
    granted = take(cards, fit(cards, ShareRequest(memory_mib=10000, cores=20)))
    slot = slot_with(granted)
    slot.update({"AssignedGPUs": "GPU-aaaa", "AssignedGPUMemoryMb": 10000, "AssignedGPUCores": 20})
    (grant,) = grants_from_slot_ad(slot)
    assert (grant.uuid, grant.memory_mib, grant.cores, grant.whole) == ("GPU-aaaa-1", 10000, 20, False)
    slot["GPUShareWhole"] = True
    assert grants_from_slot_ad(slot)[0].whole
