"""Tests for jobmodel.concurrency_limits: reading a job's ConcurrencyLimits as HTCondor does."""

import pytest

from jobmodel.concurrency_limits import LimitSyntaxError, parse_limits


def test_parse_limits_lower_cases_names_and_reads_weights():
    """`A, B.x, C:3` is a (name, weight) list, names lower-cased, weight 1 by default."""
    assert parse_limits("A, B.x C:3,d:0.5") == (("a", 1.0), ("b.x", 1.0), ("c", 3.0), ("d", 0.5))


@pytest.mark.parametrize("text, fragment", [
    ("a.b.c", "at most one dot"), ("lic:0", "positive number"), ("lic:x", "positive number"),
    ("9lives", "letters, digits"), ("lic:-1", "positive number"), ("lic:inf", "positive number"),
])
def test_bad_limits_are_refused_naming_the_entry(text, fragment):
    """A name with two dots, a bad start or a weight that is not positive is refused, naming it."""
    with pytest.raises(LimitSyntaxError, match=fragment) as caught:
        parse_limits(text)
    assert repr(text) in str(caught.value)
