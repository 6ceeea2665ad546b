"""Tests for collector.segments: ads grouped by stored order, versions that move on
every change, emptied segments dropped."""

from twisted.internet.task import Clock

from collector.segments import SEGMENT_BITS
from collector.store import AdStore


def test_segments_hold_the_ads_in_stored_order_and_version_every_change():
    """Ads fall into segments by stored order; a replacement keeps its place but moves
    its segment's version; removing a segment's last ad drops the segment."""
    store = AdStore(Clock())
    for n in range((1 << SEGMENT_BITS) + 1):
        store.update("Machine", None, {"Name": f"s{n}"})
    before = store.segments("Machine")
    assert [segment_id for segment_id, _, _ in before] == [0, 1]
    assert [stored.name for stored in before[0][2]][:2] == ["s0", "s1"]
    store.update("Machine", None, {"Name": "s1", "Cpus": 2})
    after = store.segments("Machine")
    assert after[0][1] != before[0][1] and after[1][1] == before[1][1]
    assert [stored.name for stored in after[0][2]] == [stored.name for stored in before[0][2]]
    store.invalidate_names("Machine", [f"s{1 << SEGMENT_BITS}"])
    assert [segment_id for segment_id, _, _ in store.segments("Machine")] == [0]
    assert store.segments("Submitter") == []


def test_a_snapshot_keeps_each_segments_ads_as_they_were():
    """Ads stored, replaced or removed after a snapshot leave the snapshot's ads as taken."""
    store = AdStore(Clock())
    for n in range(3):
        store.update("Machine", None, {"Name": f"s{n}", "Cpus": 1})
    [(_, _, ads)] = store.segments("Machine")
    store.update("Machine", None, {"Name": "s0", "Cpus": 2})
    store.update("Machine", None, {"Name": "s3", "Cpus": 1})
    store.invalidate_names("Machine", ["s1"])
    assert [(stored.name, stored.wire["Cpus"]) for stored in ads] == [("s0", 1), ("s1", 1), ("s2", 1)]
    [(_, _, now)] = store.segments("Machine")
    assert [(stored.name, stored.wire["Cpus"]) for stored in now] == [("s0", 2), ("s2", 1), ("s3", 1)]
