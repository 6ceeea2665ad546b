"""The queue's WAL checkpoints, made in a worker thread every second rather than by
SQLite inside whichever commit takes the WAL past 1,000 pages (10-20 ms of copying and
syncing on the reactor, several times a second while a large rm runs)."""

from __future__ import annotations

from collections.abc import Callable

from twisted.application import service
from twisted.internet import task
from twisted.internet.defer import Deferred
from twisted.logger import Logger

_log = Logger()

#: Seconds between two checkpoints (the WAL holds what the schedd writes meanwhile).
CHECKPOINT_INTERVAL = 1.0


class WalCheckpoints(service.Service):
    """Calls ``checkpoint`` through ``run_blocking`` every ``interval`` seconds, the next
    only once the last has ended; a failed checkpoint is logged and the next one runs."""

    def __init__(self, checkpoint: Callable[[], object], run_blocking: Callable[..., Deferred], clock,
                 interval: float = CHECKPOINT_INTERVAL) -> None:
        self._checkpoint = checkpoint
        self._run_blocking = run_blocking
        self._interval = interval
        self._loop = task.LoopingCall(self._once)
        self._loop.clock = clock

    def startService(self) -> None:
        super().startService()
        self._loop.start(self._interval, now=False)

    def stopService(self) -> None:
        super().stopService()
        if self._loop.running:
            self._loop.stop()

    def _once(self) -> Deferred:
        made = self._run_blocking(self._checkpoint)
        return made.addErrback(lambda failure: _log.warn("schedd: checkpointing the queue's WAL failed: {why}",
                                                         why=failure.getErrorMessage()))
