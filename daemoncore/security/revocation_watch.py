"""Keeping a daemon's revocation list current: the pool's revocation file is re-read
every ``UPDATE_INTERVAL`` in a worker thread (never in a request), and the rules in
force are swapped whole, so a revoked token is refused at every daemon within one
update interval.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
from twisted.internet import threads
from twisted.internet.defer import Deferred

from daemoncore.security.refreshing import RefreshingService
from daemoncore.security.revocation import Revocations, read_revocation_file, revocation_file, revocations_from

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


class RevocationWatcher(RefreshingService):
    """Re-reads the revocation file every ``interval`` seconds into ``holder``; a bad
    file is logged and the rules already in force stay."""

    def __init__(self, holder: RevocationHolder, clock, interval: float, path: str,
                 expression: str | None = None, read: FileReader | None = None) -> None:
        self.holder = holder
        self.path = path
        self.expression = expression
        read = read or (lambda where: threads.deferToThreadPool(clock, clock.getThreadPool(),
                                                                read_revocation_file, where))
        super().__init__(clock, interval, lambda: read(path), self._enforce, "revocations", path)

    def _enforce(self, text: str | None) -> None:
        self.holder.replace(revocations_from(self.expression, text, self.path))


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
