"""The GPU part of `roost q -better-analyze`: cards in the pool counted by whether they
can hold one share of the job, refusals per clause, and slots able to hold it all."""

from __future__ import annotations

import classad
from bindings.gpu_analysis import analyze_gpus, gpu_slots, render_gpu_analysis


def card(short, index, name="NVIDIA A100-SXM4-40GB", free=40000, cores=100, shares=0, numa=0):
    return classad.ClassAd({"Id": short, "UUID": f"GPU-{index}0000000-1111-2222-3333-444444444444",
                            "Index": index, "DeviceName": name, "GlobalMemoryMb": 40000, "NumaNode": numa,
                            "FreeMemoryMb": free, "FreeCores": cores, "Shares": shares, "SplitCount": 10})


def slot(*cards, dynamic=False):
    ad = classad.ClassAd({"Name": "slot1@gpu1", "PartitionableSlot": not dynamic, "DynamicSlot": dynamic})
    for c in cards:
        ad["GPUs_" + c["Id"].replace("-", "_")] = c
    return ad


def job(**attrs):
    return classad.ClassAd({"ClusterId": 7, "ProcId": 0, "JobStatus": 1, **attrs})


POOL = [slot(card("GPU-aaaa0000", 0, free=10000, shares=1), card("GPU-bbbb0000", 1)),
        slot(card("GPU-cccc0000", 0, name="Tesla K80"), card("GPU-dddd0000", 1, cores=0, shares=1)),
        slot(card("GPU-aaaa0000", 0, free=10000, shares=1), dynamic=True)]


def test_a_job_without_gpus_has_no_gpu_section():
    assert analyze_gpus(job(RequestCpus=1), POOL, "7.0") is None


def test_claimed_pieces_are_not_counted_twice():
    assert len(gpu_slots(POOL)) == 2


def test_cards_are_counted_per_clause():
    found = analyze_gpus(job(RequestGPUMemory=30000, AvoidGPUTypes="K80"), POOL, "7.0")
    assert (found.cards, found.fit, found.machines, found.machines_fitting) == (4, 1, 2, 1)
    assert dict(found.refused) == {"type": 1, "exclusive": 1, "memory": 1}


def test_a_pinned_share_names_the_memory_on_that_card():
    found = analyze_gpus(job(RequestGPUMemory=30000, RequestGPUIds="GPU-aaaa0000"), POOL, "7.0")
    assert dict(found.refused) == {"uuid": 3, "memory": 1} and found.machines_fitting == 0
    text = render_gpu_analysis(found)
    assert "Of the 4 GPU card(s) in the pool, 0 can hold one share" in text
    assert "memory  too little free memory" in text
    assert "WARNING: no slot's cards can hold job 7.0's GPU request now." in text


def test_a_whole_card_job_is_refused_by_touched_cards():
    found = analyze_gpus(job(RequestGPUs=1), POOL, "7.0")
    assert dict(found.refused) == {"exclusive": 2} and found.fit == 2 and found.machines_fitting == 2


def test_numa_bind_across_nodes_is_reported():
    pool = [slot(card("GPU-aaaa0000", 0, numa=0), card("GPU-bbbb0000", 1, numa=1))]
    found = analyze_gpus(job(RequestGPUs=2, RequestGPUMemory=1000, GPUNumaBind=True), pool, "7.0")
    assert (found.fit, found.machines_fitting, found.numa_refused) == (2, 0, 1)
    assert "1 slot(s) have enough cards only across NUMA nodes" in render_gpu_analysis(found)


def test_an_unreadable_request_is_reported_not_raised():
    found = analyze_gpus(job(RequestGPUMemory=1000, RequestGPUCores=150), POOL, "7.0")
    assert "GPU request cannot be read" in render_gpu_analysis(found)


def test_a_pool_without_cards_says_so():
    text = render_gpu_analysis(analyze_gpus(job(RequestGPUs=1), [classad.ClassAd({"Name": "slot1@cpu"})], "7.0"))
    assert "no slot in the pool advertises GPU cards" in text
