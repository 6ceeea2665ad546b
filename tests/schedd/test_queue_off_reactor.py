"""The schedd's queue work done off the reactor, in worker threads on connections of
their own: the job counts for its ads (one count at a time, each caller given a count
begun after it asked) and the WAL's checkpoints."""

import threading

from twisted.internet.defer import Deferred, succeed

from classad import ClassAd
from jobmodel.states import JobStatus
from schedd.fresh_counts import FreshCounts
from schedd.queue import JobAction, JobQueue, JobSelection
from schedd.queue.jobqueue import owner_totals
from tests.schedd.conftest import cluster_ad, proc_ads

GROUP_A = {"AccountingGroup": "group_a.alice"}


class ManualWorker:
    """A worker whose counts end when the test says: each run is kept with its Deferred."""

    def __init__(self):
        self.runs: list[tuple] = []

    def __call__(self, function):
        running = Deferred()
        self.runs.append((function, running))
        return running

    def finish(self, index: int = -1) -> None:
        function, running = self.runs[index]
        running.callback(function())


def counter_of(values: list):
    """A count that returns the next of ``values`` each time it is made."""
    found = iter(values)
    return lambda: next(found)


def test_a_caller_during_a_count_gets_the_next_count_not_the_one_running():
    worker = ManualWorker()
    counts = FreshCounts(counter_of(["before the submit", "after the submit"]), worker)
    first, second = [], []
    counts().addCallback(first.append)
    counts().addCallback(second.append)  # the submit committed while the first count ran
    assert len(worker.runs) == 1
    worker.finish(0)
    assert first == ["before the submit"] and second == []
    assert len(worker.runs) == 2
    worker.finish(1)
    assert second == ["after the submit"]


def test_callers_during_one_count_share_the_next():
    worker = ManualWorker()
    counts = FreshCounts(counter_of([1, 2, 3]), worker)
    answers = []
    counts().addCallback(answers.append)
    for _ in range(5):
        counts().addCallback(answers.append)
    worker.finish(0)
    worker.finish(1)
    assert answers == [1, 2, 2, 2, 2, 2] and len(worker.runs) == 2
    assert counts.latest == 2


def test_a_failed_count_reaches_its_callers_and_the_next_count_still_runs():
    def count():
        raise OSError("disk gone")
    failures = []
    counts = FreshCounts(count, lambda function: succeed(None).addCallback(lambda _: function()))
    counts().addErrback(lambda failure: failures.append(failure.getErrorMessage()))
    assert failures == ["disk gone"] and counts.latest is None
    counts._count = lambda: 7
    answers = []
    counts().addCallback(answers.append)
    assert answers == [7] and counts.latest == 7


def test_the_queue_counts_in_another_thread_what_it_counts_itself(queue):
    """The counter opens its own connection, so a worker thread may call it, and it
    sees what the queue's own count sees: the same totals per submitter, owner and status."""
    queue.submit_cluster(cluster_ad("alice"), proc_ads(3))
    queue.submit_cluster(cluster_ad("alice", **GROUP_A), proc_ads(2))
    queue.submit_cluster(cluster_ad("bob"), proc_ads(1))
    queue.act(JobAction.Hold, JobSelection(clusters=(3,)))
    found = []
    worker = threading.Thread(target=lambda: found.append(queue.totals_counter()()))
    worker.start()
    worker.join()
    assert found == [queue.totals_by_submitter()]
    assert found[0] == {"alice": {"alice": {JobStatus.IDLE: 3}},
                        "group_a.alice": {"alice": {JobStatus.IDLE: 2}},
                        "bob": {"bob": {JobStatus.HELD: 1}}}


def test_the_counter_does_not_see_a_cluster_still_coming_in(queue):
    queue.submit_cluster(cluster_ad(), proc_ads(2))
    incoming = queue.submit_in_steps(cluster_ad(), proc_ads(10), chunk=4)
    incoming.step()
    incoming.step()
    assert queue.totals_counter()() == {"alice": {"alice": {JobStatus.IDLE: 2}}}
    while not incoming.step():
        pass
    assert queue.totals_counter()() == {"alice": {"alice": {JobStatus.IDLE: 12}}}


def test_a_queue_in_memory_has_no_counter_for_threads(clock):
    in_memory = JobQueue(None, clock)
    try:
        assert in_memory.totals_counter() is None
    finally:
        in_memory.close()


def test_owner_totals_sum_an_owners_jobs_over_her_submitters():
    by_submitter = {"alice": {"alice": {JobStatus.IDLE: 3, JobStatus.HELD: 1}},
                    "group_a.alice": {"alice": {JobStatus.IDLE: 2}, "bob": {JobStatus.RUNNING: 4}}}
    assert owner_totals(by_submitter) == {"alice": {JobStatus.IDLE: 5, JobStatus.HELD: 1},
                                          "bob": {JobStatus.RUNNING: 4}}


def test_checkpoints_handed_over_are_made_only_by_the_function_and_catch_up(queue):
    """Once handed over, no commit checkpoints the WAL (it grows past SQLite's
    1,000-page mark by far), and the function, called from another thread, checkpoints all of it."""
    checkpoint = queue.db.checkpoint_apart()
    for _ in range(16):
        queue.submit_cluster(cluster_ad("alice"), [ClassAd({"Args": f"{n} " + "x" * 1000}) for n in range(500)])
    found = []
    worker = threading.Thread(target=lambda: found.append(checkpoint()))
    worker.start()
    worker.join()
    [(busy, frames, checkpointed)] = found
    assert busy == 0 and frames > 2500 and checkpointed == frames
    assert len(queue) == 8000


def test_wal_checkpoints_run_every_interval_one_at_a_time_and_survive_a_failure():
    from twisted.internet.task import Clock

    from schedd.wal_checkpoints import WalCheckpoints
    clock, worker = Clock(), ManualWorker()
    checkpoints = WalCheckpoints(lambda: (0, 0, 0), worker, clock, interval=1.0)
    checkpoints.startService()
    clock.advance(1.0)
    clock.advance(1.0)
    clock.advance(1.0)
    assert len(worker.runs) == 1  # the first has not ended: no second one meanwhile
    worker.finish(0)
    clock.advance(1.0)
    worker.runs[1][1].errback(OSError("disk full"))
    clock.advance(1.0)
    assert len(worker.runs) == 3  # the failure was logged; the loop goes on
    checkpoints.stopService()
    clock.advance(5.0)
    assert len(worker.runs) == 3
