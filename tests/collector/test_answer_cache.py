"""Tests for collector.answer_cache and collector.segments, and for answers built from
kept segment parts: always the answer built afresh, through updates, removals, expiry
and constraints that read the time."""

import random

from twisted.internet.task import Clock

from collector.answer_cache import AnswerCache
from collector.answers import answer_blocks, segment_answer_blocks
from collector.screening import screen_for
from collector.segments import SEGMENT_BITS
from collector.store import AdStore

QUERIES = [("true", []), ("true", ["Name", "State"]), ('State == "Unclaimed"', ["Name", "Cpus"]),
           ('State == "Unclaimed" && Cpus >= 4', []), ("Cpus > 2 && Memory >= 1024", ["Name"]),
           ('State == "Claimed" && LastHeardFrom > time() - 100', ["Name"])]


def joined(blocks):
    return b"".join(block for block in blocks if block)


def fresh(store, constraint, projection):
    screen = screen_for(constraint)
    return joined(answer_blocks(store.snapshot("Machine"), store.clock.seconds(), screen, projection))


def kept(store, cache, constraint, projection):
    screen = screen_for(constraint)
    query = ("Machine", constraint, tuple(projection))
    return joined(segment_answer_blocks(store.segments("Machine"), store.clock.seconds(), screen, projection,
                                        cache, query))


def slot(rng, n):
    cpus = rng.choice([1, 2, 4, 8, "/Expr(2 * 4)/"])
    return {"Name": f"slot{n}", "State": rng.choice(["Unclaimed", "Claimed", "unclaimed"]), "Cpus": cpus,
            "Memory": rng.choice([512, 2048, None]), "LastHeardFrom": rng.randint(0, 300),
            "ClassAdLifetime": rng.choice([60, 900])}


def test_kept_answers_equal_fresh_ones_through_updates_removals_and_expiry():
    """Every query answered from kept segment parts is byte for byte the answer built
    afresh, after each round of updates, removals and expiry."""
    rng = random.Random(7)
    clock = Clock()
    store, cache = AdStore(clock), AnswerCache()
    for n in range(500):
        store.update("Machine", None, slot(rng, n))
    for _ in range(12):
        for constraint, projection in QUERIES:
            assert kept(store, cache, constraint, projection) == fresh(store, constraint, projection)
        for n in rng.sample(range(600), 40):
            store.update("Machine", None, slot(rng, n))
        store.invalidate_names("Machine", [f"slot{n}" for n in rng.sample(range(600), 10)])
        clock.advance(rng.choice([0, 20, 45]))
        if rng.random() < 0.3:
            store.expire()
    assert cache.size > 0


def test_a_segment_part_is_reused_until_its_segment_changes():
    """A repeated query reuses a segment's part; an update in that segment makes it be
    built again, the other segments' parts are still reused."""
    clock = Clock()
    store, cache = AdStore(clock), AnswerCache()
    for n in range(3 << SEGMENT_BITS):
        store.update("Machine", None, {"Name": f"slot{n}", "Cpus": 1})
    first = kept(store, cache, "Cpus == 1", ["Name"])
    parts = dict(cache._parts)
    assert len(parts) == 3
    assert kept(store, cache, "Cpus == 1", ["Name"]) == first
    store.update("Machine", None, {"Name": "slot1", "Cpus": 2})
    second = kept(store, cache, "Cpus == 1", ["Name"])
    assert b'"slot1"' not in second and second.count(b"\n") == (3 << SEGMENT_BITS) - 1
    changed = [key for key, part in cache._parts.items() if parts[key][2] is not part[2]]
    assert [segment for _, segment in changed] == [0]


def test_a_part_with_an_evaluated_constraint_is_not_kept():
    """A segment where the constraint had to be evaluated (an expression attribute, or a
    constraint reading the time) keeps no part."""
    store, cache = AdStore(Clock()), AnswerCache()
    store.update("Machine", None, {"Name": "a", "Cpus": "/Expr(1 + 1)/"})
    assert kept(store, cache, "Cpus == 2", ["Name"]) == b'{"Name":"a"}\n'
    assert cache.size == 0


def test_the_cache_stays_within_its_bytes_dropping_the_oldest():
    """Past max_bytes the oldest parts go; a part bigger than the bound is not kept."""
    cache = AnswerCache(max_bytes=10)
    cache.put(("q", 1), 1, float("inf"), b"12345")
    cache.put(("q", 2), 1, float("inf"), b"12345")
    cache.put(("q", 3), 1, float("inf"), b"123")
    assert cache.get(("q", 1), 1, 0) is None and cache.get(("q", 3), 1, 0) == b"123"
    assert cache.size == 8
    cache.put(("q", 4), 1, float("inf"), b"x" * 11)
    assert cache.get(("q", 4), 1, 0) is None and cache.size == 8


def test_a_part_is_valid_for_its_version_until_its_expiry():
    """A part is returned only for the version it was built from, before valid_until."""
    cache = AnswerCache()
    cache.put(("q", 1), 5, 100.0, b"line\n")
    assert cache.get(("q", 1), 5, 99.0) == b"line\n"
    assert cache.get(("q", 1), 6, 99.0) is None
    assert cache.get(("q", 1), 5, 100.0) is None
