"""A service that re-reads one piece of a pool's shared security state (revocations,
trusted pools) every ``interval`` seconds and applies what it read; a failed read is
logged and what is in force stays. Reads happen off the request path (the reader hands
file I/O to a worker thread, or asks the collector), so no request ever waits for one."""

from __future__ import annotations

from collections.abc import Callable

from twisted.application import service
from twisted.internet import task
from twisted.internet.defer import Deferred
from twisted.logger import Logger

from daemoncore.security.errors import SecurityError

_log = Logger()


class RefreshingService(service.Service):
    """Calls ``read()`` now and every ``interval`` seconds, then ``apply(result)``; never fails.
    ``what`` names the state in log lines ("revocations"), ``source`` where it comes from."""

    def __init__(self, clock, interval: float, read: Callable[[], Deferred], apply: Callable[[object], None],
                 what: str, source: str) -> None:
        self.what = what
        self.source = source
        self._read = read
        self._apply = apply
        self._interval = interval
        self._loop = task.LoopingCall(self.refresh)
        self._loop.clock = clock

    def startService(self) -> None:
        super().startService()
        self._loop.start(self._interval, now=True)

    def stopService(self):
        if self._loop.running:
            self._loop.stop()
        return super().stopService()

    def refresh(self) -> Deferred:
        """Read once and apply what was read; never fails."""
        reading = self._read()
        reading.addCallback(self._apply)
        reading.addErrback(self._keep)
        return reading

    def _keep(self, failure) -> None:
        if failure.check(SecurityError):
            _log.warn("{what} unchanged: {why}", what=self.what, why=failure.getErrorMessage())
        else:
            _log.warn("{what} unchanged: reading {source} failed: {why}", what=self.what, source=self.source,
                      why=failure.getErrorMessage())
