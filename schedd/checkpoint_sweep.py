"""Forgetting the checkpoints of jobs that will never run again.

HTCondor removes a job's spool directory when the job leaves the queue, and
condor_preen (``check_spool_dir`` in condor_preen.cpp) clears spool entries of jobs the
queue no longer holds. Roost does both with one sweep of the spool, at start and every
``SWEEP_INTERVAL`` seconds: a kept checkpoint whose job is gone, removed or completed,
and that no shadow is receiving, is deleted. Listing and deleting run in a thread.
"""

from __future__ import annotations

from collections.abc import Callable

from twisted.internet import task
from twisted.internet.defer import Deferred, succeed
from twisted.logger import Logger

from jobmodel.errors import JobNotFoundError
from jobmodel.states import JobId, JobStatus
from transfer.checkpoint import kept_checkpoints, remove_checkpoint

#: Seconds between two sweeps of the spool.
SWEEP_INTERVAL = 15.0
#: A job in one of these states never restarts from its checkpoint.
FINISHED = frozenset({JobStatus.REMOVED, JobStatus.COMPLETED})

_log = Logger()


def stale(status: JobStatus | None) -> bool:
    """Whether a checkpoint whose job has ``status`` (None: not in the queue) can go."""
    return status is None or status in FINISHED


def _remove_all(directories: list[str]) -> None:
    for directory in directories:
        remove_checkpoint(directory)


# Mutable: whether a sweep is under way, and its loop.
class CheckpointSweep:
    """The periodic sweep of one schedd's spool; ``busy(job_id)`` says a shadow may be
    writing that job's checkpoint right now (it is left for the next sweep)."""

    def __init__(self, queue, spool: str, busy: Callable[[JobId], bool],
                 run_blocking: Callable[..., Deferred], clock, interval: float = SWEEP_INTERVAL) -> None:
        self.queue = queue
        self.spool = spool
        self.busy = busy
        self.run_blocking = run_blocking
        self._sweeping = False
        self._loop = task.LoopingCall(self.sweep)
        self._loop.clock = clock
        self.interval = interval

    def start(self) -> None:
        self._loop.start(self.interval, now=True)

    def stop(self) -> None:
        if self._loop.running:
            self._loop.stop()

    def sweep(self) -> Deferred:
        """One sweep; fires when its deletions are done (a failure is logged, never raised)."""
        if self._sweeping:
            return succeed(None)
        self._sweeping = True
        sweeping = self.run_blocking(kept_checkpoints, self.spool)
        sweeping.addCallback(self._forget)
        sweeping.addErrback(lambda failure: _log.warn("checkpoint sweep of {spool} failed: {why}",
                                                      spool=self.spool, why=failure.getErrorMessage()))
        sweeping.addBoth(self._done)
        return sweeping

    def _forget(self, kept: list[tuple[int, int, str]]) -> Deferred | None:
        gone = [directory for cluster, proc, directory in kept
                if not self.busy(JobId(cluster, proc)) and stale(self._status(JobId(cluster, proc)))]
        return self.run_blocking(_remove_all, gone) if gone else None

    def _status(self, job_id: JobId) -> JobStatus | None:
        try:
            return self.queue.status_of(job_id)
        except JobNotFoundError:
            return None

    def _done(self, _result) -> None:
        self._sweeping = False
