"""Tests for classad.compile_constraint, the one constraint compiler the collector
and the schedd share."""

import pytest

import classad
from classad import ConstraintError, compile_constraint, is_everything
from classad.constraint import CACHED_CONSTRAINTS, MAX_CONSTRAINT_CHARS


def test_true_constraint_matches_without_parsing():
    """An empty or true constraint matches anything, and says so."""
    assert compile_constraint(None)(object())
    assert compile_constraint(" TRUE ")(object())
    assert is_everything(compile_constraint(""))
    assert not is_everything(compile_constraint("Cpus > 1"))


def test_constraint_is_true_only_for_boolean_true():
    """An ad matches when the expression is true; false or undefined do not match."""
    match = compile_constraint("Cpus >= 4")
    assert match(classad.ClassAd({"Cpus": 8}))
    assert not match(classad.ClassAd({"Cpus": 2}))
    assert not match(classad.ClassAd({}))


def test_bad_constraint_names_the_parse_error():
    """A constraint that does not parse raises ConstraintError quoting it."""
    with pytest.raises(ConstraintError, match=r"Cpus >= \(4"):
        compile_constraint("Cpus >= (4")


def test_too_long_constraint_is_refused_before_parsing():
    """A constraint over the length bound is a ConstraintError naming the bound."""
    with pytest.raises(ConstraintError, match=str(MAX_CONSTRAINT_CHARS)):
        compile_constraint("x" * (MAX_CONSTRAINT_CHARS + 1))


@pytest.mark.parametrize(
    "text",
    ["Cpus >= 4 && Memory > 100", 'State == "unclaimed"', "MY.Cpus * 2 == Double", "Missing =!= undefined",
     "isUndefined(Missing)", "Cpus / 0 > 1", 'regexp("^slot", Name)'],
)
def test_compiled_predicate_agrees_with_exprtree(text):
    """The predicate matches exactly the ads for which ExprTree.evaluate gives true."""
    ads = [classad.ClassAd({"Name": f"slot{n}", "Cpus": n, "Memory": 50 * n, "State": "Unclaimed"}) for n in range(8)]
    for ad in ads:
        ad["Double"] = classad.ExprTree("Cpus * 2")
    tree = classad.ExprTree(text)
    assert [compile_constraint(text)(ad) for ad in ads] == [tree.evaluate(ad) is True for ad in ads]
    assert [compile_constraint(tree)(ad) for ad in ads] == [tree.evaluate(ad) is True for ad in ads]


def test_deeply_nested_constraint_is_a_constraint_error():
    """A constraint nested beyond what the parser follows is refused cleanly."""
    with pytest.raises(ConstraintError):
        compile_constraint("(" * 20_000 + "1" + ")" * 20_000)


def test_same_text_is_compiled_once():
    """A constraint seen again reuses its compiled predicate."""
    assert compile_constraint('Owner == "cached"') is compile_constraint('Owner == "cached"')


def test_cache_is_bounded():
    """Past the bound, the oldest texts are compiled again rather than kept forever."""
    first = compile_constraint("Cpus == -1")
    for n in range(CACHED_CONSTRAINTS):
        compile_constraint(f"Cpus == {n}")
    assert compile_constraint("Cpus == -1") is not first


def test_failing_evaluation_is_no_match():
    """An ad in which evaluating the constraint overflows the interpreter's stack, or
    something that is not an ad at all, does not match; nothing raises."""
    deep = classad.ClassAd({"A0": 1})
    for n in range(1, 3000):
        deep[f"A{n}"] = classad.ExprTree(f"A{n - 1} + 1")
    match = compile_constraint("A2999 > 0")
    assert not match(deep)
    assert not match(object())
    assert match(classad.ClassAd({"A2999": 1}))
