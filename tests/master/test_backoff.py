"""Restart waits and the knobs that set them."""

import pytest

from daemoncore.config import Config
from daemoncore.master.backoff import BackoffPolicy


def test_default_waits_follow_htcondor_constant_plus_power():
    """With the defaults the waits are 10, 11, 13 seconds ... capped at an hour."""
    policy = BackoffPolicy()
    assert [policy.delay(n) for n in range(3)] == [10, 11, 13]
    assert policy.delay(50) == 3600
    assert policy.delay(100000) == 3600


def test_policy_reads_the_master_backoff_knobs():
    """MASTER_BACKOFF_CONSTANT, _FACTOR, _CEILING and MASTER_RECOVER_FACTOR set the policy."""
    config = Config.from_text("MASTER_BACKOFF_CONSTANT = 0\nMASTER_BACKOFF_FACTOR = 3\n"
                              "MASTER_BACKOFF_CEILING = 20\nMASTER_RECOVER_FACTOR = 5\n")
    policy = BackoffPolicy.from_config(config)
    assert [policy.delay(n) for n in range(4)] == [1, 3, 9, 20]
    assert policy.restarts_after(4, ran_for=5) == 0
    assert policy.restarts_after(4, ran_for=4.9) == 5


def test_a_negative_constant_is_refused():
    """A negative backoff constant is an error, not a negative wait."""
    with pytest.raises(ValueError):
        BackoffPolicy(constant=-1)
