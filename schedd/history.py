"""Job history: the final ads of jobs that left the queue, newest first as
``condor_history`` shows them, and rotation by ``HISTORY_MAX_JOBS`` and age.
Jobs are written here by :class:`schedd.queue.JobQueue` in the transaction that
removes them from the queue."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from classad import ClassAd, ExprTree, compile_constraint, is_everything
from jobmodel.states import ClockLike, JobId, now_from
from schedd.queue.db import QueueDatabase
from schedd.queue.stored import decode_entries, merge


def _since_predicate(since: "str | JobId | int | ExprTree | None"):
    """``since`` as a stop test: a job id (``"12.3"``), a cluster id, or a
    constraint; the scan stops at the first job it matches, which is not returned."""
    if since is None:
        return None
    if isinstance(since, JobId):
        return lambda row, ad: (row.cluster_id, row.proc_id) == (since.cluster, since.proc)
    if isinstance(since, int):
        return lambda row, ad: row.cluster_id == since
    if isinstance(since, str):
        text = since.strip()
        cluster, dot, proc = text.partition(".")
        if cluster.isdigit() and (not dot or proc.isdigit()):
            if dot:
                return _since_predicate(JobId(int(cluster), int(proc)))
            return _since_predicate(int(cluster))
    predicate = compile_constraint(since)
    return lambda row, ad: predicate(ad)


class History:
    """The history table of one queue database.

    :param db: the queue's database
    :param clock: injected time source, for age-based rotation
    :param max_jobs: ``HISTORY_MAX_JOBS``; None keeps every job
    :param max_age: seconds a finished job is kept; None keeps it forever
    """

    def __init__(self, db: QueueDatabase, clock: ClockLike, max_jobs: int | None = None,
                 max_age: float | None = None) -> None:
        self.db = db
        self.clock = clock
        self.max_jobs = max_jobs
        self.max_age = max_age

    def query(self, constraint: "str | ExprTree | None" = None, projection: Iterable[str] = (),
              match: int = -1, since: "str | JobId | int | ExprTree | None" = None,
              misses: bool = False) -> Iterator[ClassAd | None]:
        """Stream finished job ads, newest first, that match ``constraint``, cut to
        ``projection``, at most ``match`` of them (-1: all), stopping at ``since``;
        with ``misses``, ``None`` for each ad that does not match (see
        :meth:`JobQueue.query`).

        Raises:
            ConstraintError: the constraint or ``since`` expression does not parse.
        """
        predicate = compile_constraint(constraint)
        stop = _since_predicate(since)
        wanted = list(projection)
        return self._stream(predicate, stop, wanted, match, misses)

    def _stream(self, predicate, stop, wanted: list[str], match: int, misses: bool = False) -> Iterator[ClassAd | None]:
        sent = 0
        only = (frozenset(n.lower() for n in wanted)
                if wanted and stop is None and is_everything(predicate) else None)
        for row in self.db.find_history():
            if 0 <= match <= sent:
                return
            if only is not None:
                yield merge(decode_entries(row.attrs, only), {})
                sent += 1
                continue
            ad = merge(decode_entries(row.attrs), {})
            if stop is not None and stop(row, ad):
                return
            if not predicate(ad):
                if misses:
                    yield None
                continue
            if wanted:
                ad = ClassAd.from_entries([(n, ad.expression(n)) for n in wanted if n in ad])
            sent += 1
            yield ad

    def rotate(self) -> int:
        """Drop the oldest jobs beyond ``max_jobs`` and those older than ``max_age``;
        returns how many went (call inside the writing transaction)."""
        if self.max_jobs is None and self.max_age is None:
            return 0
        cutoff = None if self.max_age is None else now_from(self.clock) - self.max_age
        return self.db.trim_history(self.max_jobs, cutoff)

    def __len__(self) -> int:
        return self.db.count_history()
