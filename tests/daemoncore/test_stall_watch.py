"""Tests for daemoncore.stall_watch: the sampler's reports, on made-up times."""

import sys

from twisted.internet.task import Clock

from daemoncore.config import Config
from daemoncore.stall_watch import LATE_SECONDS, StallSampler, StallWatch, stall_watch_from_config


def _held_here(sampler, start, looks):
    """Looks at the sampler while this function holds the 'reactor' from ``start``."""
    for when in looks:
        assert sampler.look(start + when, sys._getframe()) is None


def test_a_stall_over_the_threshold_is_reported_with_where_it_was_spent():
    sampler = StallSampler(threshold=0.05, now=0.0)
    assert sampler.look(0.004, sys._getframe()) is None  # the heartbeat is fresh: nothing held
    _held_here(sampler, 0.0, [0.03, 0.06, 0.09])
    sampler.beat(0.1)
    report = sampler.look(0.101, None)
    assert report.startswith("reactor held 90 ms; 3 samples")
    assert "3x " in report and "_held_here" in report and "test_stall_watch.py" in report


def test_a_stall_under_the_threshold_is_not_reported_and_is_forgotten():
    sampler = StallSampler(threshold=0.5, now=0.0)
    _held_here(sampler, 0.0, [0.03, 0.06])
    sampler.beat(0.07)
    assert sampler.look(0.071, None) is None
    _held_here(sampler, 0.07, [LATE_SECONDS + 0.01])
    sampler.beat(0.2)
    assert sampler.look(0.201, None) is None


def test_the_watch_is_off_unless_configured():
    assert stall_watch_from_config(Config.from_text(""), Clock()) is None
    watch = stall_watch_from_config(Config.from_text("REACTOR_STALL_REPORT_MS = 100"), Clock())
    assert isinstance(watch, StallWatch)
