"""Tests for collector.constraint against the real classad package."""

import pytest

from collector.constraint import compile_constraint
from collector.errors import ConstraintError

classad = pytest.importorskip("classad")
if not hasattr(classad, "ExprTree"):
    pytest.skip("classad.ExprTree not there yet", allow_module_level=True)


def test_true_constraint_matches_without_parsing():
    """An empty or true constraint matches anything."""
    assert compile_constraint(None)(object())
    assert compile_constraint(" TRUE ")(object())


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


def test_deeply_nested_constraint_is_a_constraint_error():
    """A constraint nested beyond what the parser follows is refused cleanly."""
    with pytest.raises(ConstraintError):
        compile_constraint("(" * 20_000 + "1" + ")" * 20_000)
