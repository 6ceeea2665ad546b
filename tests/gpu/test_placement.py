"""The placement model on the real cards: a startd built with GPU_DISCOVERY = nvml advertises
each card's nested ad, and gpushare's fit and the startd's carve share them as on simulated cards."""

from __future__ import annotations

import pytest

from daemoncore.security import create_signing_key
from gpushare.placement import ShareRequest, explain, fit, take
from gpushare.slot_cards import cards_from_slot_ad
from startd.gpu_claims import GpuClaimRefused, carve
from startd.gpus import nvml_backend, read_gpus
from startd.service import build_startd
from tests.support.daemon_settings import daemon_settings


@pytest.fixture
def slot_cards(nvml, nvml_config, tmp_path, clock):
    """The real cards as the startd's partitionable slot advertises them."""
    key_file = tmp_path / "POOL"
    create_signing_key(str(key_file))
    service = build_startd(daemon_settings(".", "STARTD", "Machine", signing_key_file=str(key_file)), clock,
                           nvml_config)
    [ad] = service.table.public_ads()
    return cards_from_slot_ad(ad)


def test_the_slot_advertises_every_discovered_card_untouched(slot_cards, nvml_config):
    """One nested card ad per discovered device, whole and free."""
    gpus = read_gpus(nvml_backend(nvml_config))
    assert [(c.uuid, c.memory_total) for c in slot_cards] == [(g.uuid, g.memory_mb) for g in gpus]
    assert all(c.untouched and c.memory_free == c.memory_total for c in slot_cards)


def test_four_quarter_shares_fill_the_first_card_and_a_fifth_needs_another(slot_cards):
    """Memory shares of a quarter of the first card: binpack puts four there, the fifth on another card
    that can hold it (none: refused for memory)."""
    quarter = slot_cards[0].memory_total // 4
    request = ShareRequest(memory_mib=quarter, policy=("binpack",))
    cards = slot_cards
    for _ in range(4):
        grants = fit(cards, request)
        assert grants is not None and grants[0].id == slot_cards[0].id
        cards = take(cards, grants)
    fifth = fit(cards, request)
    others = [c for c in slot_cards[1:] if c.memory_total >= quarter]
    if not others:
        assert fifth is None and explain(cards, request)["memory"] == len(slot_cards)
    else:
        assert fifth is not None and fifth[0].id != slot_cards[0].id


def test_a_request_larger_than_every_card_is_refused_naming_memory(slot_cards):
    """One MiB more than the largest card fits nowhere; the startd's refusal names memory."""
    request = ShareRequest(memory_mib=max(c.memory_total for c in slot_cards) + 1)
    assert fit(slot_cards, request) is None
    assert explain(slot_cards, request)["memory"] == len(slot_cards)
    with pytest.raises(GpuClaimRefused, match="memory"):
        carve(slot_cards, request, None, "slot1@real")


def test_a_whole_card_is_refused_once_a_share_touches_every_card(slot_cards):
    """A share on each card leaves no untouched card for a whole-card request."""
    cards = slot_cards
    for _ in slot_cards:
        cards = take(cards, fit(cards, ShareRequest(memory_mib=1)))
    assert fit(cards, ShareRequest()) is None
    assert explain(cards, ShareRequest())["exclusive"] == len(slot_cards)
