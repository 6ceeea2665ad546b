"""Tests for startd.slot_ads.SharedEntries: slot ads share the entries of equal plain values."""

import classad
from daemoncore.config import Config
from startd.slot_ads import SharedEntries
from startd.slot_types import plan_slots
from startd.slots import SlotTable


def test_the_ads_of_two_slots_share_the_entries_of_their_equal_values(machine, clock):
    """Two idle static slots' ads hold one entry object for each value they have alike
    (their state, their size), and their own for what differs (their names)."""
    table = SlotTable.from_plans(machine, plan_slots(Config.from_text("NUM_SLOTS = 2", env={}), machine), clock)
    first, second = (table.public_ad(table.slots[name]).entries_by_key() for name in sorted(table.slots))
    assert first["state"] is second["state"] and first["cpus"] is second["cpus"]
    assert first["name"] is not second["name"]
    assert first["name"].expr.value == "slot1@node1"


def test_an_entry_is_shared_only_by_name_type_and_value():
    """True and 1, or 1 and 1.0, are different entries; a list is never shared (a reader could change it)."""
    shared = SharedEntries()
    assert shared.entry("Cpus", 1) is shared.entry("Cpus", 1)
    assert shared.entry("Cpus", 1) is not shared.entry("Cpus", True)
    assert shared.entry("Cpus", 1) is not shared.entry("Cpus", 1.0)
    assert shared.entry("Cpus", 1) is not shared.entry("Memory", 1)
    assert shared.entry("ChildState", ["Claimed"]) is not shared.entry("ChildState", ["Claimed"])


def test_the_shared_entries_are_forgotten_all_at_once_when_full():
    """At its limit the store starts over: it never holds more entries than that."""
    shared = SharedEntries(limit=3)
    kept = [shared.entry("SlotID", number) for number in range(3)]
    assert shared.entry("SlotID", 0) is kept[0]
    shared.entry("SlotID", 3)
    assert shared.entry("SlotID", 0) is not kept[0]


def test_an_ad_made_from_a_base_leaves_the_base_as_it_was_and_keeps_its_spelling():
    """The new ad has the values set over the base's; the base is unchanged, and a name it
    has keeps the base's first spelling."""
    base = classad.ClassAd({"MyType": "Machine", "Cpus": 4})
    ad = SharedEntries().ad(base, {"cpus": 2, "State": "Claimed"})
    assert (ad["Cpus"], ad["State"], ad["MyType"]) == (2, "Claimed", "Machine")
    assert list(ad) == ["Cpus", "State", "MyType"]
    assert base["Cpus"] == 4 and "State" not in base
