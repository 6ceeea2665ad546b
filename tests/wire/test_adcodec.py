"""Tests for daemoncore.wire.adcodec with the real classad package."""

import pytest

from daemoncore.wire.adcodec import ad_from_json, ad_to_json
from daemoncore.wire.errors import BadRequest

classad = pytest.importorskip("classad")


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
