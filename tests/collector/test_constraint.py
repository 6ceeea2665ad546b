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
