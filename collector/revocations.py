"""The pool's revocation list, served by the central manager's collector to the daemons
of the other hosts: they hold no copy of the pool's revocation file, so each fetches
it every ``UPDATE_INTERVAL`` and refuses the tokens it names, as the daemons on the
central manager do from the file itself."""

from __future__ import annotations

from collections.abc import Callable

from twisted.internet import threads
from twisted.internet.defer import Deferred

from daemoncore.security.revocation import read_revocation_file
from daemoncore.wire import collector_routes as api
from daemoncore.wire.server import ApiRequest, JsonReply


class RevocationRoutes:
    """Answers ``REVOCATIONS`` with the text of the revocation file at ``path`` (read in
    a worker thread, at most the file limit), or an empty list when there is none."""

    def __init__(self, path: str | None, clock, read: Callable[[str], Deferred] | None = None) -> None:
        self._path = path
        self._read = read or (lambda where: threads.deferToThreadPool(clock, clock.getThreadPool(),
                                                                      read_revocation_file, where))

    def handlers(self) -> dict:
        """The route table for ``ApiResource``."""
        return {api.REVOCATIONS: self.revocations}

    def revocations(self, _request: ApiRequest) -> Deferred | JsonReply:
        if not self._path:
            return JsonReply({"text": None})
        return self._read(self._path).addCallback(lambda text: JsonReply({"text": text}))
