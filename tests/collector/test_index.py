"""Tests for collector.index: the equality index the store keeps through updates."""

from twisted.internet.task import Clock

from collector.index import EqualityIndex
from collector.store import AdStore


def test_an_index_kept_through_replacements_equals_one_built_afresh():
    """After slots are replaced with their State, Machine and Activity changing (case
    only, to an expression, to a number, or not at all) and some removed, the index
    the store kept holds exactly what indexing the ads held now would."""
    clock = Clock()
    store = AdStore(clock)
    states = ["Unclaimed", "Claimed", "claimed", '/Expr(ifThenElse(true, "Owner", "Busy"))/', 3, None]
    for round_number in range(len(states) + 1):
        for n in range(12):
            state = states[(n + round_number) % len(states)]
            wire = {"Name": f"slot{n}@a", "Machine": "a" if n % 2 else "A", "Activity": "Idle"}
            if state is not None:
                wire["State"] = state
            if (n + round_number) % 5 == 0:
                del wire["Activity"]
            store.update("Machine", None, wire)
        store.invalidate_names("Machine", [f"slot{round_number}@a"])
    afresh = EqualityIndex()
    for stored in store.query("Machine"):
        afresh.add(stored)
    assert store._indexes[(False, "Machine")] == afresh
