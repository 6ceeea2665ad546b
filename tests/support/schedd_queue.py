"""A schedd job queue for tests: a Twisted clock at a fixed date, a real queue file
in the test's directory, and the small ads the submit language would produce.
Test folders import the fixtures into their conftest (or module) to use them."""

from __future__ import annotations

import pytest
from twisted.internet.task import Clock
from twisted.internet.testing import MemoryReactorClock

from classad import ClassAd, ExprTree
from schedd.queue import JobQueue

#: 2026-12-02 12:00:00 UTC.
START = 1796212800


@pytest.fixture
def clock() -> Clock:
    """A clock standing at START."""
    c = Clock()
    c.advance(START)
    return c


@pytest.fixture
def reactor() -> MemoryReactorClock:
    """An in-memory reactor at START: listening and connecting are only recorded."""
    r = MemoryReactorClock()
    r.advance(START)
    return r


@pytest.fixture
def queue(tmp_path, clock):
    """A job queue whose file is in the test's temporary directory, closed afterwards."""
    q = JobQueue(tmp_path, clock)
    yield q
    q.close()


def cluster_ad(owner: str = "alice", **extra) -> ClassAd:
    """A small cluster ad such as the submit language produces."""
    ad = ClassAd({"Owner": owner, "Cmd": "/bin/sleep", "RequestCpus": 1, "RequestMemory": 128})
    ad["Requirements"] = ExprTree("TARGET.Cpus >= RequestCpus")
    for name, value in extra.items():
        ad[name] = value
    return ad


def proc_ads(count: int) -> list[ClassAd]:
    """Per-proc differences: each proc's Args."""
    return [ClassAd({"Args": str(i)}) for i in range(count)]
