"""Keeping a daemon's revocation list current: the pool's revocation file is re-read
every ``UPDATE_INTERVAL`` in a worker thread (never in a request), and the rules in
force are swapped whole, so a revoked token is refused at every daemon within one
update interval.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
from twisted.application import service
from twisted.internet import task, threads
from twisted.internet.defer import Deferred
from twisted.logger import Logger

from daemoncore.security.errors import SecurityError
from daemoncore.security.revocation import Revocations, read_revocation_file, revocation_file, revocations_from

_log = Logger()

FileReader = Callable[[str], Deferred]


@attrs.define
class RevocationHolder:
    """The revocations a process enforces now, and a version that changes with them.
    Mutable: the watcher replaces the rules while verifiers read them."""

    current: Revocations = attrs.field(factory=Revocations)
    version: int = 0

    def replace(self, revocations: Revocations) -> None:
        """Enforce ``revocations`` from now on."""
        if revocations != self.current:
            self.current = revocations
            self.version += 1


#: What every token verifier of this process consults unless given another holder; a
#: daemon's watcher (see :func:`watcher_from_config`) keeps it current.
PROCESS_REVOCATIONS = RevocationHolder()


class RevocationWatcher(service.Service):
    """Re-reads the revocation file every ``interval`` seconds into ``holder``; a bad
    file is logged and the rules already in force stay."""

    def __init__(self, holder: RevocationHolder, clock, interval: float, path: str,
                 expression: str | None = None, read: FileReader | None = None) -> None:
        self.holder = holder
        self.path = path
        self.expression = expression
        self._read = read or (lambda where: threads.deferToThreadPool(clock, clock.getThreadPool(),
                                                                      read_revocation_file, where))
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
        """Read the file once and enforce what it says; never fails."""
        reading = self._read(self.path)
        reading.addCallback(lambda text: self.holder.replace(revocations_from(self.expression, text, self.path)))
        reading.addErrback(self._keep)
        return reading

    def _keep(self, failure) -> None:
        if failure.check(SecurityError):
            _log.warn("revocations unchanged: {why}", why=failure.getErrorMessage())
        else:
            _log.failure("revocations unchanged: reading {path} failed", failure, path=self.path)


def watcher_from_config(config, clock, interval: float, holder: RevocationHolder = PROCESS_REVOCATIONS,
                        read: FileReader | None = None) -> RevocationWatcher:
    """The watcher of a daemon: ``SEC_TOKEN_REVOCATION_EXPR`` and the pool's revocation
    file, re-read every ``interval`` (the daemon's ``UPDATE_INTERVAL``); ``read`` fetches
    the file's text from elsewhere (a joined host's daemons ask the central manager).

    Raises:
        RevocationError: ``SEC_TOKEN_REVOCATION_EXPR`` does not parse (the daemon refuses to start).
    """
    expression = config.param("SEC_TOKEN_REVOCATION_EXPR")
    holder.replace(revocations_from(expression, None, ""))
    return RevocationWatcher(holder, clock, interval, revocation_file(config), expression, read)
