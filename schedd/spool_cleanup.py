"""Removing the spool sandboxes of ``-spool`` jobs that left the queue.

HTCondor's rule (``SpooledJobFiles::removeJobSpoolDirectory``, called when a job is
destroyed in qmgmt.cpp; condor_preen's ``check_spool_dir`` for what a crash left): a
spooled job's sandbox in SPOOL goes when the job leaves the queue (once its
``LeaveJobInQueue`` turns false after completion, or on condor_rm), then its proc
directory and its cluster directory when they are empty. A job still in the queue keeps
its sandbox, whatever its state: a completed one waits there for condor_transfer_data.

Roost does it in two ways, both on an injected clock: soon after a transition that may
let a job leave (:meth:`SpoolCleanup.note`), for that job only; and with a sweep of the
whole spool at start (jobs that left while the schedd was down) and every
``SWEEP_INTERVAL`` seconds. Listing and deleting run in worker threads; only the queue
look-ups run on the reactor, ``CHECK_SLICE`` at a time. Nothing outside SPOOL is ever
touched: every level down to the sandbox must be a real directory, not a link.
"""

from __future__ import annotations

import math
import os
import shutil
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping

from twisted.internet import task
from twisted.internet.defer import Deferred, succeed
from twisted.logger import Logger

from daemoncore.reactor_turns import in_slices
from jobmodel.eventlog import EventType
from jobmodel.states import JobId, JobStatus, Transition
from transfer.spooled_job import spool_directory

#: Seconds between two sweeps of the whole spool.
SWEEP_INTERVAL = 15.0
#: Seconds after a job may have left before its sandbox is looked for (jobs leaving
#: together share one pass).
SOON = 1.0
#: Queue look-ups made in one turn of the reactor.
CHECK_SLICE = 500
#: A transition to one of these states may let the job leave the queue.
LEAVING_STATES = frozenset({int(JobStatus.REMOVED), int(JobStatus.COMPLETED)})
#: A transition logging one of these events may let the job leave the queue.
LEAVING_EVENTS = frozenset({EventType.JOB_ABORTED, EventType.JOB_TERMINATED})

_log = Logger()


def may_leave(transition: Transition) -> bool:
    """Whether ``transition`` may have taken its job out of the queue: it removed or
    completed the job, or logged its abort or termination (a removed job's shadow has
    gone, so it may leave now); LeaveJobInQueue decides whether it stayed."""
    event = transition.event
    return transition.changes.get("JobStatus") in LEAVING_STATES or (
        event is not None and event.type in LEAVING_EVENTS)


def _is_real_directory(path: str) -> bool:
    """Whether ``path`` is a directory itself, not a link to one (nor anything else)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _numbered(directory: str) -> list[int]:
    """The numbers naming real subdirectories of ``directory`` (``7``, not ``07``)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return sorted(int(name) for name in names if name.isdigit() and str(int(name)) == name
                  and _is_real_directory(os.path.join(directory, name)))


def sandbox_of(spool: str, job_id: JobId) -> str | None:
    """Job ``job_id``'s spool sandbox when it exists as a real directory reached from
    ``spool`` through real directories only (SPOOL/<cluster>/<proc>/cluster<c>.proc<p>.spool;
    SPOOL itself may be a link, as an administrator may make it); else None."""
    cluster_dir = os.path.join(spool, str(job_id.cluster))
    proc_dir = os.path.join(cluster_dir, str(job_id.proc))
    sandbox = spool_directory(spool, job_id.cluster, job_id.proc)
    if all(_is_real_directory(path) for path in (cluster_dir, proc_dir, sandbox)):
        return sandbox
    return None


def spooled_sandboxes(spool: str) -> list[JobId]:
    """Every job with a spool sandbox under ``spool`` (names that are not a job's
    numbered directories, and links, are left alone)."""
    if not os.path.isdir(spool):
        return []
    found = []
    for cluster in _numbered(spool):
        for proc in _numbered(os.path.join(spool, str(cluster))):
            if sandbox_of(spool, JobId(cluster, proc)) is not None:
                found.append(JobId(cluster, proc))
    return found


def existing(spool: str, procs_by_cluster: Mapping[int, Iterable[int]]) -> list[JobId]:
    """The jobs of ``procs_by_cluster`` that have a spool sandbox under ``spool``, in
    queue order. A cluster with no directory there costs one look, its procs are not
    even listed: this runs in a worker thread, and pure Python there takes the GIL from
    the reactor (sorting and looking at each of 101,000 removed jobs held it ~100 ms,
    the reactor's rm slices waiting for it after each SQLite call)."""
    found = []
    for cluster in sorted(procs_by_cluster):
        if _is_real_directory(os.path.join(spool, str(cluster))):
            jobs = (JobId(cluster, proc) for proc in sorted(procs_by_cluster[cluster]))
            found.extend(job_id for job_id in jobs if sandbox_of(spool, job_id) is not None)
    return found


def remove_sandboxes(spool: str, gone: Iterable[tuple[JobId, bool]]) -> int:
    """Remove the sandbox of each ``(job_id, cluster_gone)``, then its proc directory
    and, when the whole cluster left the queue (``cluster_gone``), its cluster directory,
    each only when empty (a checkpoint or another proc may still be there). A sandbox is
    looked up again here, so one that became a link meanwhile is left alone; the tree
    below it is removed without following links. Returns how many sandboxes went."""
    removed = 0
    for job_id, cluster_gone in gone:
        sandbox = sandbox_of(spool, job_id)
        if sandbox is None:
            continue
        shutil.rmtree(sandbox, ignore_errors=True)
        removed += not os.path.lexists(sandbox)
        proc_dir = os.path.dirname(sandbox)
        for level in (proc_dir, os.path.dirname(proc_dir)) if cluster_gone else (proc_dir,):
            try:
                os.rmdir(level)
            except OSError:
                break
    return removed


# Mutable: the jobs waiting for a look, the pending pass and the sweep loop.
class SpoolCleanup:
    """The removal of one schedd's spool sandboxes; ``queue`` is its JobQueue,
    ``run_blocking`` runs file work in a worker thread and ``clock`` gives time."""

    def __init__(self, queue, spool: str, run_blocking: Callable[..., Deferred], clock,
                 interval: float = SWEEP_INTERVAL) -> None:
        self.queue = queue
        self.spool = spool
        self.run_blocking = run_blocking
        self.clock = clock
        self._noted: dict[int, set[int]] = {}  # procs that may have left, by cluster
        self._pending = None
        self._busy = False
        self._loop = task.LoopingCall(self.sweep)
        self._loop.clock = clock
        self.interval = interval

    def start(self) -> None:
        """Sweep now (jobs that left while the schedd was down), then every ``interval``."""
        self._loop.start(self.interval, now=True)

    def stop(self) -> None:
        """Stop sweeping and drop a pending pass."""
        if self._loop.running:
            self._loop.stop()
        if self._pending is not None and self._pending.active():
            self._pending.cancel()
        self._pending = None

    def note(self, transitions: Iterable[Transition]) -> None:
        """Look soon at the jobs these committed transitions may have taken out of the queue."""
        self.left(transition.job_id for transition in transitions if may_leave(transition))

    def left(self, job_ids: Iterable[JobId]) -> None:
        """Look soon at jobs that may have left the queue."""
        added = False
        for job_id in job_ids:
            self._noted.setdefault(job_id.cluster, set()).add(job_id.proc)
            added = True
        if added and (self._pending is None or not self._pending.active()):
            self._pending = self.clock.callLater(SOON, self._look_at_noted)

    def _look_at_noted(self) -> None:
        self._pending = None
        if self._busy:  # a pass is under way: try again after it
            self._pending = self.clock.callLater(SOON, self._look_at_noted)
            return
        noted, self._noted = self._noted, {}  # the thread's alone from here
        self._run(lambda: self.run_blocking(existing, self.spool, noted))

    def sweep(self) -> Deferred:
        """One sweep of the whole spool; fires when its deletions are done (a failure is
        logged, never raised)."""
        if self._busy:
            return succeed(None)
        return self._run(lambda: self.run_blocking(spooled_sandboxes, self.spool))

    def _run(self, listing: Callable[[], Deferred]) -> Deferred:
        """List sandboxes (in a thread), keep those whose job left, delete them (in a thread)."""
        self._busy = True
        running = listing()
        running.addCallback(self._gone)
        running.addCallback(lambda gone: self.run_blocking(remove_sandboxes, self.spool, gone) if gone else 0)
        running.addErrback(lambda failure: _log.warn("spool cleanup of {spool} failed: {why}",
                                                     spool=self.spool, why=failure.getErrorMessage()))
        running.addBoth(self._done)
        return running

    def _gone(self, found: list[JobId]) -> Deferred:
        """Of the jobs with a sandbox, those no longer in the queue, each with whether its
        whole cluster left; looked up ``CHECK_SLICE`` at a time, one reactor turn each."""
        gone: list[tuple[JobId, bool]] = []

        def look_ups() -> Iterator[None]:
            for job_id in found:
                if self.queue.db.get_job(job_id.cluster, job_id.proc) is None:
                    gone.append((job_id, self.queue.db.get_cluster_attrs(job_id.cluster) is None))
                yield
            return gone
        return in_slices(self.clock, look_ups(), math.inf, max_steps=CHECK_SLICE)

    def _done(self, result):
        self._busy = False
        return result


__all__ = ["SpoolCleanup", "SWEEP_INTERVAL", "SOON", "CHECK_SLICE", "may_leave", "sandbox_of",
           "spooled_sandboxes", "remove_sandboxes"]
