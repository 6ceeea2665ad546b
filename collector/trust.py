"""The pools this pool trusts for flocking, served by the central manager's collector to
the daemons of the other hosts: they hold no trust directory, so each fetches the list
every ``UPDATE_INTERVAL`` (the tokens in it let them act in the other pools)."""

from __future__ import annotations

from twisted.internet import threads
from twisted.internet.defer import Deferred

from daemoncore.security.pool_trust import read_trusted_pools
from daemoncore.wire import collector_routes as api
from daemoncore.wire.server import ApiRequest, JsonReply


class TrustRoutes:
    """Answers ``TRUST`` with the trusted pools of ``directory`` (read in a worker thread),
    or none when this collector has no trust directory."""

    def __init__(self, directory: str | None, clock) -> None:
        self._directory = directory
        self._clock = clock

    def handlers(self) -> dict:
        """The route table for ``ApiResource``."""
        return {api.TRUST: self.trust}

    def trust(self, _request: ApiRequest) -> Deferred | JsonReply:
        if not self._directory:
            return JsonReply({"pools": []})
        reading = threads.deferToThreadPool(self._clock, self._clock.getThreadPool(),
                                            read_trusted_pools, self._directory)
        return reading.addCallback(lambda pools: JsonReply(
            {"pools": [pools[name].to_wire() for name in sorted(pools)]}))
