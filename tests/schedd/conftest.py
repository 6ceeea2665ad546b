"""Fixtures for the schedd's data layer: a Twisted clock and a queue file in tmp_path."""

import pytest
from twisted.internet.task import Clock

from classad import ClassAd
from schedd.queue import JobQueue

#: 2026-12-02 12:00:00 UTC.
START = 1796212800


@pytest.fixture
def clock() -> Clock:
    c = Clock()
    c.advance(START)
    return c


@pytest.fixture
def queue(tmp_path, clock):
    q = JobQueue(tmp_path, clock)
    yield q
    q.close()


def cluster_ad(owner: str = "alice", **extra) -> ClassAd:
    """A small cluster ad such as the submit language produces."""
    ad = ClassAd({"Owner": owner, "Cmd": "/bin/sleep", "RequestCpus": 1, "RequestMemory": 128})
    ad["Requirements"] = __import__("classad").ExprTree("TARGET.Cpus >= RequestCpus")
    for name, value in extra.items():
        ad[name] = value
    return ad


def proc_ads(count: int) -> list[ClassAd]:
    """Per-proc differences: each proc's Args."""
    return [ClassAd({"Args": str(i)}) for i in range(count)]
