"""The GPU placement model: which cards, and how much of each, a request gets."""

import pytest

from gpushare.errors import GpuRequestError
from gpushare.placement import (
    Card,
    Grant,
    ShareRequest,
    card_refusal,
    explain,
    fit,
    give_back,
    grants_hold,
    parse_policy,
    take,
)


def card(uuid, index, numa=0, total=16000, used=0, cores=0, tasks=0, name="NVIDIA A100", split=10):
    return Card(uuid, uuid, index, name, numa, total, used, cores, tasks, split)


def four_cards():
    return (card("GPU-aaaa", 0, used=8000, cores=50, tasks=1), card("GPU-bbbb", 1),
            card("GPU-cccc", 2, numa=1, used=2000, cores=10, tasks=1), card("GPU-dddd", 3, numa=1))


def uuids(grants):
    return [g.uuid for g in grants]


def test_a_whole_card_request_takes_only_untouched_cards_and_all_of_them():
    grants = fit(four_cards(), ShareRequest(count=2))
    assert uuids(grants) == ["GPU-bbbb", "GPU-dddd"]
    assert all(g.memory_mib == 16000 and g.cores == 100 and g.whole for g in grants)


def test_binpack_puts_a_share_on_the_fullest_card_that_fits():
    request = ShareRequest(memory_mib=4000, cores=20, policy=("binpack",))
    assert uuids(fit(four_cards(), request)) == ["GPU-aaaa"]


def test_spread_puts_a_share_on_the_emptiest_card():
    assert uuids(fit(four_cards(), ShareRequest(memory_mib=4000, cores=20))) == ["GPU-bbbb"]


def test_spread_weighs_how_full_a_card_is_not_how_much_it_has_free():
    """A small job does not go first to the biggest card just because it has most MiB free."""
    cards = (card("big", 0, total=192000, used=96000, tasks=1), card("small", 1, total=24000))
    assert uuids(fit(cards, ShareRequest(memory_mib=1000))) == ["small"]


def test_a_card_at_its_split_count_is_full_whatever_memory_it_has_left():
    """fullness counts shares used against the split count: nine small shares make a
    card 90% full, so spread sends the next share to the card with one large share."""
    crowded = card("crowded", 0, used=9 * 500, tasks=9)
    one_large = card("large", 1, used=6000, tasks=1)
    assert crowded.fullness == 0.9
    assert card("full", 2, used=1000, tasks=10).fullness == 1.0
    assert uuids(fit((crowded, one_large), ShareRequest(memory_mib=500))) == ["large"]
    assert uuids(fit((crowded, one_large), ShareRequest(memory_mib=500, policy=("binpack",)))) == ["crowded"]


def test_binpack_fills_a_touched_card_before_opening_an_untouched_one():
    """HAMi's binpack: a share that fits on a card already in use goes there."""
    cards = (card("empty", 0), card("tenth", 1, used=1600, tasks=1))
    assert uuids(fit(cards, ShareRequest(memory_mib=1000, policy=("binpack",)))) == ["tenth"]


def test_compute_beyond_what_is_left_is_refused_by_the_cores_clause():
    first = four_cards()[0]
    assert card_refusal(first, ShareRequest(memory_mib=1000, cores=60)) == "cores"
    assert card_refusal(first, ShareRequest(memory_mib=1000, cores=50)) is None


def test_an_exclusive_share_needs_an_untouched_card_and_then_blocks_others():
    cards = four_cards()
    exclusive = ShareRequest(memory_percent=100, cores=100)
    assert card_refusal(cards[2], exclusive) == "exclusive"
    after = take(cards, fit(cards, exclusive))
    taken = next(c for c in after if c.uuid == "GPU-bbbb")
    assert card_refusal(taken, ShareRequest(memory_mib=1, cores=0)) == "exclusive"


def test_a_whole_card_request_refuses_a_partly_used_card():
    assert card_refusal(four_cards()[0], ShareRequest()) == "exclusive"


def test_memory_percent_is_of_each_cards_total():
    assert fit(four_cards(), ShareRequest(memory_percent=25))[0].memory_mib == 4000


def test_a_share_larger_than_the_free_memory_is_refused_by_the_memory_clause():
    assert card_refusal(card("A", 0, total=40000), ShareRequest(memory_mib=50000)) == "memory"


def test_numa_keeps_a_jobs_cards_on_one_node_and_numa_bind_requires_it():
    cards = (card("A", 0, numa=0, total=100), card("B", 1, numa=1, total=100),
             card("C", 2, numa=1, total=100, used=10, tasks=1), card("D", 3, numa=0, total=100, used=90, tasks=1))
    assert set(uuids(fit(cards, ShareRequest(count=2, memory_mib=20)))) == {"A", "B"}
    assert set(uuids(fit(cards, ShareRequest(count=2, memory_mib=20, policy=("numa", "spread"))))) == {"B", "C"}
    split = (card("A", 0, numa=0, total=100), card("B", 1, numa=1, total=100))
    assert fit(split, ShareRequest(count=2, memory_mib=10, numa_bind=True)) is None
    assert len(fit(split, ShareRequest(count=2, memory_mib=10, policy=("numa",)))) == 2


def test_three_cards_on_one_node_do_not_fit_a_two_plus_two_machine_with_numa_bind():
    cards = tuple(card(f"G{i}", i, numa=i // 2) for i in range(4))
    assert fit(cards, ShareRequest(count=3, numa_bind=True)) is None


def test_cards_named_by_uuid_short_id_or_index_and_avoided_ones():
    cards = four_cards()
    assert [g.index for g in fit(cards, ShareRequest(memory_mib=100, use_ids=("gpu-dddd",)))] == [3]
    assert uuids(fit(cards, ShareRequest(memory_mib=100, use_ids=("2",)))) == ["GPU-cccc"]
    assert uuids(fit(cards, ShareRequest(memory_mib=100, avoid_ids=("GPU-bbbb",)))) == ["GPU-dddd"]
    assert fit(cards, ShareRequest(count=2, memory_mib=100, use_ids=("1",))) is None


def test_card_types_are_matched_as_substrings_of_the_model_name():
    cards = (card("A", 0, name="NVIDIA A100-SXM4-40GB"), card("B", 1, name="Tesla V100"))
    assert uuids(fit(cards, ShareRequest(memory_mib=10, use_types=("v100",)))) == ["B"]
    assert uuids(fit(cards, ShareRequest(memory_mib=10, avoid_types=("A100",)))) == ["B"]
    assert card_refusal(cards[0], ShareRequest(memory_mib=10, use_types=("H100",))) == "type"


def test_the_split_count_limits_shares_per_card():
    assert card_refusal(card("A", 0, tasks=3, used=3, split=3), ShareRequest(memory_mib=1)) == "split count"


def test_four_quarter_shares_fill_one_card_and_a_fifth_does_not_fit():
    cards = (card("A", 0, total=40000),)
    request = ShareRequest(memory_mib=10000)
    for _ in range(4):
        cards = take(cards, fit(cards, request))
    assert cards[0].tasks == 4 and cards[0].memory_free == 0
    assert fit(cards, request) is None


def test_give_back_undoes_take():
    cards = four_cards()
    grants = fit(cards, ShareRequest(count=2, memory_mib=3000, cores=10))
    assert give_back(take(cards, grants), grants) == cards


def test_explain_counts_each_clause():
    cards = four_cards()
    counts = explain(cards, ShareRequest(memory_mib=9000, use_types=("A100",)))
    assert counts["fit"] == 3 and counts["memory"] == 1


def test_a_claim_runs_a_share_of_its_own_shape_only():
    cards = (card("A", 0, total=40000, used=10000, cores=20, tasks=1),)
    claim = (Grant("A", "A", 0, 10000, 20),)
    assert grants_hold(ShareRequest(memory_mib=10000, cores=20), claim, cards)
    assert grants_hold(ShareRequest(memory_percent=25, cores=20), claim, cards)
    assert not grants_hold(ShareRequest(memory_mib=8000, cores=10), claim, cards)
    assert not grants_hold(ShareRequest(memory_mib=35000), claim, cards)
    assert not grants_hold(ShareRequest(), claim, cards)
    assert not grants_hold(ShareRequest(count=2, memory_mib=100), claim, cards)
    whole = (Grant("A", "A", 0, 40000, 100, whole=True),)
    assert grants_hold(ShareRequest(), whole, cards)
    assert not grants_hold(ShareRequest(memory_mib=8000), whole, cards)


def test_bad_requests_name_what_is_wrong():
    with pytest.raises(GpuRequestError, match="RequestGPUCores"):
        ShareRequest(cores=150)
    with pytest.raises(GpuRequestError, match="not both"):
        ShareRequest(memory_mib=10, memory_percent=10)
    with pytest.raises(GpuRequestError, match="'mutex'"):
        parse_policy("binpack,mutex")
    with pytest.raises(GpuRequestError, match="both binpack and spread"):
        parse_policy("binpack,spread")
    assert parse_policy(" numa , BINPACK ") == ("numa", "binpack")
    assert parse_policy("") == ("spread",)
