"""Submit commands checked against HTCondor's own rules (SubmitHash in
src/condor_utils/submit_utils.cpp and the condor_submit manual page), one rule a test;
each docstring names where the rule is."""

from __future__ import annotations

import warnings

import pytest

from bindings.submit import Submit
from schedd.submit import SubmitError


def job(text: str, executable: str = "/bin/true"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return next(iter(Submit(f"executable = {executable}\n{text}\nqueue\n").jobs(owner="alice")))


def refused(text: str) -> str:
    with pytest.raises(SubmitError) as info:
        job(text)
    return str(info.value)


def expr(ad, name: str) -> str:
    return str(ad.lookup(name))


# --- GPUs: SubmitHash::SetRequestGpus and SubmitHash::SetResourceRequirements ---------

def test_require_gpus_keeps_its_own_test_of_a_property():
    """SetResourceRequirements: a gpus_minimum_/maximum_ clause is left out when
    require_gpus already refers to that GPU property; the attribute is still set."""
    ad = job("request_gpus = 1\nrequire_gpus = Capability > 7\ngpus_minimum_capability = 8\n"
             "gpus_minimum_memory = 4G")
    assert expr(ad, "RequireGPUs") == "Capability > 7 && GlobalMemoryMb >= GPUsMinMemory"
    assert ad["GPUsMinCapability"] == 8
    assert ad["GPUsMinMemory"] == 4096


def test_require_gpus_with_or_is_parenthesised_before_clauses_are_added():
    """SetResourceRequirements wraps require_gpus for && (check_expr_and_wrap_for_op)."""
    ad = job("request_gpus = 1\nrequire_gpus = DeviceName == \"A\" || DeviceName == \"B\"\n"
             "gpus_minimum_runtime = 12.1")
    assert expr(ad, "RequireGPUs") == ('(DeviceName == "A" || DeviceName == "B") && '
                                       "MaxSupportedVersion >= GPUsMinRuntime")


@pytest.mark.parametrize("text, value", [("12.1", 12010), ("11.2", 11020), ("12", 12000),
                                         ("12010", 12010), ("9.05", 9050)])
def test_gpus_minimum_runtime_is_major_times_1000_plus_minor_times_10(text, value):
    """SetRequestGpus: x.y is x*1000 + y*10; a bare number above 1000 is already canonical."""
    assert job(f"request_gpus = 1\ngpus_minimum_runtime = {text}")["GPUsMinRuntime"] == value


def test_gpu_constraints_need_a_gpu_request():
    """SetRequestGpus reads require_gpus and the gpus_ constraints only when RequestGPUs is set."""
    ad = job("require_gpus = Capability > 8\ngpus_minimum_memory = 4G")
    assert "RequireGPUs" not in ad and "GPUsMinMemory" not in ad
