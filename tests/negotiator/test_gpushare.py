"""Tests for negotiator.gpushare: HAMi-style fitting of GPU shares onto cards."""

import pytest

from classad import ClassAd
from negotiator.errors import GpuRequestError
from negotiator.gpushare import (
    Card,
    GpuShareRequest,
    apply_grants,
    card_fits,
    fit_share,
    parse_policy,
    request_from_job,
)


def four_cards():
    return (
        Card("GPU-aaaa", 0, numa_node=0, memory_total=16000, memory_used=8000, cores_used=50, tasks=1),
        Card("GPU-bbbb", 1, numa_node=0, memory_total=16000),
        Card("GPU-cccc", 2, numa_node=1, memory_total=16000, memory_used=2000, cores_used=10, tasks=1),
        Card("GPU-dddd", 3, numa_node=1, memory_total=16000),
    )


def test_no_memory_share_takes_the_whole_card():
    """Without RequestGPUMemory a share takes all of a card's memory, so only idle cards fit."""
    grants = fit_share(four_cards(), GpuShareRequest(count=2))
    assert [g.uuid for g in grants] == ["GPU-bbbb", "GPU-dddd"]
    assert all(g.memory_mib == 16000 for g in grants)


def test_binpack_picks_the_fullest_card_that_fits():
    """binpack puts a 4000 MiB share on the half-used card rather than an idle one."""
    request = GpuShareRequest(memory_mib=4000, cores=20, policy=("binpack",))
    assert [g.uuid for g in fit_share(four_cards(), request)] == ["GPU-aaaa"]


def test_spread_picks_the_emptiest_card():
    """spread (HAMi's default) puts the share on the lowest-numbered idle card."""
    request = GpuShareRequest(memory_mib=4000, cores=20)
    assert [g.uuid for g in fit_share(four_cards(), request)] == ["GPU-bbbb"]


def test_cores_beyond_what_is_left_do_not_fit():
    """A 60 % compute share does not fit a card whose compute is half used."""
    card = four_cards()[0]
    assert not card_fits(card, GpuShareRequest(memory_mib=1000, cores=60))
    assert card_fits(card, GpuShareRequest(memory_mib=1000, cores=50))


def test_exclusive_share_needs_an_idle_card_and_blocks_others():
    """cores=100 fits only a card with no task, and then nothing else fits that card."""
    cards = four_cards()
    exclusive = GpuShareRequest(memory_percent=100, cores=100)
    assert not card_fits(cards[2], exclusive)
    grants = fit_share(cards, exclusive)
    after = apply_grants(cards, grants)
    taken = next(c for c in after if c.uuid == grants[0].uuid)
    assert not card_fits(taken, GpuShareRequest(memory_mib=1, cores=0))


def test_memory_percentage_is_of_each_card():
    """RequestGPUMemoryPercent = 25 takes a quarter of the card's total memory."""
    grants = fit_share(four_cards(), GpuShareRequest(memory_percent=25))
    assert grants[0].memory_mib == 4000


def test_numa_keeps_a_jobs_cards_on_one_node():
    """With the numa policy two shares land on one NUMA node even when spread would split them."""
    cards = (
        Card("A", 0, numa_node=0, memory_total=100),
        Card("B", 1, numa_node=1, memory_total=100),
        Card("C", 2, numa_node=1, memory_total=100, memory_used=10, tasks=1),
        Card("D", 3, numa_node=0, memory_total=100, memory_used=90, tasks=1),
    )
    spread = fit_share(cards, GpuShareRequest(count=2, memory_mib=20))
    assert {g.uuid for g in spread} == {"A", "B"}
    numa = fit_share(cards, GpuShareRequest(count=2, memory_mib=20, policy=("numa", "spread")))
    assert {g.uuid for g in numa} == {"B", "C"}


def test_numa_bind_refuses_a_split_placement():
    """numa_bind with no node holding enough cards gives no fit, while plain numa falls back."""
    cards = (Card("A", 0, numa_node=0, memory_total=100), Card("B", 1, numa_node=1, memory_total=100))
    assert fit_share(cards, GpuShareRequest(count=2, memory_mib=10, numa_bind=True)) is None
    assert len(fit_share(cards, GpuShareRequest(count=2, memory_mib=10, policy=("numa",)))) == 2


def test_named_cards_by_uuid_or_index():
    """A job naming cards gets only those, by UUID or by index; avoided cards are skipped."""
    cards = four_cards()
    by_uuid = fit_share(cards, GpuShareRequest(memory_mib=100, use_ids=("gpu-dddd",)))
    assert [g.index for g in by_uuid] == [3]
    by_index = fit_share(cards, GpuShareRequest(memory_mib=100, use_ids=("2",)))
    assert [g.uuid for g in by_index] == ["GPU-cccc"]
    avoided = fit_share(cards, GpuShareRequest(memory_mib=100, avoid_ids=("GPU-bbbb",)))
    assert avoided[0].uuid == "GPU-dddd"
    assert fit_share(cards, GpuShareRequest(count=2, memory_mib=100, use_ids=("1",))) is None


def test_split_count_limits_tasks_per_card():
    """A card already holding split_count tasks takes no more, however much is free."""
    card = Card("A", 0, memory_total=1000, tasks=10)
    assert not card_fits(card, GpuShareRequest(memory_mib=1))


def test_apply_grants_accumulates_within_a_cycle():
    """Two 6000 MiB shares fill a 16000 MiB card's room for a third with binpack."""
    cards = (Card("A", 0, memory_total=16000), Card("B", 1, memory_total=16000))
    request = GpuShareRequest(memory_mib=6000, policy=("binpack",))
    for _ in range(2):
        cards = apply_grants(cards, fit_share(cards, request))
    assert cards[0].memory_used == 12000 and cards[0].tasks == 2
    assert fit_share(cards, request)[0].uuid == "B"


def test_request_from_job_reads_the_job_ad():
    """A real job ad gives the count, shares, named cards and policy chain."""
    job = ClassAd('[ RequestGPUs = 2; RequestGPUMemory = 8192; RequestGPUCores = 30; '
                  'RequestGPUIds = "GPU-aaaa, 3"; GPUPlacementPolicy = "numa,binpack" ]')
    request = request_from_job(job)
    assert request == GpuShareRequest(count=2, memory_mib=8192, cores=30,
                                      use_ids=("GPU-aaaa", "3"), policy=("numa", "binpack"))


def test_memory_share_alone_means_one_card():
    """RequestGPUMemory without RequestGPUs asks for one card, as HAMi's defaultGPUNum."""
    assert request_from_job(ClassAd("[ RequestGPUMemory = 100 ]")).count == 1
    assert request_from_job(ClassAd("[ RequestCpus = 1 ]")) is None


def test_bad_requests_name_the_attribute():
    """Out-of-range or conflicting values raise GpuRequestError naming what is wrong."""
    with pytest.raises(GpuRequestError, match="RequestGPUCores"):
        GpuShareRequest(cores=150)
    with pytest.raises(GpuRequestError, match="not both"):
        GpuShareRequest(memory_mib=10, memory_percent=10)
    with pytest.raises(GpuRequestError, match="RequestGPUMemory must be a number"):
        request_from_job(ClassAd('[ RequestGPUs = 1; RequestGPUMemory = "lots" ]'))
    with pytest.raises(GpuRequestError, match="'mutex'"):
        parse_policy("binpack,mutex")
