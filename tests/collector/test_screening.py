"""Tests for collector.screening and collector.answers: screening a constraint on an
ad's literal values answers exactly what the full ClassAd evaluation answers, and a
query's answer comes in blocks that give the reactor back."""

import itertools

import pytest

from classad import ConstraintError, compile_constraint
from collector import answers
from collector.answers import answer_blocks
from collector.screening import literal_values, screen_for
from collector.store import AdStore
from daemoncore.wire.adcodec import ad_from_json

ADS = [
    {"Name": "a", "State": "Unclaimed", "Cpus": 16, "Memory": 65536.0, "Arch": "X86_64"},
    {"Name": "b", "State": "unclaimed", "Cpus": 8, "Memory": 1024, "Arch": "aarch64"},
    {"Name": "c", "State": "/Expr(\"Un\" + \"claimed\")/", "Cpus": "/Expr(4 * 4)/", "Memory": None},
    {"Name": "d", "State": 3, "Cpus": True, "Memory": "lots"},
    {"Name": "e", "STATE": "Claimed", "state": "Unclaimed", "Cpus": 2**64 + 16},
    {"Name": "f", "State": "Ünclaimed", "Cpus": [16], "Memory": {"x": 1}},
    {"Name": "g"},
]

CONSTRAINTS = [
    'State == "Unclaimed"',
    '"UNCLAIMED" == State && Cpus >= 16',
    'State == "Unclaimed" && Cpus >= 16 && Memory >= 65536',
    '(State != "Claimed") && (Cpus < 10)',
    'Cpus > 15 && Memory is undefined',
    'State == "ünclaimed"',
    'Cpus == 1',
    'Cpus >= 16 || State == "Claimed"',
    'MY.Cpus >= 16 && State =?= "Unclaimed"',
    'Arch == undefined',
    'Cpus <= 1.5e1 && Name > "b"',
]


@pytest.mark.parametrize(("constraint", "wire"), list(itertools.product(CONSTRAINTS, ADS)))
def test_screen_answers_as_the_full_constraint(constraint, wire):
    """Case, expressions, undefined, wrapped integers, mixed types, ||, =?= and scopes:
    the screen and the ClassAd evaluation agree in every ad."""
    ad = ad_from_json(wire)
    assert screen_for(constraint).matches(ad, literal_values(wire)) == compile_constraint(constraint)(ad)


def test_comparisons_of_attributes_to_literals_are_the_screens_tests():
    screen = screen_for('State == "Unclaimed" && (16 <= Cpus) && Memory >= Cpus && .Arch == "X"')
    assert screen.tests == (("state", "==", "Unclaimed"), ("cpus", ">=", 16))
    assert not screen.complete
    assert screen_for('State == "Unclaimed" && Cpus > 1').complete
    assert screen_for("true").everything


def test_literal_values_leave_out_expressions_and_keep_the_later_spelling():
    values = literal_values({"A": 1, "a": "/Expr(2)/", "B": "/Expr(x)/", "b": 3, "C": None, "D": [1]})
    assert values == {"b": 3, "c": values["c"]} and "a" not in values and "d" not in values


def test_a_bad_constraint_is_refused_as_before():
    with pytest.raises(ConstraintError):
        screen_for('State == "')


def stored_ads(count, clock):
    store = AdStore(clock)
    for n in range(count):
        wire = {"Name": f"slot{n}", "Cpus": n % 4, "ClassAdLifetime": 10 if n % 5 else 1}
        store.update("Machine", ad_from_json(wire), wire)
    return store


def test_answer_blocks_hold_every_live_match_once_in_order(store, clock):
    store = stored_ads(50, clock)
    clock.advance(5)
    blocks = list(answer_blocks(store.snapshot("Machine"), clock.seconds(), screen_for("Cpus == 1"), ["name"]))
    lines = b"".join(block for block in blocks if block).splitlines()
    expected = [f'{{"Name":"slot{n}"}}'.encode() for n in range(50) if n % 4 == 1 and n % 5]
    assert lines == expected


def test_answer_blocks_stop_at_the_limit(clock):
    store = stored_ads(50, clock)
    blocks = answer_blocks(store.snapshot("Machine"), clock.seconds(), screen_for("true"), [], limit=3)
    assert b"".join(block for block in blocks if block).count(b"\n") == 3
    assert list(answer_blocks(store.snapshot("Machine"), 0, screen_for("true"), [], limit=0)) == []


def test_a_slow_constraint_gives_the_reactor_back_between_slices(clock, monkeypatch):
    """With no time to spare each ad ends a slice: a block (or None) per ad examined."""
    monkeypatch.setattr(answers, "SLICE_SECONDS", -1.0)
    store = stored_ads(20, clock)
    blocks = list(answer_blocks(store.snapshot("Machine"), 0, screen_for("Cpus == 1"), []))
    assert len(blocks) == 20
    assert sum(block is None for block in blocks) == 15


def test_a_projection_line_is_kept_and_matches_a_fresh_one(clock):
    store = stored_ads(1, clock)
    [stored] = store.snapshot("Machine")
    first = stored.projected_line(("cpus", "name"))
    assert first == b'{"Cpus":0,"Name":"slot0"}\n'
    assert stored.projected_line(("cpus", "name")) is first


def answered(store, constraint, ad_type="Machine"):
    """The Names a query answers, through the index when the store can use one."""
    screen = screen_for(constraint)
    candidates = store.candidates(ad_type, screen.tests)
    return [stored.name for stored in candidates if screen.matches(stored.ad, stored.literals)]


def scanned(store, constraint, ad_type="Machine"):
    """The Names the full constraint matches over every ad, in stored order."""
    predicate = compile_constraint(constraint)
    return [stored.name for stored in store.snapshot(ad_type) if predicate(stored.ad)]


def advertise(store, wire):
    store.update("Machine", ad_from_json(wire), wire)


INDEX_CONSTRAINTS = ['State == "Unclaimed"', 'state == "UNCLAIMED" && Cpus > 1', 'Machine == "m1"',
                     'Name == "s3" && State == "Claimed"', 'State != "Claimed"', 'Activity == "Idle"']


def test_an_indexed_query_answers_as_a_full_scan_through_updates_removals_and_expiry(clock):
    store = AdStore(clock)
    for n in range(12):
        advertise(store, {"Name": f"s{n}", "Machine": f"m{n % 3}", "Cpus": n,
                          "State": ["Unclaimed", "claimed", '/Expr(Cpus > 5 ? "Unclaimed" : "Owner")/', 7][n % 4],
                          "ClassAdLifetime": 100 if n % 5 else 10})
    for constraint in INDEX_CONSTRAINTS:
        assert answered(store, constraint) == scanned(store, constraint)
    advertise(store, {"Name": "s0", "Machine": "m0", "State": "Claimed", "Cpus": 9})
    advertise(store, {"Name": "s1", "Machine": "m1", "State": "/Expr(\"unclaimed\")/"})
    store.remove(store.named("Machine", ["s4", "s6"]))
    clock.advance(50)
    assert store.expire() == 2
    for constraint in INDEX_CONSTRAINTS:
        assert answered(store, constraint) == scanned(store, constraint)
    # s0 now Claimed, s1 an expression that is "unclaimed", s4 and s6 removed, s10 expired
    assert answered(store, 'State == "Unclaimed"') == ["s1", "s8"]


def test_an_index_narrows_to_the_ads_that_can_match(clock):
    store = AdStore(clock)
    for n in range(100):
        advertise(store, {"Name": f"s{n}", "Machine": f"m{n}", "State": "Claimed" if n else "/Expr(\"x\")/"})
    assert [stored.name for stored in store.candidates("Machine", screen_for('Machine == "M7"').tests)] == ["s7"]
    assert len(store.candidates("Machine", screen_for('State == "Unclaimed"').tests)) == 1
    assert len(store.candidates("Machine", screen_for('Cpus == 1').tests)) == 100


def test_an_index_forgets_values_no_ad_holds(clock):
    store = AdStore(clock)
    for n in range(5):
        advertise(store, {"Name": f"s{n}", "ClassAdLifetime": 1})
    clock.advance(2)
    store.expire()
    [index] = store._indexes.values()
    assert index._by_value.get("name", {}) == {}
