"""Submit's concurrency_limits and concurrency_limits_expr (schedd.submit.jobad.concurrency_limits)."""

from __future__ import annotations

import pytest

from bindings.submit import Submit


def job_of(text: str):
    [ad] = Submit("executable = /bin/true\n" + text + "queue\n").jobs(clusterid=1, qdate=1700000000,
                                                                       owner="alice")
    return ad


def test_limits_are_lower_cased_sorted_and_keep_weights():
    """`concurrency_limits = Matlab:2, sw.License` becomes "matlab:2,sw.license"."""
    assert job_of("concurrency_limits = Matlab:2, sw.License\n")["ConcurrencyLimits"] == "matlab:2,sw.license"


def test_a_limits_expression_stays_an_expression_for_the_negotiator():
    """concurrency_limits_expr is kept as an expression in ConcurrencyLimits, as HTCondor does."""
    ad = job_of('concurrency_limits_expr = strcat("lic_", TARGET.Site)\n')
    assert str(ad.lookup("ConcurrencyLimits")) == 'strcat("lic_",TARGET.Site)'


@pytest.mark.parametrize("text, fragment", [
    ("concurrency_limits = a.b.c\n", "at most one dot"),
    ("concurrency_limits = lic:0\n", "positive number"),
    ("concurrency_limits = lic:lots\n", "positive number"),
    ("concurrency_limits = lic\nconcurrency_limits_expr = \"lic\"\n", "can't be used together"),
])
def test_bad_limits_are_refused_naming_the_command(text, fragment):
    """A bad name or weight, or both commands at once, refuse the submit naming the command."""
    with pytest.raises(ValueError, match=fragment) as caught:
        job_of(text)
    assert "concurrency_limits" in str(caught.value)
