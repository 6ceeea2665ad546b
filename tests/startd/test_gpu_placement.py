"""Tests for startd.gpu_placement: whole cards, HAMi-style shares, and placement policies."""

from startd.gpu_placement import CardRoom, GpuRequest, place_gpus, policy_keys
from startd.gpus import read_gpus
from startd.simulated_nvml import SimulatedNvml


def rooms(spec="4xA100:40G", used=None):
    cards = read_gpus(SimulatedNvml(spec))
    used = used or {}
    return [CardRoom(c, c.memory_mb - used.get(c.index, 0), 100) for c in cards]


def indexes(shares, all_rooms):
    ids = {r.device.id: r.device.index for r in all_rooms}
    return [ids[s.gpu_id] for s in shares]


def test_whole_cards_skip_cards_someone_shares():
    """A whole-card request takes only untouched cards."""
    r = rooms(used={0: 1000})
    shares = place_gpus(r, GpuRequest(2))
    assert indexes(shares, r) == [1, 2]
    assert all(s.whole and s.cores == 100 and s.memory_mb == 40960 for s in shares)


def test_shares_fit_where_memory_is_left():
    """A 10 GiB share goes on a card with room, and none fits when no card has it."""
    r = rooms(spec="1xA100:40G", used={0: 35000})
    assert place_gpus(r, GpuRequest(1, memory_mb=10240)) is None
    assert place_gpus(r, GpuRequest(1, memory_mb=4096))[0].memory_mb == 4096


def test_binpack_fills_the_fullest_card_and_spread_the_emptiest():
    """binpack picks the card with least free memory, spread the one with most."""
    r = rooms(used={0: 10000, 1: 30000, 2: 20000})
    assert indexes(place_gpus(r, GpuRequest(1, memory_mb=1000, policy="binpack")), r) == [1]
    assert indexes(place_gpus(r, GpuRequest(1, memory_mb=1000, policy="spread")), r) == [3]


def test_numa_keeps_all_cards_on_one_node():
    """numa puts both cards on one NUMA node, refusing when no node has enough."""
    r = rooms(used={0: 1000})  # cards 0,1 on node 0; 2,3 on node 1
    shares = place_gpus(r, GpuRequest(2, memory_mb=1000, policy="numa,binpack"))
    assert {r[i].device.numa_node for i in indexes(shares, r)} == {0}
    assert place_gpus(r, GpuRequest(3, memory_mb=1000, policy="numa")) is None


def test_allowed_cards_limit_the_choice():
    """Only cards the job's RequireGPUs accepts are used."""
    r = rooms()
    assert indexes(place_gpus(r, GpuRequest(1), allowed={r[2].device.id}), r) == [2]


def test_unknown_policy_falls_back_to_spread():
    """A policy with no known key is spread, as in HAMi."""
    assert policy_keys("best-fit") == ["spread"]
    assert policy_keys("numa, binpack") == ["numa", "binpack"]
