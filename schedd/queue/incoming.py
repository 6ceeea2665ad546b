"""A cluster stored a chunk of procs per transaction, so that a 100,000-proc submit
never holds a daemon's reactor for the whole insert: until its last chunk commits the
cluster is *incoming*, hidden from every read of the queue (see
:meth:`schedd.queue.db.QueueDatabase.mark_incoming`), and it is acknowledged (shown,
answered) in the transaction that stores its last procs. A cluster still incoming
when the schedd starts was never acknowledged and is dropped."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

from schedd.queue.db import QueueDatabase

#: Procs one transaction of a chunked submit stores: 2-4 ms of work here for procs
#: without differences of their own, 15-20 ms for procs with some (``arguments =
#: $(Process)``: each proc's ad is copied and printed); the route runs as many chunks as
#: fit in its slice of a reactor turn.
SUBMIT_CHUNK = 500


# Mutable: it follows the submit from chunk to chunk.
class IncomingCluster:
    """Stores one cluster of ``total`` procs, :data:`SUBMIT_CHUNK` per :meth:`step`.

    The first step runs ``first()`` (which allocates the ClusterId, stores the cluster's
    common attributes and returns the id with an iterator of its job rows): a cluster
    that fits in one chunk is stored whole in that transaction, as a whole submit always
    was; a larger one is only marked incoming (the first step shares its reactor turn
    with the request's expansion, so it stores no proc), and the following steps store
    its procs until the one storing its last acknowledges it. Then
    ``acknowledged(cluster_id)`` runs. A step that fails drops what was stored.
    With ``reserved`` (a ClusterId :meth:`~schedd.queue.db.QueueDatabase.reserve_cluster_id`
    took and marked incoming), ``first()`` returns that id and every step stores procs.
    """

    def __init__(self, db: QueueDatabase, total: int, first: Callable[[], tuple[int, Iterator[tuple]]],
                 acknowledged: Callable[[int], None], chunk: int = SUBMIT_CHUNK, reserved: int | None = None) -> None:
        if chunk < 1:
            raise ValueError(f"a submit chunk must hold at least one proc, not {chunk}")
        self._db = db
        self._first = first
        self._acknowledged = acknowledged
        self._chunk = chunk
        self._left = total
        self._rows: Iterator[tuple] | None = None
        self._failed = False
        self._marked = reserved is not None
        #: The ClusterId, once the first step has allocated it (None before), or the reserved one.
        self.cluster_id: int | None = reserved

    @property
    def done(self) -> bool:
        """Whether every proc is stored and the cluster acknowledged."""
        return self._rows is not None and not self._left

    def step(self) -> bool:
        """Store the next chunk in one transaction; returns whether the cluster is now
        whole (acknowledged).

        Raises:
            RuntimeError: a step after one that failed.
            Exception: whatever storing the chunk raised (a proc's bad JobStatus, say),
                after dropping every proc stored so far.
        """
        if self._failed:
            raise RuntimeError(f"the submit of cluster {self.cluster_id} failed; nothing more is stored")
        if self.done:
            return True
        try:
            with self._db.atomic():
                if self._rows is None:
                    self.cluster_id, self._rows = self._first()
                    if not self._marked and self._left > self._chunk:
                        self._db.mark_incoming(self.cluster_id)
                        self._marked = True
                        return False
                self._store_chunk()
                if not self._left and self._marked:
                    self._db.acknowledge_incoming(self.cluster_id)
        except BaseException:
            self._fail()
            raise
        if not self._left:
            self._acknowledged(self.cluster_id)
        return not self._left

    def _store_chunk(self) -> None:
        """Store the next chunk of rows (inside the step's transaction)."""
        rows = list(itertools.islice(self._rows, min(self._chunk, self._left)))
        if not rows:
            raise RuntimeError(f"cluster {self.cluster_id} ran out of procs with {self._left} still to store")
        self._db.insert_jobs(rows)
        self._left -= len(rows)

    def abort(self) -> None:
        """Give the submit up (the client went, the schedd stops): drop what was stored."""
        if not self.done and not self._failed:
            self._fail()

    def _fail(self) -> None:
        self._failed = True
        if self.cluster_id is not None:
            self._db.drop_incoming(only=self.cluster_id)


__all__ = ["IncomingCluster", "SUBMIT_CHUNK"]
