"""Tests for collector.store, driven by task.Clock (the clock and store fixtures are
the collector conftest's)."""

import pytest
from twisted.internet.task import Clock

import classad
from collector.errors import AdRejected
from collector.store import AdStore


def machine(name, **attrs):
    return {"MyType": "Machine", "Name": name, **attrs}


def put(store, ad_type, wire, private=False):
    return store.update(ad_type, wire, wire, private=private)


def names(stored_ads):
    return sorted(stored.name for stored in stored_ads)


def test_update_replaces_the_ad_with_the_same_name(store):
    """A second ad with the same Name replaces the first."""
    put(store, "Machine", machine("slot1@a", Cpus=1))
    put(store, "Machine", machine("slot1@a", Cpus=8))
    [stored] = store.query("Machine")
    assert stored.wire["Cpus"] == 8


def test_types_are_kept_apart(store):
    """Ads of different types with the same Name do not collide."""
    put(store, "Machine", machine("x"))
    put(store, "Scheduler", {"Name": "x"})
    assert names(store.query("Machine")) == ["x"]
    assert names(store.query("Any")) == ["x", "x"]


def test_name_is_found_without_case(store):
    """``name`` keys the ad as ``Name`` would."""
    stored = put(store, "Generic", {"name": "lower"})
    assert stored.name == "lower"


@pytest.mark.parametrize("wire", [{}, {"Name": 3}, {"Name": ""}, {"Name": "\\/Expr(Machine)\\/"}])
def test_ad_without_string_name_is_rejected(store, wire):
    """An ad without a literal string Name cannot be stored."""
    with pytest.raises(AdRejected, match="Name"):
        put(store, "Machine", wire)


def test_bad_lifetime_is_rejected(store):
    """A non-positive ClassAdLifetime is refused with the value found."""
    with pytest.raises(AdRejected, match="-5"):
        put(store, "Machine", machine("a", ClassAdLifetime=-5))


def test_private_ads_are_apart_from_public(store):
    """A private ad is not seen by a public query and vice versa."""
    put(store, "Machine", machine("slot1@a"))
    put(store, "Machine", machine("slot1@a", ClaimId="secret"), private=True)
    assert "ClaimId" not in next(store.query("Machine")).wire
    assert next(store.query("Machine", private=True)).wire["ClaimId"] == "secret"


def test_ad_expires_exactly_at_its_lifetime(store, clock):
    """An ad is visible just before its ClassAdLifetime and gone at it."""
    put(store, "Machine", machine("a", ClassAdLifetime=60))
    clock.advance(59.9)
    assert names(store.query("Machine")) == ["a"]
    clock.advance(0.1)
    assert names(store.query("Machine")) == []


def test_default_lifetime_applies_without_classadlifetime(store, clock):
    """An ad without ClassAdLifetime lives for the store's default."""
    put(store, "Machine", machine("a"))
    clock.advance(899)
    assert store.expire() == 0
    clock.advance(1)
    assert store.expire() == 1
    assert store.counts() == {}


def test_reupdate_extends_life(store, clock):
    """Re-advertising an ad starts its lifetime again."""
    put(store, "Machine", machine("a", ClassAdLifetime=60))
    clock.advance(50)
    put(store, "Machine", machine("a", ClassAdLifetime=60))
    clock.advance(50)
    assert names(store.query("Machine")) == ["a"]


def test_expire_sweeps_private_ads_too(store, clock):
    """Expiry drops private ads past their lifetime."""
    put(store, "Machine", machine("a", ClassAdLifetime=10), private=True)
    clock.advance(10)
    assert store.expire() == 1
    assert store.counts(private=True) == {}


def test_invalidate_by_name_removes_public_and_private(store):
    """Invalidating a Name removes both the public and the private ad."""
    put(store, "Machine", machine("a"))
    put(store, "Machine", machine("a"), private=True)
    put(store, "Machine", machine("b"))
    assert store.invalidate_names("Machine", ["a", "missing"]) == 2
    assert names(store.query("Machine")) == ["b"]
    assert names(store.query("Machine", private=True)) == []


def test_invalidate_by_predicate(store):
    """Invalidating by a predicate removes exactly the matching ads."""
    for n in range(6):
        put(store, "Machine", machine(f"m{n}", Cpus=n))
    assert store.invalidate_matching("Machine", lambda ad: ad["Cpus"] % 2 == 0) == 3
    assert names(store.query("Machine")) == ["m1", "m3", "m5"]


def test_query_filters_and_limits(store):
    """A query returns only matching ads, at most ``limit`` of them."""
    for n in range(10):
        put(store, "Machine", machine(f"m{n}", Cpus=n))
    assert len(list(store.query("Machine", lambda ad: ad["Cpus"] >= 5))) == 5
    assert len(list(store.query("Machine", lambda ad: ad["Cpus"] >= 5, limit=2))) == 2
    assert list(store.query("Machine", limit=0)) == []


def test_query_is_a_snapshot(store):
    """Updates while a query is being read do not break the iteration."""
    for n in range(5):
        put(store, "Machine", machine(f"m{n}"))
    seen = []
    for stored in store.query("Machine"):
        seen.append(stored.name)
        put(store, "Machine", machine(f"new{len(seen)}"))
    assert len(seen) == 5


def test_any_cannot_be_advertised(store):
    """Any is a query-only type."""
    with pytest.raises(AdRejected, match="Any"):
        put(store, "Any", machine("a"))


def test_scan_marks_each_ad_that_does_not_match_with_none():
    """scan yields None per miss (so a stream can pause between ads); query skips them."""
    store = AdStore(Clock())
    for name in ("a", "b", "c"):
        store.update("Machine", name, {"Name": name})
    picked = list(store.scan("Machine", lambda ad: ad == "b"))
    assert [None if stored is None else stored.name for stored in picked] == [None, "b", None]
    assert [stored.name for stored in store.query("Machine", lambda ad: ad == "b")] == ["b"]


def test_a_user_of_several_schedds_is_one_submitter_ad_per_schedd(store):
    """Submitter ads are keyed by Name and ScheddName, as HTCondor keys them: the same
    user at two schedds (or flocking in from another pool) is two ads, and withdrawing
    one schedd's leaves the other's."""
    for schedd in ("submit1", "submit2"):
        wire = {"MyType": "Submitter", "Name": "alice@pool", "ScheddName": schedd, "IdleJobs": 1}
        store.update("Submitter", classad.ClassAd(wire), wire)
    assert sorted(ad.wire["ScheddName"] for ad in store.query("Submitter")) == ["submit1", "submit2"]
    [first] = [ad for ad in store.named("Submitter", ["alice@pool"]) if ad.wire["ScheddName"] == "submit1"]
    assert store.remove([first]) == 1
    assert [ad.wire["ScheddName"] for ad in store.query("Submitter")] == ["submit2"]


def test_an_ad_stored_unparsed_is_parsed_once_when_a_constraint_needs_it(store):
    """An ad stored without its parsed form is parsed from its JSON on first use, as
    ad_from_json parses it, and that parse is kept."""
    from daemoncore.wire.adcodec import ad_from_json, ad_to_json

    wire = machine("slot1@a", Cpus=4, cpus=8, Start="/Expr(Cpus > 2)/", Tags=["a", 1])
    stored = store.update("Machine", None, wire)
    assert ad_to_json(stored.ad) == ad_to_json(ad_from_json(wire))
    assert stored.ad is stored.ad


def test_a_screening_verdict_is_kept_until_the_ad_is_replaced(store):
    """An ad keeps what a constraint's screen told of it; its replacement starts with
    no verdicts, so an update is never answered with the earlier ad's verdict."""
    from collector.screening import screen_for

    unclaimed = screen_for('State == "Unclaimed" && Cpus >= 4')
    first = store.update("Machine", None, machine("slot1@a", State="Unclaimed", Cpus=4))
    assert first.verdict(unclaimed) is True
    assert first._verdicts == {unclaimed.text: True}
    second = store.update("Machine", None, machine("slot1@a", State="Claimed", Cpus=4))
    assert second._verdicts == {}
    assert second.verdict(unclaimed) is False
    assert first.verdict(unclaimed) is True


def test_a_verdict_the_tests_cannot_decide_is_left_to_the_full_constraint(store):
    """Only the literal comparisons' verdict is kept: a constraint with other parts (the
    time, an expression attribute) is evaluated in full every time."""
    from collector.screening import screen_for

    timed = screen_for('State == "Unclaimed" && LastHeardFrom > time() - 60')
    stored = store.update("Machine", None, machine("slot1@a", State="Unclaimed", LastHeardFrom=0))
    assert stored.verdict(timed) is None
    expression = screen_for('Cpus >= 4')
    stored = store.update("Machine", None, machine("slot2@a", Cpus="/Expr(2 * 2)/"))
    assert stored.verdict(expression) is None
    assert expression.predicate(stored.ad) is True


def test_verdicts_and_projections_kept_per_ad_are_bounded(store):
    """An ad keeps at most CACHED_VERDICTS verdicts and CACHED_PROJECTIONS lines; the
    answers past them are worked out afresh and are the same."""
    from collector.screening import screen_for
    from collector.store import CACHED_PROJECTIONS, CACHED_VERDICTS

    stored = store.update("Machine", None, machine("slot1@a", Cpus=4))
    for n in range(CACHED_VERDICTS + 3):
        assert stored.verdict(screen_for(f"Cpus >= {n}")) is (n <= 4)
    assert len(stored._verdicts) == CACHED_VERDICTS
    for n in range(CACHED_PROJECTIONS + 3):
        assert stored.projected_line(("cpus", f"x{n}")) == b'{"Cpus":4}\n'
    assert len(stored._projected_lines) == CACHED_PROJECTIONS


def test_an_ads_whole_line_is_encoded_once_when_first_asked_for(store):
    """The whole ad's NDJSON line is its wire form encoded, made on first use and kept."""
    from daemoncore.wire.ndjson import encode_line

    stored = put(store, "Machine", machine("slot1@a", Cpus=4, Start="/Expr(true)/"))
    line = stored.line
    assert line == encode_line(stored.wire)
    assert stored.line is line


def test_lifetime_and_submitter_schedd_are_found_without_case(store, clock):
    """ClassAdLifetime and a Submitter's ScheddName spelled in another case still count,
    and an ad without them gets the default lifetime and is keyed by Name alone."""
    put(store, "Machine", machine("short", CLASSADLIFETIME=5))
    put(store, "Machine", machine("long"))
    put(store, "Submitter", {"Name": "alice@pool", "scheddname": "s1"})
    put(store, "Submitter", {"Name": "alice@pool", "SCHEDDNAME": "s2"})
    put(store, "Submitter", {"Name": "bob@pool"})
    assert names(store.query("Submitter")) == ["alice@pool", "alice@pool", "bob@pool"]
    clock.advance(6)
    assert names(store.query("Machine")) == ["long"]
