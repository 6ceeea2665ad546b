"""Tests for daemoncore.wire.adcodec, the one codec of ads on the wire."""

import pytest

import classad
from classad.limits import MAX_DEPTH
from daemoncore.wire.adcodec import MAX_ATTRIBUTES, MAX_SHARED_TEXT, WireAdError, ad_from_json, ad_to_json
from daemoncore.wire.errors import BadRequest


def test_expression_attribute_becomes_an_expression():
    """A "/Expr(...)/" string is parsed as an expression, not kept as a string."""
    ad = ad_from_json({"Cpus": 2, "Double": "/Expr(Cpus * 2)/", "Path": "/tmp/x"})
    assert ad.eval("Double") == 4
    assert ad.eval("Path") == "/tmp/x"


def test_round_trip_keeps_literals_and_expressions():
    """An ad printed back to JSON has the same literals and expressions."""
    wire = {"Name": "slot1@a", "Memory": 4096, "Requirements": "/Expr(TARGET.RequestCpus <= 4)/"}
    back = ad_to_json(ad_from_json(wire))
    assert back["Name"] == "slot1@a" and back["Memory"] == 4096
    assert back["Requirements"].startswith("/Expr(")


def test_non_object_is_refused_with_its_place():
    """Something other than an object is a 400 naming where it was."""
    with pytest.raises(BadRequest, match=r"\$\.ads\[2\]"):
        ad_from_json([1, 2], "$.ads[2]")


def test_ad_from_json_is_a_classad():
    """What comes off the wire is always a ClassAd, never the raw JSON object."""
    assert isinstance(ad_from_json({}), classad.ClassAd)


def test_lists_and_nested_ads_travel_as_json_with_expressions_inside():
    """A list or nested ad is a JSON array or object, and "/Expr(...)/" inside it is an
    expression, both ways."""
    ad = ad_from_json({"Cpus": 2, "L": [1, "/Expr(Cpus + 1)/", {"a": "/tmp"}]})
    assert ad.eval("L")[:2] == [1, 3]
    assert ad_to_json(ad)["L"] == [1, "/Expr(Cpus + 1)/", {"a": "/tmp"}]


def test_literals_round_trip_exactly():
    """Integers (64-bit), reals, booleans, strings and undefined keep their JSON form."""
    wire = {"I": 7, "R": 1.5, "B": True, "S": "/Expr(no", "U": None}
    assert ad_to_json(ad_from_json(wire)) == wire


def test_names_differing_in_case_are_one_attribute():
    """As in HTCondor's JSON reader, the later value wins and the first spelling stays."""
    ad = ad_from_json({"Start": True, "START": False})
    assert list(ad) == ["Start"] and ad.eval("Start") is False


def test_bad_expression_is_a_400_and_a_value_error():
    """An expression that does not parse names its attribute; daemons answer it with
    400 and clients may catch it as a ValueError."""
    with pytest.raises(WireAdError, match=r"\$\.cluster_ad\.Requirements") as caught:
        ad_from_json({"Requirements": "/Expr(Cpus >= (4)/"}, "$.cluster_ad")
    assert isinstance(caught.value, BadRequest) and isinstance(caught.value, ValueError)


def test_too_many_attributes_or_too_deep_nesting_is_refused():
    """Bounds keep a hostile ad from costing the daemon memory or stack."""
    with pytest.raises(WireAdError, match="more than"):
        ad_from_json({f"A{n}": n for n in range(MAX_ATTRIBUTES + 1)})
    nested: list = []
    for _ in range(MAX_DEPTH + 5):
        nested = [nested]
    with pytest.raises(WireAdError, match=r"ad\.Deep"):
        ad_from_json({"Deep": nested})


def test_ads_read_off_the_wire_share_entries_of_equal_plain_values():
    """Two job ads with the same Owner and Requirements share those entries (what is
    made of one, its closure or printed line, serves both); a different value does not."""
    first = ad_from_json({"Owner": "alice", "Requirements": "/Expr(Cpus > 1)/", "ProcId": 0})
    second = ad_from_json({"Owner": "alice", "Requirements": "/Expr(Cpus > 1)/", "ProcId": 1})
    mine, theirs = first.entries_by_key(), second.entries_by_key()
    assert mine["owner"] is theirs["owner"] and mine["requirements"] is theirs["requirements"]
    assert mine["procid"] is not theirs["procid"]
    assert (first["ProcId"], second["ProcId"]) == (0, 1)
    assert first.printOld() != second.printOld() and "ProcId = 1" in second.printOld()


def test_a_long_text_value_is_not_kept_for_sharing():
    """Values longer than MAX_SHARED_TEXT are read afresh each time (a client cannot make
    the daemon keep large texts)."""
    text = "x" * (MAX_SHARED_TEXT + 1)
    first, second = ad_from_json({"Env": text}), ad_from_json({"Env": text})
    assert first.entries_by_key()["env"] is not second.entries_by_key()["env"]
    assert second["Env"] == text


def test_json_of_a_derived_ad_has_its_own_values():
    """An entry's JSON value is kept on it, and a derived ad's changed attribute is a new entry."""
    base = ad_from_json({"Owner": "alice", "JobStatus": 1, "Cmd": "/Expr(strcat(\"a\", \"b\"))/"})
    assert ad_to_json(base) == {"Cmd": '/Expr(strcat("a","b"))/', "Owner": "alice", "JobStatus": 1}
    changed = base.derive([("JobStatus", classad.ExprTree("2").node)])
    assert ad_to_json(changed)["JobStatus"] == 2 and ad_to_json(base)["JobStatus"] == 1
