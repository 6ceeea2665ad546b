"""The classad2-compatible Python API: ClassAd as a mapping, ExprTree, the text
forms in both directions, matching, and user-registered functions."""

from __future__ import annotations

import datetime

import pytest

import classad
from classad import ClassAd, ExprTree, ParserType, Value


def test_keys_are_case_insensitive_and_keep_their_first_spelling() -> None:
    ad = ClassAd()
    ad["RequestMemory"] = 1024
    ad["requestmemory"] = 2048
    assert ad["REQUESTMEMORY"] == 2048
    assert list(ad) == ["RequestMemory"]
    assert "requestMEMORY" in ad


def test_reading_a_key_gives_literals_as_python_values_and_expressions_as_trees() -> None:
    ad = ClassAd('[ a = 1; b = a + 1; s = "x"; u = undefined; l = { 1, "two" }; n = [ q = 1 ] ]')
    assert ad["a"] == 1 and ad["s"] == "x" and ad["u"] is Value.Undefined
    assert isinstance(ad["b"], ExprTree) and str(ad["b"]) == "a + 1"
    assert ad["l"] == [1, "two"]
    assert isinstance(ad["n"], ClassAd) and ad["n"]["q"] == 1
    with pytest.raises(KeyError):
        ad["missing"]


def test_eval_resolves_references_within_the_ad() -> None:
    ad = ClassAd('[ a = 1; b = a + 1; c = b * 10 ]')
    assert ad.eval("c") == 20
    assert ad.lookup("c").eval(ad) == 20


def test_python_values_convert_both_ways() -> None:
    ad = ClassAd({"i": 3, "f": 2.5, "s": "str", "b": True, "l": [1, 2], "d": {"x": 1}, "n": None})
    assert ad.eval("i") == 3 and ad.eval("f") == 2.5 and ad.eval("b") is True
    assert ad.eval("l") == [1, 2] and ad.eval("n") is Value.Undefined
    assert ad.eval("d")["x"] == 1
    when = datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    ad["t"] = when
    assert ad.eval("t") == when


def test_attribute_order_is_by_length_then_name() -> None:
    ad = ClassAd("[B = 1; a = 2; Ccc = 3; dd = 4]")
    assert list(ad) == ["a", "B", "dd", "Ccc"]
    assert ad.unparse() == "[ a = 2; B = 1; dd = 4; Ccc = 3 ]"


def test_old_syntax_round_trips() -> None:
    ad = ClassAd('[ Cmd = "/bin/sleep"; Args = "60"; Requirements = TARGET.Memory >= 1024; Iwd = "a\\\\b" ]')
    text = ad.printOld()
    assert "Requirements = TARGET.Memory >= 1024\n" in text
    again = classad.parseOne(text, ParserType.Old)
    assert again.unparse_map() == ad.unparse_map()


def test_json_round_trips_expressions_and_literals() -> None:
    ad = ClassAd('[ a = 1; b = a + 1; s = "x/y"; l = { 1, 2 }; n = [ q = 1.5 ]; u = undefined ]')
    text = ad.printJson()
    assert '"\\/Expr(a + 1)\\/"' in text
    again = classad.parseNext(text, ParserType.JSON)
    assert again.unparse_map() == ad.unparse_map()
    assert again.eval("b") == 2


def test_parse_ads_reads_every_form_and_detects_it() -> None:
    new = list(classad.parseAds("[ a = 1 ] [ a = 2 ]"))
    old = list(classad.parseAds("a = 1\n\na = 2\n"))
    js = list(classad.parseAds('[{"a": 1}, {"a": 2}]', ParserType.JSON))
    assert [ad["a"] for ad in new] == [ad["a"] for ad in old] == [ad["a"] for ad in js] == [1, 2]


def test_matching_binds_my_and_target_as_the_negotiator_does() -> None:
    job = ClassAd('[ RequestMemory = 2048; Requirements = TARGET.Memory >= MY.RequestMemory; Rank = TARGET.Memory ]')
    big = ClassAd('[ Memory = 4096; Requirements = TARGET.RequestMemory <= MY.Memory ]')
    small = ClassAd('[ Memory = 1024; Requirements = true ]')
    assert job.symmetricMatch(big) and not job.symmetricMatch(small)
    assert small.matches(job) is False and job.matches(small) is True
    assert job.lookup("Rank").eval(job, big) == 4096


def test_refs_and_flatten() -> None:
    ad = ClassAd("[ a = 1; b = 2 ]")
    expr = ExprTree("a + b + c + TARGET.d")
    assert sorted(ad.internalRefs(expr)) == ["a", "b"]
    assert sorted(ad.externalRefs(expr)) == ["TARGET.d", "c"]
    assert str(ad.flatten(ExprTree("a + b > c"))) == "3 > c"


def test_quote_and_unquote_are_inverses() -> None:
    text = 'he said "hi"\n\té'
    assert classad.unquote(classad.quote(text)) == text


def test_registered_python_functions_are_callable_from_expressions() -> None:
    classad.register(lambda x, y: x * y + 1, name="mulPlusOne")
    assert ExprTree("mulPlusOne(6, 7)").eval() == 43
    assert ExprTree("mulplusone(1)").eval() is Value.Error


def test_unknown_functions_evaluate_to_error() -> None:
    assert ExprTree("noSuchFunction(1)").eval() is Value.Error


def test_str_of_an_ad_is_new_syntax_that_parses_back() -> None:
    ad = ClassAd('[ a = 1; b = { 1, 2 }; c = [ d = "x" ] ]')
    assert ClassAd(str(ad)).unparse_map() == ad.unparse_map()


def test_compiled_expression_evaluates_against_many_ads() -> None:
    """compile_expression gives a reusable function of (scope, target)."""
    matches = classad.compile_expression("Memory >= 2048 && TARGET.Owner == \"alice\"")
    job = ClassAd('[ Owner = "alice" ]')
    assert [matches(ClassAd({"Memory": m}), job) for m in (1024, 4096)] == [False, True]
    assert matches(ClassAd({"Memory": 4096})) is Value.Undefined
