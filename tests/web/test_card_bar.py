"""A GPU card drawn as a bar of its memory: each share as wide as its memory, the free
part after them, coloured by the card's utilisation where a sample gives it."""

from __future__ import annotations

import re

from daemoncore.wire.adcodec import ad_to_json
from tests.support import gpu_slot_ads
from tests.web.test_pages import render
from web import pages
from web.card_bar import BAR_WIDTH, card_segments, utilisation_class


def test_shares_are_as_wide_as_their_memory_and_the_rest_is_free():
    """10000 and 20000 MiB of a 40000 MiB card: a quarter, a half, then a free quarter."""
    bar = card_segments(40000, [{"job": "1.0", "memory": 10000}, {"job": "2.0", "memory": 20000}])
    assert [(part["job"], part["x"], part["width"], part["free"]) for part in bar] == [
        ("1.0", 0.0, 250.0, False), ("2.0", 250.0, 500.0, False), ("", 750.0, 250.0, True)]
    assert bar[-1]["memory"] == 10000


def test_a_full_card_has_no_free_width_and_an_overfull_one_is_scaled_to_fit():
    """Shares that fill the card leave a zero-width free part; shares claiming more than
    the card are scaled so the bar ends at its edge."""
    assert card_segments(100, [{"job": "1.0", "memory": 100}])[-1]["width"] == 0.0
    bar = card_segments(100, [{"job": "1.0", "memory": 100}, {"job": "2.0", "memory": 100}])
    assert [part["width"] for part in bar] == [BAR_WIDTH / 2, BAR_WIDTH / 2, 0.0]


def test_an_empty_card_is_all_free_and_colours_follow_utilisation():
    """No shares: one free segment across the bar. Utilisation picks light, busy, full, or unknown."""
    assert card_segments(40960, []) == [{"x": 0.0, "width": 1000.0, "job": "", "memory": 40960.0, "free": True}]
    assert [utilisation_class(r) for r in (None, 0.1, 0.5, 0.95)] == ["unknown", "light", "busy", "full"]


def test_the_gpu_page_draws_each_share_as_a_rect_of_its_width_with_the_free_part():
    """The page's SVG bar holds one rect per job share (data-job-id, data-memory, a width
    in proportion) and a rect.free; a card with a utilisation sample is coloured by it."""
    slots = [ad_to_json(ad) for ad in gpu_slot_ads.pool()]
    first = pages.gpus_page(slots)["cards"][0]
    assert first["id"] == "GPU-aaaa0001" and first["utilisation_class"] == "unknown"
    html = render("gpus", pages.gpus_page(slots, {first["uuid"]: 0.95}))
    shared = html[html.index('data-card-id="GPU-aaaa0001"'):html.index('data-card-id="GPU-aaaa0002"')]
    parts = re.findall(r'<rect class="part" x="([\d.]+)" y="0" width="([\d.]+)" height="24" data-memory="(\d+)" '
                       r'data-job-id="([^"]+)"', shared)
    assert parts == [("0.0", "250.0", "10240", "12.0"), ("250.0", "250.0", "10240", "12.1")]
    assert re.search(r'<rect class="free" x="500.0" y="0" width="500.0" height="24" data-memory="20480"', shared)
    assert '<svg class="memory-bar full"' in shared and "Utilisation 95%" in shared
