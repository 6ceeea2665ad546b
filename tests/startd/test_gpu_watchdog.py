"""The GPU watchdog's decisions, driven sample by sample with a task.Clock."""

from __future__ import annotations

from twisted.internet import task

from startd.gpu_watchdog import (
    JOB_OUT_OF_RESOURCES,
    CardLimit,
    CardSample,
    GpuWatchdog,
    ProcessUse,
    WatchedJob,
    attribute,
)

CARD = CardLimit("GPU-1a2b3c4d-0000-1111-2222-333344445555", "GPU-1a2b3c4d", 10000)
JOB = WatchedJob("7.0", frozenset({100, 101}), (CARD,))


def card(used: int, pid: int = 101, busy: float = 0.5) -> CardSample:
    return CardSample(CARD.uuid, busy, (ProcessUse(pid, used), ProcessUse(999, 5000)))


def run(clock: task.Clock, watchdog: GpuWatchdog, uses: list[int], step: float = 10.0) -> list:
    """Observe one sample per use, ``step`` seconds apart; every decision with its time."""
    decisions = []
    for used in uses:
        decisions += [(clock.seconds(), d) for d in watchdog.observe(clock.seconds(), [card(used)], [JOB])]
        clock.advance(step)
    return decisions


def test_attribution_counts_only_the_jobs_own_processes():
    """Another process's memory on the same card is not the job's."""
    assert attribute([card(3000)], [JOB]) == {"7.0": {CARD.uuid: (3000, 0.5)}}


def test_a_job_over_its_share_longer_than_the_grace_is_held_once():
    """Over from t=0: at 30 s it has been over exactly the grace (not more); at 40 s it is held, once."""
    clock = task.Clock()
    decisions = run(clock, GpuWatchdog(grace=30), [12000] * 7)
    assert [t for t, _ in decisions] == [40.0]
    overuse = decisions[0][1]
    assert overuse.reason == "GPU GPU-1a2b3c4d: job used 12000 MiB of its 10000 MiB share for more than 30 s"
    assert overuse.hold_attributes()["HoldReasonCode"] == JOB_OUT_OF_RESOURCES == 34


def test_dipping_under_the_share_restarts_the_grace():
    """A sample within the share forgets the overuse; a short spike is never held."""
    clock = task.Clock()
    assert run(clock, GpuWatchdog(grace=30), [12000, 12000, 12000, 9000, 12000, 12000, 12000]) == []


def test_a_whole_card_has_no_share_to_overuse():
    """A job holding a whole card (no memory share) is never held."""
    whole = WatchedJob("8.0", frozenset({101}), (CardLimit(CARD.uuid, CARD.id, None),))
    watchdog = GpuWatchdog(grace=1)
    for now in range(10):
        assert watchdog.observe(float(now), [card(40000)], [whole]) == []


def test_peak_memory_and_average_utilisation_for_the_job_ad():
    """GPUsMemoryUsage is the peak MiB, GPUsAverageUsage the mean utilisation while it used the card."""
    watchdog = GpuWatchdog(grace=30)
    watchdog.observe(0, [card(2000, busy=0.2)], [JOB])
    watchdog.observe(10, [card(6000, busy=0.6)], [JOB])
    watchdog.observe(20, [card(4000, busy=0.4)], [JOB])
    assert watchdog.job_attributes("7.0") == {"GPUsMemoryUsage": 6000, "GPUsAverageUsage": 0.4}
    assert watchdog.latest() == {"7.0": {CARD.uuid: (4000, 0.4)}}


def test_a_job_that_ended_is_forgotten():
    """Jobs missing from a sample lose their figures, and a new job of that id starts afresh."""
    watchdog = GpuWatchdog(grace=30)
    watchdog.observe(0, [card(2000)], [JOB])
    watchdog.observe(10, [card(0)], [])
    assert watchdog.job_attributes("7.0") == {}
    assert watchdog.latest() == {}
