"""Tests of schedd/flocking.py: the flock knobs and each submitter's flock level."""

import pytest
from twisted.internet import task
from twisted.logger import formatEvent, globalLogPublisher

from daemoncore.config import Config, ConfigError
from schedd.flocking import FlockLevels, FlockSettings

INTERVAL = 10.0


def settings(text: str) -> FlockSettings:
    return FlockSettings.from_config(Config.from_text(text))


@pytest.fixture
def flock_clock() -> task.Clock:
    return task.Clock()


def levels(clock, text="FLOCK_TO = cmb, cmc:9700, cmd\n") -> FlockLevels:
    return FlockLevels(settings(text), clock, INTERVAL)


def test_flock_to_sets_collectors_and_negotiators_with_the_collector_port():
    """FLOCK_TO names central managers; without a port they mean 9618, and both lists follow it."""
    found = settings("FLOCK_TO = cmb, cmc:9700\n")
    assert [str(a) for a in found.collectors] == ["cmb:9618", "cmc:9700"]
    assert found.negotiators == found.collectors
    assert (found.increment, found.min_level, found.dead_collector_avoidance) == (1, 0, 3600.0)


def test_flock_collector_hosts_wins_over_flock_to():
    """FLOCK_COLLECTOR_HOSTS, when set, is used instead of FLOCK_TO's list."""
    found = settings("FLOCK_TO = cmb\nFLOCK_COLLECTOR_HOSTS = cmx:1234\n")
    assert [str(a) for a in found.collectors] == ["cmx:1234"]
    assert [str(a) for a in found.negotiators] == ["cmb:9618"]


def test_no_flock_to_means_no_flocking():
    """Without FLOCK_TO the schedd has no flock collectors and every level is 0."""
    found = settings("")
    assert found.collectors == () and found.max_level == 0


@pytest.mark.parametrize("text, knob", [
    ("FLOCK_TO = cmb:99999\n", "FLOCK_TO"),
    ("FLOCK_TO = cmb, cmb:9618\n", "FLOCK_TO"),
    ("FLOCK_COLLECTOR_HOSTS = ftp://cmb\n", "FLOCK_COLLECTOR_HOSTS"),
    ("FLOCK_INCREMENT = 0\n", "FLOCK_INCREMENT"),
    ("FLOCK_INCREMENT = many\n", "FLOCK_INCREMENT"),
    ("MIN_FLOCK_LEVEL = -1\n", "MIN_FLOCK_LEVEL"),
    ("DEAD_COLLECTOR_MAX_AVOIDANCE_TIME = soon\n", "DEAD_COLLECTOR_MAX_AVOIDANCE_TIME"),
])
def test_a_bad_knob_is_refused_naming_it(text, knob):
    """A malformed or out-of-range flock knob is a ConfigError naming that knob."""
    with pytest.raises(ConfigError, match=knob):
        settings(text)


def test_level_of_matches_host_and_port_whatever_the_tls_marker():
    """A trusted pool's collector address is found at its place in the list, TLS or not."""
    found = settings("FLOCK_TO = 198.18.1.2, cmc\n")
    from daemoncore.wire.address import parse_address
    assert found.level_of(parse_address("<198.18.1.2:9618?tls=1>")) == 1
    assert found.level_of(parse_address("cmc:9618")) == 2
    assert found.level_of(parse_address("other:9618")) is None


def test_a_new_submitter_starts_at_min_flock_level(flock_clock):
    """MIN_FLOCK_LEVEL collectors get the ad always, even before any negotiation."""
    flock = levels(flock_clock, "FLOCK_TO = cmb, cmc, cmd\nMIN_FLOCK_LEVEL = 2\n")
    assert flock.level("alice@a") == 2
    assert flock.targets("alice@a") == (1, 2)


def test_min_flock_level_is_capped_by_the_list(flock_clock):
    """MIN_FLOCK_LEVEL above the number of flock pools means all of them."""
    flock = levels(flock_clock, "FLOCK_TO = cmb\nMIN_FLOCK_LEVEL = 5\n")
    assert flock.targets("alice@a") == (1,)


def test_home_cycle_ending_with_idle_jobs_raises_the_level(flock_clock):
    """The home negotiator asking a second time while jobs are still idle sends the submitter to the first flock pool."""
    flock = levels(flock_clock)
    flock.negotiating("alice@a", 0, idle=5)
    assert flock.level("alice@a") == 0
    flock_clock.advance(2)
    flock.negotiating("alice@a", 0, idle=4)
    assert flock.level("alice@a") == 1 and flock.targets("alice@a") == (1,)


def test_home_cycles_that_run_everything_never_flock(flock_clock):
    """A submitter whose idle jobs are all taken at home stays at level 0."""
    flock = levels(flock_clock)
    for _ in range(5):
        flock.negotiating("alice@a", 0, idle=0)
        flock.check({"alice@a": 0})
        flock_clock.advance(INTERVAL)
    assert flock.level("alice@a") == 0 and flock.effective() == ()


def test_only_the_current_levels_negotiator_raises_it(flock_clock):
    """At level 1 the home negotiator's cycles do not raise the level; pool 1's do, to pool 2."""
    flock = levels(flock_clock)
    flock.negotiating("alice@a", 0, idle=5)
    flock.negotiating("alice@a", 0, idle=5)
    for _ in range(3):
        flock.negotiating("alice@a", 0, idle=5)
    assert flock.level("alice@a") == 1
    flock.negotiating("alice@a", 1, idle=5)
    assert flock.level("alice@a") == 1
    flock.negotiating("alice@a", 1, idle=5)
    assert flock.level("alice@a") == 2


def test_flock_increment_steps_and_the_last_pool_is_the_top(flock_clock):
    """FLOCK_INCREMENT = 2 adds two pools at once, and the level never passes the list."""
    flock = levels(flock_clock, "FLOCK_TO = cmb, cmc, cmd\nFLOCK_INCREMENT = 2\n")
    flock.negotiating("alice@a", 0, idle=1)
    flock.negotiating("alice@a", 0, idle=1)
    assert flock.level("alice@a") == 2
    flock.negotiating("alice@a", 2, idle=1)
    flock.negotiating("alice@a", 2, idle=1)
    assert flock.level("alice@a") == 3


def test_no_negotiator_for_two_schedd_intervals_raises_the_level(flock_clock):
    """Idle jobs no negotiator asked about for 2*SCHEDD_INTERVAL flock one pool further, not a moment sooner."""
    flock = levels(flock_clock)
    flock.check({"alice@a": 3})
    flock_clock.advance(2 * INTERVAL - 0.5)
    flock.check({"alice@a": 3})
    assert flock.level("alice@a") == 0
    flock_clock.advance(0.5)
    flock.check({"alice@a": 3})
    assert flock.level("alice@a") == 1
    flock_clock.advance(2 * INTERVAL - 0.5)
    flock.check({"alice@a": 3})
    assert flock.level("alice@a") == 1


def test_a_contact_restarts_the_silence_clock(flock_clock):
    """A negotiator's call within 2*SCHEDD_INTERVAL keeps the level where it is."""
    flock = levels(flock_clock)
    flock.check({"alice@a": 3})
    flock_clock.advance(INTERVAL * 1.5)
    flock.negotiating("alice@a", None, idle=3)
    flock_clock.advance(INTERVAL * 1.5)
    flock.check({"alice@a": 3})
    assert flock.level("alice@a") == 0


def test_no_idle_jobs_falls_back_to_min_flock_level(flock_clock):
    """Once the submitter has no idle jobs its level is MIN_FLOCK_LEVEL again."""
    flock = levels(flock_clock, "FLOCK_TO = cmb, cmc, cmd\nMIN_FLOCK_LEVEL = 1\n")
    flock.negotiating("alice@a", 1, idle=2)
    flock.negotiating("alice@a", 1, idle=2)
    assert flock.level("alice@a") == 2
    flock.check({"alice@a": 0})
    assert flock.level("alice@a") == 1


def test_a_failed_update_raises_the_level_and_avoids_that_collector(flock_clock):
    """A flock collector that failed is skipped for DEAD_COLLECTOR_MAX_AVOIDANCE_TIME and the next one is tried."""
    flock = levels(flock_clock, "FLOCK_TO = cmb, cmc\nDEAD_COLLECTOR_MAX_AVOIDANCE_TIME = 100\n")
    flock.negotiating("alice@a", 0, idle=2)
    flock.negotiating("alice@a", 0, idle=2)
    flock.update_failed("alice@a", 1)
    assert flock.level("alice@a") == 2 and flock.targets("alice@a") == (2,)
    assert flock.avoided(1)
    flock_clock.advance(99.5)
    assert flock.targets("alice@a") == (2,)
    flock_clock.advance(0.5)
    assert flock.targets("alice@a") == (1, 2) and not flock.avoided(1)


def test_an_answer_ends_the_avoidance(flock_clock):
    """A collector that answers again is used at once."""
    flock = levels(flock_clock, "FLOCK_TO = cmb, cmc\nMIN_FLOCK_LEVEL = 1\n")
    flock.update_failed("alice@a", 1)
    flock.update_succeeded(1)
    assert flock.targets("alice@a") == (1, 2)


def test_effective_lists_the_pools_in_use(flock_clock):
    """EffectiveFlockList is every pool some submitter is advertised to now."""
    flock = levels(flock_clock)
    flock.negotiating("alice@a", 0, idle=2)
    flock.negotiating("alice@a", 0, idle=2)
    flock.negotiating("bob@a", 0, idle=2)
    assert flock.effective() == (1,)


def logged_lines(action) -> list[str]:
    """What the schedd's flock levels logged while ``action`` ran."""
    events = []
    globalLogPublisher.addObserver(events.append)
    try:
        action()
    finally:
        globalLogPublisher.removeObserver(events.append)
    return [formatEvent(event) for event in events if "flock level" in event.get("log_format", "")]


def test_each_change_of_level_is_logged_with_the_pool_reached_and_why(flock_clock):
    """As HTCondor's schedd does: "increasing flock level ... to 1 (cmb:9618)" naming the
    negotiator that left jobs idle, then the failed collector, then the fall back."""
    flock = levels(flock_clock)

    def climb():
        flock.negotiating("alice@a", 0, idle=5)
        flock.negotiating("alice@a", 0, idle=4)
        flock.update_failed("alice@a", 1)
        flock.check({"alice@a": 0})
    lines = logged_lines(climb)
    assert len(lines) == 3, lines
    assert "alice@a to 1 (cmb:9618)" in lines[0] and "level 0 left 4 job(s) idle" in lines[0]
    assert "alice@a to 2 (cmc:9700)" in lines[1] and "cmb:9618: the update to it failed" in lines[1]
    assert "decreasing flock level for alice@a to 0" in lines[2]


def test_a_level_already_at_the_top_logs_nothing_more(flock_clock):
    """Failures at the last pool do not log a rise that does not happen."""
    flock = levels(flock_clock, "FLOCK_TO = cmb\nMIN_FLOCK_LEVEL = 1\n")
    assert logged_lines(lambda: flock.update_failed("alice@a", 1)) == []
