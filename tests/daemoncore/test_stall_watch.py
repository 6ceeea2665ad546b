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


def _turn_looks(sampler, turn, since, times, long_turn=(0, 0.0), polling=False):
    """Looks at a turn-watching sampler during turn ``turn`` begun at ``since``; the reports."""
    return [sampler.look(since + when, turn, since, polling, long_turn, sys._getframe()) for when in times]


def test_a_long_turn_is_reported_once_it_ends_with_the_reactors_own_count():
    """A turn sampled while held is reported when the next begins, with the time the
    reactor noted for it (not the last look's)."""
    from daemoncore.stall_watch import TurnSampler

    sampler = TurnSampler(threshold=0.05)
    assert _turn_looks(sampler, 1, 0.0, [0.01, 0.03, 0.06]) == [None, None, None]
    [report] = _turn_looks(sampler, 2, 0.1, [0.001], long_turn=(1, 0.083))
    assert report.startswith("reactor turn took 83 ms; 2 samples") and "_turn_looks" in report


def test_short_turns_waits_in_the_poll_and_the_start_turn_are_not_reported():
    """A turn under the threshold, a long wait in the poll, and the watch's first turn
    (the daemon's start) give no report."""
    from daemoncore.stall_watch import TurnSampler

    sampler = TurnSampler(threshold=0.05, skip=7)
    _turn_looks(sampler, 7, 0.0, [0.03, 0.09])
    assert _turn_looks(sampler, 8, 0.1, [0.03], long_turn=(7, 0.1)) == [None]
    assert _turn_looks(sampler, 9, 0.2, [0.5, 1.0], long_turn=(8, 0.03), polling=True) == [None, None]
    assert _turn_looks(sampler, 10, 1.3, [0.001], long_turn=(8, 0.03)) == [None]
