"""The snapshot keeper's timing, driven by task.Clock and a worker pool that runs each
read when the test says: pages of a cheap pool wait for a read of their own (one read
serving all waiting), pages of a slow pool get the latest at once, a failed read keeps
the last good snapshot and says why."""

from __future__ import annotations

from twisted.internet import task

from web.reader import Limits
from web.snapshot import SnapshotKeeper


class Clock(task.Clock):
    """task.Clock that also takes calls from worker threads (they run at once)."""

    def callFromThread(self, f, *args, **kwargs):
        f(*args, **kwargs)


class HeldWorkers:
    """A worker pool whose jobs run when ``release()`` is called, in order."""

    def __init__(self):
        self.jobs = []

    def callInThreadWithCallback(self, on_result, f, *args, **kwargs):
        self.jobs.append((on_result, f, args, kwargs))

    def release(self, clock=None, seconds=0.0):
        on_result, f, args, kwargs = self.jobs.pop(0)
        if clock is not None:
            clock.advance(seconds)
        try:
            on_result(True, f(*args, **kwargs))
        except Exception as exc:
            from twisted.python.failure import Failure
            on_result(False, Failure(exc))


class Pool:
    """A pool's answers as the site's reader gives them, with a job count that grows."""

    limits = Limits()

    def __init__(self):
        self.jobs_queued = 0
        self.down = False
        self.during_read = None

    def slots(self):
        if self.during_read is not None:
            self.during_read()
        if self.down:
            raise OSError("connection refused")
        return [{"Name": "slot1@a", "Machine": "a", "State": "Unclaimed", "Activity": "Idle", "Cpus": 1}]

    def ads(self, ad_type, projection=(), constraint="true", limit=None):
        return []

    def schedds(self):
        return [{"Name": "schedd@a"}]

    def metrics(self, address):
        return ""

    def jobs(self):
        return [{"ClusterId": n, "ProcId": 0, "Owner": "alice", "JobStatus": 1} for n in range(self.jobs_queued)]

    def priorities(self):
        return []

    def last_cycle(self):
        return {}


def keeper(pool, clock, workers, cheap=0.5):
    return SnapshotKeeper(clock, workers, lambda: pool, interval=2.0, cheap=cheap)


def test_a_cheap_pools_page_waits_for_a_read_made_after_it_asked():
    clock, workers, pool = Clock(), HeldWorkers(), Pool()
    kept = keeper(pool, clock, workers)
    kept.start()
    workers.release()
    pool.jobs_queued = 3  # a job submitted after the last read
    seen = []
    kept.current().addCallback(seen.append)
    kept.current().addCallback(seen.append)
    assert seen == [] and len(workers.jobs) == 1  # one read for both pages
    workers.release()
    assert [snapshot.queue["job_count"] for snapshot in seen] == [3, 3]


def test_a_page_asked_during_a_read_waits_for_the_next_one():
    clock, workers, pool = Clock(), HeldWorkers(), Pool()
    kept = keeper(pool, clock, workers)
    kept.start()
    seen = []
    pool.during_read = lambda: kept.current().addCallback(seen.append)  # asked while the read is under way
    workers.release()
    pool.during_read = None
    assert seen == [] and len(workers.jobs) == 1
    workers.release()
    assert len(seen) == 1


def test_a_slow_pools_page_gets_the_latest_at_once_and_reads_go_on_every_interval():
    clock, workers, pool = Clock(), HeldWorkers(), Pool()
    kept = keeper(pool, clock, workers)
    kept.start()
    workers.release(clock, seconds=5.0)  # a read that took 5 s
    seen = []
    kept.current().addCallback(seen.append)
    assert len(seen) == 1 and workers.jobs == []
    clock.advance(2.0)
    assert len(workers.jobs) == 1


def test_a_failed_read_keeps_the_last_good_snapshot_and_says_why():
    clock, workers, pool = Clock(), HeldWorkers(), Pool()
    kept = keeper(pool, clock, workers, cheap=-1.0)
    kept.start()
    workers.release()
    pool.down = True
    clock.advance(2.0)
    workers.release()
    assert kept.latest.pool["slot_count"] == 1 and "connection refused" in kept.latest.problem
    kept.stop()
    clock.advance(10.0)
    assert workers.jobs == []
