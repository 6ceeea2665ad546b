"""Tests for GET /v1/trust: the central manager's trusted pools, as this pool's daemons fetch them."""

from twisted.internet.task import Clock

from collector.trust import TrustRoutes
from daemoncore.security.pool_trust import pools_from_wire, save_trusted_pool
from tests.daemoncore.security.test_pool_trust import pool_b


class InlineThreads(Clock):
    """A clock whose thread pool runs work at once (the route reads in a worker thread)."""

    def getThreadPool(self):  # noqa: N802 - Twisted's interface
        return self

    def callInThreadWithCallback(self, on_result, work, *args, **kwargs):  # noqa: N802
        on_result(True, work(*args, **kwargs))

    def callFromThread(self, work, *args, **kwargs):  # noqa: N802
        work(*args, **kwargs)


def answer_of(routes):
    found = []
    routes.trust(None).addCallback(found.append)
    return found[0].body


def test_the_trusted_pools_are_served_without_the_issued_token_ids(tmp_path):
    save_trusted_pool(str(tmp_path), pool_b())
    body = answer_of(TrustRoutes(str(tmp_path), InlineThreads()))
    assert pools_from_wire(body, "the test") == {"poolB": pool_b(issued_jti="")}


def test_a_collector_without_a_trust_directory_serves_none():
    assert TrustRoutes(None, Clock()).trust(None).body == {"pools": []}
